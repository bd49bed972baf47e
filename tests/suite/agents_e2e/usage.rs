//! What a story keeps of its agent calls: the usage it spent and the transcripts.

use serde_json::{json, Value};

use super::Project;
use crate::suite::fake_llm::Reply;

/// The fake's usage per reply.
const PROMPT: u64 = 100;
const COMPLETION: u64 = 20;

#[tokio::test]
async fn usage_sums_every_request_made_for_the_story_including_failed_ones() {
    let p = Project::new().await;
    let story = p.story("Counted", "A summary.", "- [ ] It works", "backlog", &[]);
    let other = p.ready("Someone else");

    // A failed implement spends three replies a try (two turns, then its answer without tools),
    // and is tried twice; its tokens count all the same.
    p.config(&[("llm.maxTurns", "2")]);
    p.fake
        .set_default("implement", Reply::tool("list_files", json!({})));
    p.run(&["run", "--auto", "--story", &story.id]).code(1);
    assert_eq!(p.front(&story)["implementation_complete"], false);
    let failed_usage = &p.details(&story)["usage"];
    assert_eq!(
        failed_usage["requests"], 9,
        "refine, research, plan, 6 implement: {failed_usage}"
    );

    // Then the story finishes, with a tool turn and a review reminder along the way; the
    // fake's own implement answer writes a file, then gives its notes.
    p.config(&[("llm.maxTurns", "50")]);
    p.fake
        .push("implement", Reply::tool("list_files", json!({})))
        .clear_default("implement")
        .push("po-review", Reply::text("No JSON here."));
    p.run(&["run", "--auto", "--story", &story.id]).success();
    assert_eq!(p.column(&story), "done");

    // Another story's calls are its own.
    p.step(&other, "research").success();

    let story_requests = p.fake.requests().len() as u64 - 1;
    // 9 above, then 3 implement (a tool turn, the write, the notes), 3 perspectives and one
    // reminder.
    assert_eq!(story_requests, 16);
    let usage = p.details(&story)["usage"].clone();
    assert_eq!(
        usage,
        json!({
            "prompt_tokens": PROMPT * story_requests,
            "completion_tokens": COMPLETION * story_requests,
            "requests": story_requests,
        })
    );
    assert_eq!(p.front(&story)["usage"]["requests"], 16);
    assert_eq!(p.details(&other)["usage"]["requests"], 1);

    let details = p.env.run(&["details", &story.id]);
    details.success().stdout_has(&format!(
        "{story_requests} request(s), {} prompt + {} completion tokens",
        PROMPT * story_requests,
        COMPLETION * story_requests
    ));
}

#[tokio::test]
async fn transcripts_hold_every_request_and_response_as_json_lines() {
    let p = Project::new().await;
    let story = p.researched("Logged");
    p.fake
        .push(
            "plan",
            Reply::tool("read_file", json!({"path": "missing.txt"})),
        )
        .push("plan", Reply::text("PLAN-IN-TRANSCRIPT"));

    p.step(&story, "plan").success();

    let folder = p.env.board().join("logs").join(&story.id);
    let files: Vec<_> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(!files.is_empty());
    let mut lines: Vec<Value> = Vec::new();
    for file in &files {
        assert_eq!(file.extension().unwrap(), "jsonl", "{}", file.display());
        let text = std::fs::read_to_string(file).unwrap();
        for line in text.lines() {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line}", file.display()));
            lines.push(value);
        }
    }
    let events =
        |name: &str| -> Vec<&Value> { lines.iter().filter(|l| l["event"] == name).collect() };
    assert_eq!(events("request").len(), 2, "{lines:#?}");
    assert_eq!(events("response").len(), 2, "{lines:#?}");
    let all = serde_json::to_string(&lines).unwrap();
    // The prompt that was sent, the tool call and its result, and the final answer.
    assert!(
        all.contains("You are the agentic-sdlc plan agent."),
        "{all}"
    );
    assert!(all.contains("# Story: Logged"), "{all}");
    assert!(all.contains("missing.txt"), "{all}");
    assert!(
        events("response")[1]
            .to_string()
            .contains("PLAN-IN-TRANSCRIPT"),
        "{all}"
    );
}
