//! The terminal prompt of a human gate (SPEC §8): it owns the terminal while it asks, with the
//! run's spinner and live lines suspended so the question is never drawn over.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;

use super::printer::Printer;
use super::run_display::RunDisplay;
use super::visible::visible;
use crate::workflow::prompter::{GateQuestion, Prompter};

pub struct TerminalPrompter {
    display: Arc<RunDisplay>,
}

impl TerminalPrompter {
    /// A prompter when a person can answer here: not with `--json`, and only with stdin and
    /// stderr on a terminal.
    pub fn for_terminal(printer: &Printer, display: Arc<RunDisplay>) -> Option<TerminalPrompter> {
        let available =
            !printer.is_json() && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
        available.then_some(TerminalPrompter { display })
    }
}

impl Prompter for TerminalPrompter {
    fn ask(&self, question: &GateQuestion) -> std::io::Result<String> {
        self.display.suspend(|| ask_person(question))
    }
}

/// Shows the output and reads the person's decision. An empty first line approves; a line
/// ending in `:` takes the following lines as feedback until an empty line.
fn ask_person(question: &GateQuestion) -> std::io::Result<String> {
    let mut stderr = std::io::stderr().lock();
    writeln!(
        stderr,
        "\n── {} output for \"{}\" ──\n{}\n",
        question.phase,
        visible(&question.title, false),
        visible(question.output.trim(), false)
    )?;
    if let Some(criteria) = &question.criteria {
        writeln!(stderr, "Criteria: {}", visible(criteria, false))?;
    }
    write!(stderr, "Decision [APPROVE | RETRY: … | RETRY_PREDECESSOR <phase>: … | REJECT: …] (empty = APPROVE): ")?;
    stderr.flush()?;
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let first = lines.next().transpose()?.unwrap_or_default();
    let mut text = first.clone();
    if first.trim_end().ends_with(':') {
        for line in lines.map_while(Result::ok) {
            if line.trim().is_empty() {
                break;
            }
            text.push('\n');
            text.push_str(&line);
        }
    }
    Ok(text)
}
