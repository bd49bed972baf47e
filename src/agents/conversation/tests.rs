//! The turn loop against a fake model on 127.0.0.1 and a fake tool box.

use std::sync::Mutex;

use serde_json::json;
use wiremock::{MockServer, ResponseTemplate};

use super::*;
use crate::agents::llm::testing::{answer, client, completion, request_bodies};
use crate::agents::{CallFailure, ToolOutcome};
use crate::board::StoryId;
use async_trait::async_trait;

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

    async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        self.calls
            .lock()
            .unwrap()
            .push((name.to_string(), arguments.to_string()));
        ToolOutcome::done(format!("result of {name} {arguments}"))
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
    converse_as(
        server,
        tools,
        ToolProtocol::Auto,
        None,
        max_turns,
        transcript,
    )
    .await
}

async fn converse_as(
    server: &MockServer,
    tools: Option<&dyn ToolExecutor>,
    protocol: ToolProtocol,
    check: Option<&dyn WorkCheck>,
    max_turns: u32,
    transcript: &Transcript,
) -> Result<Conversation, ConversationError> {
    let prompt = Prompt {
        system: "sys",
        user: "task",
        tools,
        check,
        options: ConverseOptions {
            protocol,
            ..ConverseOptions::default()
        },
    };
    converse_with(&client(server), prompt, max_turns, transcript).await
}

/// The transcript's entries of one event.
/// The text of the last message of a request's body.
fn last_message_of(body: &Value) -> String {
    body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string()
}

fn entries(transcript: &Transcript, event: &str) -> Vec<Value> {
    fs_err::read_to_string(transcript.path().unwrap())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|entry| entry["event"] == event)
        .collect()
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
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "research").unwrap();

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
    let transcript = Transcript::create(board.path(), &StoryId::from("story-1"), "plan").unwrap();

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
async fn a_spent_turn_budget_withdraws_the_tools_and_asks_for_the_answer() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(completion(
            Some("Found what I need."),
            &[("c", "read_file", "{}")],
        )),
        100,
    )
    .await;
    let tools = FakeTools::default();
    let done = converse(&server, Some(&tools), 2, &Transcript::disabled())
        .await
        .unwrap();
    // Two turns, then one request without tools that asks for the answer; its text is it.
    assert_eq!(done.final_text, "Found what I need.");
    assert_eq!(done.usage.requests, 3);
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    assert!(bodies[1].get("tools").is_some());
    assert!(bodies[2].get("tools").is_none(), "the tools are withdrawn");
    let last = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .starts_with("You have used all 2 turns"),
        "{last}"
    );
    assert_eq!(
        tools.calls.lock().unwrap().len(),
        1,
        "the second turn's call repeats the first and is answered from above; the last \
         turn's calls are not run"
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

    async fn call(&self, _name: &str, _arguments: &str) -> ToolOutcome {
        ToolOutcome::failed(
            "Error: cannot start sh: No such file or directory",
            CallFailure::Fatal,
        )
    }
}

