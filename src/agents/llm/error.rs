//! What can go wrong talking to the model, classified for the retry loop and for the user.

use std::time::Duration;

use async_openai::error::OpenAIError;
use serde_json::Value;

use crate::hint::Hint;

use super::messages::snippet;
use super::transport::{HttpFailure, ReplyLimit};

/// A failed model call. Every message names the endpoint and the model (never the API key), so
/// a user with several configs can tell which one broke.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the LLM endpoint refused the request (HTTP {status}): {message}")]
    Auth { status: u16, message: String },

    #[error("the conversation no longer fits the model's context window: {0}")]
    ContextLength(String),

    /// The server's own words apart from where they came from, so that what it said can be
    /// read without cutting the endpoint off again.
    #[error("the LLM request failed (HTTP {status}): {said}{at}")]
    Http {
        status: u16,
        said: String,
        at: Origin,
    },

    /// The server could not be reached or the connection dropped.
    #[error("could not talk to the LLM: {0}")]
    Connection(String),

    /// The reply did not come within `llm.timeoutSeconds`. A model that rambles until the
    /// timeout will ramble again, so this is retried at most once (docs/design.md §15).
    #[error("the LLM did not answer in time: {0}")]
    Timeout(String),

    #[error("the LLM sent a reply that could not be read: {0}")]
    InvalidResponse(String),

    /// The request could not be built (a bad header value, say); retrying will not help.
    #[error("the LLM request could not be sent: {0}")]
    InvalidRequest(String),

    /// The server refused `response_format`'s JSON schema while `llm.structuredOutputs` asks
    /// for one.
    #[error("the LLM request could not be sent: {0}")]
    SchemaRefused(String),

    /// The budget refused the call before it was sent.
    #[error("{0}")]
    Budget(crate::agents::meter::Refusal),

    #[error("the agent did not finish within {0} turns")]
    MaxTurns(u32),

    /// A tool broke on the tool's side (not a refusal the model could act on).
    #[error("a tool failed: {0}")]
    Tool(String),
}

/// The endpoint and model a failure came from, as every message names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub endpoint: String,
    pub model: String,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, " [endpoint {}, model {}]", self.endpoint, self.model)
    }
}

impl Hint for LlmError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            LlmError::Auth { .. } => "check the API key in the variable named by llm.apiKeyEnv",
            LlmError::ContextLength(_) => {
                "start the server with a larger context (llama.cpp: --ctx-size; Ollama: \
                 num_ctx), lower llm.maxTokens or phases.<phase>.maxTokens, or shorten the story"
            }
            LlmError::Timeout(_) => {
                "raise llm.timeoutSeconds, or lower llm.maxTokens so the reply ends sooner"
            }
            LlmError::SchemaRefused(_) => {
                "set llm.structuredOutputs to \"auto\" or \"off\" for a server without JSON \
                 schema support"
            }
            LlmError::MaxTurns(_) => "raise llm.maxTurns, or make the story smaller",
            _ => return None,
        };
        Some(hint.to_string())
    }
}

