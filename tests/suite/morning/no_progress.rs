//! No progress (docs/design.md §14): a re-run that repeats itself, or a review that rejects with
//! the same blockers twice, blocks the story at once with the evidence; the run exits 3.

use serde_json::json;

use super::{column, configure, front, run};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

fn blocker(description: &str) -> Reply {
    Reply::verdict(
        false,
        json!([{"severity": "blocker", "category": "correctness", "description": description}]),
    )
}

#[tokio::test]
async fn a_gate_retry_that_repeats_the_output_blocks_the_story() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    configure(
        &env,
        json!({"phases": {"plan": {"review": {"reviewer": "ai", "maxRetries": 5}}}}),
    );
    llm.set_default("phase-review", Reply::text("RETRY: add a rollback step"));
    let (_, slug, _) = env.add("Stubborn plan", &[]);
    let out = run(&env, &llm, &["run", "--auto"]);
    out.code(3).stderr_has("No progress");
    // One retry, not five: the second plan was the first one again.
    assert_eq!(llm.requests_for("plan").len(), 2);
    assert_eq!(llm.requests_for("phase-review").len(), 1);
    assert_eq!(column(&env, &slug), "blocked");
    let reason = front(&env, &slug)["blocked_reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        reason,
        "No progress: the plan re-run gave the same output as the attempt before it: \"1. Change src/lib.rs…\""
    );
}

#[tokio::test]
async fn a_rework_that_repeats_the_implementation_blocks_the_story() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.push(
        "code-review",
        blocker("The limiter never resets its counter"),
    );
    let (_, slug, _) = env.add("Same again", &[]);
    run(&env, &llm, &["run", "--auto"]).code(3);
    // Two implement calls (each a write, then the notes).
    let implements = llm.calls().into_iter().filter(|r| r.role == "implement");
    assert_eq!(implements.count(), 2);
    let story = front(&env, &slug);
    assert_eq!(column(&env, &slug), "blocked");
    assert_eq!(story["refinement_count"], 1);
    assert_eq!(
        story["blocked_reason"],
        "No progress: the implement re-run gave the same notes and no change to the code as the attempt before it: \"Implemented the story.\""
    );
}

#[tokio::test]
async fn the_same_blockers_twice_block_the_story_before_the_breaker() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    // The implementation changes every time, the review keeps finding the same blocker.
    llm.set_default(
        "implement",
        Reply::text("Implemented the story, take {call}."),
    );
    llm.when(
        "code-review",
        "# Story: Same blocker\n",
        blocker("The limiter never resets its counter"),
    );
    let (_, slug, _) = env.add("Same blocker", &[]);
    let (_, other, _) = env.add("Other story", &["--priority", "200"]);
    let out = run(&env, &llm, &["run", "--auto"]);
    out.code(3).stderr_has("No progress");
    let story = front(&env, &slug);
    assert_eq!(column(&env, &slug), "blocked");
    // One rework, then the second identical rejection: the breaker (3) never came into play.
    assert_eq!(story["refinement_count"], 1);
    assert_eq!(
        story["blocked_reason"],
        "No progress: the review rejected with the same blocker(s) twice: \"The limiter never resets its counter\""
    );
    assert_eq!(story["review_history"].as_array().unwrap().len(), 2);
    // The run went on with the other story.
    assert_eq!(column(&env, &other), "done");
}
