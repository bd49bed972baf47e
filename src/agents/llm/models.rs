//! `GET /models`: whether the server answers, accepts the key and knows the model, asked
//! before a run spends anything (see `workflow::preflight`). It costs no tokens.

use std::time::Duration;

use serde_json::Value;

use super::messages::snippet;
use super::settings::LlmSettings;
use super::transport::http_client;

/// The longest a probe may take: a server that cannot list its models in this time will not
/// serve a night's work either.
const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

/// What the server said about its models.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelList {
    /// The ids it serves.
    Listed(Vec<String>),
    /// It has no such endpoint, or lists them in a shape this reader does not know: no
    /// verdict on the model (and, for a server that lets the request through, on the key).
    Unlisted,
}

/// Why the probe found the server unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// No HTTP answer at all: refused, unresolvable, timed out.
    #[error("{0}")]
    Unreachable(String),
    /// 401 or 403: the key is missing, wrong or not allowed.
    #[error("HTTP {status}: {detail}")]
    KeyRefused { status: u16, detail: String },
    /// Any other failing status (a 5xx, a model still loading).
    #[error("HTTP {status}: {detail}")]
    Failed { status: u16, detail: String },
}

/// Asks `<base>/models` with the key, the way every chat request will be sent.
pub async fn list_models(settings: &LlmSettings) -> Result<ModelList, ProbeError> {
    let client = http_client(PROBE_TIMEOUT, settings.connect_timeout.min(PROBE_TIMEOUT))
        .map_err(|err| ProbeError::Unreachable(format!("cannot build the HTTP client: {err}")))?;
    let url = format!("{}/models", settings.base_url);
    let mut request = client.get(&url).timeout(PROBE_TIMEOUT);
    if let Some(key) = settings.key() {
        request = request.bearer_auth(key);
    }
    let redact = |text: String| match settings.key().filter(|k| k.len() >= 4) {
        Some(key) => text.replace(key, "[redacted]"),
        None => text,
    };
    let response = request
        .send()
        .await
        .map_err(|err| ProbeError::Unreachable(redact(describe_send_error(&err))))?;
    let status = response.status().as_u16();
    let body = response.text().await.unwrap_or_default();
    match status {
        200..=299 => Ok(parse_model_list(&body)),
        401 | 403 => Err(ProbeError::KeyRefused {
            status,
            detail: redact(error_detail(&body)),
        }),
        // No such endpoint (llama.cpp before it had one, some proxies): not an error.
        404 | 405 | 501 => Ok(ModelList::Unlisted),
        _ => Err(ProbeError::Failed {
            status,
            detail: redact(error_detail(&body)),
        }),
    }
}

/// The ids of OpenAI's `{"data": [{"id": …}]}` (Ollama and llama.cpp answer the same way;
/// a bare list or `models` is read too).
fn parse_model_list(body: &str) -> ModelList {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return ModelList::Unlisted;
    };
    let list = value
        .get("data")
        .or_else(|| value.get("models"))
        .unwrap_or(&value);
    let Some(items) = list.as_array() else {
        return ModelList::Unlisted;
    };
    let ids: Vec<String> = items
        .iter()
        .filter_map(|item| {
            item.get("id")
                .or_else(|| item.get("name"))
                .or_else(|| item.get("model"))
                .and_then(Value::as_str)
                .or_else(|| item.as_str())
                .map(str::to_string)
        })
        .collect();
    if ids.is_empty() {
        ModelList::Unlisted
    } else {
        ModelList::Listed(ids)
    }
}

/// The message of an OpenAI-style error body, else the start of the body, on one line.
fn error_detail(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = message.unwrap_or_else(|| body.to_string());
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.is_empty() {
        "no message".to_string()
    } else {
        snippet(&one_line)
    }
}

/// A failed send in a few words: what went wrong, with the innermost cause.
fn describe_send_error(err: &reqwest::Error) -> String {
    let what = if err.is_timeout() {
        "no answer within the time allowed"
    } else if err.is_connect() {
        "cannot connect"
    } else {
        "the request failed"
    };
    let mut cause: &dyn std::error::Error = err;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!("{what} ({cause})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_in_the_shapes_servers_send() {
        let cases = [
            (
                r#"{"object":"list","data":[{"id":"gpt-4o"},{"id":"local"}]}"#,
                Some(vec!["gpt-4o", "local"]),
            ),
            (r#"{"models":[{"name":"qwen"}]}"#, Some(vec!["qwen"])),
            (r#"["a","b"]"#, Some(vec!["a", "b"])),
            (r#"{"data":[]}"#, None),
            ("<html>not json</html>", None),
            (r#"{"data":"x"}"#, None),
        ];
        for (body, expected) in cases {
            let expected = match expected {
                Some(ids) => ModelList::Listed(ids.into_iter().map(String::from).collect()),
                None => ModelList::Unlisted,
            };
            assert_eq!(parse_model_list(body), expected, "{body}");
        }
    }

    #[test]
    fn error_details_are_one_line() {
        assert_eq!(
            error_detail(r#"{"error":{"message":"Incorrect API key\nprovided"}}"#),
            "Incorrect API key provided"
        );
        assert_eq!(error_detail(""), "no message");
        assert_eq!(error_detail("Bad\n gateway"), "Bad gateway");
    }
}