#[tokio::test]
async fn a_fatal_tool_error_ends_the_conversation() {
    let server = MockServer::start().await;
    let calls = [("c1", "run_command", r#"{"command":"make"}"#)];
    answer(&server, ok(completion(Some("building"), &calls)), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "implement").unwrap();

    let failed = converse(&server, Some(&BrokenTools), 5, &transcript)
        .await
        .unwrap_err();

    assert!(matches!(failed.error, LlmError::Tool(_)), "{failed}");
    assert!(failed.to_string().contains("cannot start sh"), "{failed}");
    // The model was not asked again.
    assert_eq!(request_bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn under_auto_a_call_written_in_a_fence_runs_and_stands_as_a_native_call() {
    let server = MockServer::start().await;
    let fenced = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n```";
    answer(&server, ok(completion(Some(fenced), &[])), 1).await;
    answer(&server, ok(completion(Some("done"), &[])), 1).await;
    let tools = FakeTools::default();
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "implement").unwrap();

    let done = converse(&server, Some(&tools), 5, &transcript)
        .await
        .unwrap();

    assert_eq!((done.final_text.as_str(), done.tool_calls), ("done", 1));
    assert_eq!(
        tools.calls.lock().unwrap().clone(),
        [("read_file".to_string(), r#"{"path":"a"}"#.to_string())]
    );
    let bodies = request_bodies(&server).await;
    let history = bodies[1]["messages"].as_array().unwrap();
    assert_eq!(history[2]["tool_calls"][0]["function"]["name"], "read_file");
    assert_eq!(history[3]["role"], "tool");
    assert_eq!(
        history[3]["tool_call_id"],
        history[2]["tool_calls"][0]["id"]
    );
    let calls = entries(&transcript, "tool_call");
    assert_eq!(
        (calls[0]["protocol"].as_str(), calls[0]["form"].as_str()),
        (Some("text"), Some("json_fence"))
    );
}

#[tokio::test]
async fn under_native_a_call_in_the_text_is_only_text() {
    let server = MockServer::start().await;
    let bare = r#"{"name": "read_file", "arguments": {"path": "a"}}"#;
    answer(&server, ok(completion(Some(bare), &[])), 1).await;
    let tools = FakeTools::default();
    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Native,
        None,
        5,
        &Transcript::disabled(),
    )
    .await
    .unwrap();
    assert_eq!((done.final_text.as_str(), done.tool_calls), (bare, 0));
    assert!(tools.calls.lock().unwrap().is_empty());
}

#[tokio::test]
async fn under_text_the_tools_are_described_and_one_action_per_reply_runs() {
    let server = MockServer::start().await;
    let two = "```bash\nls\n```\nthen\n```bash\nrm -rf x\n```";
    answer(&server, ok(completion(Some(two), &[])), 1).await;
    answer(&server, ok(completion(Some("All done."), &[])), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "implement").unwrap();

    let shell = ShellTools(FakeTools::default());
    let done = converse_as(
        &server,
        Some(&shell),
        ToolProtocol::Text,
        None,
        5,
        &transcript,
    )
    .await
    .unwrap();

    assert_eq!(
        (done.final_text.as_str(), done.tool_calls),
        ("All done.", 1)
    );
    assert_eq!(
        shell.0.calls.lock().unwrap().clone(),
        [("run_command".to_string(), r#"{"command":"ls"}"#.to_string())]
    );
    let bodies = request_bodies(&server).await;
    assert!(
        bodies[0].get("tools").is_none(),
        "no native tools under text"
    );
    let system = bodies[0]["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("sys\n\n# How you act"), "{system}");
    assert!(
        system.contains("- run_command: runs it. Arguments: command (string)."),
        "{system}"
    );
    let history = bodies[1]["messages"].as_array().unwrap();
    let roles: Vec<&str> = history
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    let observation = history[3]["content"].as_str().unwrap();
    assert!(
        observation.starts_with("Output of your command:\nresult of run_command"),
        "{observation}"
    );
    assert!(
        observation.contains("Only your first action was run; 1 more"),
        "{observation}"
    );
    let calls = entries(&transcript, "tool_call");
    assert_eq!(calls[0]["form"], "bash_fence");
}

#[tokio::test]
async fn a_shell_fence_is_no_command_for_a_model_told_only_to_write_files_whole() {
    let server = MockServer::start().await;
    // Recorded (Qwen2.5-Coder-1.5B, 2026-11-27): whole-file implement telling a person what to
    // run; run as commands, `pip install pytest` came back 25 turns in a row.
    let advice = "You need to install `pytest` using `pip`. Run the following command:\n\n```sh\npip install pytest\n```";
    answer(&server, ok(completion(Some(advice), &[])), 1).await;
    let shell = ShellTools(FakeTools::default());
    let prompt = Prompt {
        system: "sys",
        user: "task",
        tools: Some(&shell),
        check: None,
        options: ConverseOptions {
            protocol: ToolProtocol::Text,
            tools_untold: true,
            ..ConverseOptions::default()
        },
    };
    let done = converse_with(&client(&server), prompt, 5, &Transcript::disabled())
        .await
        .unwrap();
    assert_eq!((done.final_text.as_str(), done.tool_calls), (advice, 0));
    assert!(shell.0.calls.lock().unwrap().is_empty());
    assert_eq!(request_bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn a_conversation_past_the_context_window_goes_on_without_its_oldest_turns() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(completion(None, &[("c1", "read_file", r#"{"path":"a"}"#)])),
        1,
    )
    .await;
    answer(
        &server,
        ok(completion(None, &[("c2", "read_file", r#"{"path":"b"}"#)])),
        1,
    )
    .await;
    // llama.cpp's words for a prompt longer than its context (HTTP 400).
    let too_long = ResponseTemplate::new(400).set_body_json(json!({"error": {
        "code": 400, "type": "exceed_context_size_error",
        "message": "the request exceeds the available context size, try increasing it"}}));
    answer(&server, too_long, 1).await;
    answer(&server, ok(completion(Some("all done"), &[])), 1).await;
    let tools = FakeTools::default();
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "implement").unwrap();

    let done = converse(&server, Some(&tools), 10, &transcript)
        .await
        .unwrap();

    assert_eq!(done.final_text, "all done");
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 4);
    assert_eq!(bodies[2]["messages"].as_array().unwrap().len(), 6);
    let kept = bodies[3]["messages"].as_array().unwrap();
    let roles: Vec<&str> = kept.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(kept[1]["content"], "task");
    assert_eq!(kept[2]["tool_calls"][0]["id"], "c2");
    let trimmed = entries(&transcript, "context_trimmed");
    assert_eq!(trimmed[0]["left_out"], 2);
}

/// Fake tools that include run_command, as implement's do.
struct ShellTools(FakeTools);

#[async_trait]
impl ToolExecutor for ShellTools {
    fn definitions(&self) -> Vec<Value> {
        vec![
            json!({"type": "function", "function": {"name": "run_command", "description": "runs it.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}),
        ]
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        self.0.call(name, arguments).await
    }
}

#[tokio::test]
async fn a_call_that_cannot_be_read_is_sent_back_not_taken_as_the_answer() {
    let server = MockServer::start().await;
    let broken = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": }}\n```";
    answer(&server, ok(completion(Some(broken), &[])), 1).await;
    answer(&server, ok(completion(Some("Nothing to change."), &[])), 1).await;
    let tools = FakeTools::default();
    let done = converse(&server, Some(&tools), 5, &Transcript::disabled())
        .await
        .unwrap();
    assert_eq!(done.final_text, "Nothing to change.");
    let bodies = request_bodies(&server).await;
    let feedback = bodies[1]["messages"][3]["content"].as_str().unwrap();
    assert!(
        feedback.starts_with("Error: a tool call in your reply could not be read"),
        "{feedback}"
    );
}

/// A check that fails a given number of times, then passes.
struct FlakyCheck {
    failures_left: Mutex<u32>,
    rounds: u32,
    runs: Mutex<u32>,
}

#[async_trait]
impl WorkCheck for FlakyCheck {
    async fn run(&self) -> Option<String> {
        *self.runs.lock().unwrap() += 1;
        let mut left = self.failures_left.lock().unwrap();
        if *left == 0 {
            return None;
        }
        *left -= 1;
        Some("FAILED test_x - boom".to_string())
    }

    fn feedback_rounds(&self) -> u32 {
        self.rounds
    }

    fn describe(&self) -> String {
        "flaky".to_string()
    }
}

impl FlakyCheck {
    /// A check that fails `failures` times, with two rounds of feedback.
    fn failing(failures: u32) -> FlakyCheck {
        FlakyCheck {
            failures_left: Mutex::new(failures),
            rounds: 2,
            runs: Mutex::new(0),
        }
    }
}

/// The prompt of a model told only to write files whole, under the text protocol, checked.
fn whole_files<'a>(tools: &'a EditTools, check: &'a FlakyCheck) -> Prompt<'a> {
    Prompt {
        system: "sys",
        user: "task",
        tools: Some(tools),
        check: Some(check),
        options: ConverseOptions {
            protocol: ToolProtocol::Text,
            tools_untold: true,
            ..ConverseOptions::default()
        },
    }
}

#[tokio::test]
async fn a_failing_check_goes_back_to_the_model_up_to_its_rounds() {
    let server = MockServer::start().await;
    answer(&server, ok(completion(Some("done 1"), &[])), 1).await;
    answer(&server, ok(completion(Some("done 2"), &[])), 1).await;
    answer(&server, ok(completion(Some("done 3"), &[])), 1).await;
    let check = FlakyCheck {
        failures_left: Mutex::new(5),
        rounds: 2,
        runs: Mutex::new(0),
    };
    let tools = FakeTools::default();

    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Auto,
        Some(&check),
        10,
        &Transcript::disabled(),
    )
    .await
    .unwrap();

    // Two rounds of feedback, then the third failure ends it: the caller judges the result.
    assert_eq!((done.final_text.as_str(), done.check_rounds), ("done 3", 2));
    assert_eq!(*check.runs.lock().unwrap(), 3);
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    let history = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(
        history[2],
        json!({"role": "assistant", "content": "done 1"})
    );
    assert_eq!(
        history[3],
        json!({"role": "user", "content": "FAILED test_x - boom"})
    );

    // A check that passes ends the conversation at once.
    let server = MockServer::start().await;
    answer(&server, ok(completion(Some("fine"), &[])), 1).await;
    let check = FlakyCheck {
        failures_left: Mutex::new(0),
        rounds: 2,
        runs: Mutex::new(0),
    };
    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Auto,
        Some(&check),
        10,
        &Transcript::disabled(),
    )
    .await
    .unwrap();
    assert_eq!((done.final_text.as_str(), done.check_rounds), ("fine", 0));
}

/// Fake tools with write_file and edit_file; edit_file fails when its path is `missing.py`.
#[derive(Default)]
struct EditTools(FakeTools);

#[async_trait]
impl ToolExecutor for EditTools {
    fn definitions(&self) -> Vec<Value> {
        ["write_file", "edit_file"]
            .map(|name| json!({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}))
            .to_vec()
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        let mut result = self.0.call(name, arguments).await;
        if arguments.contains("missing.py") {
            result =
                ToolOutcome::failed("Error: 'missing.py' does not exist", CallFailure::ForModel);
        }
        if arguments.contains("test_story.py") {
            let refusal = "Error: path 'test_story.py' is one of the story's acceptance tests";
            result = ToolOutcome::failed(refusal, CallFailure::FixedTest);
        }
        result
    }
}

#[tokio::test]
async fn a_whole_file_in_a_fence_is_written_and_ends_the_turn_when_the_check_passes() {
    let server = MockServer::start().await;
    let reply = "Here is the updated `stats.py`:\n```python\ndef mean(v):\n    return 0.0\n```";
    answer(&server, ok(completion(Some(reply), &[])), 1).await;
    let tools = EditTools::default();
    let check = FlakyCheck {
        failures_left: Mutex::new(0),
        rounds: 2,
        runs: Mutex::new(0),
    };
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "implement").unwrap();

    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Auto,
        Some(&check),
        5,
        &transcript,
    )
    .await
    .unwrap();

    assert_eq!((done.turns, done.tool_calls), (1, 1));
    assert_eq!(done.final_text, reply);
    assert_eq!(*check.runs.lock().unwrap(), 1);
    let calls = tools.0.calls.lock().unwrap().clone();
    assert_eq!(calls[0].0, "write_file");
    assert_eq!(
        serde_json::from_str::<Value>(&calls[0].1).unwrap(),
        json!({"path": "stats.py", "content": "def mean(v):\n    return 0.0\n", "merge": true})
    );
    assert_eq!(entries(&transcript, "tool_call")[0]["form"], "file_fence");
}