impl LlmError {
    /// Rate limits, server errors and dropped connections may pass; the rest will not.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Http { status, said, .. } => {
                // A 429 for an exhausted quota stays exhausted until someone pays.
                (*status == 429 && !said.contains("insufficient_quota"))
                    || *status == 408
                    || *status >= 500
            }
            LlmError::Connection(_) | LlmError::Timeout(_) => true,
            _ => false,
        }
    }

    /// The server refused `response_format` (a JSON schema it cannot follow); under
    /// `llm.structuredOutputs: auto` the request is made again without it.
    pub fn is_response_format_unsupported(&self) -> bool {
        let LlmError::Http { status, said, .. } = self else {
            return false;
        };
        let said = said.to_lowercase();
        let names_the_field = ["response_format", "json_schema"]
            .iter()
            .any(|needle| said.contains(needle));
        match status {
            400 | 422 | 501 => {
                names_the_field || said.contains("schema") || said.contains("structured output")
            }
            // Some servers answer a field they cannot handle with a 500; retrying the same body
            // would only fail again.
            500 => names_the_field,
            _ => false,
        }
    }

    /// The refusal names a length or count bound of the schema (hosted strict modes accept
    /// only a subset of JSON Schema): the schema may still go without its bounds.
    pub fn refuses_schema_bounds(&self) -> bool {
        let LlmError::Http { said, .. } = self else {
            return false;
        };
        SCHEMA_BOUNDS.iter().any(|bound| said.contains(bound))
    }

    /// The server wants the reply cap as `max_completion_tokens` instead of `max_tokens`.
    pub fn wants_max_completion_tokens(&self) -> bool {
        self.refusal_words().is_some_and(|said| {
            said.contains("max_tokens") && said.contains("max_completion_tokens")
        })
    }

    /// The server refused the `tools` field itself (a model or server without function calling);
    /// the caller may try again without tools.
    pub fn is_tools_unsupported(&self) -> bool {
        self.refusal_words().is_some_and(|said| {
            let said = said.to_lowercase();
            ["tool", "function", "does not support"]
                .iter()
                .any(|needle| said.contains(needle))
        })
    }

    /// The server's own words when it refused the request as malformed (400 or 422).
    fn refusal_words(&self) -> Option<&str> {
        match self {
            LlmError::Http {
                status: 400 | 422,
                said,
                ..
            } => Some(said),
            _ => None,
        }
    }
}

/// The JSON-schema keywords that bound a value; strict modes of some servers refuse them.
pub(crate) const SCHEMA_BOUNDS: [&str; 6] = [
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "minimum",
    "maximum",
];

/// The server's own figures in a context-length error: its context and the prompt's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ContextFigures {
    pub(crate) limit: Option<u64>,
    pub(crate) prompt_tokens: Option<u64>,
}

impl ContextFigures {
    /// llama.cpp sends `n_ctx` and `n_prompt_tokens`; OpenAI and vLLM write "maximum context
    /// length is 8192 tokens … your messages resulted in 9000 tokens".
    pub(crate) fn read(body: &str) -> ContextFigures {
        let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let error = value.get("error").unwrap_or(&value);
        let field = |name: &str| error.get(name).and_then(Value::as_u64);
        let text = error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| body.to_string(), str::to_string)
            .to_lowercase();
        ContextFigures {
            limit: field("n_ctx")
                .or_else(|| number_after(&text, "maximum context length is"))
                .or_else(|| number_after(&text, "context length of"))
                .or_else(|| number_after(&text, "context size of")),
            prompt_tokens: field("n_prompt_tokens")
                .or_else(|| number_after(&text, "resulted in"))
                .or_else(|| number_after(&text, "you requested")),
        }
    }
}

/// The first number after `marker` in `text` (thousands separators allowed).
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let rest = &text[text.find(marker)? + marker.len()..];
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A classified failure and how long the server asked us to wait before trying again.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: LlmError,
    pub(crate) retry_after: Option<Duration>,
    /// The server's own figures when the prompt did not fit its context.
    pub(crate) context: ContextFigures,
}

impl From<LlmError> for Failure {
    fn from(error: LlmError) -> Self {
        Failure {
            error,
            retry_after: None,
            context: ContextFigures::default(),
        }
    }
}

/// What every message needs to say where it came from, and what it must never say.
pub(crate) struct ErrorContext<'a> {
    pub(crate) endpoint: &'a str,
    pub(crate) model: &'a str,
    pub(crate) api_key: Option<&'a str>,
}

