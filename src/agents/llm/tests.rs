//! The client against a fake OpenAI-compatible server on 127.0.0.1.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::testing::{answer, client, completion, request_bodies, settings, sse, CHAT_PATH, KEY};
use super::*;

fn user(text: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::System("sys".into()),
        ChatMessage::User(text.into()),
    ]
}

#[tokio::test]
async fn plain_reply_sends_the_bearer_key_and_counts_usage() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(CHAT_PATH))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(Some("hello"), &[])))
        .expect(1)
        .mount(&server)
        .await;
    let client = client(&server);
    let reply = client.chat(&user("hi"), &[]).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("hello"));
    assert!(reply.tool_calls.is_empty());
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            requests: 1,
            cost_usd: None,
            estimated: false,
        }
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("stop"));

    let body = &request_bodies(&server).await[0];
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
    assert!(body.get("tools").is_none(), "no tools, no `tools` key");
    assert!(!format!("{client:?}").contains(KEY), "{client:?}");
    assert!(!format!("{:?}", client.settings()).contains(KEY));
}

#[tokio::test]
async fn a_reply_without_usage_is_counted_from_its_size_and_marked_estimated() {
    let server = MockServer::start().await;
    let body = json!({"choices": [{"message": {"content": "twelve chars"}}], "x_extra": {"a": 1}});
    answer(&server, ResponseTemplate::new(200).set_body_json(body), 1).await;
    let messages = vec![ChatMessage::User("x".repeat(400))];
    let reply = client(&server).chat(&messages, &[]).await.unwrap();
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 100,
            completion_tokens: 3,
            requests: 1,
            cost_usd: None,
            estimated: true,
        }
    );
    assert_eq!(reply.finish_reason, None);
}

#[tokio::test]
async fn streaming_reply_aggregates_content_tool_calls_and_usage() {
    let server = MockServer::start().await;
    let delta =
        |delta: Value| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
    let chunks = [
        delta(json!({"role": "assistant", "content": "Hel"})),
        delta(json!({"content": "lo"})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"pa"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "th\": \"a.rs\"}"}}]})),
        delta(json!({"tool_calls": [{"index": 1, "id": "call_b",
            "function": {"name": "list_files", "arguments": ""}}]})),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}),
    ];
    answer(&server, sse(&chunks), 1).await;
    let client = LlmClient::new(LlmSettings {
        stream: true,
        ..settings(&server)
    })
    .unwrap();
    let tools = [json!({"type": "function", "function": {"name": "read_file"}})];
    let reply = client.chat(&user("hi"), &tools).await.unwrap();

    assert_eq!(reply.content.as_deref(), Some("Hello"));
    let calls: Vec<(&str, &str, &str)> = reply
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "read_file", r#"{"path": "a.rs"}"#),
            ("call_b", "list_files", "{}")
        ]
    );
    assert_eq!(
        reply.usage,
        Usage {
            prompt_tokens: 7,
            completion_tokens: 3,
            requests: 1,
            cost_usd: None,
            estimated: false,
        }
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));

    let body = &request_bodies(&server).await[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["tools"], Value::Array(tools.to_vec()));
}

#[tokio::test]
async fn a_reply_that_loops_keeps_one_copy_of_the_loop_and_counts_as_cut_off() {
    let server = MockServer::start().await;
    let head = "test_a.py\n```python\ndef test_a():\n";
    let line = "    assert double(2) == 4\n";
    let delta = |content: &str| json!({"choices": [{"index": 0, "delta": {"content": content}}]});
    let mut chunks = vec![delta(head)];
    chunks.extend((0..40).map(|_| delta(line)));
    // The loop goes on: no last event and no `[DONE]` yet.
    let body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    let looping = ResponseTemplate::new(200).set_body_raw(body, "text/event-stream");
    answer(&server, looping, 1).await;
    let streaming = LlmClient::new(LlmSettings {
        stream: true,
        ..settings(&server)
    })
    .unwrap();

    let reply = streaming.chat(&user("hi"), &[]).await.unwrap();

    assert_eq!(reply.content, Some(format!("{head}{line}")));
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    // Not streamed: a whole reply cut at the cap keeps one copy too; one that stopped keeps all.
    let looped = format!("{head}{}", line.repeat(40));
    for (finish, kept) in [
        ("length", format!("{head}{line}")),
        ("stop", looped.clone()),
    ] {
        let server = MockServer::start().await;
        let mut whole = completion(Some(&looped), &[]);
        whole["choices"][0]["finish_reason"] = json!(finish);
        answer(&server, ResponseTemplate::new(200).set_body_json(whole), 1).await;
        let reply = client(&server).chat(&user("hi"), &[]).await.unwrap();
        assert_eq!(reply.content, Some(kept), "{finish}");
    }
}