#[tokio::test]
async fn an_edit_that_fails_goes_back_to_the_model_and_a_failed_check_after_edits_too() {
    let server = MockServer::start().await;
    let bad = "missing.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE";
    let good = "stats.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE";
    answer(&server, ok(completion(Some(bad), &[])), 1).await;
    answer(&server, ok(completion(Some(good), &[])), 1).await;
    answer(&server, ok(completion(Some("Fixed the tests."), &[])), 1).await;
    let tools = EditTools::default();
    let check = FlakyCheck {
        failures_left: Mutex::new(1),
        rounds: 3,
        runs: Mutex::new(0),
    };

    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Auto,
        Some(&check),
        6,
        &Transcript::disabled(),
    )
    .await
    .unwrap();

    assert_eq!((done.turns, done.check_rounds), (3, 1));
    let bodies = request_bodies(&server).await;
    let after_bad = last_message_of(&bodies[1]);
    assert!(
        after_bad.contains("Error: 'missing.py' does not exist"),
        "{after_bad}"
    );
    let after_good = bodies[2]["messages"].as_array().unwrap();
    let last = after_good.last().unwrap()["content"].as_str().unwrap();
    assert!(last.starts_with("Result of edit_file:"), "{last}");
    assert!(last.ends_with("FAILED test_x - boom"), "{last}");
    assert_eq!(after_good[after_good.len() - 2]["role"], "assistant");
}