impl ErrorContext<'_> {
    /// Adds the endpoint and model, and blanks the key should a server echo it back.
    pub(crate) fn describe(&self, detail: &str) -> String {
        format!("{}{}", self.redacted(detail), self.origin())
    }

    /// What a server said, cut to a snippet, with the key blanked should it echo it back.
    fn redacted(&self, detail: &str) -> String {
        let text = snippet(detail);
        match self.api_key.filter(|key| key.len() >= 4) {
            Some(key) => text.replace(key, "[redacted]"),
            None => text,
        }
    }

    fn origin(&self) -> Origin {
        Origin {
            endpoint: self.endpoint.to_string(),
            model: self.model.to_string(),
        }
    }

    pub(crate) fn classify(&self, error: OpenAIError) -> Failure {
        match error {
            OpenAIError::Boxed(boxed) => match boxed.downcast::<HttpFailure>() {
                Ok(failure) => {
                    self.classify_status(failure.status, &failure.body, failure.retry_after)
                }
                Err(other) => match other.downcast::<ReplyLimit>() {
                    // Too large stays too large; a missed deadline is a timeout, retried once.
                    Ok(limit) => match *limit {
                        ReplyLimit::TooLarge => {
                            LlmError::InvalidResponse(self.describe(&limit.to_string())).into()
                        }
                        ReplyLimit::Deadline(_) => self.connection(limit.to_string(), true),
                    },
                    Err(other) => self.connection(error_chain(other.as_ref()), false),
                },
            },
            // Our transport turns every non-2xx into `HttpFailure`; this arm is a safety net.
            OpenAIError::ApiError(api) => {
                self.classify_status(api.status_code.as_u16(), &api.api_error.to_string(), None)
            }
            OpenAIError::Reqwest(error) if error.is_builder() => {
                LlmError::InvalidRequest(self.describe(&error_chain(&error))).into()
            }
            OpenAIError::Reqwest(error) => self.connection(error_chain(&error), error.is_timeout()),
            // A stream that breaks off mid-way is a dropped connection.
            OpenAIError::StreamError(error) => self.connection(error.to_string(), false),
            OpenAIError::JSONDeserialize(error, body) => LlmError::InvalidResponse(
                self.describe(&format!("{error}; the server sent: {}", snippet(&body))),
            )
            .into(),
            other => LlmError::InvalidRequest(self.describe(&other.to_string())).into(),
        }
    }

    /// A transport failure: a timeout when the client or the chain says so, else a dropped or
    /// refused connection.
    fn connection(&self, detail: String, timed_out: bool) -> Failure {
        let lower = detail.to_lowercase();
        if timed_out || lower.contains("timed out") || lower.contains("deadline") {
            LlmError::Timeout(self.describe(&detail)).into()
        } else {
            LlmError::Connection(self.describe(&detail)).into()
        }
    }

    pub(crate) fn classify_status(
        &self,
        status: u16,
        body: &str,
        retry_after: Option<Duration>,
    ) -> Failure {
        let (message, code) = error_body(body);
        let detail = match &code {
            Some(code) if !message.contains(code.as_str()) => format!("{message} (code {code})"),
            _ => message.clone(),
        };
        let lower = message.to_lowercase();
        let too_long = code.as_deref() == Some("context_length_exceeded")
            || [
                "context length",
                "maximum context",
                "context window",
                "context size",
            ]
            .iter()
            .any(|needle| lower.contains(needle));
        let mut context = ContextFigures::default();
        let error = if too_long && (400..500).contains(&status) {
            context = ContextFigures::read(body);
            LlmError::ContextLength(self.describe(&detail))
        } else if matches!(status, 401 | 403) {
            LlmError::Auth {
                status,
                message: self.describe(&detail),
            }
        } else {
            LlmError::Http {
                status,
                said: self.redacted(&detail),
                at: self.origin(),
            }
        };
        Failure {
            error,
            retry_after,
            context,
        }
    }
}

