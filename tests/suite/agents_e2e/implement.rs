//! The implement agent changes the repository through its tools, inside the repository only.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{exists, messages, results_by_tool, section, tool_results, Project};
use crate::suite::common::strings_of;
use crate::suite::fake_llm::Reply;

fn calls(list: &[(&str, serde_json::Value)]) -> Reply {
    Reply::ToolCalls(
        list.iter()
            .map(|(n, a)| (n.to_string(), a.clone()))
            .collect(),
    )
}

#[tokio::test]
async fn implement_changes_the_repository_with_its_tools_over_several_turns() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn old() {}\n");
    let story = p.planned("Rename old");
    p.fake
        .push(
            "implement",
            calls(&[
                ("list_files", json!({"path": "src"})),
                ("read_file", json!({"path": "src/lib.rs"})),
            ]),
        )
        .push(
            "implement",
            calls(&[
                (
                    "write_file",
                    json!({"path": "src/new.rs", "content": "// NEW-FILE-MARK\n"}),
                ),
                (
                    "edit_file",
                    json!({"path": "src/lib.rs", "old_string": "pub fn old() {}",
                           "new_string": "pub fn renamed() {}"}),
                ),
            ]),
        )
        .push(
            "implement",
            calls(&[
                ("search", json!({"pattern": "NEW-FILE-MARK"})),
                (
                    "run_command",
                    json!({"command": "echo RAN-$((40 + 2)); cat src/lib.rs"}),
                ),
            ]),
        )
        .push(
            "implement",
            Reply::text("FINAL-NOTES: renamed old, added new.rs"),
        );

    p.step(&story, "implement").success();

    assert_eq!(p.env.read("src/new.rs"), "// NEW-FILE-MARK\n");
    assert_eq!(p.env.read("src/lib.rs"), "pub fn renamed() {}\n");
    assert_eq!(
        section(&p.body(&story), "Implementation Notes"),
        "FINAL-NOTES: renamed old, added new.rs"
    );
    assert_eq!(p.column(&story), "in-progress");
    assert_eq!(p.front(&story)["status"], "in-progress");
    assert_eq!(p.front(&story)["implementation_complete"], true);

    let requests = p.fake.requests_for("implement");
    assert_eq!(requests.len(), 4);
    // Every tool call of a reply is answered by exactly one tool message with its id, right
    // after the assistant message that asked, in the next request.
    for (turn, next) in requests.iter().enumerate().skip(1) {
        let history = messages(next);
        let asked_at = history
            .iter()
            .rposition(|m| m["role"] == "assistant")
            .unwrap_or_else(|| panic!("request {turn} has no assistant message"));
        let asked = strings_of(&history[asked_at]["tool_calls"], "id");
        let answered: Vec<&str> = history[asked_at + 1..]
            .iter()
            .map(|m| {
                assert_eq!(m["role"], "tool", "only tool results follow: {m}");
                m["tool_call_id"].as_str().unwrap()
            })
            .collect();
        assert_eq!(asked.len(), 2);
        assert_eq!(answered, asked, "request {turn}");
    }
    // Each tool did what it was asked.
    let results = results_by_tool(&requests[3]);
    let result = |name: &str| {
        results
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c.clone())
            .unwrap_or_else(|| panic!("no {name} result in {results:?}"))
    };
    assert!(result("list_files").contains("src/lib.rs"), "{results:?}");
    assert!(
        result("read_file").contains("pub fn old() {}"),
        "{results:?}"
    );
    assert!(result("search").contains("src/new.rs"), "{results:?}");
    let ran = result("run_command");
    assert!(
        ran.contains("RAN-42") && ran.contains("pub fn renamed"),
        "{ran}"
    );
    for (name, content) in &results {
        assert!(!content.starts_with("Error:"), "{name}: {content}");
    }
}

