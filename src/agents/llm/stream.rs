//! Folds the chunks of a streamed chat completion (`stream: true`) into one [`ChatReply`].

use std::collections::BTreeMap;

use serde_json::Value;

use super::messages::{arguments_text, content_text, ensure_unique_ids, generated_call_id};
use super::messages::{ChatReply, ToolCall, Usage};
use super::stops::{Cut, Stops};

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

/// The bytes of a streamed reply (server-sent events) as they arrive, watched for what ends a
/// reply early ([`Stops`]): the transport reads with it, and stops reading once the text the
/// events carry ends in a loop, copies the prompt back or goes round its files.
#[derive(Default)]
pub(crate) struct StreamWatch {
    body: Vec<u8>,
    /// The bytes read into lines so far.
    scanned: usize,
    /// The end of the last whole event: an event ends with a blank line.
    event_end: usize,
    /// The content and call arguments the events carried.
    text: String,
    /// The text's length when it was last looked at for a loop.
    checked: usize,
    /// The last event, whose `id` and `model` the closing event repeats.
    last_event: Option<Value>,
    /// Whether the server ended the stream (`data: [DONE]`): a whole reply is not cut.
    ended: bool,
    /// What stops the reply besides a loop.
    stops: Stops,
}

/// How much new text is read before the text is looked at again.
const CHECK_EVERY: usize = 64;

impl StreamWatch {
    /// A watch that stops the reply at what `stops` names.
    pub(crate) fn watching(stops: Stops) -> Self {
        StreamWatch {
            stops,
            ..StreamWatch::default()
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.body.len()
    }

    /// Whether the events read so far carried any text.
    pub(crate) fn has_text(&self) -> bool {
        !self.text.is_empty()
    }

    /// Takes in the next bytes; `Some` when the reply is to be stopped.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> Option<Cut> {
        self.body.extend_from_slice(bytes);
        while let Some(newline) = self.body[self.scanned..].iter().position(|&b| b == b'\n') {
            let line = &self.body[self.scanned..self.scanned + newline];
            let line = String::from_utf8_lossy(line)
                .trim_end_matches('\r')
                .to_string();
            self.scanned += newline + 1;
            if line.is_empty() {
                self.event_end = self.scanned;
                continue;
            }
            let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                continue;
            };
            if data == "[DONE]" {
                self.ended = true;
            } else if let Ok(event) = serde_json::from_str::<Value>(data) {
                self.text.push_str(&carried_text(&event));
                self.last_event = Some(event);
            }
        }
        if self.ended || self.text.len() < self.checked + CHECK_EVERY {
            return None;
        }
        self.checked = self.text.len();
        self.stops.cut(&self.text)
    }

    /// The body read, whole.
    pub(crate) fn into_body(self) -> Vec<u8> {
        self.body
    }

    /// The whole events read, then an event that ends the reply for `cut` (a loop as cut off
    /// at the cap, `finish_reason: "length"`), then the stream's end.
    pub(crate) fn cut_off(mut self, cut: Cut) -> Vec<u8> {
        self.body.truncate(self.event_end);
        let mut closing = serde_json::json!({
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {}, "finish_reason": cut.finish_reason()}],
        });
        for key in ["id", "created", "model"] {
            if let Some(value) = self.last_event.as_ref().and_then(|event| event.get(key)) {
                closing[key] = value.clone();
            }
        }
        self.body
            .extend_from_slice(format!("data: {closing}\n\ndata: [DONE]\n\n").as_bytes());
        self.body
    }
}

