//! What one chat request asks for beyond its messages: the reply cap, the tools, and the JSON
//! schema of a machine-read answer (docs/design.md §15); and the record of every attempt to send
//! it.

use std::time::Duration;

use serde_json::{json, Value};

use super::error::{ContextFigures, LlmError, SCHEMA_BOUNDS};
use super::messages::{ChatMessage, ChatReply, Usage};

/// A JSON schema for an answer that a program reads, sent as
/// `response_format: {"type": "json_schema", "json_schema": {"name", "strict": true, "schema"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct ResponseSchema {
    pub name: &'static str,
    pub schema: Value,
}

impl ResponseSchema {
    /// The same schema without length and count bounds, for servers whose strict mode
    /// supports only a subset of JSON Schema.
    pub(crate) fn without_bounds(&self) -> ResponseSchema {
        fn strip(value: &mut Value) {
            match value {
                Value::Object(map) => {
                    // Only a schema node has bounds; a `properties` map may name anything.
                    let bounds: &[&str] = if map.contains_key("type") {
                        &SCHEMA_BOUNDS
                    } else {
                        &[]
                    };
                    for bound in bounds {
                        map.remove(*bound);
                    }
                    map.values_mut().for_each(strip);
                }
                Value::Array(items) => items.iter_mut().for_each(strip),
                _ => {}
            }
        }
        let mut schema = self.schema.clone();
        strip(&mut schema);
        ResponseSchema {
            name: self.name,
            schema,
        }
    }

    pub(crate) fn response_format(&self) -> Value {
        json!({
            "type": "json_schema",
            "json_schema": {"name": self.name, "strict": true, "schema": self.schema},
        })
    }
}

/// How the reply is sampled, when it must differ from the server's defaults: a retried phase
/// asks again with another temperature and seed, so that it is not a replay of the answer
/// that was refused.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
}

/// What an agent answers with, which tells what stops its streamed reply before its end
/// besides a loop ([`super::echo`], [`super::rounds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyShape {
    /// Anything: the reply may quote its prompt at length (a reviewer, a gate, refine, whose
    /// answer rightly repeats a story that needs no change).
    #[default]
    Free,
    /// Code or files (implement, acceptance): stopped by a copy of a user message from its
    /// start, since a file written out whole copies the prompt's view of it, and by a second
    /// round of the files it already wrote.
    Files,
    /// Prose (research, plan): stopped by a copy from any heading of a user message on past
    /// the next; prose quotes a file or a line, never whole sections.
    Prose,
}

/// One chat completion to make.
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub messages: &'a [ChatMessage],
    /// OpenAI function definitions; empty sends none.
    pub tools: &'a [Value],
    /// The reply cap; `None` uses `llm.maxTokens`.
    pub max_tokens: Option<u32>,
    /// Asks for a structured answer, unless `llm.structuredOutputs` is off or the server
    /// refused the field earlier in the run.
    pub schema: Option<&'a ResponseSchema>,
    pub sampling: Sampling,
    /// What the agent answers with, which tells what stops its reply early.
    pub shape: ReplyShape,
}

impl<'a> ChatRequest<'a> {
    #[cfg(test)]
    pub fn new(messages: &'a [ChatMessage], tools: &'a [Value]) -> Self {
        ChatRequest {
            messages,
            tools,
            max_tokens: None,
            schema: None,
            sampling: Sampling::default(),
            shape: ReplyShape::Free,
        }
    }

    /// The prompt's size in tokens as far as it can be known before the server counts them:
    /// its text and tool definitions at about [`CHARS_PER_TOKEN`] characters a token.
    pub fn estimated_prompt_tokens(&self) -> u64 {
        let tools: usize = self.tools.iter().map(|t| t.to_string().len()).sum();
        tokens_of_chars(self.prompt_chars() + tools)
    }

    /// Characters of message text, the only size known before the server counts tokens.
    pub fn prompt_chars(&self) -> usize {
        self.messages
            .iter()
            .map(|message| match message {
                ChatMessage::System(text) | ChatMessage::User(text) => text.len(),
                ChatMessage::Assistant {
                    content,
                    tool_calls,
                } => {
                    content.as_deref().map_or(0, str::len)
                        + tool_calls
                            .iter()
                            .map(|c| c.name.len() + c.arguments.len())
                            .sum::<usize>()
                }
                ChatMessage::Tool { content, .. } => content.len(),
            })
            .sum()
    }
}

/// Characters per token in English text and code, the usual rule of thumb; used where the
/// server gives no count.
pub const CHARS_PER_TOKEN: usize = 4;

/// About how many tokens `chars` characters make.
pub fn tokens_of_chars(chars: usize) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN) as u64
}

/// How one attempt at a request ended.
#[derive(Debug, Clone, PartialEq)]
pub enum AttemptOutcome {
    Answered {
        finish_reason: Option<String>,
    },
    /// The reply did not arrive within `llm.timeoutSeconds`.
    TimedOut {
        error: String,
    },
    Failed {
        error: String,
    },
}