/// The message and code of an error body: OpenAI's `{"error": {"message", "code"}}`, Ollama's
/// `{"error": "text"}`, a bare `{"message"}`, or plain text (an HTML page from a proxy).
fn error_body(body: &str) -> (String, Option<String>) {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        let text = body.trim();
        return (
            if text.is_empty() {
                "(empty body)".to_string()
            } else {
                text.to_string()
            },
            None,
        );
    };
    let error = value.get("error").unwrap_or(&value);
    let message = match error {
        Value::String(text) => text.clone(),
        other => other
            .get("message")
            .or_else(|| other.get("detail"))
            .and_then(Value::as_str)
            .map_or_else(|| other.to_string(), str::to_string),
    };
    let code = error.get("code").and_then(|code| match code {
        Value::String(code) => Some(code.clone()),
        Value::Number(code) => Some(code.to_string()),
        _ => None,
    });
    let code = code.or_else(|| {
        error
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    (message, code)
}

/// An error and its causes in one line ("error sending request …: connection refused").
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The library's error for an LLM failure. It lives here, in the upper room, so that
/// `crate::error` names nothing above it (docs/design.md, "Layers of the code").
impl From<LlmError> for crate::Error {
    fn from(error: LlmError) -> Self {
        crate::Error::Llm(Box::new(error))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTEXT: ErrorContext<'static> = ErrorContext {
        endpoint: "http://h/v1",
        model: "m",
        api_key: Some("sk-secret"),
    };

    #[test]
    fn statuses_are_classified() {
        let cases: [(u16, &str, &str, bool); 9] = [
            (
                401,
                r#"{"error":{"message":"Incorrect API key provided: sk-secret"}}"#,
                "Auth",
                false,
            ),
            (403, "forbidden", "Auth", false),
            (
                400,
                r#"{"error":{"message":"too long","code":"context_length_exceeded"}}"#,
                "ContextLength",
                false,
            ),
            (
                400,
                r#"{"error":"exceeds the available context size"}"#,
                "ContextLength",
                false,
            ),
            (
                404,
                r#"{"error":{"message":"model not found"}}"#,
                "Http",
                false,
            ),
            (
                429,
                r#"{"error":{"message":"slow down","type":"rate_limit"}}"#,
                "Http",
                true,
            ),
            (
                429,
                r#"{"error":{"message":"pay up","type":"insufficient_quota"}}"#,
                "Http",
                false,
            ),
            (503, "<html>bad gateway</html>", "Http", true),
            (
                400,
                r#"{"error":"m does not support tools"}"#,
                "Http",
                false,
            ),
        ];
        for (status, body, kind, retryable) in cases {
            let error = CONTEXT.classify_status(status, body, None).error;
            let debug = format!("{error:?}");
            assert!(debug.starts_with(kind), "{status} {body}: {debug}");
            assert_eq!(error.is_retryable(), retryable, "{status} {body}");
            assert!(!debug.contains("sk-secret") && !error.to_string().contains("sk-secret"));
            assert!(
                error.to_string().contains("endpoint http://h/v1, model m"),
                "{error}"
            );
        }
    }

    #[test]
    fn response_format_refusals() {
        let cases = [
            (
                400,
                r#"{"error":{"message":"Invalid schema for response_format 'v': 'maxLength' is not permitted."}}"#,
                true,
            ),
            (400, r#"{"error":"json_schema is not supported"}"#, true),
            (
                500,
                r#"{"error":{"message":"Unsupported param: response_format"}}"#,
                true,
            ),
            (500, r#"{"error":{"message":"out of memory"}}"#, false),
            (400, r#"{"error":{"message":"bad temperature"}}"#, false),
            (
                429,
                r#"{"error":{"message":"response_format rate limited"}}"#,
                false,
            ),
        ];
        for (status, body, expected) in cases {
            let error = CONTEXT.classify_status(status, body, None).error;
            assert_eq!(
                error.is_response_format_unsupported(),
                expected,
                "{status} {body}"
            );
            // Only the first names a bound, so only there the schema may go without bounds.
            assert_eq!(
                error.refuses_schema_bounds(),
                body.contains("maxLength"),
                "{status} {body}"
            );
        }
    }

    #[test]
    fn tools_unsupported_reads_only_the_server_words() {
        let refused = CONTEXT.classify_status(400, r#"{"error":"m does not support tools"}"#, None);
        assert!(refused.error.is_tools_unsupported());
        let named = ErrorContext {
            model: "functionary",
            ..CONTEXT
        };
        let other = named.classify_status(400, r#"{"error":"bad temperature"}"#, None);
        assert!(!other.error.is_tools_unsupported());
    }
}