/// Streams `text` word by word to `prompt` twice, first for a reply of `shape`, then for one
/// of any shape, and returns both replies.
async fn streamed_twice(text: &str, prompt: &str, shape: ReplyShape) -> (ChatReply, ChatReply) {
    let server = MockServer::start().await;
    let delta = |content: &str| json!({"choices": [{"index": 0, "delta": {"content": content}}]});
    let body: String = text
        .split_inclusive(' ')
        .map(|word| format!("data: {}\n\n", delta(word)))
        .collect();
    answer(
        &server,
        ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"),
        2,
    )
    .await;
    let streaming = LlmClient::new(LlmSettings {
        stream: true,
        ..settings(&server)
    })
    .unwrap();
    let messages = user(prompt);
    let shaped = streaming
        .exchange(&ChatRequest {
            shape,
            ..ChatRequest::new(&messages, &[])
        })
        .await
        .result
        .unwrap();
    let free = streaming.chat(&messages, &[]).await.unwrap();
    (shaped, free)
}

/// The 1.5B model's first implement turn of orchard `pricing-module` (2026-12-06): the module
/// and its tests, then the module again, until the cap 300 seconds in.
#[tokio::test]
async fn a_streamed_reply_that_goes_round_its_files_keeps_its_first_round() {
    let first = "orchard/pricing.py\n```python\ndef price(kg):\n    return kg * 2\n```\n\ntests/test_pricing.py\n```python\nfrom orchard.pricing import price\n\n\ndef test_price():\n    assert price(1) == 2\n```\n\n";
    let again =
        format!("{first}orchard/pricing.py\n```python\ndef price(kg):\n    return kg * 2\n");
    let prompt = "Write orchard/pricing.py and its tests.";

    let (files, prose) = streamed_twice(&again, prompt, ReplyShape::Files).await;

    assert_eq!(files.finish_reason.as_deref(), Some("length"));
    assert_eq!(files.content.as_deref(), Some(first));
    // A reply of another shape may write a path twice.
    assert_eq!(prose.content, Some(again));
}

/// The 1.5B model's implement reply in the inventory benchmark (2026-12-06): its prompt again,
/// word for word from the top, for 215 seconds.
#[tokio::test]
async fn a_streamed_reply_that_copies_its_prompt_back_is_stopped_when_the_request_says_so() {
    let prompt = "# Story: A receipt line\n\nType: feature\n\n## Summary\nAdd `receipt_line(name, cents)` to inventory/money.py: the name, a colon and a space, then the price as `format_price` writes it.\n\n## Acceptance Criteria\n- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`\n- [ ] `receipt_line(\"TV\", 129900)` returns `\"TV: $1,299.00\"`\n- [ ] `receipt_line` calls `format_price`\n\n## Task\nMake the change now: write out each file you change, whole, under its path. When every change is made, reply with short notes: what you changed and in which files.\n";
    let echoed = format!("```markdown\n{prompt}```\n");

    let (watched, unwatched) = streamed_twice(&echoed, prompt, ReplyShape::Files).await;

    // The fake server sends the body at once, so the stream is cut at its end (where a stream
    // that arrives word by word is cut is `stream`'s test), and the reply where the copy starts.
    assert_eq!(watched.finish_reason.as_deref(), Some(echo::ECHO_FINISH));
    assert_eq!(watched.content.as_deref(), Some("```markdown\n"));
    // A request that may copy its prompt (refine rewrites the story) reads it whole.
    assert_eq!(unwatched.content, Some(echoed));
    assert_eq!(unwatched.finish_reason, None);
}

