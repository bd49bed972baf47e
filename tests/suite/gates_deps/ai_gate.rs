//! The `ai` reviewer (docs/design.md §8): one phase-review call decides; RETRY re-runs the phase
//! with the feedback (§9); only the accepted output reaches the story, every attempt the
//! transcript.

use serde_json::json;

use super::{
    assert_no_revision, assert_revision, details, gate, ready_story, requests_about, run_llm,
    section,
};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

#[tokio::test]
async fn approve_commits_the_first_attempt() {
    let fake = FakeLlm::start().await;
    fake.push(
        "research",
        Reply::text("Findings: the limiter goes in src/net.rs."),
    );
    fake.push("phase-review", Reply::text("APPROVE"));
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai"}));
    let story = ready_story(&env, "Add a rate limiter");

    run_llm(&env, &fake, &["run"]).success();

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    let gates = requests_about(&fake, "phase-review", &story);
    assert_eq!(gates.len(), 1);
    assert!(gates[0]
        .system_message()
        .starts_with("You are the agentic-sdlc phase-review agent.\n"));
    assert!(
        gates[0]
            .user_message()
            .contains("Findings: the limiter goes in src/net.rs."),
        "the gate sees the output:\n{}",
        gates[0].user_message()
    );
    let story_json = details(&env, &story.slug);
    assert_eq!(story_json["research_complete"], true);
    assert_eq!(
        story_json["sections"]["Research"].as_str().map(str::trim),
        Some("Findings: the limiter goes in src/net.rs.")
    );
    assert_eq!(
        story_json["phase_reviews"]["research"],
        json!({"attempts": 1, "decision": "APPROVE"})
    );
}

#[tokio::test]
async fn retry_reruns_the_phase_with_the_feedback_and_commits_only_the_second_output() {
    let fake = FakeLlm::start().await;
    fake.push("research", Reply::text("FIRST shallow findings."));
    fake.push(
        "research",
        Reply::text("SECOND findings citing src/net.rs."),
    );
    fake.push(
        "phase-review",
        Reply::text("RETRY: need more depth: cite files"),
    );
    fake.push("phase-review", Reply::text("APPROVE"));
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai"}));
    let story = ready_story(&env, "Add a rate limiter");

    run_llm(&env, &fake, &["run"]).success();

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 2);
    assert_no_revision(&research[0].user_message());
    assert_revision(
        &research[1].user_message(),
        2,
        "need more depth: cite files",
        Some("FIRST shallow findings."),
    );
    assert_eq!(requests_about(&fake, "phase-review", &story).len(), 2);

    assert_eq!(
        section(&env, &story.slug, "Research"),
        "SECOND findings citing src/net.rs."
    );
    let file = env.read(env.story_path(&story.slug));
    assert!(!file.contains("FIRST shallow findings."), "{file}");
    let record = &details(&env, &story.slug)["phase_reviews"]["research"];
    assert_eq!(record["attempts"], 2, "{record}");
    assert_eq!(record["decision"], "APPROVE", "{record}");

    let transcript = serde_json::to_string(&env.transcript_lines(&story.id)).unwrap();
    for output in [
        "FIRST shallow findings.",
        "SECOND findings citing src/net.rs.",
    ] {
        assert!(
            transcript.contains(output),
            "the transcript lacks {output:?}"
        );
    }
}

#[tokio::test]
async fn exhausted_retries_commit_the_last_output() {
    let fake = FakeLlm::start().await;
    fake.push("research", Reply::text("Attempt one."));
    fake.push("research", Reply::text("Attempt two."));
    fake.push("research", Reply::text("Attempt three, never asked for."));
    fake.set_default("phase-review", Reply::text("RETRY: still too shallow"));
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai", "maxRetries": 1}));
    let story = ready_story(&env, "Add a rate limiter");

    run_llm(&env, &fake, &["run"]).success();

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 2);
    assert_revision(
        &research[1].user_message(),
        2,
        "still too shallow",
        Some("Attempt one."),
    );
    assert_eq!(requests_about(&fake, "phase-review", &story).len(), 2);
    let story_json = details(&env, &story.slug);
    assert_eq!(story_json["research_complete"], true);
    assert_eq!(
        story_json["sections"]["Research"].as_str().map(str::trim),
        Some("Attempt two.")
    );
    let record = &story_json["phase_reviews"]["research"];
    assert_eq!(record["attempts"], 2, "{record}");
    assert_eq!(record["exhausted"], true, "{record}");
    assert_eq!(record["decision"], "RETRY", "{record}");
}

#[tokio::test]
async fn an_answer_without_a_decision_line_approves_and_the_record_says_so() {
    let fake = FakeLlm::start().await;
    fake.push("research", Reply::text("Findings."));
    fake.push(
        "phase-review",
        Reply::text("The research looks thorough to me.\nNothing to add, really."),
    );
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai"}));
    let story = ready_story(&env, "Add a rate limiter");

    run_llm(&env, &fake, &["run"]).success();

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    let story_json = details(&env, &story.slug);
    assert_eq!(story_json["research_complete"], true);
    let record = &story_json["phase_reviews"]["research"];
    assert_eq!(record["attempts"], 1, "{record}");
    assert_eq!(record["decision"], "APPROVE", "{record}");
    let said = record.to_string().to_lowercase();
    assert!(said.contains("no decision line"), "{record}");
}

#[tokio::test]
async fn the_criteria_reach_the_phase_review_prompt() {
    let fake = FakeLlm::start().await;
    fake.push("plan", Reply::text("1. Edit src/net.rs"));
    let env = TestEnv::init();
    gate(
        &env,
        "plan",
        json!({"reviewer": "ai", "criteria": "Every step names a test to add"}),
    );
    let story = super::story_with(
        &env,
        "Add a rate limiter",
        &[("Research", "research_complete", "Findings.")],
    );

    run_llm(&env, &fake, &["run"]).success();

    let gates = requests_about(&fake, "phase-review", &story);
    assert_eq!(gates.len(), 1);
    let prompt = gates[0].user_message();
    assert!(
        prompt.contains("Every step names a test to add"),
        "{prompt}"
    );
    assert!(prompt.contains("1. Edit src/net.rs"), "{prompt}");
    assert_eq!(details(&env, &story.slug)["plan_complete"], true);
}
