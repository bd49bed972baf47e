//! Budgets (SPEC §14): a story at its budget moves to blocked/ before its next call; a run at
//! its budget starts no new action, lets the ones in flight finish and exits 3 naming it.

use std::time::Duration;

use serde_json::json;

use super::{column, configure, front, journal_events, price_the_model, run, TOKENS_PER_CALL};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

#[tokio::test]
async fn a_story_at_its_token_budget_is_blocked_before_the_next_call() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    configure(&env, json!({"budget": {"storyTokens": 250}}));
    let (_, slug, _) = env.add("Hungry story", &[]);
    let (_, other, _) = env.add("Modest story", &["--priority", "200"]);

    let out = run(&env, &llm, &["run", "--auto", "--story", &slug]);
    // refine 120, research 240, plan 360: the plan call was admitted at 240, implement is not.
    out.code(3).stderr_has("Budget: 360 of 250 tokens");
    assert_eq!(llm.roles(), ["refine", "research", "plan"]);
    assert_eq!(column(&env, &slug), "blocked");
    let story = front(&env, &slug);
    assert_eq!(story["blocked_reason"], "Budget: 360 of 250 tokens");
    assert_eq!(story["last_error"], "Budget: 360 of 250 tokens");
    assert_eq!(story["plan_complete"], true);
    assert_eq!(story["usage"]["prompt_tokens"], 300);
    // Another story has a budget of its own.
    assert_eq!(column(&env, &other), "backlog");
    run(&env, &llm, &["run", "--story", &other]).success();
    assert_eq!(column(&env, &other), "ready");

    // The next run does not call the model for the blocked story, and raising the budget and
    // unblocking moves it on.
    configure(&env, json!({"budget": {"storyTokens": 100000}}));
    env.run(&["unblock", &slug]).success();
    run(&env, &llm, &["run", "--auto", "--story", &slug]).success();
    assert_eq!(column(&env, &slug), "done");
}

#[tokio::test]
async fn a_story_at_its_usd_budget_is_blocked() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    price_the_model(&env);
    configure(&env, json!({"budget": {"storyUsd": 0.05}}));
    let (_, slug, _) = env.add("Costly story", &[]);
    let out = run(&env, &llm, &["run", "--auto", "--json"]);
    out.code(3);
    // refine $0.027, research $0.054: the plan call is refused.
    assert_eq!(llm.roles(), ["refine", "research"]);
    assert_eq!(
        front(&env, &slug)["blocked_reason"],
        "Budget: 0.054 of 0.05 USD"
    );
    let blocked: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["event"] == "story_blocked")
        .collect();
    assert_eq!(blocked.len(), 1, "{}", out.stdout);
    assert_eq!(blocked[0]["reason"], "Budget: 0.054 of 0.05 USD");
}

#[tokio::test]
async fn a_run_at_its_budget_finishes_what_runs_and_exits_3_naming_it() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    configure(&env, json!({"budget": {"runTokens": 300}}));
    let (_, slug, _) = env.add("Long story", &[]);
    let out = run(&env, &llm, &["run", "--auto"]);
    // refine 120, research 240; plan's call was admitted at 240 and its action finished.
    out.code(3)
        .stderr_has("budget.runTokens")
        .stderr_has("360 of 300 tokens");
    assert_eq!(llm.roles(), ["refine", "research", "plan"]);
    let story = front(&env, &slug);
    assert_eq!(column(&env, &slug), "ready");
    assert_eq!(story["plan_complete"], true);
    assert!(story.get("blocked_reason").is_none(), "{story}");
    assert!(story.get("last_error").is_none(), "{story}");
    let finished = journal_events(&env).pop().unwrap();
    assert_eq!(finished["exitCode"], 3);
    assert!(
        finished["message"]
            .as_str()
            .unwrap()
            .contains("budget.runTokens"),
        "{finished}"
    );
    // A new run has a budget of its own.
    run(&env, &llm, &["run"]).success();
}

#[tokio::test]
async fn parallel_stories_overshoot_the_run_budget_by_at_most_the_calls_in_flight() {
    let env = TestEnv::init();
    // Slow answers, so the four stories' calls are in flight together.
    let llm = FakeLlm::start_with_delay(Some(Duration::from_millis(300))).await;
    let budget = 500;
    configure(&env, json!({"budget": {"runTokens": budget}}));
    let slugs: Vec<String> = (1..=4)
        .map(|n| env.add(&format!("Parallel story {n}"), &[]).1)
        .collect();
    let out = run(&env, &llm, &["run", "--auto", "--concurrency", "4"]);
    out.code(3).stderr_has("budget.runTokens");
    // Not a terminal: no live progress lines, no escape codes.
    assert!(!out.stderr.contains('\u{1b}'), "{}", out.stderr);

    // Every answered call is on a story, and the total passed the budget by at most one call
    // per story in flight.
    let spent: u64 = slugs
        .iter()
        .map(|slug| {
            let usage = &front(&env, slug)["usage"];
            usage["prompt_tokens"].as_u64().unwrap_or(0)
                + usage["completion_tokens"].as_u64().unwrap_or(0)
        })
        .sum();
    assert_eq!(spent, llm.requests().len() as u64 * TOKENS_PER_CALL);
    assert!(spent >= budget, "{spent}");
    assert!(spent < budget + 4 * TOKENS_PER_CALL, "{spent}");
    for slug in &slugs {
        assert_ne!(column(&env, slug), "blocked", "{slug}");
        assert!(front(&env, slug).get("last_error").is_none(), "{slug}");
    }
}

#[tokio::test]
async fn each_of_four_parallel_stories_keeps_its_own_budget() {
    let env = TestEnv::init();
    let llm = FakeLlm::start_with_delay(Some(Duration::from_millis(100))).await;
    configure(&env, json!({"budget": {"storyTokens": 250}}));
    let slugs: Vec<String> = (1..=4)
        .map(|n| env.add(&format!("Budgeted story {n}"), &[]).1)
        .collect();
    let out = run(&env, &llm, &["run", "--auto", "--concurrency", "4"]);
    out.code(3).stderr_has("Budget: 360 of 250 tokens");
    // Each story made its three calls (refine, research, plan) and was stopped before its fourth.
    assert_eq!(llm.requests().len(), 12);
    assert!(llm.requests_for("implement").is_empty());
    for slug in &slugs {
        assert_eq!(column(&env, slug), "blocked", "{slug}");
        assert_eq!(
            front(&env, slug)["blocked_reason"],
            "Budget: 360 of 250 tokens"
        );
    }
}
