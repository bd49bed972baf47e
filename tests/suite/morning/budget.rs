//! Budgets (docs/design.md §14): a story at its budget moves to blocked/ before its next call; a
//! run at its budget starts no new action, lets the ones in flight finish and exits 3 naming it.
//!
//! The fake counts tokens from what it is sent, as a real server does, so a request is sent
//! only when its prompt leaves room under the budget: what a story spends never passes it.

use std::time::Duration;

use serde_json::{json, Value as Json};

use super::{column, configure, front, journal_events, price_the_model, run};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, UsageReport};

/// A fake that counts tokens from the size of what it is sent and answers.
async fn counting_llm(delay: Option<Duration>) -> FakeLlm {
    let llm = FakeLlm::start_with_delay(delay).await;
    llm.report_usage(UsageReport::BySize);
    llm
}

fn tokens_of(story: &Json) -> u64 {
    let usage = &story["usage"];
    usage["prompt_tokens"].as_u64().unwrap_or(0) + usage["completion_tokens"].as_u64().unwrap_or(0)
}

#[tokio::test]
async fn a_story_at_its_token_budget_is_blocked_before_the_next_call() {
    let env = TestEnv::init();
    let llm = counting_llm(None).await;
    configure(&env, json!({"budget": {"storyTokens": 2500}}));
    let (_, slug, _) = env.add("Hungry story", &[]);
    let (_, other, _) = env.add("Modest story", &["--priority", "200"]);

    let out = run(&env, &llm, &["run", "--auto", "--story", &slug]);
    out.code(3).stderr_has("Budget: ");
    assert_eq!(column(&env, &slug), "blocked");
    let story = front(&env, &slug);
    let reason = story["blocked_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Budget: ") && reason.contains(" of 2500 tokens"),
        "{reason}"
    );
    assert_eq!(story["last_error"], reason);
    assert!(tokens_of(&story) <= 2500, "{story}");
    assert!(!llm.requests().is_empty(), "the first phases ran");
    assert!(
        llm.requests_for("code-review").is_empty(),
        "stopped well before the review"
    );
    // The summary names the budget to raise and the command, by slug.
    out.stdout_has("budget.storyTokens")
        .stdout_has(&format!("agentic-sdlc unblock {slug}"));
    // Another story has a budget of its own.
    assert_eq!(column(&env, &other), "backlog");
    run(&env, &llm, &["run", "--story", &other]).success();
    assert_eq!(column(&env, &other), "ready");

    // The next run does not call the model for the blocked story, and raising the budget and
    // unblocking moves it on.
    let sent = llm.requests().len();
    run(&env, &llm, &["run", "--auto", "--story", &slug]).success();
    assert_eq!(llm.requests().len(), sent);
    configure(&env, json!({"budget": {"storyTokens": 1_000_000}}));
    env.run(&["unblock", &slug]).success();
    run(&env, &llm, &["run", "--auto", "--story", &slug]).success();
    assert_eq!(column(&env, &slug), "done");
}

#[tokio::test]
async fn a_story_at_its_usd_budget_is_blocked() {
    let env = TestEnv::init();
    let llm = counting_llm(None).await;
    price_the_model(&env);
    configure(&env, json!({"budget": {"storyUsd": 0.2}}));
    let (_, slug, _) = env.add("Costly story", &[]);
    let out = run(&env, &llm, &["run", "--auto", "--json"]);
    out.code(3);
    let story = front(&env, &slug);
    let reason = story["blocked_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("Budget: ") && reason.contains(" of 0.2 USD"),
        "{reason}"
    );
    assert!(
        story["usage"]["cost_usd"].as_f64().unwrap() <= 0.2,
        "{story}"
    );
    let blocked: Vec<Json> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &Json| e["event"] == "story_blocked")
        .collect();
    assert_eq!(blocked.len(), 1, "{}", out.stdout);
    assert_eq!(blocked[0]["reason"], reason);
    assert_eq!(
        blocked[0]["cause"],
        json!({"kind": "budget", "key": "budget.storyUsd"})
    );
}

#[tokio::test]
async fn a_run_at_its_budget_finishes_what_runs_and_exits_3_naming_it() {
    let env = TestEnv::init();
    let llm = counting_llm(None).await;
    configure(&env, json!({"budget": {"runTokens": 2500}}));
    let (_, slug, _) = env.add("Long story", &[]);
    let out = run(&env, &llm, &["run", "--auto"]);
    out.code(3).stdout_has("budget.runTokens");
    assert!(!llm.requests().is_empty());
    let story = front(&env, &slug);
    assert_ne!(column(&env, &slug), "blocked");
    assert!(story.get("blocked_reason").is_none(), "{story}");
    assert!(story.get("last_error").is_none(), "{story}");
    assert!(tokens_of(&story) <= 2500, "{story}");
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
    let llm = counting_llm(Some(Duration::from_millis(300))).await;
    let budget = 6000;
    configure(&env, json!({"budget": {"runTokens": budget}}));
    let slugs: Vec<String> = (1..=4)
        .map(|n| env.add(&format!("Parallel story {n}"), &[]).1)
        .collect();
    let out = run(&env, &llm, &["run", "--auto", "--concurrency", "4"]);
    out.code(3).stdout_has("budget.runTokens");
    // Not a terminal: no live progress lines, no escape codes.
    assert!(!out.stderr.contains('\u{1b}'), "{}", out.stderr);

    // Each call was admitted with room under the budget as it stood; calls admitted together
    // can pass it by at most what the others in flight spent.
    let spent: u64 = slugs.iter().map(|slug| tokens_of(&front(&env, slug))).sum();
    let largest = llm
        .requests()
        .iter()
        .map(|r| crate::suite::fake_llm::request_chars(&r.body).div_ceil(4) as u64)
        .max()
        .unwrap();
    assert!(spent <= budget + 3 * (largest + 200), "{spent}");
    for slug in &slugs {
        assert_ne!(column(&env, slug), "blocked", "{slug}");
        assert!(front(&env, slug).get("last_error").is_none(), "{slug}");
    }
}

#[tokio::test]
async fn each_of_four_parallel_stories_keeps_its_own_budget() {
    let env = TestEnv::init();
    let llm = counting_llm(Some(Duration::from_millis(100))).await;
    configure(&env, json!({"budget": {"storyTokens": 2500}}));
    let slugs: Vec<String> = (1..=4)
        .map(|n| env.add(&format!("Budgeted story {n}"), &[]).1)
        .collect();
    let out = run(&env, &llm, &["run", "--auto", "--concurrency", "4"]);
    out.code(3).stderr_has("Budget: ");
    for slug in &slugs {
        assert_eq!(column(&env, slug), "blocked", "{slug}");
        let story = front(&env, slug);
        let reason = story["blocked_reason"].as_str().unwrap();
        assert!(reason.contains(" of 2500 tokens"), "{slug}: {reason}");
        assert!(tokens_of(&story) <= 2500, "{slug}: {story}");
        out.stdout_has(&format!("agentic-sdlc unblock {slug}"));
    }
}
