//! Cost arithmetic (docs/design.md §14): `cost_usd` on the story's usage, per action in the
//! journal, and in the report's totals; a model with no price has no cost and is named; bad prices
//! and budgets are config errors naming the key.

use serde_json::json;

use super::{
    assert_usd, configure, front, journal_events, price_the_model, run, COST_PER_CALL,
    TOKENS_PER_CALL,
};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

/// refine, research and plan make one request each; implement two (the fake writes a file, then
/// gives its notes: a feature must change one, docs/design.md §15); the review makes three.
const LIFE_CYCLE_CALLS: u64 = 8;

#[tokio::test]
async fn every_usage_record_carries_its_cost() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    price_the_model(&env);
    let (_, slug, _) = env.add("Priced story", &[]);
    run(&env, &llm, &["run", "--auto"]).success();
    assert_eq!(llm.requests().len() as u64, LIFE_CYCLE_CALLS);

    let usage = &front(&env, &slug)["usage"];
    assert_eq!(usage["prompt_tokens"], 100 * LIFE_CYCLE_CALLS);
    assert_eq!(usage["completion_tokens"], 20 * LIFE_CYCLE_CALLS);
    assert_usd(&usage["cost_usd"], COST_PER_CALL * LIFE_CYCLE_CALLS as f64);

    env.run(&["details", &slug])
        .success()
        .stdout_has("8 request(s), 800 prompt + 160 completion tokens, $0.216");

    // Each action in the journal has its own tokens and cost; the run has their sum.
    let events = journal_events(&env);
    let ended: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "action_completed")
        .collect();
    let expected_calls = [
        ("refine", 1),
        ("research", 1),
        ("plan", 1),
        ("implement", 2),
        ("review", 3),
        ("move_to_done", 0),
    ];
    assert_eq!(ended.len(), expected_calls.len(), "{events:?}");
    for (event, (action, calls)) in ended.iter().zip(expected_calls) {
        assert_eq!(event["action"]["type"], action, "{event}");
        assert_eq!(event["tokens"]["total"], TOKENS_PER_CALL * calls, "{event}");
        assert_usd(&event["costUsd"], COST_PER_CALL * calls as f64);
        assert!(event["durationMs"].is_u64(), "{event}");
        assert!(event["startedAt"].is_string() && event["timestamp"].is_string());
    }
    let finished = events.last().unwrap();
    assert_eq!(finished["event"], "run_finished");
    assert_eq!(
        finished["tokens"]["total"],
        TOKENS_PER_CALL * LIFE_CYCLE_CALLS
    );
    assert_usd(
        &finished["costUsd"],
        COST_PER_CALL * LIFE_CYCLE_CALLS as f64,
    );

    let report = env.run_json(&["report"]);
    assert_eq!(
        report["totals"]["tokens"],
        TOKENS_PER_CALL * LIFE_CYCLE_CALLS
    );
    assert_usd(
        &report["totals"]["costUsd"],
        COST_PER_CALL * LIFE_CYCLE_CALLS as f64,
    );
    assert_eq!(report["unpricedModels"], json!([]));
}

#[tokio::test]
async fn a_model_without_a_price_has_no_cost_and_the_report_says_so() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    configure(
        &env,
        json!({"pricing": {"some-other-model": {"inputPerMTok": 1, "outputPerMTok": 2}}}),
    );
    let (_, slug, _) = env.add("Unpriced story", &[]);
    run(&env, &llm, &["run"]).success();
    let usage = &front(&env, &slug)["usage"];
    assert_eq!(usage["prompt_tokens"], 100);
    assert!(usage.get("cost_usd").is_none(), "{usage}");

    let report = env.run_json(&["report", "--last"]);
    assert_eq!(report["unpricedModels"], json!(["gpt-4o-mini"]));
    assert!(report["totals"]["costUsd"].is_null(), "{report}");
    env.run(&["report"])
        .success()
        .stdout_has("No price for gpt-4o-mini");
}

#[test]
fn bad_budgets_and_prices_are_config_errors_naming_the_key() {
    let cases = [
        ("budget.storyTokens", "0"),
        ("budget.runTokens", "-3"),
        ("budget.storyUsd", "0"),
        ("budget.runUsd", "-0.5"),
        ("budget.runUsd", "lots"),
    ];
    for (key, value) in cases {
        let env = TestEnv::init();
        let out = env.run(&["config", key, value]);
        out.code(2).stderr_has(key);
    }
    for (price, key) in [
        (
            json!({"inputPerMTok": -1, "outputPerMTok": 1}),
            "pricing.m.inputPerMTok",
        ),
        (
            json!({"inputPerMTok": 1, "outputPerMTok": "free"}),
            "pricing.m.outputPerMTok",
        ),
    ] {
        let env = TestEnv::init();
        configure(&env, json!({"pricing": {"m": price}}));
        env.run(&["status"]).code(2).stderr_has(key);
    }
}
