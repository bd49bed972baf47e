//! Folds the chunks of a streamed chat completion (`stream: true`) into one [`ChatReply`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::messages::{arguments_text, content_text, ensure_unique_ids, generated_call_id};
use super::messages::{ChatReply, ToolCall, Usage};

#[derive(Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Collects content pieces, tool-call deltas (keyed by their `index`, arguments concatenated)
/// and the usage that OpenAI sends in a last chunk with empty `choices`.
#[derive(Default)]
pub(crate) struct StreamAccumulator {
    chunks: usize,
    content: String,
    calls: BTreeMap<u64, PartialCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
}

impl StreamAccumulator {
    pub(crate) fn push(&mut self, chunk: &Value) {
        self.chunks += 1;
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(super::messages::usage_from_json(Some(usage)));
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return;
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        // A few servers send whole `message` objects instead of `delta`s.
        let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) else {
            return;
        };
        if let Some(piece) = content_text(delta.get("content")) {
            self.content.push_str(&piece);
        }
        let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) else {
            return;
        };
        for (position, call) in calls.iter().enumerate() {
            self.push_call_delta(position, call);
        }
    }

    fn push_call_delta(&mut self, position: usize, call: &Value) {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        // Without an `index`, a delta carrying a new id starts a new call and any other delta
        // continues the latest one; the position in the array is the last resort.
        let index = call
            .get("index")
            .and_then(Value::as_u64)
            .unwrap_or_else(|| {
                let known =
                    id.and_then(|id| self.calls.iter().find(|(_, c)| c.id == id).map(|(i, _)| *i));
                match (known, id, self.calls.keys().next_back()) {
                    (Some(index), _, _) => index,
                    (None, Some(_), Some(last)) => last + 1,
                    (None, None, Some(last)) => *last,
                    (None, _, None) => position as u64,
                }
            });
        let entry = self.calls.entry(index).or_default();
        if let Some(id) = id {
            entry.id = id.to_string();
        }
        let function = call.get("function").unwrap_or(call);
        if let Some(name) = function.get("name").and_then(Value::as_str) {
            // Some servers repeat the name in every delta; it is never split across deltas.
            if entry.name.is_empty() {
                entry.name = name.to_string();
            }
        }
        match function.get("arguments") {
            Some(Value::String(piece)) => entry.arguments.push_str(piece),
            Some(Value::Null) | None => {}
            // An object arrives whole, never in pieces.
            other => entry.arguments = arguments_text(other),
        }
    }

    /// The reply, or `None` when the stream carried no events at all.
    pub(crate) fn finish(self) -> Option<ChatReply> {
        if self.chunks == 0 {
            return None;
        }
        let mut tool_calls: Vec<ToolCall> = self
            .calls
            .into_values()
            .filter(|call| !call.name.is_empty())
            .map(|call| ToolCall {
                id: if call.id.is_empty() {
                    generated_call_id()
                } else {
                    call.id
                },
                name: call.name,
                arguments: if call.arguments.trim().is_empty() {
                    "{}".to_string()
                } else {
                    call.arguments
                },
            })
            .collect();
        ensure_unique_ids(&mut tool_calls);
        Some(ChatReply {
            content: Some(self.content).filter(|text| !text.is_empty()),
            tool_calls,
            usage: self
                .usage
                .unwrap_or_else(|| super::messages::usage_from_json(None)),
            finish_reason: self.finish_reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn deltas_without_index_or_with_whole_objects() {
        let mut acc = StreamAccumulator::default();
        let chunks = [
            json!({"choices": [{"delta": {"tool_calls": [{"id": "a", "function": {"name": "read_file", "arguments": "{\"pa"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"function": {"arguments": "th\":1}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "search", "arguments": {"pattern": "x"}}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        ];
        for chunk in &chunks {
            acc.push(chunk);
        }
        let reply = acc.finish().unwrap();
        let calls: Vec<(&str, &str, &str)> = reply
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("a", "read_file", r#"{"path":1}"#),
                ("b", "search", r#"{"pattern":"x"}"#)
            ]
        );
        assert_eq!(reply.usage.requests, 1);
        assert_eq!(reply.content, None);
    }

    #[test]
    fn empty_stream_is_no_reply() {
        assert!(StreamAccumulator::default().finish().is_none());
    }
}
