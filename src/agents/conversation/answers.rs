//! Answering a reply's calls: each runs through the agent's tools once, a reading call already
//! answered with nothing changed since is answered "already done", and calls and results go
//! into the history (docs/design.md §21).

use serde_json::Value;

use super::calls::TurnCalls;
use crate::agents::llm::{ChatMessage, ChatReply, LlmError};
use crate::agents::transcript::Transcript;
use crate::agents::{CallFailure, ToolExecutor, ToolOutcome};
use crate::protocol::TranscriptEntry;

/// How a turn's calls went.
pub(super) struct Answered {
    /// The calls with their results, as (name, arguments, result), to tell a repeat.
    calls: Vec<(String, String, String)>,
    /// Calls that failed, but for refused writes to fixed tests and to files the story does not
    /// name: what else the reply changed is checked all the same, and the check says more
    /// than the refusal.
    failed: usize,
}

impl Answered {
    pub(super) fn any_failed(&self) -> bool {
        self.failed > 0
    }

    /// Every call of the turn was answered from above.
    pub(super) fn only_already_done(&self) -> bool {
        !self.calls.is_empty()
            && self
                .calls
                .iter()
                .all(|(_, _, result)| result == ALREADY_DONE)
    }

    /// The same calls as the turn before, with the same results: having read what they did,
    /// the model asks for it again, and will go on asking.
    pub(super) fn repeats(&self, previous: Option<&Answered>) -> bool {
        previous.is_some_and(|before| before.calls == self.calls)
    }
}

/// The reading calls answered since the last call that could change the files, by name and
/// arguments: the same call again would read the same, so it is answered from here.
#[derive(Default)]
pub(super) struct AnsweredCalls(std::collections::HashSet<(String, String)>);

impl AnsweredCalls {
    pub(super) fn key(name: &str, arguments: &str) -> (String, String) {
        // The same arguments written another way (spacing, key order) are the same call.
        let arguments = serde_json::from_str::<Value>(arguments)
            .map(|value| canonical(&value).to_string())
            .unwrap_or_else(|_| arguments.trim().to_string());
        (name.to_string(), arguments)
    }
}

/// `value` with every object's keys sorted.
fn canonical(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let sorted: std::collections::BTreeMap<&String, Value> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// What a call that was already answered gets instead of running again.
pub(super) const ALREADY_DONE: &str =
    "Already done: this exact call was answered above, and nothing has changed since. Use that result; do not ask for it again.";

/// Runs a turn's calls and puts them and their results into the history.
pub(super) async fn answer_calls(
    tools: Option<&dyn ToolExecutor>,
    turn: TurnCalls,
    reply: &ChatReply,
    messages: &mut Vec<ChatMessage>,
    transcript: &Transcript,
    tool_calls: &mut u32,
    answered_before: &mut AnsweredCalls,
) -> Result<Answered, LlmError> {
    let mut results = Vec::with_capacity(turn.calls.len());
    let mut answered = Answered {
        calls: Vec::with_capacity(turn.calls.len()),
        failed: 0,
    };
    for (call, form) in &turn.calls {
        let key = AnsweredCalls::key(&call.name, &call.arguments);
        let repeated = answered_before.0.contains(&key);
        let result = match tools {
            _ if repeated => ToolOutcome::done(ALREADY_DONE),
            Some(tools) => {
                let result = tools.call(&call.name, &call.arguments).await;
                if tools.writes(&call.name) {
                    // What was read before may read differently now; a write itself is never
                    // answered from above (running the tests again after a change is work).
                    answered_before.0.clear();
                } else if !result.is_error() {
                    answered_before.0.insert(key);
                }
                result
            }
            None => ToolOutcome::failed(
                format!(
                    "Error: no tools are available here, so `{}` cannot be run.",
                    call.name
                ),
                CallFailure::ForModel,
            ),
        };
        *tool_calls += 1;
        transcript.record_tool_call(
            &call.id,
            &call.name,
            &call.arguments,
            &result.content,
            result.is_error(),
            *form,
        );
        if result.is_fatal() {
            let err = LlmError::Tool(format!("{}: {}", call.name, result.content));
            record_error(transcript, &err);
            return Err(err);
        }
        answered.failed += usize::from(result.failure.is_some_and(CallFailure::holds_the_check));
        answered.calls.push((
            call.name.clone(),
            call.arguments.clone(),
            result.content.clone(),
        ));
        results.push(result.content);
    }
    turn.into_history(reply, results, messages);
    Ok(answered)
}

/// Records a failed model call or tool in the transcript.
pub(super) fn record_error(transcript: &Transcript, err: &LlmError) {
    transcript.entry(TranscriptEntry::Error {
        error: err.to_string(),
        retryable: err.is_retryable(),
    });
}
