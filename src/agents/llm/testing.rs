//! Helpers for tests that fake the model over HTTP with wiremock, so the real client (and
//! async-openai inside it) is exercised.

use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{LlmClient, LlmSettings};

pub(crate) const KEY: &str = "sk-test-very-secret-key";
pub(crate) const CHAT_PATH: &str = "/v1/chat/completions";

pub(crate) fn settings(server: &MockServer) -> LlmSettings {
    settings_for(&format!("{}/v1", server.uri()))
}

/// The settings of a client of the server at `base_url`.
pub(crate) fn settings_for(base_url: &str) -> LlmSettings {
    LlmSettings {
        base_url: base_url.to_string(),
        model: "test-model".to_string(),
        api_key: Some(KEY.into()),
        read_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
        max_retries: 2,
        stream: false,
        retry_base: Duration::from_millis(5),
        max_tokens: 256,
        structured_outputs: crate::config::StructuredOutputs::Auto,
    }
}

pub(crate) fn client(server: &MockServer) -> LlmClient {
    LlmClient::new(settings(server)).unwrap()
}

/// A chat completion body as OpenAI sends it.
pub(crate) fn completion(content: Option<&str>, tool_calls: &[(&str, &str, &str)]) -> Value {
    let calls: Vec<Value> = tool_calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    })
}

/// Answers the next `times` chat requests with `response`; mocks mounted earlier win while
/// they last, so a script is mounted in order.
pub(crate) async fn answer(server: &MockServer, response: ResponseTemplate, times: u64) {
    Mock::given(method("POST"))
        .and(path(CHAT_PATH))
        .respond_with(response)
        .up_to_n_times(times)
        .mount(server)
        .await;
}

pub(crate) async fn request_bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|request| request.body_json().unwrap())
        .collect()
}

/// A server-sent-events body: one `data:` event per chunk, then `[DONE]`.
pub(crate) fn sse(chunks: &[Value]) -> ResponseTemplate {
    let mut body: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(body, "text/event-stream")
}
