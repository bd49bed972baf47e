//! The typed side of a chat exchange, and a tolerant reader for what servers actually send.
//!
//! Requests and responses travel as `serde_json::Value` because OpenAI-compatible servers
//! (Ollama, llama.cpp, vLLM, OpenRouter) drop fields, add fields, send `null` where OpenAI sends a
//! string, or an object where OpenAI sends a JSON-encoded string. Reading by hand lets one odd
//! field degrade into a default instead of failing the whole reply.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{json, Value};

/// One message of a conversation, in the order the model sees them.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    System(String),
    User(String),
    Assistant {
        content: Option<String>,
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A function call the model asked for. `arguments` is the JSON text the model wrote, untouched,
/// so that a tool can report a malformed argument back to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatReply {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    pub finish_reason: Option<String>,
}

pub use crate::board::records::Usage;

/// Reads a `usage` object; a server that sends none still cost one request.
pub(crate) fn usage_from_json(usage: Option<&Value>) -> Usage {
    let count = |key: &str| usage.and_then(|u| u.get(key)).map_or(0, number);
    Usage {
        prompt_tokens: count("prompt_tokens"),
        completion_tokens: count("completion_tokens"),
        requests: 1,
        cost_usd: None,
        estimated: false,
    }
}

fn number(value: &Value) -> u64 {
    // Some servers report token counts as floats.
    value
        .as_u64()
        .or_else(|| value.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
        .unwrap_or(0)
}

impl ChatMessage {
    /// The OpenAI wire form of this message.
    pub fn to_json(&self) -> Value {
        match self {
            ChatMessage::System(text) => json!({"role": "system", "content": text}),
            ChatMessage::User(text) => json!({"role": "user", "content": text}),
            ChatMessage::Assistant {
                content,
                tool_calls,
            } => {
                if tool_calls.is_empty() {
                    // Several servers reject a null content when there are no tool calls.
                    return json!({"role": "assistant", "content": content.as_deref().unwrap_or("")});
                }
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments},
                        })
                    })
                    .collect();
                json!({"role": "assistant", "content": content, "tool_calls": calls})
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}),
        }
    }
}

/// Reads `content` that may be a string, null, absent, or an array of `{type, text}` parts.
pub(crate) fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let text: String = parts
                .iter()
                .filter_map(|part| match part {
                    Value::String(text) => Some(text.as_str()),
                    other => other.get("text").and_then(Value::as_str),
                })
                .collect();
            Some(text)
        }
        _ => None,
    }
}

/// Arguments as JSON text: a string stays as sent, an object is re-serialised, nothing is `{}`.
pub(crate) fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => "{}".to_string(),
        Some(other) => other.to_string(),
    }
}

/// An id for a tool call the server sent without one, unique within the process.
pub(crate) fn generated_call_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("call_agentic_{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The model answers each tool result by id, so ids must be distinct within one reply; some
/// local servers number every call `call_0` or leave the id empty.
pub(crate) fn ensure_unique_ids(calls: &mut [ToolCall]) {
    let mut seen = std::collections::HashSet::new();
    for call in calls {
        if call.id.trim().is_empty() || !seen.insert(call.id.clone()) {
            call.id = generated_call_id();
            seen.insert(call.id.clone());
        }
    }
}

/// One tool call of a non-streamed message: `type` may be missing, and some servers put `name`
/// and `arguments` at the top level instead of under `function`.
fn tool_call(value: &Value) -> Option<ToolCall> {
    let function = value.get("function").unwrap_or(value);
    let name = function.get("name").and_then(Value::as_str)?.to_string();
    Some(ToolCall {
        id: value
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        name,
        arguments: arguments_text(function.get("arguments")),
    })
}

/// Reads a non-streamed chat completion. `Err` carries a description of what is missing.
pub(crate) fn parse_reply(body: &Value) -> Result<ChatReply, String> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| match body.get("error") {
            Some(error) => format!("the server answered with an error: {error}"),
            None => format!("the reply has no `choices`: {}", snippet(&body.to_string())),
        })?;
    let message = choice.get("message").or_else(|| choice.get("delta"));
    let content = content_text(message.and_then(|m| m.get("content")))
        .or_else(|| content_text(choice.get("text")));
    let mut tool_calls: Vec<ToolCall> = message
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
        .map(|calls| calls.iter().filter_map(tool_call).collect())
        .unwrap_or_default();
    // The pre-tools `function_call` form, still sent by a few servers.
    if tool_calls.is_empty() {
        if let Some(call) = message
            .and_then(|m| m.get("function_call"))
            .and_then(tool_call)
        {
            tool_calls.push(call);
        }
    }
    ensure_unique_ids(&mut tool_calls);
    Ok(ChatReply {
        content: content.filter(|text| !text.is_empty()),
        tool_calls,
        usage: usage_from_json(body.get("usage").filter(|u| !u.is_null())),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// Cuts long server text (an HTML error page, a huge body) for an error message.
pub(crate) fn snippet(text: &str) -> String {
    const MAX: usize = 600;
    let text = text.trim();
    if text.len() <= MAX {
        return text.to_string();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_reply_reading() {
        let body = json!({
            "choices": [{
                "message": {
                    "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
                    "tool_calls": [
                        {"function": {"name": "read_file", "arguments": {"path": "x"}}},
                        {"id": "c1", "name": "list_files"},
                        {"id": "c1", "function": {"name": "search", "arguments": "{\"pattern\":\"p\"}"}}
                    ],
                    "extra": true
                },
                "finish_reason": "tool_calls"
            }]
        });
        let reply = parse_reply(&body).unwrap();
        assert_eq!(reply.content.as_deref(), Some("ab"));
        assert_eq!(
            reply.usage,
            Usage {
                prompt_tokens: 0,
                completion_tokens: 0,
                requests: 1,
                cost_usd: None,
                estimated: false,
            }
        );
        let calls = &reply.tool_calls;
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[0].arguments, r#"{"path":"x"}"#);
        assert!(calls[0].id.starts_with("call_agentic_"));
        assert_eq!(
            (calls[1].id.as_str(), calls[1].arguments.as_str()),
            ("c1", "{}")
        );
        assert_ne!(calls[2].id, "c1", "a repeated id is replaced");
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn content_forms() {
        let cases = [
            (json!({"content": "hi"}), Some("hi")),
            (json!({"content": null}), None),
            (json!({}), None),
            (json!({"content": ""}), None),
            (json!({"content": [{"text": "x"}, "y"]}), Some("xy")),
        ];
        for (message, expected) in cases {
            let body = json!({"choices": [{"message": message}], "usage": null});
            let reply = parse_reply(&body).unwrap();
            assert_eq!(reply.content.as_deref(), expected, "{message}");
        }
    }

    #[test]
    fn missing_choices_is_described() {
        let err = parse_reply(&json!({"error": "model not loaded"})).unwrap_err();
        assert!(err.contains("model not loaded"), "{err}");
    }

    #[test]
    fn assistant_message_wire_form() {
        let message = ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: "a".into(),
                name: "n".into(),
                arguments: "{}".into(),
            }],
        };
        assert_eq!(
            message.to_json(),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "n", "arguments": "{}"}}
            ]})
        );
        let plain = ChatMessage::Assistant {
            content: None,
            tool_calls: vec![],
        };
        assert_eq!(plain.to_json(), json!({"role": "assistant", "content": ""}));
    }
}
