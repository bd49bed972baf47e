//! `mcp` through a real MCP client (rmcp's own), spawning the binary and speaking over its
//! stdio.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{json, Map, Value as Json};

use super::{column_of, details};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

type Client = RunningService<RoleClient, ()>;

async fn connect(env: &TestEnv, llm: &FakeLlm) -> Client {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
    command
        .arg("mcp")
        .current_dir(env.root())
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", llm.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("RUST_LOG")
        .stderr(std::process::Stdio::null());
    let transport = TokioChildProcess::new(command).expect("spawn agentic-sdlc mcp");
    ().serve(transport).await.expect("an MCP session")
}

fn arguments(value: Json) -> Map<String, Json> {
    value.as_object().cloned().expect("arguments are an object")
}

async fn call(client: &Client, tool: &str, args: Json) -> Result<CallToolResult, ServiceError> {
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments(args)))
        .await
}

/// A tool's JSON answer; panics on an error.
#[track_caller]
fn answer(result: Result<CallToolResult, ServiceError>) -> Json {
    let result = result.unwrap_or_else(|e| panic!("the tool failed: {e}"));
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("no structured content: {result:?}"))
}

/// A caller's mistake as the tool answered it: an `isError` result whose document says what
/// was wrong (`error`), the command line's exit code and, when there is one, the hint.
#[track_caller]
fn mistake(result: Result<CallToolResult, ServiceError>) -> Json {
    let result = result.unwrap_or_else(|e| panic!("a mistake is a result, not an MCP error: {e}"));
    assert_eq!(result.is_error, Some(true), "{result:?}");
    result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("no structured content: {result:?}"))
}