#[tokio::test]
async fn a_whole_reply_to_a_request_for_a_stream_is_read() {
    let server = MockServer::start().await;
    let whole = completion(Some("Whole."), &[("call_1", "read_file", "{}")]);
    answer(&server, ResponseTemplate::new(200).set_body_json(whole), 1).await;
    let streaming = LlmClient::new(LlmSettings {
        stream: true,
        ..settings(&server)
    })
    .unwrap();

    let reply = streaming.chat(&user("hi"), &[]).await.unwrap();

    assert_eq!(reply.content.as_deref(), Some("Whole."));
    assert_eq!(reply.tool_calls[0].name, "read_file");
    assert_eq!(request_bodies(&server).await[0]["stream"], true);
}

#[tokio::test]
async fn error_inside_a_stream_is_classified_and_retried() {
    let server = MockServer::start().await;
    let failed = json!({"error": {"message": "Provider returned error", "code": 502}});
    answer(&server, sse(&[failed]), 1).await;
    let recovered = json!({"choices": [{"delta": {"content": "ok"}, "finish_reason": "stop"}]});
    answer(&server, sse(&[recovered]), 1).await;
    let client = LlmClient::new(LlmSettings {
        stream: true,
        ..settings(&server)
    })
    .unwrap();
    let reply = client.chat(&user("hi"), &[]).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(
        reply.usage.requests, 1,
        "no usage chunk still counts the request"
    );
    assert_eq!(request_bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn server_error_is_retried() {
    let server = MockServer::start().await;
    answer(
        &server,
        ResponseTemplate::new(500).set_body_string("upstream broke"),
        1,
    )
    .await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_json(completion(Some("ok"), &[])),
        1,
    )
    .await;
    let reply = client(&server).chat(&user("hi"), &[]).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert_eq!(request_bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn rate_limit_waits_for_retry_after() {
    let server = MockServer::start().await;
    let limited = ResponseTemplate::new(429)
        .insert_header("retry-after", "1")
        .set_body_json(json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}));
    answer(&server, limited, 1).await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_json(completion(Some("ok"), &[])),
        1,
    )
    .await;
    let started = Instant::now();
    let reply = client(&server).chat(&user("hi"), &[]).await.unwrap();
    assert_eq!(reply.content.as_deref(), Some("ok"));
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(request_bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn retries_stop_at_max_retries() {
    let server = MockServer::start().await;
    answer(&server, ResponseTemplate::new(503), 10).await;
    let err = client(&server).chat(&user("hi"), &[]).await.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 503, .. }), "{err:?}");
    assert_eq!(
        request_bodies(&server).await.len(),
        3,
        "one try and max_retries = 2 retries"
    );
}

#[tokio::test]
async fn unauthorized_is_not_retried_and_never_shows_the_key() {
    let server = MockServer::start().await;
    let refused = ResponseTemplate::new(401).set_body_json(json!({"error": {
        "message": format!("Incorrect API key provided: {KEY}"), "type": "invalid_request_error", "code": "invalid_api_key"}}));
    answer(&server, refused, 10).await;
    let err = client(&server).chat(&user("hi"), &[]).await.unwrap_err();
    assert!(matches!(err, LlmError::Auth { status: 401, .. }), "{err:?}");
    assert_eq!(
        crate::hint::Hint::hint(&err).as_deref(),
        Some("check the API key in the variable named by llm.apiKeyEnv")
    );
    assert!(!err.to_string().contains("Hint"), "{err}");
    assert!(!err.is_retryable());
    assert_eq!(request_bodies(&server).await.len(), 1);
    for text in [format!("{err:?}"), err.to_string()] {
        assert!(!text.contains(KEY), "{text}");
        assert!(
            text.contains("test-model") && text.contains(&server.uri()),
            "{text}"
        );
    }
}

#[tokio::test]
async fn context_length_is_not_retried() {
    let server = MockServer::start().await;
    let too_long = ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}}));
    answer(&server, too_long, 10).await;
    let err = client(&server).chat(&user("hi"), &[]).await.unwrap_err();
    assert!(matches!(err, LlmError::ContextLength(_)), "{err:?}");
    assert_eq!(request_bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn refused_connection_is_retried_then_reported() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = MockServer::start().await;
    let client = LlmClient::new(LlmSettings {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        max_retries: 1,
        ..settings(&server)
    })
    .unwrap();
    let err = client.chat(&user("hi"), &[]).await.unwrap_err();
    assert!(matches!(err, LlmError::Connection(_)), "{err:?}");
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{port}")),
        "{err}"
    );
}