/// A whole chat completion as the events of a stream, for a server that answers a request for
/// a stream with the whole reply (as a stand-in or a proxy may): the message as one delta, its
/// calls numbered, then the finish reason, the usage, and the end.
pub(crate) fn as_events(completion: &Value) -> Vec<u8> {
    let choice = &completion["choices"][0];
    let mut delta = choice
        .get("message")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({}));
    if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for (index, call) in calls.iter_mut().enumerate() {
            call["index"] = serde_json::json!(index);
        }
    }
    let finish = choice.get("finish_reason").cloned().unwrap_or(Value::Null);
    let mut events = vec![
        serde_json::json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]}),
        serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}),
    ];
    if let Some(usage) = completion.get("usage").filter(|usage| usage.is_object()) {
        events.push(serde_json::json!({"choices": [], "usage": usage}));
    }
    let mut body = String::new();
    for event in &mut events {
        for key in ["id", "created", "model"] {
            if let Some(value) = completion.get(key) {
                event[key] = value.clone();
            }
        }
        body.push_str(&format!("data: {event}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body.into_bytes()
}

/// The content and call arguments one event of a stream carries.
fn carried_text(event: &Value) -> String {
    let Some(delta) = event
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .and_then(|choice| choice.get("delta").or_else(|| choice.get("message")))
    else {
        return String::new();
    };
    let mut text = content_text(delta.get("content")).unwrap_or_default();
    for call in delta
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(piece) = call
            .get("function")
            .and_then(|function| function.get("arguments"))
            .and_then(Value::as_str)
        {
            text.push_str(piece);
        }
    }
    text
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

    /// A server-sent event carrying `content`.
    fn event(content: &str) -> String {
        let chunk = json!({"id": "c1", "model": "local", "created": 5,
                           "choices": [{"index": 0, "delta": {"content": content}}]});
        format!("data: {chunk}\n\n")
    }

    #[test]
    fn a_stream_that_loops_is_cut_at_a_whole_event_and_ends_as_cut_off() {
        let mut watch = StreamWatch::default();
        assert_eq!(watch.push(event("def test_a():\n").as_bytes()), None);
        let line = "    assert f(1) == 2\n";
        let mut cut = None;
        for _ in 0..40 {
            // Each event arrives in two pieces, split inside its JSON.
            let bytes = event(line).into_bytes();
            let (first, second) = bytes.split_at(bytes.len() / 2);
            cut = watch.push(first).or_else(|| watch.push(second));
            if cut.is_some() {
                break;
            }
        }
        assert_eq!(cut, Some(Cut::Loop), "forty copies of one line are a loop");
        let reply = read_back(watch.cut_off(Cut::Loop));
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert!(reply
            .content
            .unwrap()
            .starts_with("def test_a():\n    assert f(1) == 2\n"));
    }

    /// The reply a cut stream's body stands for; its closing event carries the stream's id
    /// and model.
    fn read_back(body: Vec<u8>) -> ChatReply {
        let body = String::from_utf8(body).unwrap();
        let data: Vec<&str> = body
            .split("\n\n")
            .filter_map(|event| event.strip_prefix("data: "))
            .collect();
        assert_eq!(data.last(), Some(&"[DONE]"));
        let closing: Value = serde_json::from_str(data[data.len() - 2]).unwrap();
        assert_eq!(
            (closing["id"].as_str(), closing["model"].as_str()),
            (Some("c1"), Some("local"))
        );
        let mut accumulator = StreamAccumulator::default();
        for chunk in &data[..data.len() - 1] {
            accumulator.push(&serde_json::from_str(chunk).expect("whole events only"));
        }
        accumulator.finish().unwrap()
    }

    #[test]
    fn a_stream_that_copies_its_prompt_back_is_stopped_as_an_echo() {
        let prompt = "# Story: A receipt line\n\nType: feature\n\n## Summary\nAdd `receipt_line(name, cents)` to inventory/money.py: the name, a colon and a space, then the price as `format_price` writes it.\n\n## Acceptance Criteria\n- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`\n- [ ] `receipt_line(\"TV\", 129900)` returns `\"TV: $1,299.00\"`\n- [ ] `receipt_line` calls `format_price`\n- [ ] a test in tests/test_money.py covers it\n\n## Task\nMake the change now: write out each file you change, whole, under its path. When every change is made, reply with short notes: what you changed and in which files. The project's tests run once you are done; if they fail you get their output.\n";
        let echoed = format!("```markdown\n{prompt}");
        // Without the prompt to compare with, the copy is read whole.
        let mut unwatched = StreamWatch::default();
        let mut watched =
            StreamWatch::watching(Stops::new(super::super::ReplyShape::Files, [prompt]));
        let mut cut = None;
        for word in echoed.split_inclusive(' ') {
            let piece = event(word);
            assert_eq!(unwatched.push(piece.as_bytes()), None);
            cut = watched.push(piece.as_bytes());
            if cut.is_some() {
                break;
            }
        }
        assert_eq!(cut, Some(Cut::Echo));
        let reply = read_back(watched.cut_off(Cut::Echo));
        assert_eq!(
            reply.finish_reason.as_deref(),
            Some(Cut::Echo.finish_reason())
        );
        let kept = reply.content.unwrap();
        assert!(
            echoed.starts_with(&kept) && kept.len() < echoed.len() - 40,
            "{kept}"
        );
    }

    #[test]
    fn a_stream_that_starts_a_file_again_is_stopped_as_a_round() {
        let first = "calc.py\n```python\nx = 1\n```\n\ntest_calc.py\n```python\ndef test_x():\n    assert True\n```\n\n";
        let rounds = format!("{first}calc.py\n```python\n{}", "y = 2\n".repeat(40));
        let mut watched = StreamWatch::watching(Stops::new(super::super::ReplyShape::Files, []));
        let mut read = String::new();
        let mut cut = None;
        for word in rounds.split_inclusive(' ') {
            read.push_str(word);
            cut = watched.push(event(word).as_bytes());
            if cut.is_some() {
                break;
            }
        }
        assert_eq!(cut, Some(Cut::Round));
        assert!(read.len() < rounds.len() - 100, "stopped early: {read}");
    }

    #[test]
    fn a_stream_that_varies_is_read_whole() {
        let mut watch = StreamWatch::default();
        let mut sent = String::new();
        for n in 0..60 {
            let piece = event(&format!("    assert double({n}) == {}\n", 2 * n));
            assert_eq!(watch.push(piece.as_bytes()), None);
            sent.push_str(&piece);
        }
        assert_eq!(watch.len(), sent.len());
        assert_eq!(watch.into_body(), sent.into_bytes());
    }

    #[test]
    fn a_whole_completion_read_as_events_gives_the_same_reply() {
        let whole = json!({"id": "c", "model": "local", "choices": [{"index": 0,
            "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "On it.",
            "tool_calls": [{"id": "a", "type": "function",
                            "function": {"name": "read_file", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 9, "completion_tokens": 4}});
        let events = String::from_utf8(as_events(&whole)).unwrap();
        let mut accumulator = StreamAccumulator::default();
        for data in events
            .split("\n\n")
            .filter_map(|e| e.strip_prefix("data: "))
        {
            if data != "[DONE]" {
                accumulator.push(&serde_json::from_str(data).unwrap());
            }
        }
        let reply = accumulator.finish().unwrap();
        assert_eq!(reply.content.as_deref(), Some("On it."));
        assert_eq!(reply.tool_calls[0].name, "read_file");
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            (reply.usage.prompt_tokens, reply.usage.completion_tokens),
            (9, 4)
        );
        assert!(events.ends_with("data: [DONE]\n\n"));
    }

    #[test]
    fn empty_stream_is_no_reply() {
        assert!(StreamAccumulator::default().finish().is_none());
    }
}