#[tokio::test]
async fn a_refused_write_to_a_fixed_test_keeps_the_rest_of_the_reply_from_its_check() {
    // `median` (textkit, 2026-12-05): eight whole-file replies each wrote the fixed test file
    // beside the code, and each was sent back on the refusal alone, without a test run.
    let server = MockServer::start().await;
    let reply = "stats.py\n```python\ndef median(v):\n    return 0\n```\n\n\
        test_story.py\n```python\ndef test_median():\n    assert True\n```";
    answer(&server, ok(completion(Some(reply), &[])), 1).await;
    answer(&server, ok(completion(Some("Done."), &[])), 1).await;
    let tools = EditTools::default();
    let check = FlakyCheck::failing(1);

    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Auto,
        Some(&check),
        6,
        &Transcript::disabled(),
    )
    .await
    .unwrap();

    assert_eq!(*check.runs.lock().unwrap(), 2, "each reply is checked");
    assert_eq!((done.turns, done.check_rounds), (2, 1));
    let written: Vec<String> = tools
        .0
        .calls
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.1.clone())
        .collect();
    assert!(written[0].contains("stats.py"), "{written:?}");
    let bodies = request_bodies(&server).await;
    let told = last_message_of(&bodies[1]);
    assert!(
        told.contains("one of the story's acceptance tests"),
        "{told}"
    );
    assert!(told.ends_with("FAILED test_x - boom"), "{told}");
}

#[tokio::test]
async fn the_same_unreadable_call_twice_ends_the_conversation() {
    let server = MockServer::start().await;
    let broken = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": }}\n```";
    answer(&server, ok(completion(Some(broken), &[])), 5).await;
    let tools = FakeTools::default();
    let done = converse(&server, Some(&tools), 10, &Transcript::disabled())
        .await
        .unwrap();
    assert_eq!(done.turns, 2);
    assert_eq!(done.final_text, broken);
}

