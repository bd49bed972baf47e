//! The reviewers behind a phase gate (docs/design.md §8): an AI, a command or a person.

use std::io::Write;
use std::time::Duration;

use crate::agents::transcript::Transcript;
use crate::agents::{AgentError, GateRequest};
use crate::board::records::Usage;
use crate::board::{Phase, Story};
use crate::config::{GateConfig, Reviewer};
use crate::exec::BoxedCommand;
use crate::workflow::context::Workflow;
use crate::workflow::decision::{parse_decision, GateDecision, ParsedDecision};
use crate::workflow::prompter::{Answer, GateQuestion};

/// How a gate answered.
#[derive(Debug, Clone, PartialEq)]
pub enum GateAnswer {
    Decided(ParsedDecision),
    /// A human gate with no terminal: the story waits for `agentic-sdlc decide`.
    Pending,
}

/// Bytes of a failing command's output that become RETRY feedback.
const COMMAND_FEEDBACK_TAIL: usize = 4_000;

/// What a gate judges: a phase's output for a story, where it was made, and for an implement
/// judged by a person, the change itself.
pub struct Subject<'a> {
    pub phase: Phase,
    pub story: &'a Story,
    pub output: &'a str,
    pub work_dir: &'a std::path::Path,
    /// The diff of the story's work, shown to a person judging an implement.
    pub diff: Option<String>,
}

pub async fn consult(
    wf: &Workflow,
    gate: &GateConfig,
    subject: &Subject<'_>,
    transcript: &Transcript,
) -> Result<(GateAnswer, Usage), AgentError> {
    let Subject {
        phase,
        story,
        output,
        work_dir,
        ..
    } = *subject;
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
                let question = GateQuestion {
                    phase: phase.name().to_string(),
                    slug: story.slug.clone(),
                    title: story.meta.title.clone(),
                    output: output.to_string(),
                    diff: subject.diff.clone(),
                    criteria: gate.criteria.clone(),
                };
                let answer = match terminal.ask(question).await? {
                    Answer::Decision(text) => {
                        let parsed = parse_decision(&text);
                        // Text without a decision line approves elsewhere (an AI's or a command's); from a
                        // person at a prompt it is no decision at all.
                        if parsed.had_decision_line {
                            GateAnswer::Decided(parsed)
                        } else {
                            GateAnswer::Pending
                        }
                    }
                    Answer::Later(why) => {
                        transcript.record(
                            "gate_no_decision",
                            serde_json::json!({ "phase": phase.name(), "why": why.describe() }),
                        );
                        GateAnswer::Pending
                    }
                };
                Ok((answer, Usage::default()))
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
    let env = [
        ("AGENTIC_SDLC_STORY_ID".to_string(), story.id().to_string()),
        ("AGENTIC_SDLC_PHASE".to_string(), phase.name().to_string()),
        (
            "AGENTIC_SDLC_OUTPUT_FILE".to_string(),
            file.path().display().to_string(),
        ),
    ];
    let result = wf
        .sandbox
        .run(BoxedCommand {
            command,
            tree: &wf.root,
            limit: Duration::from_secs(timeout_seconds),
            env: &env,
        })
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