/// One request sent to the server. Every attempt is counted in `usage.requests` and written to
/// the transcript, answered or not, so the work a server did is never invisible (docs/design.md
/// §15).
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub number: u32,
    pub duration: Duration,
    /// Whether `response_format` carried a schema.
    pub structured: bool,
    pub outcome: AttemptOutcome,
}

impl Attempt {
    pub fn to_json(&self) -> Value {
        let (outcome, detail) = match &self.outcome {
            AttemptOutcome::Answered { finish_reason } => ("answered", json!(finish_reason)),
            AttemptOutcome::TimedOut { error } => ("timed_out", json!(error)),
            AttemptOutcome::Failed { error } => ("failed", json!(error)),
        };
        let mut value = json!({
            "attempt": self.number,
            "outcome": outcome,
            "duration_ms": u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX),
            "structured": self.structured,
        });
        let key = if outcome == "answered" {
            "finish_reason"
        } else {
            "error"
        };
        value[key] = detail;
        value
    }
}

/// The result of a request with every attempt it took.
#[derive(Debug)]
pub struct Exchange {
    pub result: Result<ChatReply, LlmError>,
    pub attempts: Vec<Attempt>,
}

impl Exchange {
    /// The tokens of the answer, and one request per attempt made.
    pub fn usage(&self) -> Usage {
        let mut usage = match &self.result {
            Ok(reply) => reply.usage,
            Err(_) => Usage::default(),
        };
        usage.requests = self.attempts.len() as u64;
        usage
    }

    /// Whether the answered attempt asked for a structured answer.
    pub fn structured(&self) -> bool {
        self.result.is_ok() && self.attempts.last().is_some_and(|a| a.structured)
    }
}

/// The cap goes as `max_tokens` unless the server asked for `max_completion_tokens` (OpenAI's
/// reasoning models refuse the older name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenField {
    MaxTokens,
    MaxCompletionTokens,
}

impl TokenField {
    pub(crate) fn key(self) -> &'static str {
        match self {
            TokenField::MaxTokens => "max_tokens",
            TokenField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// What a context-length error says once the prompt's size is known.
pub(crate) fn context_length_message(
    server_words: &str,
    figures: ContextFigures,
    request: &ChatRequest<'_>,
    max_tokens: u32,
) -> String {
    let chars = request.prompt_chars();
    let prompt = match figures.prompt_tokens {
        Some(tokens) => format!("{tokens} tokens ({chars} characters)"),
        None => format!(
            "about {} tokens ({chars} characters)",
            tokens_of_chars(chars)
        ),
    };
    let limit = figures.limit.map_or("smaller context".to_string(), |n| {
        format!("context of {n} tokens")
    });
    format!(
        "the prompt is {prompt} in {} messages, and with up to {max_tokens} tokens kept for the \
         reply it does not fit the server's {limit}: {server_words}",
        request.messages.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_figures_from_known_servers() {
        let cases = [
            (
                r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5012,"n_ctx":4096}}"#,
                Some(4096),
                Some(5012),
            ),
            (
                r#"{"error":{"message":"This model's maximum context length is 8,192 tokens. However, your messages resulted in 9000 tokens.","code":"context_length_exceeded"}}"#,
                Some(8192),
                Some(9000),
            ),
            (r#"{"error":"context window exceeded"}"#, None, None),
            ("<html>too long</html>", None, None),
        ];
        for (body, limit, prompt) in cases {
            let figures = ContextFigures::read(body);
            assert_eq!(
                (figures.limit, figures.prompt_tokens),
                (limit, prompt),
                "{body}"
            );
        }
    }

    #[test]
    fn context_message_names_sizes_and_what_to_change() {
        let messages = [ChatMessage::User("x".repeat(400))];
        let request = ChatRequest::new(&messages, &[]);
        let text = context_length_message(
            "too long",
            ContextFigures {
                limit: Some(4096),
                prompt_tokens: None,
            },
            &request,
            1024,
        );
        for needle in [
            "about 100 tokens (400 characters)",
            "context of 4096 tokens",
            "1024 tokens kept for the reply",
        ] {
            assert!(text.contains(needle), "{needle}: {text}");
        }
        let hint = crate::hint::Hint::hint(&LlmError::ContextLength(text)).unwrap();
        for needle in ["llm.maxTokens", "--ctx-size", "shorten the story"] {
            assert!(hint.contains(needle), "{needle}: {hint}");
        }
    }

    #[test]
    fn attempts_as_json() {
        let attempt = Attempt {
            number: 2,
            duration: Duration::from_millis(1500),
            structured: true,
            outcome: AttemptOutcome::TimedOut {
                error: "timed out".into(),
            },
        };
        assert_eq!(
            attempt.to_json(),
            json!({"attempt": 2, "outcome": "timed_out", "duration_ms": 1500, "structured": true, "error": "timed out"})
        );
    }
}