#[tokio::test]
async fn unreadable_reply_is_invalid_response() {
    let server = MockServer::start().await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_string("<html>hi</html>"),
        10,
    )
    .await;
    let err = client(&server).chat(&user("hi"), &[]).await.unwrap_err();
    assert!(matches!(err, LlmError::InvalidResponse(_)), "{err:?}");
    assert_eq!(request_bodies(&server).await.len(), 1);
}

/// Whether a remote endpoint streams with only its key set.
fn settings_of_remote_without_stream_set(remote: &Config) -> bool {
    let with_key = |name: &str| (name == "MY_KEY").then(|| "sk-x".to_string());
    LlmSettings::from_config_with_env(remote, with_key)
        .unwrap()
        .stream
}

fn config(llm: Value) -> Config {
    Config::from_value(
        crate::config::merged_value(&json!({"llm": llm})),
        Path::new("c.json"),
    )
    .unwrap()
}

#[test]
fn settings_need_a_key_only_for_remote_endpoints() {
    let no_env = |_: &str| None;
    let remote = config(json!({"baseUrl": "https://api.example.com/v1/", "apiKeyEnv": "MY_KEY"}));
    let err = LlmSettings::from_config_with_env(&remote, no_env).unwrap_err();
    assert_eq!(err.exit_status(), crate::error::ExitStatus::Usage);
    let text = err.to_string();
    assert!(
        text.contains("environment variable MY_KEY is not set")
            && text.contains("https://api.example.com/v1")
            && !text.contains("config error"),
        "{text}"
    );

    let with_key = |name: &str| (name == "MY_KEY").then(|| " sk-x\n".to_string());
    let settings = LlmSettings::from_config_with_env(&remote, with_key).unwrap();
    assert_eq!(settings.key(), Some("sk-x"));
    assert_eq!(settings.base_url, "https://api.example.com/v1");
    assert!(!format!("{settings:?}").contains("sk-x"));

    let local = config(
        json!({"baseUrl": "http://localhost:11434/v1", "timeoutSeconds": 42, "maxRetries": 5}),
    );
    let settings = LlmSettings::from_config_with_env(&local, no_env).unwrap();
    assert!(settings.api_key.is_none());
    assert_eq!(settings.read_timeout, Duration::from_secs(42));
    assert_eq!(settings.max_retries, 5);
    // A local server streams unless told not to; a remote one only when told to.
    assert!(settings.stream);
    let stream_set = |value: &'static str| {
        move |name: &str| match name {
            "AGENTIC_SDLC_STREAM" => Some(value.to_string()),
            "MY_KEY" => Some("sk-x".to_string()),
            _ => None,
        }
    };
    assert!(!settings_of_remote_without_stream_set(&remote));
    for (value, local_streams, remote_streams) in [
        ("0", false, false),
        ("false", false, false),
        ("1", true, true),
        ("true", true, true),
    ] {
        let streams = |config: &Config| {
            LlmSettings::from_config_with_env(config, stream_set(value))
                .unwrap()
                .stream
        };
        assert_eq!(streams(&local), local_streams, "local, {value}");
        assert_eq!(streams(&remote), remote_streams, "remote, {value}");
    }
}

#[test]
fn local_hosts() {
    let cases = [
        ("http://localhost:11434/v1", true),
        ("http://LOCALHOST/v1", true),
        ("http://127.0.0.1:8080", true),
        ("http://[::1]:8000/v1", true),
        ("http://user:pw@localhost/v1", true),
        ("https://api.openai.com/v1", false),
        ("https://localhost.evil.com/v1", false),
        ("http://10.0.0.5:8000/v1", false),
        ("http://127.example.com/v1", false),
        ("http://127.0.0.1.nip.io/v1", false),
        ("http://127.1.2.3:9/v1", true),
        ("not a url", false),
    ];
    for (url, local) in cases {
        assert_eq!(settings::is_local(url), local, "{url}");
    }
}

fn verdict_schema() -> ResponseSchema {
    ResponseSchema {
        name: "verdict",
        schema: json!({"type": "object", "properties": {
            "maxLength": {"type": "string", "maxLength": 9}
        }}),
    }
}

