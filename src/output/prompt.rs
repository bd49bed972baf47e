//! The terminal prompt of a human gate. While it asks, the run's live lines are
//! hidden and what other stories print is held back and shown after the answer, so the
//! question is never drawn over and no other story waits for it.
//!
//! The prompt never decides by itself. An empty line, end of input (Ctrl-D) and Ctrl-C leave
//! the story waiting for `agentic-sdlc decide`; text that is no decision is asked again.
//! Ctrl-C reaches the run as a signal; the run hands it to [`TerminalPrompter::interrupt`],
//! which wakes the waiting read through a pipe of its own.

use std::io::{IsTerminal, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Arc, Mutex};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::printer::Printer;
use super::run_display::RunDisplay;
use super::visible::visible as shown;
use crate::workflow::decision::parse_decision;
use crate::workflow::prompter::{Answer, GateQuestion, NoDecision, Prompter};

pub struct TerminalPrompter {
    display: Arc<RunDisplay>,
    /// The write end of the open question's wake-up pipe; `None` while nothing is asked.
    open: Mutex<Option<OwnedFd>>,
}

impl TerminalPrompter {
    /// A prompter when a person can answer here: not with `--json` or `--no-input`, and only
    /// with stdin and stderr on a terminal.
    pub fn for_terminal(
        printer: &Printer,
        display: Arc<RunDisplay>,
        no_input: bool,
    ) -> Option<TerminalPrompter> {
        let available = !no_input
            && !printer.is_json()
            && std::io::stdin().is_terminal()
            && std::io::stderr().is_terminal();
        available.then(|| TerminalPrompter {
            display,
            open: Mutex::new(None),
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Option<OwnedFd>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Prompter for TerminalPrompter {
    fn ask(&self, question: &GateQuestion) -> std::io::Result<Answer> {
        let (wake_read, wake_write) = nix::unistd::pipe().map_err(std::io::Error::from)?;
        *self.open() = Some(wake_write);
        let answer = self
            .display
            .hold(|| ask_person(question, &mut StdinLines::new(&wake_read)));
        *self.open() = None;
        answer
    }

    fn interrupt(&self) -> bool {
        match self.open().as_ref() {
            Some(wake) => {
                let _ = nix::unistd::write(wake, b"!");
                true
            }
            None => false,
        }
    }
}

/// What the person typed, a line at a time.
enum Line {
    Text(String),
    EndOfInput,
    Interrupted,
}

/// Lines from stdin, read with `read(2)` on the terminal (which hands over a whole line at a
/// time) while watching the wake-up pipe.
struct StdinLines<'a> {
    wake: &'a OwnedFd,
    pending: Vec<u8>,
}

impl<'a> StdinLines<'a> {
    fn new(wake: &'a OwnedFd) -> StdinLines<'a> {
        StdinLines {
            wake,
            pending: Vec::new(),
        }
    }

    fn next_line(&mut self) -> std::io::Result<Line> {
        let stdin = std::io::stdin();
        loop {
            if let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line[..end]).into_owned();
                return Ok(Line::Text(text.trim_end_matches('\r').to_string()));
            }
            let mut fds = [
                PollFd::new(stdin.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.wake.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(err) => return Err(err.into()),
            }
            let woken = fds[1].revents().is_some_and(|r| !r.is_empty());
            if woken {
                return Ok(Line::Interrupted);
            }
            let mut buffer = [0u8; 4096];
            match nix::unistd::read(stdin.as_fd(), &mut buffer) {
                Ok(0) if self.pending.is_empty() => return Ok(Line::EndOfInput),
                // Ctrl-D after some text hands that text over without a newline.
                Ok(0) => {
                    let text = String::from_utf8_lossy(&self.pending).into_owned();
                    self.pending.clear();
                    return Ok(Line::Text(text));
                }
                Ok(read) => self.pending.extend_from_slice(&buffer[..read]),
                Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => {}
                Err(err) => return Err(err.into()),
            }
        }
    }
}

/// Shows what is judged and reads the person's decision. A first line ending in `:` takes the
/// lines after it as feedback, up to an empty line or end of input.
fn ask_person(question: &GateQuestion, lines: &mut StdinLines<'_>) -> std::io::Result<Answer> {
    let mut stderr = std::io::stderr().lock();
    let slug = shown(&question.slug, false);
    let heading = format!(
        "── {} of {} ({slug}) ",
        question.phase,
        shown(&question.title, false),
    );
    writeln!(stderr, "\n{heading:─<72}")?;
    writeln!(stderr, "{}", shown(question.output.trim(), false))?;
    if let Some(diff) = &question.diff {
        let diff = diff.trim();
        writeln!(stderr, "\n{:─<72}", "── the change ")?;
        if diff.is_empty() {
            writeln!(stderr, "(no file changed)")?;
        } else {
            writeln!(stderr, "{}", shown(diff, false))?;
        }
    }
    writeln!(stderr, "{:─<72}", "")?;
    if let Some(criteria) = &question.criteria {
        writeln!(stderr, "Criteria: {}", shown(criteria, false))?;
    }
    writeln!(
        stderr,
        "Decide: APPROVE | RETRY: <feedback> | RETRY_PREDECESSOR <phase>: <feedback> | REJECT: <reason>\n\
         (Enter, Ctrl-D or Ctrl-C: no decision now; the story waits for `agentic-sdlc decide {slug} …`)",
    )?;
    // What was typed or pasted before the question was on screen answers nothing: it was meant
    // for something else, another story's prompt or the shell (docs/design.md §22).
    discard_type_ahead();
    loop {
        write!(stderr, "decision> ")?;
        stderr.flush()?;
        let first = match lines.next_line()? {
            Line::Text(text) if text.trim().is_empty() => {
                return left_waiting(&mut stderr, question, NoDecision::Empty)
            }
            Line::Text(text) => text,
            Line::EndOfInput => return left_waiting(&mut stderr, question, NoDecision::EndOfInput),
            Line::Interrupted => {
                return left_waiting(&mut stderr, question, NoDecision::Interrupted)
            }
        };
        if !parse_decision(&first).had_decision_line {
            writeln!(
                stderr,
                "`{}` is not a decision. Type APPROVE, RETRY: <feedback>, RETRY_PREDECESSOR <phase>: <feedback> or REJECT: <reason>; or press Enter to decide later.",
                shown(first.trim(), false)
            )?;
            continue;
        }
        let mut text = first.clone();
        if first.trim_end().ends_with(':') {
            writeln!(stderr, "(the feedback: end it with an empty line)")?;
            loop {
                match lines.next_line()? {
                    Line::Text(line) if line.trim().is_empty() => break,
                    Line::Text(line) => {
                        text.push('\n');
                        text.push_str(&line);
                    }
                    Line::EndOfInput => break,
                    Line::Interrupted => {
                        return left_waiting(&mut stderr, question, NoDecision::Interrupted)
                    }
                }
            }
        }
        return Ok(Answer::Decision(text));
    }
}

/// Drops what the terminal holds as typed but not yet read.
fn discard_type_ahead() {
    // SAFETY: tcflush takes a descriptor and a constant; on a descriptor that is not a terminal
    // it fails with ENOTTY and does nothing.
    unsafe {
        libc::tcflush(libc::STDIN_FILENO, libc::TCIFLUSH);
    }
}

fn left_waiting(
    stderr: &mut impl Write,
    question: &GateQuestion,
    why: NoDecision,
) -> std::io::Result<Answer> {
    let again = if why == NoDecision::Interrupted {
        " Press Ctrl-C again to stop the run."
    } else {
        ""
    };
    writeln!(
        stderr,
        "\nNo decision ({}): {slug} waits. Decide later with `agentic-sdlc decide {slug} \"APPROVE\"` (or RETRY: …, REJECT: …).{again}",
        why.describe(),
        slug = shown(&question.slug, false),
    )?;
    Ok(Answer::Later(why))
}
