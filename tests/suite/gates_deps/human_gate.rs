//! The `human` reviewer without a terminal (docs/design.md §8): the story waits until `decide`.

use serde_json::json;

use super::{
    assert_revision, column, details, gate, ready_story, requests_about, run_llm, section, Story,
};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

const FIRST: &str = "Findings waiting for a person.";

/// A refined story with a human gate on research, after a `run` that left it pending.
async fn pending() -> (FakeLlm, TestEnv, Story) {
    let fake = FakeLlm::start().await;
    fake.push("research", Reply::text(FIRST));
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "human"}));
    let story = ready_story(&env, "Add a rate limiter");
    // A run that leaves a story waiting for a person ends with exit 3 and says, by slug, what
    // to read and what to run.
    let out = run_llm(&env, &fake, &["run"]);
    out.code(3)
        .stdout_has(&format!("agentic-sdlc decide {} \"APPROVE\"", story.slug))
        .stdout_has(&format!("logs/{}/pending-research.md", story.id));
    (fake, env, story)
}

#[tokio::test]
async fn without_a_terminal_the_story_waits_for_decide() {
    let (fake, env, story) = pending().await;

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    assert_eq!(fake.requests_for("phase-review").len(), 0);
    let story_json = details(&env, &story.slug);
    assert_eq!(
        story_json["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
    assert_eq!(story_json["research_complete"], false);
    assert_eq!(section(&env, &story.slug, "Research"), "");

    let status = env.run(&["status"]);
    status.success().stdout_has("decide");
    let recommended = env.status_json()["recommended"].clone();
    assert_eq!(recommended, json!([]), "a pending story has no action");

    // A second run does not run the phase again, and still waits for the person.
    run_llm(&env, &fake, &["run", "--auto"])
        .code(3)
        .stdout_has("Nothing to do. 1 story needs you");
    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    assert_eq!(
        details(&env, &story.slug)["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
}

#[tokio::test]
async fn approve_commits_the_pending_output_and_the_next_run_carries_on() {
    let (fake, env, story) = pending().await;

    env.run(&["decide", &story.slug, "APPROVE"]).success();

    let story_json = details(&env, &story.slug);
    assert_eq!(story_json["research_complete"], true);
    assert_eq!(
        story_json["phase_reviews"]["research"]["decision"],
        "APPROVE"
    );
    assert_eq!(section(&env, &story.slug, "Research"), FIRST);

    run_llm(&env, &fake, &["run", "--auto"]).success();
    assert_eq!(column(&env, &story.slug), "done");
    assert_eq!(
        requests_about(&fake, "research", &story).len(),
        1,
        "the approved research is not run again"
    );
    assert_eq!(section(&env, &story.slug, "Research"), FIRST);
}

#[tokio::test]
async fn retry_reruns_the_phase_with_the_feedback_and_the_pending_output() {
    let (fake, env, story) = pending().await;
    fake.push("research", Reply::text("Findings with more detail."));

    env.run(&["decide", &story.slug, "RETRY: more detail"])
        .success();
    assert_eq!(
        requests_about(&fake, "research", &story).len(),
        1,
        "decide itself calls no model"
    );
    run_llm(&env, &fake, &["run"]).code(3);

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 2);
    assert_revision(&research[1].user_message(), 2, "more detail", Some(FIRST));
    // The re-run output waits for the person again.
    let record = &details(&env, &story.slug)["phase_reviews"]["research"];
    assert_eq!(record["decision"], "PENDING", "{record}");
    assert_eq!(record["attempts"], 2, "{record}");

    env.run(&["decide", &story.slug, "approve"]).success();
    assert_eq!(
        section(&env, &story.slug, "Research"),
        "Findings with more detail."
    );
}

#[tokio::test]
async fn reject_blocks_the_story() {
    let (_fake, env, story) = pending().await;

    env.run(&["decide", &story.slug, "REJECT: no"]).success();

    assert_eq!(column(&env, &story.slug), "blocked");
    let story_json = details(&env, &story.slug);
    assert_eq!(
        story_json["blocked_reason"],
        "Phase research rejected by review: no"
    );
    assert_eq!(story_json["research_complete"], false);
    assert_eq!(
        story_json["phase_reviews"]["research"]["decision"],
        "REJECT"
    );
    // The story's timeline says where the decision came from.
    assert_eq!(
        story_json["phase_reviews"]["research"]["decided_by"],
        "decide"
    );
    env.run(&["details", &story.slug])
        .success()
        .stdout_has("research: REJECT after 1 attempt(s), decided with `agentic-sdlc decide`");
}

#[tokio::test]
async fn retry_and_reject_need_a_reason() {
    let (_fake, env, story) = pending().await;
    let before = env.files();
    for empty in ["RETRY:", "REJECT:  ", "RETRY_PREDECESSOR plan:"] {
        env.run(&["decide", &story.slug, empty])
            .code(2)
            .stderr_has("needs a reason");
    }
    assert!(
        env.files() == before,
        "a decision without its reason writes nothing"
    );
    env.run(&["decide", &story.slug, "RETRY: cite the sources"])
        .success();
}

#[tokio::test]
async fn decide_refuses_a_story_with_nothing_pending_and_a_text_that_is_no_decision() {
    let (_fake, env, story) = pending().await;
    let other = ready_story(&env, "Write the docs");

    let before = env.files();
    env.run(&["decide", &other.slug, "APPROVE"])
        .code(1)
        .stdout_empty();
    env.run(&["decide", &story.slug, "looks good to me"])
        .code(2)
        .stdout_empty();
    assert!(env.files() == before, "a refused decide writes nothing");

    let decided = env.run_json(&["decide", &story.slug, "APPROVE"]);
    assert_eq!(decided["id"], story.id.as_str(), "{decided}");
    // Nothing pending any more: deciding again is a failure.
    env.run(&["decide", &story.slug, "APPROVE"])
        .code(1)
        .stderr_has(&story.slug);
}

#[tokio::test]
async fn retry_predecessor_from_a_person_reruns_the_predecessor_then_the_phase() {
    let fake = FakeLlm::start().await;
    fake.push("plan", Reply::text("PLAN one."));
    fake.push("research", Reply::text("RESEARCH with sources."));
    fake.push("plan", Reply::text("PLAN two."));
    let env = TestEnv::init();
    gate(&env, "plan", json!({"reviewer": "human"}));
    let story = super::story_with(
        &env,
        "Add a rate limiter",
        &[("Research", "research_complete", "Original research.")],
    );
    run_llm(&env, &fake, &["run"]).code(3);
    assert_eq!(
        details(&env, &story.slug)["phase_reviews"]["plan"]["decision"],
        "PENDING"
    );

    env.run(&[
        "decide",
        &story.slug,
        "RETRY_PREDECESSOR research: need sources",
    ])
    .success();
    run_llm(&env, &fake, &["run"]).code(3);

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 1);
    assert_revision(
        &research[0].user_message(),
        2,
        "need sources",
        Some("Original research."),
    );
    let plans = requests_about(&fake, "plan", &story);
    assert_eq!(plans.len(), 2);
    super::assert_no_revision(&plans[1].user_message());
    assert_eq!(
        section(&env, &story.slug, "Research"),
        "RESEARCH with sources."
    );
    let record = &details(&env, &story.slug)["phase_reviews"]["plan"];
    assert_eq!(record["decision"], "PENDING", "{record}");
    assert_eq!(record["predecessor_retries"], 1, "{record}");

    env.run(&["decide", &story.slug, "APPROVE"]).success();
    assert_eq!(
        section(&env, &story.slug, "Implementation Plan"),
        "PLAN two."
    );
}