#[tokio::test]
async fn a_refused_schema_is_dropped_for_the_rest_of_the_client_s_life() {
    let server = MockServer::start().await;
    let bounds_refused = ResponseTemplate::new(400).set_body_json(json!({"error": {
        "message": "Invalid schema for response_format 'verdict': 'maxLength' is not permitted."}}));
    answer(&server, bounds_refused, 1).await;
    let refused = ResponseTemplate::new(400)
        .set_body_json(json!({"error": {"message": "response_format is not supported"}}));
    answer(&server, refused, 1).await;
    answer(
        &server,
        ResponseTemplate::new(200).set_body_json(completion(Some("{}"), &[])),
        10,
    )
    .await;
    let client = client(&server);
    let messages = user("hi");
    let schema = verdict_schema();
    let request = ChatRequest {
        schema: Some(&schema),
        max_tokens: Some(77),
        ..ChatRequest::new(&messages, &[])
    };

    let first = client.exchange(&request).await;
    let second = client.exchange(&request).await;

    assert!(first.result.is_ok() && second.result.is_ok());
    // The bounded schema, the schema without bounds, then no schema at all.
    let structured: Vec<bool> = first.attempts.iter().map(|a| a.structured).collect();
    assert_eq!(structured, [true, true, false]);
    assert_eq!(first.usage().requests, 3);
    assert_eq!(second.attempts.len(), 1);
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 4);
    let property = |body: &Value| {
        body["response_format"]["json_schema"]["schema"]["properties"]["maxLength"].clone()
    };
    assert_eq!(
        bodies[0]["response_format"]["json_schema"]["name"],
        "verdict"
    );
    assert_eq!(
        property(&bodies[0]),
        json!({"type": "string", "maxLength": 9})
    );
    // A property named like a bound stays; its own bound goes.
    assert_eq!(property(&bodies[1]), json!({"type": "string"}));
    assert!(bodies[2].get("response_format").is_none());
    assert!(bodies[3].get("response_format").is_none(), "remembered");
    assert!(bodies.iter().all(|b| b["max_tokens"] == 77));
}

#[tokio::test]
async fn a_timeout_is_retried_once_whatever_max_retries_says() {
    let server = MockServer::start().await;
    let slow = ResponseTemplate::new(200)
        .set_body_json(completion(Some("late"), &[]))
        .set_delay(Duration::from_secs(2));
    answer(&server, slow, 10).await;
    let client = LlmClient::new(LlmSettings {
        read_timeout: Duration::from_millis(300),
        max_retries: 5,
        ..settings(&server)
    })
    .unwrap();
    let messages = user("hi");

    let exchange = client.exchange(&ChatRequest::new(&messages, &[])).await;

    assert!(
        matches!(exchange.result, Err(LlmError::Timeout(_))),
        "{:?}",
        exchange.result
    );
    assert_eq!(exchange.attempts.len(), 2);
    assert!(exchange
        .attempts
        .iter()
        .all(|a| matches!(a.outcome, AttemptOutcome::TimedOut { .. })));
    assert_eq!(exchange.usage().requests, 2);
}

#[tokio::test]
async fn a_streamed_reply_still_going_at_the_deadline_is_kept_as_cut_off() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A server that streams a new line every 50 ms and never ends.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&requests);
    let server = tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for n in 0.. {
                    let chunk = json!({"choices": [{"index": 0, "delta": {"content": format!("line {n}\n")}}]});
                    let event = format!("data: {chunk}\n\n");
                    let framed = format!("{:x}\r\n{event}\r\n", event.len());
                    if socket.write_all(framed.as_bytes()).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            });
        }
    });
    let client = LlmClient::new(LlmSettings {
        read_timeout: Duration::from_millis(600),
        stream: true,
        ..super::testing::settings_for(&format!("http://{address}/v1"))
    })
    .unwrap();
    let messages = user("hi");

    let started = Instant::now();
    let exchange = client.exchange(&ChatRequest::new(&messages, &[])).await;

    let reply = exchange.result.expect("the reply so far");
    assert!(
        reply
            .content
            .as_deref()
            .unwrap_or("")
            .starts_with("line 0\nline 1\n"),
        "{reply:?}"
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    assert_eq!(
        requests.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "not asked again"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    server.abort();
}