#[tokio::test]
async fn paths_outside_the_repository_are_refused_as_error_results() {
    let p = Project::new().await;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "OUTSIDE-SECRET").unwrap();
    std::os::unix::fs::symlink(outside.path(), p.env.path("escape")).unwrap();
    let story = p.planned("Rename old");
    let sibling = format!("{}-outside.txt", p.root_name());
    let sibling_path = p.env.root().parent().unwrap().join(&sibling);
    let refused = [
        (
            "write_file",
            json!({"path": format!("../{sibling}"), "content": "x"}),
        ),
        ("read_file", json!({"path": "/etc/passwd"})),
        (
            "write_file",
            json!({"path": ".git/config", "content": "[core]\n"}),
        ),
        (
            "edit_file",
            json!({"path": ".agentic-sdlc/ready/evil.md", "old_string": "", "new_string": "x"}),
        ),
        (
            "write_file",
            json!({"path": ".agentic-sdlc.json/../.agentic-sdlc/backlog/x.md", "content": "x"}),
        ),
        (
            "write_file",
            json!({"path": "escape/written.txt", "content": "x"}),
        ),
        ("read_file", json!({"path": "escape/secret.txt"})),
        // Calls that cannot run at all get their one error result too.
        ("delete_everything", json!({"path": "."})),
        ("write_file", json!("not an object")),
    ];
    p.fake
        .push("implement", calls(&refused))
        .push("implement", Reply::text("Could not do it."));
    // A chore may change nothing (docs/design.md §15), which is all this one manages.
    p.set_type(&story, "chore");
    let before = p.env.files();

    p.step(&story, "implement").success();

    let requests = p.fake.requests_for("implement");
    assert_eq!(requests.len(), 2);
    let results = tool_results(&requests[1]);
    assert_eq!(results.len(), refused.len());
    for ((name, args), (_, content)) in refused.iter().zip(&results) {
        assert!(content.starts_with("Error:"), "{name} {args}: {content}");
        assert!(
            !content.contains("OUTSIDE-SECRET") && !content.contains("root:"),
            "{content}"
        );
    }
    assert!(
        !exists(&sibling_path),
        "{} was written",
        sibling_path.display()
    );
    assert!(!exists(&outside.path().join("written.txt")));
    assert!(!exists(&p.env.path(".git")));
    assert!(!exists(&p.env.board().join("ready/evil.md")));
    assert!(!exists(&p.env.board().join("backlog/x.md")));
    // In the project, only the story changed, besides the run's checkpoint, transcripts and
    // journal (docs/design.md §14).
    let after = p.env.files();
    let changed: Vec<_> = after
        .keys()
        .filter(|path| before.get(*path) != after.get(*path))
        .filter(|path| !path.starts_with(".agentic-sdlc/logs"))
        .filter(|path| !path.starts_with(".agentic-sdlc/runs"))
        .filter(|path| !path.ends_with(".workflow-state.json"))
        .collect();
    assert_eq!(
        changed,
        [&p.path_of(&story)
            .strip_prefix(p.env.root())
            .unwrap()
            .to_path_buf()]
    );
}

#[tokio::test]
async fn commands_are_bounded_in_time_and_in_the_output_the_model_gets() {
    let p = Project::new().await;
    let story = p.planned("Rename old");
    let flood = "echo HEAD-MARK; head -c 3000000 /dev/zero | tr '\\0' x; echo; echo TAIL-MARK";
    p.fake
        .push(
            "implement",
            calls(&[
                (
                    "run_command",
                    json!({"command": "sleep 30", "timeout_seconds": 1}),
                ),
                ("run_command", json!({"command": flood})),
            ]),
        )
        .push("implement", Reply::text("Gave up waiting."));

    let started = Instant::now();
    p.step(&story, "implement").success();

    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    let results = tool_results(&p.fake.requests_for("implement")[1]);
    assert_eq!(results.len(), 2);
    let timed_out = &results[0].1;
    assert!(
        timed_out.starts_with("Error:") && timed_out.contains("timed out"),
        "{timed_out}"
    );
    // Three megabytes of output reach the model as its head and tail.
    let flooded = &results[1].1;
    assert!(flooded.len() < 200_000, "{} bytes", flooded.len());
    assert!(flooded.contains("HEAD-MARK") && flooded.contains("TAIL-MARK"));
    assert!(!flooded.starts_with("Error:"), "{}", &flooded[..200]);
}

#[tokio::test]
async fn a_model_that_never_stops_calling_tools_is_asked_for_its_answer_at_the_budget() {
    let p = Project::new().await;
    p.config(&[("llm.maxTurns", "2")]);
    let story = p.planned("Rename old");
    p.fake
        .set_default("implement", Reply::tool("list_files", json!({})));

    let out = p.step(&story, "implement");

    // Each try: two turns, then the tools are withdrawn and the answer asked for; an answer
    // that changed nothing is refused, and tried once more with that feedback.
    out.code(1);
    let requests = p.fake.requests_for("implement");
    assert_eq!(requests.len(), 6);
    for last in [&requests[2], &requests[5]] {
        assert!(last.tool_names().is_empty(), "the tools are withdrawn");
        assert!(
            last.last_message().contains("You have used all 2 turns"),
            "{}",
            last.last_message()
        );
    }
    let front = p.front(&story);
    let error = front["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("change"), "last_error: {error:?}");
    assert_eq!(front["implementation_complete"], false);
    assert_eq!(section(&p.body(&story), "Implementation Notes"), "");
}

#[tokio::test]
async fn a_change_without_notes_is_kept_with_notes_the_tool_writes() {
    let p = Project::new().await;
    let story = p.planned("Silent worker");
    p.fake
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "src/silent.rs", "content": "pub fn silent() {}\n"}),
            ),
        )
        // Done, and nothing said about it: no prose at all.
        .push("implement", Reply::text("```\n```"));

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 2, "no retry");
    assert_eq!(p.front(&story)["implementation_complete"], true);
    let notes = section(&p.body(&story), "Implementation Notes");
    assert!(
        notes.starts_with(
            "Written by agentic-sdlc: the model gave no notes. Changed: `src/silent.rs`."
        ),
        "{notes}"
    );
}
