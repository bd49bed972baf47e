//! The turn loop against a fake model on 127.0.0.1 and a fake tool box.

use std::sync::Mutex;

use serde_json::json;
use wiremock::{MockServer, ResponseTemplate};

use super::*;
use crate::agents::llm::testing::{answer, client, completion, request_bodies};

/// Records every call and answers with a canned text.
#[derive(Default)]
struct FakeTools {
    calls: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ToolExecutor for FakeTools {
    fn definitions(&self) -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}),
        ]
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolResultText {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_string(), arguments.to_string()));
        ToolResultText {
            content: format!("result of {name} {arguments}"),
            is_error: false,
            fatal: false,
        }
    }
}

fn ok(body: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(body)
}

/// A conversation with the fake model at `server`, from a fixed prompt and default options.
async fn converse(
    server: &MockServer,
    tools: Option<&dyn ToolExecutor>,
    max_turns: u32,
    transcript: &Transcript,
) -> Result<Conversation, ConversationError> {
    let prompt = Prompt {
        system: "sys",
        user: "task",
        tools,
        options: ConverseOptions::default(),
    };
    converse_with(&client(server), prompt, max_turns, transcript).await
}

#[tokio::test]
async fn tool_calls_are_answered_one_message_per_id() {
    let server = MockServer::start().await;
    let calls = [
        ("c1", "read_file", r#"{"path":"a"}"#),
        ("c2", "read_file", r#"{"path":"b"}"#),
    ];
    answer(&server, ok(completion(Some("looking"), &calls)), 1).await;
    answer(&server, ok(completion(Some("all done"), &[])), 1).await;
    let tools = FakeTools::default();
    let board = tempfile::tempdir().unwrap();
    let transcript = Transcript::create(board.path(), "story-1", "research").unwrap();

    let done = converse(&server, Some(&tools), 5, &transcript)
        .await
        .unwrap();
    assert_eq!(done.final_text, "all done");
    assert_eq!((done.turns, done.tool_calls), (2, 2));
    assert_eq!(
        done.usage,
        Usage {
            prompt_tokens: 20,
            completion_tokens: 10,
            requests: 2,
            cost_usd: None,
            estimated: false,
        }
    );
    let made: Vec<(String, String)> = tools.calls.lock().unwrap().clone();
    assert_eq!(
        made,
        [
            ("read_file".into(), r#"{"path":"a"}"#.into()),
            ("read_file".into(), r#"{"path":"b"}"#.into())
        ]
    );

    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["tools"][0]["function"]["name"], "read_file");
    let second = bodies[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = second.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(second[2]["tool_calls"][0]["id"], "c1");
    assert_eq!(
        second[2]["tool_calls"][1]["function"]["arguments"],
        r#"{"path":"b"}"#
    );
    assert_eq!(
        second[3],
        json!({"role": "tool", "tool_call_id": "c1", "content": r#"result of read_file {"path":"a"}"#})
    );
    assert_eq!(second[4]["tool_call_id"], "c2");

    let log = fs_err::read_to_string(transcript.path().unwrap()).unwrap();
    let events: Vec<String> = log
        .lines()
        .map(|line| {
            serde_json::from_str::<Value>(line).unwrap()["event"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        events,
        [
            "request",
            "attempt",
            "response",
            "tool_call",
            "tool_call",
            "request",
            "attempt",
            "response",
            "done"
        ]
    );
    assert!(!log.contains(crate::agents::llm::testing::KEY));
}

#[tokio::test]
async fn tools_refused_on_the_first_turn_are_dropped_once() {
    let server = MockServer::start().await;
    let refused = ResponseTemplate::new(400)
        .set_body_json(json!({"error": "model tiny does not support tools"}));
    answer(&server, refused, 1).await;
    answer(&server, ok(completion(Some("plain answer"), &[])), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript = Transcript::create(board.path(), "story-1", "plan").unwrap();

    let tools = FakeTools::default();
    let done = converse(&server, Some(&tools), 5, &transcript)
        .await
        .unwrap();
    assert_eq!(done.final_text, "plain answer");
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0].get("tools").is_some());
    assert!(bodies[1].get("tools").is_none());
    let log = fs_err::read_to_string(transcript.path().unwrap()).unwrap();
    assert!(log.contains("\"event\":\"tools_unsupported\""), "{log}");
}

#[tokio::test]
async fn max_turns_ends_a_model_that_never_stops() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(completion(None, &[("c", "read_file", "{}")])),
        100,
    )
    .await;
    let tools = FakeTools::default();
    let err = converse(&server, Some(&tools), 2, &Transcript::disabled())
        .await
        .unwrap_err();
    assert!(matches!(err.error, LlmError::MaxTurns(2)), "{err:?}");
    assert_eq!(err.usage.requests, 2, "usage of the failed turns is kept");
    assert_eq!(request_bodies(&server).await.len(), 2);
    assert_eq!(
        tools.calls.lock().unwrap().len(),
        1,
        "the calls of the last turn are not run"
    );
}

#[tokio::test]
async fn tool_calls_without_tools_get_error_results() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(completion(None, &[("c", "write_file", "{}")])),
        1,
    )
    .await;
    answer(&server, ok(completion(Some("ok"), &[])), 1).await;
    let done = converse(&server, None, 3, &Transcript::disabled())
        .await
        .unwrap();
    assert_eq!(done.final_text, "ok");
    let bodies = request_bodies(&server).await;
    assert!(bodies[0].get("tools").is_none());
    assert!(bodies[1]["messages"][3]["content"]
        .as_str()
        .unwrap()
        .contains("no tools are available"));
}

#[tokio::test]
async fn a_failing_request_ends_the_conversation() {
    let server = MockServer::start().await;
    answer(&server, ResponseTemplate::new(401), 1).await;
    let err = converse(&server, None, 3, &Transcript::disabled())
        .await
        .unwrap_err();
    assert!(matches!(err.error, LlmError::Auth { .. }), "{err:?}");
}

/// A tool box whose every call breaks on the tool's side.
struct BrokenTools;

#[async_trait]
impl ToolExecutor for BrokenTools {
    fn definitions(&self) -> Vec<Value> {
        FakeTools::default().definitions()
    }

    async fn call(&self, _name: &str, _arguments: &str) -> ToolResultText {
        ToolResultText {
            content: "Error: cannot start sh: No such file or directory".into(),
            is_error: true,
            fatal: true,
        }
    }
}

#[tokio::test]
async fn a_fatal_tool_error_ends_the_conversation() {
    let server = MockServer::start().await;
    let calls = [("c1", "run_command", r#"{"command":"make"}"#)];
    answer(&server, ok(completion(Some("building"), &calls)), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript = Transcript::create(board.path(), "story-1", "implement").unwrap();

    let failed = converse(&server, Some(&BrokenTools), 5, &transcript)
        .await
        .unwrap_err();

    assert!(matches!(failed.error, LlmError::Tool(_)), "{failed}");
    assert!(failed.to_string().contains("cannot start sh"), "{failed}");
    // The model was not asked again.
    assert_eq!(request_bodies(&server).await.len(), 1);
}
