//! `phases.<phase>.review` in the config (docs/design.md §4, §8): bad gates are exit 2 naming the
//! key.

use serde_json::json;

use super::{configure, gate, ready_story, requests_about, run_llm};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

#[test]
fn a_bad_gate_is_a_config_error_naming_its_key() {
    let cases = [
        (
            json!({"plan": {"review": {"reviewer": "robot"}}}),
            "phases.plan.review.reviewer",
        ),
        (
            json!({"research": {"review": {"reviewer": "ai", "maxRetries": -1}}}),
            "phases.research.review.maxRetries",
        ),
        (
            json!({"implement": {"review": {"reviewer": "ai", "maxPredecessorRetries": -2}}}),
            "phases.implement.review.maxPredecessorRetries",
        ),
        (
            json!({"deploy": {"review": {"reviewer": "ai"}}}),
            "phases.deploy",
        ),
        (
            json!({"plan": {"review": {"reviewer": "command"}}}),
            "phases.plan.review.command",
        ),
        (
            json!({"plan": {"review": {"reviewer": "command", "command": "  "}}}),
            "phases.plan.review.command",
        ),
    ];
    for (phases, key) in cases {
        let env = TestEnv::init();
        configure(&env, json!({ "phases": phases }));
        for args in [&["status"][..], &["run", "--dry-run"], &["config"]] {
            let out = env.run(args);
            assert_eq!(
                out.code, 2,
                "{args:?} with phases {phases}\n--- stdout\n{}\n--- stderr\n{}",
                out.stdout, out.stderr
            );
            out.stderr_has(key).stdout_empty();
        }
    }
}

#[test]
fn config_set_refuses_a_bad_gate_value_and_keeps_the_file() {
    let env = TestEnv::init();
    gate(&env, "plan", json!({"reviewer": "ai"}));
    let before = env.read(".agentic-sdlc.json");
    // `--`: clap would read `-1` as a flag.
    env.run(&["config", "--", "phases.plan.review.maxRetries", "-1"])
        .code(2)
        .stderr_has("phases.plan.review.maxRetries");
    env.run(&["config", "phases.plan.review.reviewer", "robot"])
        .code(2)
        .stderr_has("phases.plan.review.reviewer");
    assert_eq!(env.read(".agentic-sdlc.json"), before);
}

#[test]
fn max_retries_zero_is_valid() {
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai", "maxRetries": 0}));
    env.run(&["status"]).success();
    let out = env.run(&["config", "phases.research.review.maxRetries"]);
    out.success();
    assert_eq!(out.stdout.trim(), "0");
}

/// `maxRetries: 0` reviews once and never retries: a RETRY keeps the first output.
#[tokio::test]
async fn max_retries_zero_reviews_once_and_never_retries() {
    let fake = FakeLlm::start().await;
    fake.push("research", Reply::text("The only findings."));
    fake.set_default("phase-review", Reply::text("RETRY: go deeper"));
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai", "maxRetries": 0}));
    let story = ready_story(&env, "Add a rate limiter");

    run_llm(&env, &fake, &["run"]).success();

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    assert_eq!(requests_about(&fake, "phase-review", &story).len(), 1);
    let story_json = super::details(&env, &story.slug);
    assert_eq!(story_json["research_complete"], true);
    assert_eq!(
        story_json["sections"]["Research"].as_str().map(str::trim),
        Some("The only findings.")
    );
    let record = &story_json["phase_reviews"]["research"];
    assert_eq!(record["attempts"], 1, "{record}");
    assert_eq!(record["decision"], "RETRY", "{record}");
    assert_eq!(record["exhausted"], true, "{record}");
}