#[tokio::test]
async fn the_same_failing_call_after_its_error_ends_on_one_request_without_tools() {
    let server = MockServer::start().await;
    let call = [("c", "edit_file", r#"{"path": "missing.py"}"#)];
    answer(&server, ok(completion(None, &call)), 5).await;
    let tools = EditTools::default();
    let done = converse(&server, Some(&tools), 10, &Transcript::disabled())
        .await
        .unwrap();
    // Without a work check, a reply of nothing but calls is no answer: it is asked for once.
    assert_eq!((done.turns, done.tool_calls), (3, 2));
    let bodies = request_bodies(&server).await;
    assert!(bodies[2]["tools"].is_null(), "{:?}", bodies[2]["tools"]);
}

/// Tools that only read, like research's.
#[derive(Default)]
struct ReadingTools(FakeTools);

#[async_trait]
impl ToolExecutor for ReadingTools {
    fn definitions(&self) -> Vec<Value> {
        self.0.definitions()
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        let result = self.0.call(name, arguments).await;
        match arguments.contains("missing") {
            true => ToolOutcome::failed("Error: path does not exist", CallFailure::ForModel),
            false => result,
        }
    }

    fn writes(&self, _name: &str) -> bool {
        false
    }
}

#[tokio::test]
async fn a_call_already_answered_is_not_run_again_and_counts_as_a_turn() {
    let server = MockServer::start().await;
    answer(
        &server,
        ok(completion(
            None,
            &[("c1", "read_file", r#"{"path":"a","offset":1}"#)],
        )),
        1,
    )
    .await;
    // The same call, written another way.
    answer(
        &server,
        ok(completion(
            None,
            &[("c2", "read_file", r#"{ "offset": 1, "path": "a" }"#)],
        )),
        1,
    )
    .await;
    answer(&server, ok(completion(Some("all read"), &[])), 1).await;
    let tools = ReadingTools::default();

    let done = converse(&server, Some(&tools), 5, &Transcript::disabled())
        .await
        .unwrap();

    assert_eq!(done.final_text, "all read");
    assert_eq!(done.turns, 3, "the repeat took a turn");
    assert_eq!(tools.0.calls.lock().unwrap().len(), 1, "run once");
    let bodies = request_bodies(&server).await;
    let last = bodies[2]["messages"].as_array().unwrap();
    let answer_to_repeat = last.last().unwrap();
    assert_eq!(answer_to_repeat["role"], "tool");
    assert_eq!(answer_to_repeat["tool_call_id"], "c2");
    assert_eq!(answer_to_repeat["content"], super::answers::ALREADY_DONE);
}

#[tokio::test]
async fn a_call_is_run_again_once_a_write_may_have_changed_its_answer() {
    let server = MockServer::start().await;
    for _ in 0..2 {
        answer(
            &server,
            ok(completion(None, &[("c", "read_file", r#"{"path":"a"}"#)])),
            1,
        )
        .await;
    }
    answer(&server, ok(completion(Some("done"), &[])), 1).await;
    // FakeTools counts every tool as one that writes.
    let tools = FakeTools::default();
    converse(&server, Some(&tools), 5, &Transcript::disabled())
        .await
        .unwrap();
    assert_eq!(tools.calls.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn two_turns_of_nothing_but_repeats_make_the_next_reply_the_last_with_tools() {
    let server = MockServer::start().await;
    let reply = |calls: &[(&str, &str, &str)]| ok(completion(None, calls));
    answer(
        &server,
        reply(&[
            ("c1", "read_file", r#"{"path":"a"}"#),
            ("c2", "read_file", r#"{"path":"b"}"#),
        ]),
        1,
    )
    .await;
    // As the 1.5B model's plan did: the same files again, in turn.
    answer(&server, reply(&[("c3", "read_file", r#"{"path":"a"}"#)]), 1).await;
    answer(&server, reply(&[("c4", "read_file", r#"{"path":"b"}"#)]), 1).await;
    answer(&server, reply(&[("c5", "read_file", r#"{"path":"a"}"#)]), 1).await;
    answer(&server, ok(completion(Some("The plan."), &[])), 1).await;
    let tools = ReadingTools::default();

    let done = converse(&server, Some(&tools), 20, &Transcript::disabled())
        .await
        .unwrap();

    assert_eq!(done.final_text, "The plan.");
    assert_eq!(
        tools.0.calls.lock().unwrap().len(),
        2,
        "each file read once"
    );
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 5, "four turns, then the answer: not twenty");
    assert!(bodies[3].get("tools").is_some());
    assert!(bodies[4].get("tools").is_none(), "the tools are withdrawn");
}

#[tokio::test]
async fn a_read_only_agent_that_tries_to_write_twice_answers_at_once_without_tools() {
    let server = MockServer::start().await;
    let reply = |calls: &[(&str, &str, &str)]| ok(completion(None, calls));
    // As the 1.5B model's plan of `format_price` did for twelve turns: the file written, which
    // it may not, then a look at the folder, and again.
    let write = r#"{"path":"pricing.py","content":"def format_price(cents): ..."}"#;
    answer(&server, reply(&[("c1", "write_file", write)]), 1).await;
    answer(&server, reply(&[("c2", "read_file", r#"{"path":"a"}"#)]), 1).await;
    answer(&server, reply(&[("c3", "write_file", write)]), 1).await;
    answer(&server, ok(completion(Some("The plan."), &[])), 1).await;
    let tools = ReadingTools::default();
    let board = tempfile::tempdir().unwrap();
    let transcript = Transcript::create(board.path(), &StoryId::from("story-1"), "plan").unwrap();

    let done = converse(&server, Some(&tools), 20, &transcript)
        .await
        .unwrap();

    assert_eq!(done.final_text, "The plan.");
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 4, "three turns, then the answer: not twenty");
    assert!(bodies[2].get("tools").is_some());
    assert!(bodies[3].get("tools").is_none(), "the tools are withdrawn");
    let asked = bodies[3]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(asked["role"], "user");
    assert!(
        asked["content"]
            .as_str()
            .unwrap()
            .contains("may not change files"),
        "{asked}"
    );
    let refused = entries(&transcript, "writes_refused");
    assert_eq!(refused.len(), 1);
    assert_eq!(
        (&refused[0]["turn"], &refused[0]["writes"]),
        (&json!(3), &json!(2))
    );
}

#[tokio::test]
async fn calls_naming_no_tool_beside_whole_files_are_left_out_and_the_check_runs() {
    let server = MockServer::start().await;
    // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, textkit `slugify`, shortened): the file written
    // whole without the function, then the map's file names as calls. Answered "unknown tool"
    // and repeated three times, the conversation ended before the tests ever ran.
    let recorded = "```\n# textkit.py\n```python\n\"\"\"Small text helpers.\"\"\"\n\ndef shout(text):\n    return text.upper() + \"!\"\n```\n\n```json\n{\"name\": \"test_textkit.py\", \"arguments\": {\"path\": \"test_textkit.py\"}}\n```\n\n```json\n{\"name\": \"README.md\", \"arguments\": {\"path\": \"README.md\"}}\n```";
    answer(&server, ok(completion(Some(recorded), &[])), 1).await;
    answer(&server, ok(completion(Some("Now with slugify."), &[])), 1).await;
    let check = FlakyCheck::failing(1);
    let tools = EditTools::default();
    let prompt = whole_files(&tools, &check);

    let done = converse_with(&client(&server), prompt, 8, &Transcript::disabled())
        .await
        .unwrap();

    let calls = tools.0.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "write_file");
    assert_eq!(*check.runs.lock().unwrap(), 2);
    assert_eq!(done.check_rounds, 1);
    let bodies = request_bodies(&server).await;
    let history = bodies[1]["messages"].as_array().unwrap();
    let last = history.last().unwrap()["content"].as_str().unwrap();
    assert!(last.contains("FAILED test_x - boom"), "{last}");
    assert!(!last.contains("unknown tool"), "{last}");
}

#[tokio::test]
async fn the_same_failing_change_again_hears_from_the_check_before_it_ends() {
    let server = MockServer::start().await;
    let failing_edit = "missing.py\n```python\nx = 1\n```";
    answer(&server, ok(completion(Some(failing_edit), &[])), 2).await;
    answer(&server, ok(completion(Some("fixed"), &[])), 1).await;
    let check = FlakyCheck::failing(1);
    let tools = EditTools::default();
    let prompt = whole_files(&tools, &check);

    let done = converse_with(&client(&server), prompt, 8, &Transcript::disabled())
        .await
        .unwrap();

    // Twice the same failing write: the check speaks, and the model goes on.
    assert_eq!(request_bodies(&server).await.len(), 3);
    assert_eq!((done.final_text.as_str(), done.check_rounds), ("fixed", 1));
    assert_eq!(*check.runs.lock().unwrap(), 2);
}

#[tokio::test]
async fn the_same_failing_call_again_hears_from_the_check_before_it_ends() {
    let server = MockServer::start().await;
    // Recorded shape (Qwen2.5-Coder-1.5B, 2026-11-29, inventory `receipt-line`): the same
    // refused write twice, and the conversation ended before a test round said what was red.
    let refused = [("c1", "edit_file", r#"{"path":"missing.py"}"#)];
    answer(&server, ok(completion(None, &refused)), 2).await;
    answer(&server, ok(completion(Some("fixed"), &[])), 1).await;
    let check = FlakyCheck::failing(1);
    let tools = EditTools::default();

    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Auto,
        Some(&check),
        8,
        &Transcript::disabled(),
    )
    .await
    .unwrap();

    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 3);
    let last = bodies[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("FAILED test_x - boom"),
        "{last}"
    );
    assert_eq!((done.final_text.as_str(), done.check_rounds), ("fixed", 1));
}

#[tokio::test]
async fn a_reply_that_repeats_one_call_over_and_over_is_the_last_with_tools() {
    let server = MockServer::start().await;
    // Recorded shape (Qwen2.5-Coder-1.5B, 2026-11-28, plan): one read written again and again
    // until the reply's cap, four replies in a row.
    let call = "```json\n{\n  \"name\": \"read_file\",\n  \"arguments\": {\"path\": \"textkit.py\"}\n}\n```\n\n";
    answer(&server, ok(completion(Some(&call.repeat(4)), &[])), 1).await;
    answer(
        &server,
        ok(completion(Some(&call.replace("textkit", "stats")), &[])),
        1,
    )
    .await;
    answer(
        &server,
        ok(completion(Some("The plan: add median."), &[])),
        1,
    )
    .await;
    let tools = FakeTools::default();
    let prompt = Prompt {
        system: "sys",
        user: "task",
        tools: Some(&tools),
        check: None,
        options: ConverseOptions {
            protocol: ToolProtocol::Text,
            ..ConverseOptions::default()
        },
    };

    let done = converse_with(&client(&server), prompt, 12, &Transcript::disabled())
        .await
        .unwrap();

    assert_eq!(done.final_text, "The plan: add median.");
    let bodies = request_bodies(&server).await;
    assert_eq!(
        bodies.len(),
        3,
        "the stutter, one more reply, then the answer"
    );
    let last = bodies[2]["messages"].as_array().unwrap();
    let asked = last.last().unwrap()["content"].as_str().unwrap();
    assert!(asked.starts_with("You have used all"), "{asked}");
    assert_eq!(
        tools.calls.lock().unwrap().len(),
        1,
        "the stutter's read ran once"
    );
}

#[tokio::test]
async fn a_change_cut_off_at_the_cap_hears_so_and_the_conversation_goes_on() {
    let server = MockServer::start().await;
    let cut = json!({"choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant",
        "content": "calc.py\n```python\nx = 1\n```\n\ntest_calc.py\n```python\ndef test_x():\n    assert x =="}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4096, "total_tokens": 4106}});
    answer(&server, ok(cut), 1).await;
    answer(&server, ok(completion(Some("Changed calc.py."), &[])), 1).await;
    let check = FlakyCheck::failing(0);
    let tools = EditTools::default();
    let prompt = whole_files(&tools, &check);

    let done = converse_with(&client(&server), prompt, 8, &Transcript::disabled())
        .await
        .unwrap();

    assert_eq!(done.final_text, "Changed calc.py.");
    assert!(!done.truncated);
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    let told = last_message_of(&bodies[1]);
    assert!(told.contains("cut off at the reply limit"), "{told}");
    assert_eq!(
        *check.runs.lock().unwrap(),
        1,
        "the check runs on the finished change"
    );
}

/// Sends `content` as a reply cut off at the cap, and checks that the change it holds was
/// checked at once, with no further request.
async fn a_cut_reply_is_checked_as_finished(content: &str) {
    let server = MockServer::start().await;
    let cut = json!({"choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant",
        "content": content}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 800, "total_tokens": 810}});
    answer(&server, ok(cut), 1).await;
    let check = FlakyCheck::failing(0);
    let tools = EditTools::default();
    let prompt = whole_files(&tools, &check);

    converse_with(&client(&server), prompt, 8, &Transcript::disabled())
        .await
        .unwrap();

    assert_eq!(
        request_bodies(&server).await.len(),
        1,
        "the tests passed on the files the reply wrote"
    );
    assert_eq!(*check.runs.lock().unwrap(), 1);
}

#[tokio::test]
async fn a_reply_cut_off_going_round_its_whole_files_is_checked_not_told_it_was_cut() {
    // Recorded shape (Qwen2.5-Coder-1.5B, inventory `cart-remove`, 2026-12-05): `cart.py`, its
    // test file, `cart.py` again, until the loop watch cut the reply. Told it was cut short,
    // the model went round the same files in the next two replies, 155 s each, and no test
    // ever ran.
    a_cut_reply_is_checked_as_finished("calc.py\n```python\nx = 1\n```\n\ntest_calc.py\n```python\ndef test_x():\n    assert True\n```\n\ncalc.py\n```python\nx = 1\n```\n").await;
}

#[tokio::test]
async fn a_reply_cut_off_in_its_prose_after_whole_files_is_checked_not_told_it_was_cut() {
    // Recorded shape (Qwen2.5-Coder-1.5B, textkit `mean-empty`, 2026-12-05): the files, then
    // "Expected Output", "Fix", "Verify" round and round until the loop watch cut the reply;
    // told it was cut short, the model sent the same reply three times more.
    a_cut_reply_is_checked_as_finished("### Changed Files\n\n1. **calc.py**:\n   ```python\n   x = 1\n   ```\n\n### Verification\n\n1. **Run the tests**:\n   ```sh\n   python -m pytest -q\n   ```\n\n2. **Expected Output**:\n").await;
}

#[tokio::test]
async fn calls_written_into_the_answer_after_the_budget_are_left_out_of_it() {
    let server = MockServer::start().await;
    // Recorded shape (Qwen2.5-Coder-1.5B, 2026-11-29, research of `is_low_stock`): asked for its
    // answer with the tools withdrawn, it wrote its steps and then the calls it would make.
    let read = "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"stock.py\"}}\n```";
    answer(&server, ok(completion(Some(read), &[])), 1).await;
    let answered = format!(
        "1. Define `is_low_stock` in `stock.py`.\n2. Raise `StockError` if necessary.\n\n\
         The final answer is:\n{read}"
    );
    answer(&server, ok(completion(Some(&answered), &[])), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "research").unwrap();
    let tools = FakeTools::default();

    let done = converse_as(
        &server,
        Some(&tools),
        ToolProtocol::Text,
        None,
        1,
        &transcript,
    )
    .await
    .unwrap();

    assert_eq!(
        done.final_text,
        "1. Define `is_low_stock` in `stock.py`.\n2. Raise `StockError` if necessary."
    );
    assert_eq!(entries(&transcript, "calls_left_out").len(), 1);
    assert!(
        tools.calls.lock().unwrap().is_empty(),
        "no call of the last turn ran"
    );
}

/// A read-only agent's conversation under the text protocol, with a plan's 12 turns.
async fn reading_agent(
    server: &MockServer,
    tools: &FakeTools,
    transcript: &Transcript,
) -> Conversation {
    converse_as(
        server,
        Some(tools),
        ToolProtocol::Text,
        None,
        12,
        transcript,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_plan_written_whole_with_its_steps_as_calls_is_the_answer() {
    let server = MockServer::start().await;
    // Recorded (Qwen2.5-Coder-1.5B, textkit, 2026-11-29): the plan's first reply, whose steps
    // quote seven calls in backticks. It is the answer; no call runs, no second request.
    let recording: Value = serde_json::from_str(include_str!(
        "../text_calls/recorded/plan_quoting_actions.json"
    ))
    .unwrap();
    let plan = recording["response"]["choices"][0]["message"]["content"]
        .as_str()
        .unwrap();
    answer(&server, ok(completion(Some(plan), &[])), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript = Transcript::create(board.path(), &StoryId::from("story-1"), "plan").unwrap();
    let tools = FakeTools::default();

    let done = reading_agent(&server, &tools, &transcript).await;

    assert_eq!(done.usage.requests, 1);
    assert!(tools.calls.lock().unwrap().is_empty(), "no step ran");
    assert!(done
        .final_text
        .starts_with("### Plan\n\n1. **Read the File**"));
    assert!(done.final_text.contains("4. **Add a Test**"));
    assert_eq!(entries(&transcript, "calls_as_steps").len(), 1);
}

#[tokio::test]
async fn a_plans_calls_fenced_at_the_ends_of_its_steps_are_left_out_of_the_answer() {
    let server = MockServer::start().await;
    // Recorded shape (Qwen2.5-Coder-1.5B, the inventory benchmark, 2026-11-29, `receipt-line`):
    // each step's call in a fence opened at the end of its line, one of them empty.
    let plan = "### Step 1: Read the File\n- **Action**: ```json\n  {\"name\": \"read_file\", \"arguments\": {\"path\": \"inventory/money.py\"}}\n  ```\n- **Result**: The code of `inventory/money.py`, where `format_price` is defined and where the new function goes.\n\n### Step 2: Add the `receipt_line` Function\n- **Action**: ```json\n  {\"name\": \"write_file\", \"arguments\": {\"path\": \"inventory/money.py\", \"content\": \"x\"}}\n  ```\n- **Result**: `receipt_line(name, cents)` is defined in `inventory/money.py` and returns the name, a colon, a space and the price.\n\n### Step 3: Test it\n- **Action**: ```json\n  ```\n- **Result**: A test in `tests/test_money.py`.";
    answer(&server, ok(completion(Some(plan), &[])), 1).await;
    let board = tempfile::tempdir().unwrap();
    let transcript = Transcript::create(board.path(), &StoryId::from("story-1"), "plan").unwrap();
    let tools = FakeTools::default();

    let done = reading_agent(&server, &tools, &transcript).await;

    assert_eq!(done.usage.requests, 1);
    assert!(!done.final_text.contains("```"), "{}", done.final_text);
    assert!(!done.final_text.contains("Action"), "{}", done.final_text);
    assert!(done
        .final_text
        .contains("### Step 3: Test it\n- **Result**: A test"));
    assert_eq!(entries(&transcript, "calls_as_steps").len(), 1);
}

#[tokio::test]
async fn one_call_with_a_line_of_prose_is_still_an_action() {
    let server = MockServer::start().await;
    let read = "I will read the file first.\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"stock.py\"}}\n```\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"README.md\"}}\n```";
    answer(&server, ok(completion(Some(read), &[])), 1).await;
    answer(&server, ok(completion(Some("The plan."), &[])), 1).await;
    let tools = FakeTools::default();

    let done = reading_agent(&server, &tools, &Transcript::disabled()).await;

    assert_eq!(done.final_text, "The plan.");
    assert_eq!(tools.calls.lock().unwrap().len(), 1, "the first action ran");
}

#[tokio::test]
async fn a_fence_of_calls_to_tools_the_agent_lacks_is_no_written_answer() {
    let server = MockServer::start().await;
    // Recorded shape (Qwen2.5-Coder-1.5B, inventory plan, 2026-11-29): four calls in one JSON
    // fence, to tools no agent has; their code is long, but it is no plan.
    let content = "x = 1\\n".repeat(60);
    let calls = format!(
        "```json\n{{\"name\": \"add_file\", \"arguments\": {{\"path\": \"cart.py\", \"content\": \"{content}\"}}}}\n{{\"name\": \"run_tests\", \"arguments\": {{\"path\": \"tests\"}}}}\n```"
    );
    answer(&server, ok(completion(Some(&calls), &[])), 1).await;
    answer(&server, ok(completion(Some("The plan."), &[])), 1).await;
    let tools = FakeTools::default();

    let done = reading_agent(&server, &tools, &Transcript::disabled()).await;

    assert_eq!(done.final_text, "The plan.");
    assert_eq!(done.usage.requests, 2);
}

/// A research over the text protocol whose model replies with the same read `calls` times,
/// then with its findings; returns what the conversation came to, the requests made, the
/// tool calls run and the transcript.
async fn research_reading_again(
    path: &str,
    calls: u64,
) -> (
    Conversation,
    Vec<Value>,
    usize,
    Transcript,
    tempfile::TempDir,
) {
    let server = MockServer::start().await;
    // Recorded (Qwen2.5-Coder-1.5B, text protocol, research of a drive's `f_to_c`,
    // 2026-12-07): this reply three times. The conversation ended on the third, its answer was
    // empty once the call was left out, and the phase refused it and began again from nothing.
    let recorded = format!(
        "```json\n{{\"name\": \"read_file\", \"arguments\": {{\"path\": \"{path}\"}}}}\n```"
    );
    answer(&server, ok(completion(Some(&recorded), &[])), calls).await;
    answer(&server, ok(completion(Some(FINDINGS), &[])), 1).await;
    let tools = ReadingTools::default();
    let board = tempfile::tempdir().unwrap();
    let transcript =
        Transcript::create(board.path(), &StoryId::from("story-1"), "research").unwrap();
    let prompt = Prompt {
        system: "sys",
        user: "task",
        tools: Some(&tools),
        check: None,
        options: ConverseOptions {
            protocol: ToolProtocol::Text,
            ..ConverseOptions::default()
        },
    };
    let done = converse_with(&client(&server), prompt, 12, &transcript)
        .await
        .unwrap();
    let runs = tools.0.calls.lock().unwrap().len();
    (done, request_bodies(&server).await, runs, transcript, board)
}

const CONVERT: &str = "thermo/convert.py";

const FINDINGS: &str = "# Relevant Files\n\n- `thermo/convert.py` holds `c_to_f`.";

#[tokio::test]
async fn the_same_read_three_times_and_nothing_else_is_asked_for_its_answer() {
    let (done, bodies, runs, transcript, _board) = research_reading_again(CONVERT, 3).await;

    assert_eq!(done.final_text, FINDINGS);
    assert_eq!(
        bodies.len(),
        4,
        "three replies of the call, then the answer"
    );
    assert!(
        last_message_of(&bodies[3]).contains("You asked again for what you have already read"),
        "{:?}",
        bodies[3]
    );
    assert_eq!(runs, 1, "the file was read once");
    let repeats = entries(&transcript, "repeated_calls");
    assert_eq!(repeats.len(), 1);
    assert_eq!(
        repeats[0]["action"],
        "tools withdrawn; asked for the answer"
    );
    assert!(entries(&transcript, "answer_was_a_call").is_empty());
}

#[tokio::test]
async fn a_failing_read_sent_again_by_an_agent_without_a_check_is_asked_for_its_answer() {
    // Recorded in kind (Qwen2.5-Coder-1.5B, sawmill `delivery-charge` research, 2026-12-07): a
    // read of a file that does not exist, twice. The conversation ended on an empty answer.
    let (done, bodies, _, transcript, _board) =
        research_reading_again("sawmill/missing.py", 2).await;

    assert_eq!(done.final_text, FINDINGS);
    assert_eq!(bodies.len(), 3);
    assert!(last_message_of(&bodies[2]).contains("no more tool calls will run"));
    let repeats = entries(&transcript, "repeated_calls");
    assert_eq!(
        repeats[0]["action"],
        "tools withdrawn; asked for the answer"
    );
}

#[tokio::test]
async fn a_call_for_an_answer_without_tools_is_asked_once_more_for_words() {
    // Recorded in kind (Qwen2.5-Coder-1.5B, sawmill researches, 2026-12-07): asked for its
    // answer without tools, it sent the read once more.
    let (done, bodies, runs, transcript, _board) = research_reading_again(CONVERT, 4).await;

    assert_eq!(done.final_text, FINDINGS);
    assert_eq!(bodies.len(), 5, "one request more, told plainly");
    assert!(bodies[4]["tools"].is_null(), "{:?}", bodies[4]["tools"]);
    assert!(
        last_message_of(&bodies[4]).contains("That reply was a tool call, and it did not run"),
        "{:?}",
        bodies[4]
    );
    assert_eq!(runs, 1);
    assert_eq!(entries(&transcript, "answer_was_a_call").len(), 1);
    // Asked once more only: a call again then is left out, and the answer is what is left.
    let (done, bodies, ..) = research_reading_again(CONVERT, 6).await;
    assert_eq!(bodies.len(), 5);
    assert_eq!(done.final_text, "");
}

#[tokio::test]
async fn notes_cut_off_before_any_change_hear_so_and_the_conversation_goes_on() {
    let server = MockServer::start().await;
    // Recorded (Qwen2.5-Coder-1.5B, sawmill `overlength-pieces`, 2026-12-07), shortened: notes
    // of changes never made, cut off by the loop watch. The action ended on them.
    let notes = "- changed `sawmill/timber.py`\n  - added `OverlengthError` class\n- checked with `pytest`:\n  - `tests/test_turn_away_pieces_longer_than_our_stock.py` passes\n\n- changed `sawmill/timber.py`\n  - added `overlength_error.py`\n- checke";
    let cut = json!({"choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant",
        "content": notes}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 221, "total_tokens": 231}});
    answer(&server, ok(cut), 1).await;
    let change = "timber.py\n```python\nclass OverlengthError(ValueError):\n    pass\n```";
    answer(&server, ok(completion(Some(change), &[])), 1).await;
    answer(
        &server,
        ok(completion(Some("Added OverlengthError."), &[])),
        1,
    )
    .await;
    let check = FlakyCheck::failing(0);
    let tools = EditTools::default();
    let prompt = whole_files(&tools, &check);

    let done = converse_with(&client(&server), prompt, 8, &Transcript::disabled())
        .await
        .unwrap();

    let bodies = request_bodies(&server).await;
    let told = last_message_of(&bodies[1]);
    assert!(told.contains("it changed no file"), "{told}");
    let written = tools.0.calls.lock().unwrap().clone();
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].1.contains("OverlengthError"), "{written:?}");
    assert!(*check.runs.lock().unwrap() >= 1, "the change was checked");
    assert!(!done.final_text.contains("checke"), "{}", done.final_text);
}