#[tokio::test]
async fn an_mcp_client_works_the_board_and_errors_do_not_stop_the_server() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.configure_json(&json!({"phases": {"research": {"review": {"reviewer": "human"}}}}));
    let client = connect(&env, &llm).await;

    let info = client.peer_info().expect("the server introduced itself");
    let server = info.server_info.as_ref().expect("server info");
    assert_eq!(server.name, "agentic-sdlc");
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "add_story",
            "decide",
            "edit_story",
            "last_report",
            "list_stories",
            "move_story",
            "run_story",
            "show_story",
            "unblock_story"
        ]
    );
    let annotation = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        let annotations = tool.annotations.clone().unwrap_or_default();
        (annotations.read_only_hint, annotations.destructive_hint)
    };
    assert_eq!(annotation("list_stories").0, Some(true));
    assert_eq!(annotation("show_story").0, Some(true));
    assert_eq!(annotation("move_story"), (Some(false), Some(true)));
    assert_eq!(annotation("unblock_story"), (Some(false), Some(false)));
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(description.len() > 40, "{}: {description:?}", tool.name);
        assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
    }
    let add = tools.iter().find(|t| t.name == "add_story").unwrap();
    assert_eq!(add.input_schema["required"], json!(["title"]));

    let added = answer(
        call(
            &client,
            "add_story",
            json!({"title": "Export as CSV", "type": "feature", "labels": ["export"],
                   "description": "Users want their data as CSV."}),
        )
        .await,
    );
    let id = added["id"].as_str().unwrap().to_string();
    let slug = added["slug"].as_str().unwrap().to_string();
    assert_eq!(column_of(&env, &slug), "backlog");

    let shown = answer(call(&client, "show_story", json!({"story": slug})).await);
    assert_eq!(shown["id"], id.as_str());
    assert_eq!(shown["title"], "Export as CSV");
    assert_eq!(shown["labels"], json!(["export"]));
    assert_eq!(
        shown["sections"]["Summary"],
        "Users want their data as CSV."
    );

    let edited = answer(
        call(
            &client,
            "edit_story",
            json!({"story": id, "set": {"priority": 5, "estimated_effort": "small"}}),
        )
        .await,
    );
    assert_eq!(edited["priority"], 5);
    assert_eq!(details(&env, &slug)["estimated_effort"], "small");
    let refused = mistake(
        call(
            &client,
            "edit_story",
            json!({"story": id, "set": {"research_complete": true}}),
        )
        .await,
    );
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .contains("research_complete"),
        "{refused}"
    );
    assert_eq!(refused["exitCode"], 2);
    assert_eq!(details(&env, &slug)["research_complete"], false);
    // A title with a newline, an escape or a bell is refused, and no file is written.
    let stories_before = env.status_json()["columns"]["backlog"]
        .as_array()
        .unwrap()
        .len();
    let hostile = mistake(
        call(
            &client,
            "add_story",
            json!({"title": "Two\nlines \u{1b}]0;owned\u{7}"}),
        )
        .await,
    );
    assert!(
        hostile["error"]
            .as_str()
            .unwrap()
            .contains("control characters"),
        "{hostile}"
    );
    assert_eq!(
        env.status_json()["columns"]["backlog"]
            .as_array()
            .unwrap()
            .len(),
        stories_before
    );

    // Refine, then research, whose human gate holds the output for a decision.
    let ran = answer(
        call(
            &client,
            "run_story",
            json!({"story": slug, "max_actions": 2}),
        )
        .await,
    );
    assert!([0, 3].contains(&ran["exitCode"].as_i64().unwrap()), "{ran}");
    assert_eq!(
        ran["story"]["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
    let events: Vec<&str> = ran["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert!(events.contains(&"story_waiting"), "{events:?}");

    let listed = answer(call(&client, "list_stories", json!({"active": true})).await);
    assert_eq!(listed["kind"], "status");
    assert_eq!(listed["columns"]["ready"][0]["id"], id.as_str());
    assert!(listed["columns"].get("done").is_none());
    assert_eq!(listed["waiting"][0]["storyId"], id.as_str());

    let decided = answer(
        call(
            &client,
            "decide",
            json!({"story": slug, "decision": "APPROVE"}),
        )
        .await,
    );
    assert_eq!(decided["phase"], "research");
    assert_eq!(decided["decision"], "APPROVE");
    let story = details(&env, &slug);
    assert_eq!(story["research_complete"], true);
    assert_eq!(story["phase_reviews"]["research"]["decision"], "APPROVE");
    assert_eq!(story["phase_reviews"]["research"]["decided_by"], "mcp");

    let report = answer(call(&client, "last_report", json!({})).await);
    assert_eq!(report["kind"], "report");
    assert_eq!(report["stories"][0]["storyId"], id.as_str());

    // Malformed requests get MCP errors, a caller's mistakes `isError` results; the server
    // keeps serving.
    let unknown_tool = call(&client, "drop_the_board", json!({})).await;
    assert!(unknown_tool.is_err() || unknown_tool.unwrap().is_error == Some(true));
    let wrong_type = call(&client, "show_story", json!({"story": 42})).await;
    match wrong_type {
        Err(ServiceError::McpError(_)) => {}
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        Err(other) => panic!("the session broke: {other}"),
    }
    let missing = mistake(call(&client, "show_story", json!({"story": "no-such-story"})).await);
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .contains("story not found"),
        "{missing}"
    );
    // What to do about it comes apart from the message, as the terminal's "Hint:" line.
    assert_eq!(missing["exitCode"], 1);
    assert_eq!(
        missing["hint"],
        "run `agentic-sdlc status` to list the stories"
    );
    let nothing_waits = mistake(
        call(
            &client,
            "decide",
            json!({"story": slug, "decision": "APPROVE"}),
        )
        .await,
    );
    assert!(
        nothing_waits["error"]
            .as_str()
            .unwrap()
            .contains("no human phase review waiting"),
        "{nothing_waits}"
    );

    // Moving by hand, with the command line's rules and refusals.
    let moved = answer(
        call(
            &client,
            "move_story",
            json!({"story": slug, "column": "blocked"}),
        )
        .await,
    );
    assert_eq!(
        (moved["kind"].as_str(), moved["to"].as_str()),
        (Some("moved"), Some("blocked"))
    );
    assert_eq!(column_of(&env, &slug), "blocked");
    assert_eq!(
        details(&env, &slug)["blocked_reason"],
        "Moved to blocked by hand"
    );
    let bad_column = mistake(
        call(
            &client,
            "move_story",
            json!({"story": slug, "column": "archive"}),
        )
        .await,
    );
    assert!(
        bad_column["error"]
            .as_str()
            .unwrap()
            .contains("unknown column `archive`"),
        "{bad_column}"
    );
    let unblocked = answer(call(&client, "unblock_story", json!({"story": slug})).await);
    assert_eq!(
        (unblocked["kind"].as_str(), unblocked["from"].as_str()),
        (Some("unblocked"), Some("blocked"))
    );
    assert_ne!(column_of(&env, &slug), "blocked");
    let not_blocked = mistake(call(&client, "unblock_story", json!({"story": slug})).await);
    assert!(
        not_blocked["error"]
            .as_str()
            .unwrap()
            .contains("is not blocked"),
        "{not_blocked}"
    );

    let still = answer(call(&client, "show_story", json!({"story": id})).await);
    assert_eq!(still["id"], id.as_str(), "the server still answers");
    client.cancel().await.expect("the session ends cleanly");
}
