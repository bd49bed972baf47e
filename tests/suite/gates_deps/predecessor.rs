//! RETRY_PREDECESSOR (docs/design.md §8): the direct predecessor re-runs once with the feedback and
//! without its own gate, then the phase starts over; a bad name or a spent budget commits.

use serde_json::json;

use super::{
    assert_no_revision, assert_revision, details, gate, requests_about, run_llm, story_with, Story,
};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Recorded, Reply};

const RESEARCHED: &[(&str, &str, &str)] =
    &[("Research", "research_complete", "Original research notes.")];

/// A story whose next action is plan, with gates on both research and plan.
fn plan_next(env: &TestEnv, plan_gate: serde_json::Value) -> Story {
    gate(env, "research", json!({"reviewer": "ai"}));
    gate(env, "plan", plan_gate);
    story_with(env, "Add a rate limiter", RESEARCHED)
}

fn gate_calls_on(fake: &FakeLlm, story: &Story, phase: &str) -> Vec<Recorded> {
    requests_about(fake, "phase-review", story)
        .into_iter()
        .filter(|r| {
            r.user_message()
                .contains(&format!("# Output of the {phase} phase"))
        })
        .collect()
}

#[tokio::test]
async fn the_predecessor_reruns_with_the_feedback_then_the_phase_starts_over() {
    let fake = FakeLlm::start().await;
    fake.push("plan", Reply::text("PLAN one."));
    fake.push("plan", Reply::text("PLAN two."));
    fake.push("research", Reply::text("RESEARCH revised, with sources."));
    fake.push(
        "phase-review",
        Reply::text("RETRY_PREDECESSOR research: need sources"),
    );
    fake.push("phase-review", Reply::text("APPROVE"));
    let env = TestEnv::init();
    let story = plan_next(&env, json!({"reviewer": "ai"}));

    run_llm(&env, &fake, &["run"]).success();

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 1);
    assert_revision(
        &research[0].user_message(),
        2,
        "need sources",
        Some("Original research notes."),
    );
    assert_eq!(
        gate_calls_on(&fake, &story, "research").len(),
        0,
        "the predecessor re-runs without its own gate"
    );
    assert_eq!(gate_calls_on(&fake, &story, "plan").len(), 2);

    let plans = requests_about(&fake, "plan", &story);
    assert_eq!(plans.len(), 2);
    for plan in &plans {
        assert_no_revision(&plan.user_message());
    }
    let second = plans[1].user_message();
    assert!(
        second.contains("RESEARCH revised, with sources.")
            && !second.contains("Original research notes."),
        "the re-run plan sees the new research:\n{second}"
    );

    let story_json = details(&env, &story.slug);
    let sections = &story_json["sections"];
    assert_eq!(
        sections["Research"].as_str().map(str::trim),
        Some("RESEARCH revised, with sources.")
    );
    assert_eq!(
        sections["Implementation Plan"].as_str().map(str::trim),
        Some("PLAN two.")
    );
    assert_eq!(story_json["research_complete"], true);
    assert_eq!(story_json["plan_complete"], true);
    let record = &story_json["phase_reviews"]["plan"];
    assert_eq!(record["predecessor_retries"], 1, "{record}");
    assert_eq!(record["decision"], "APPROVE", "{record}");
}

#[tokio::test]
async fn a_spent_predecessor_budget_commits_the_current_output() {
    let fake = FakeLlm::start().await;
    fake.push("plan", Reply::text("PLAN one."));
    fake.push("plan", Reply::text("PLAN two."));
    fake.push("plan", Reply::text("PLAN three, never asked for."));
    fake.push("research", Reply::text("RESEARCH revised."));
    fake.set_default(
        "phase-review",
        Reply::text("RETRY_PREDECESSOR research: need sources"),
    );
    let env = TestEnv::init();
    let story = plan_next(&env, json!({"reviewer": "ai", "maxPredecessorRetries": 1}));

    run_llm(&env, &fake, &["run"]).success();

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    assert_eq!(requests_about(&fake, "plan", &story).len(), 2);
    assert_eq!(gate_calls_on(&fake, &story, "plan").len(), 2);
    let story_json = details(&env, &story.slug);
    assert_eq!(story_json["plan_complete"], true);
    assert_eq!(
        story_json["sections"]["Implementation Plan"]
            .as_str()
            .map(str::trim),
        Some("PLAN two.")
    );
    assert_eq!(
        story_json["sections"]["Research"].as_str().map(str::trim),
        Some("RESEARCH revised.")
    );
    assert_eq!(
        story_json["phase_reviews"]["plan"]["predecessor_retries"],
        1
    );
}

#[tokio::test]
async fn a_phase_that_is_not_the_direct_predecessor_commits_the_current_output() {
    let cases = [
        // implement's direct predecessor is plan, not research.
        ("implement", "RETRY_PREDECESSOR research: x"),
        ("implement", "RETRY_PREDECESSOR deploy: x"),
        ("plan", "RETRY_PREDECESSOR refine: x"),
        ("plan", "RETRY_PREDECESSOR plan: x"),
    ];
    for (phase, answer) in cases {
        let fake = FakeLlm::start().await;
        if phase == "implement" {
            // A feature's implement changes a file before it gives its notes (docs/design.md §15).
            fake.push(
                phase,
                Reply::tool("write_file", json!({"path": "f.txt", "content": "x"})),
            );
        }
        fake.push(phase, Reply::text("The current output."));
        fake.set_default("phase-review", Reply::text(answer));
        let env = TestEnv::init();
        gate(&env, phase, json!({"reviewer": "ai"}));
        let done: &[(&str, &str, &str)] = if phase == "implement" {
            &[
                ("Research", "research_complete", "Research."),
                ("Implementation Plan", "plan_complete", "Plan."),
            ]
        } else {
            RESEARCHED
        };
        let story = story_with(&env, "Add a rate limiter", done);

        run_llm(&env, &fake, &["run"]).success();

        let case = format!("{phase} / {answer}");
        assert_eq!(fake.roles(), [phase, "phase-review"], "{case}");
        let story_json = details(&env, &story.slug);
        let (flag, section) = match phase {
            "implement" => ("implementation_complete", "Implementation Notes"),
            _ => ("plan_complete", "Implementation Plan"),
        };
        assert_eq!(story_json[flag], true, "{case}");
        assert_eq!(
            story_json["sections"][section].as_str().map(str::trim),
            Some("The current output."),
            "{case}"
        );
        for (name, _, text) in done {
            assert_eq!(
                story_json["sections"][*name].as_str().map(str::trim),
                Some(*text),
                "{case}: earlier sections are untouched"
            );
        }
        assert_eq!(story_json["phase_reviews"][phase]["attempts"], 1, "{case}");
    }
}
