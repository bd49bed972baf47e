//! `logs <story> [--phase P] [--follow]` (docs/design.md §14): transcripts made readable.

use std::time::Duration;

use serde_json::json;

use super::run;
use crate::suite::common::{assert_contains_all, finish, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Reply};

#[tokio::test]
async fn each_call_shows_role_messages_tools_tokens_and_duration() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.write("src/lib.rs", "pub fn answer() -> u32 { 42 }\n");
    let long_summary = (1..=30)
        .map(|n| format!("Summary line {n}."))
        .collect::<Vec<_>>()
        .join("\n");
    let body = env.write("body.md", &format!("## Summary\n{long_summary}\n"));
    let (_, slug, _) = env.add("Readable story", &["--body-file", body.to_str().unwrap()]);
    llm.push(
        "refine",
        Reply::tool("read_file", json!({"path": "src/lib.rs"})),
    )
    .push(
        "refine",
        Reply::text("## Summary\nA summary.\n\n## Acceptance Criteria\n- [ ] It works"),
    );
    run(&env, &llm, &["run", "--auto", "--max-actions", "2"]).success();

    let out = env.run(&["logs", &slug]);
    out.success();
    let text = &out.stdout;
    assert_contains_all(
        text,
        &[
            "━━ refine ━━",
            "━━ research ━━",
            "▶ call 1 · refine agent",
            "system: You are the agentic-sdlc refine agent.",
            "→ read_file {\"path\":\"src/lib.rs\"}",
            "← read_file: ",
            "pub fn answer() -> u32 { 42 }",
            "▶ call 2 · refine agent",
            "assistant: ## Summary",
            "tokens: 100 in, 20 out · ",
            "■ done: 2 call(s), 1 tool call(s), 200 tokens in, 40 out",
            "… folded: ",
        ],
    );
    // Long messages are folded unless asked for in full.
    assert!(!text.contains("Summary line 30."), "{text}");
    env.run(&["logs", &slug, "--full"])
        .success()
        .stdout_has("Summary line 30.");

    let research = env.run(&["logs", &slug, "--phase", "research"]);
    research.success().stdout_has("research agent");
    assert!(
        !research.stdout.contains("refine agent"),
        "{}",
        research.stdout
    );
}

#[tokio::test]
async fn a_story_without_transcripts_is_said_plainly() {
    let env = TestEnv::init();
    let (_, slug, _) = env.add("Untouched story", &[]);
    env.run(&["logs", &slug])
        .code(1)
        .stderr_has("no transcripts of untouched-story yet")
        .stdout_empty();
    env.run(&["logs", "no-such-story"])
        .code(1)
        .stderr_has("not found");
}

#[tokio::test]
async fn follow_streams_a_running_story_until_the_run_ends() {
    let env = TestEnv::init();
    let llm = FakeLlm::start_with_delay(Some(Duration::from_millis(400))).await;
    let (_, slug, _) = env.add("Followed story", &[]);
    let runner = env.spawn_with_llm(&llm, &["run", "--auto"]);
    // Start following once the run holds the board, before any transcript exists.
    crate::suite::run_loop::wait_until("the run to take the lock", Duration::from_secs(60), || {
        env.board().join(".lock").exists()
    });
    let follower = env.spawn_with_llm(&llm, &["logs", &slug, "--follow"]);
    let ran = finish(runner);
    ran.success();
    let followed = finish(follower);
    followed.success();
    // Everything the run did, up to its last review call, came through while it ran.
    assert_contains_all(
        &followed.stdout,
        &[
            "▶ call 1 · refine agent",
            "▶ call 1 · implement agent",
            "▶ call 1 · po-review agent",
            "▶ call 1 · security-review agent",
        ],
    );
    // And nothing twice.
    assert_eq!(
        followed.stdout.matches("▶ call 1 · refine agent").count(),
        1,
        "{}",
        followed.stdout
    );
}
