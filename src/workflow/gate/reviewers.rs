//! The reviewers behind a phase gate (SPEC §8): an AI, a command or a person.

use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use crate::agents::transcript::Transcript;
use crate::agents::{AgentError, GateRequest};
use crate::board::records::Usage;
use crate::board::{Phase, Story};
use crate::config::{GateConfig, Reviewer};
use crate::exec::{run_shell_command, CommandEnv};
use crate::workflow::context::Workflow;
use crate::workflow::decision::{parse_decision, GateDecision, ParsedDecision};

/// How a gate answered.
#[derive(Debug, Clone, PartialEq)]
pub enum GateAnswer {
    Decided(ParsedDecision),
    /// A human gate with no terminal: the story waits for `agentic-sdlc decide`.
    Pending,
}

/// Bytes of a failing command's output that become RETRY feedback.
const COMMAND_FEEDBACK_TAIL: usize = 4_000;

pub async fn consult(
    wf: &Workflow,
    gate: &GateConfig,
    phase: Phase,
    story: &Story,
    output: &str,
    work_dir: &std::path::Path,
    transcript: &Transcript,
) -> Result<(GateAnswer, Usage), AgentError> {
    match gate.reviewer {
        Reviewer::Ai => {
            let request = GateRequest {
                phase,
                story,
                output,
                criteria: gate.criteria.as_deref(),
                work_dir,
                transcript,
            };
            let answer = wf.agents.phase_review(request).await?;
            Ok((
                GateAnswer::Decided(parse_decision(&answer.text)),
                answer.usage,
            ))
        }
        Reviewer::Command => {
            let command = gate.command.as_deref().unwrap_or_default();
            let decision =
                command_gate(wf, command, gate.timeout_seconds, phase, story, output).await?;
            transcript.record("gate_command", serde_json::json!({ "command": command, "decision": decision.decision.to_string() }));
            Ok((GateAnswer::Decided(decision), Usage::default()))
        }
        Reviewer::Human => match &wf.terminal {
            Some(terminal) => {
                let _turn = terminal.lock().await;
                let (phase_name, title, output) = (
                    phase.name().to_string(),
                    story.meta.title.clone(),
                    output.to_string(),
                );
                let criteria = gate.criteria.clone();
                // The live lines of a parallel run are hidden while the person reads and types.
                let printer = wf.events.printer().clone();
                let decision = tokio::task::spawn_blocking(move || {
                    printer
                        .live()
                        .suspend(|| ask_person(&phase_name, &title, &output, criteria.as_deref()))
                })
                .await
                .map_err(|e| AgentError::new(format!("the terminal prompt failed: {e}")))??;
                Ok((GateAnswer::Decided(decision), Usage::default()))
            }
            None => Ok((GateAnswer::Pending, Usage::default())),
        },
    }
}

/// Runs the gate command with the output in a file; a decision line on stdout decides, else
/// exit 0 approves and any other exit asks for a retry with the tail of the output.
async fn command_gate(
    wf: &Workflow,
    command: &str,
    timeout_seconds: u64,
    phase: Phase,
    story: &Story,
    output: &str,
) -> Result<ParsedDecision, AgentError> {
    let mut file = tempfile::Builder::new()
        .prefix("agentic-sdlc-gate-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| {
            AgentError::new(format!(
                "cannot write the phase output for the gate command: {e}"
            ))
        })?;
    file.write_all(output.as_bytes()).map_err(|e| {
        AgentError::new(format!(
            "cannot write the phase output for the gate command: {e}"
        ))
    })?;
    let env = CommandEnv {
        set: vec![
            ("AGENTIC_SDLC_STORY_ID".into(), story.id().to_string()),
            ("AGENTIC_SDLC_PHASE".into(), phase.name().to_string()),
            (
                "AGENTIC_SDLC_OUTPUT_FILE".into(),
                file.path().display().to_string(),
            ),
        ],
        hidden: vec![wf.config.llm.api_key_env.clone()],
    };
    let result = run_shell_command(
        command,
        &wf.root,
        Duration::from_secs(timeout_seconds),
        &env,
    )
    .await
    .map_err(|e| AgentError::new(format!("gate command `{command}`: {e}")))?;
    let parsed = parse_decision(&result.output);
    if parsed.had_decision_line {
        return Ok(parsed);
    }
    let feedback = |why: String| ParsedDecision {
        decision: GateDecision::Retry {
            feedback: format!(
                "{why}\n{}",
                crate::exec::head_tail(result.output.trim(), COMMAND_FEEDBACK_TAIL)
            )
            .trim()
            .to_string(),
        },
        had_decision_line: false,
    };
    Ok(match (result.timed_out, result.exit_code) {
        (false, Some(0)) => parsed,
        (true, _) => feedback(format!("gate command timed out after {timeout_seconds}s")),
        (false, Some(code)) => feedback(format!("gate command exited with {code}")),
        (false, None) => feedback("gate command was killed by a signal".to_string()),
    })
}

/// Shows the output on the terminal and reads the person's decision. An empty first line
/// approves; a line ending in `:` takes the following lines as feedback until an empty line.
fn ask_person(
    phase: &str,
    title: &str,
    output: &str,
    criteria: Option<&str>,
) -> Result<ParsedDecision, AgentError> {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(
        stderr,
        "\n── {phase} output for \"{title}\" ──\n{}\n",
        output.trim()
    );
    if let Some(criteria) = criteria {
        let _ = writeln!(stderr, "Criteria: {criteria}");
    }
    let _ = write!(stderr, "Decision [APPROVE | RETRY: … | RETRY_PREDECESSOR <phase>: … | REJECT: …] (empty = APPROVE): ");
    let _ = stderr.flush();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let first = lines
        .next()
        .transpose()
        .map_err(|e| AgentError::new(format!("cannot read the decision: {e}")))?
        .unwrap_or_default();
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
    Ok(parse_decision(&text))
}

/// Whether human gates can ask on this terminal.
pub fn terminal_available(json: bool) -> bool {
    !json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}
