//! The circuit breaker (docs/design.md §7): bounded reworks, each escalation mode, per-story
//! limits, and re-opening a story by hand.

use serde_json::json;

use super::{
    changing_blocker_verdict, configure, front_json, phases_make_progress, planned, requests_about,
};
use crate::suite::common::{strings_of, Outcome, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Reply};

const TRIPPED: &str =
    "Circuit breaker: reached max refinement attempts (3/3); manual intervention required";

/// Runs a story whose code review always finds a (new) blocker until the breaker trips; the
/// work changes every time, so this is no "No progress" case (docs/design.md §14).
fn trip(env: &TestEnv, llm: &FakeLlm) -> (String, Outcome) {
    phases_make_progress(llm);
    llm.when(
        "code-review",
        "# Story: Flaky limiter\n",
        changing_blocker_verdict(),
    );
    let (_, slug, _) = env.add("Flaky limiter", &["--priority", "10"]);
    let out = env.run_with_llm(llm, &["run", "--auto"]);
    (slug, out)
}

#[track_caller]
fn assert_tripped(env: &TestEnv, slug: &str, reason: &str, count: u64) {
    let path = env.story_path(slug);
    assert!(path.starts_with(env.board().join("blocked")), "{path:?}");
    let front = front_json(env, &path);
    assert_eq!(front["status"], "blocked");
    assert_eq!(front["blocked_reason"], reason);
    assert_eq!(front["last_error"], reason);
    assert_eq!(front["refinement_count"], count);
    let results = strings_of(&front["refinement_iterations"], "result");
    assert_eq!(results, vec!["failed"; count as usize], "{front}");
}

#[tokio::test]
async fn each_escalation_mode_ends_the_run_its_own_way() {
    for (mode, code) in [("manual", 3), ("error", 1), ("skip", 0)] {
        let env = TestEnv::init();
        let llm = FakeLlm::start().await;
        configure(&env, "refinement.escalateOnMaxAttempts", mode);
        // A second story runs after the flaky one, by priority.
        let (_, solid, _) = env.add("Solid export", &["--priority", "20"]);
        let (flaky, out) = trip(&env, &llm);
        out.code(code);
        assert!(out.stderr.contains(TRIPPED), "{mode}: {}", out.stderr);
        assert_tripped(&env, &flaky, TRIPPED, 3);
        // Four implementations and four reviews: the first and one after each rework.
        let flaky_requests = requests_about(&llm, "Flaky limiter");
        let count = |role: &str| flaky_requests.iter().filter(|r| r.role == role).count();
        assert_eq!(count("implement"), 4, "{mode}");
        assert_eq!(count("code-review"), 4, "{mode}");

        let solid_column = if mode == "skip" { "done" } else { "backlog" };
        assert!(
            env.story_path(&solid)
                .starts_with(env.board().join(solid_column)),
            "{mode}: the other story should be in {solid_column}"
        );
        if mode != "skip" {
            // The run stopped: the other story was never started.
            assert!(requests_about(&llm, "Solid export").is_empty(), "{mode}");
        }
    }
}

#[tokio::test]
async fn a_story_can_lower_its_own_limit() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    phases_make_progress(&llm);
    llm.set_default("code-review", changing_blocker_verdict());
    let (_, slug, path) = env.add("Flaky limiter", &[]);
    env.edit(
        &path,
        "priority: 10\n",
        "priority: 10\nmax_refinement_attempts: 1\n",
    );

    env.run_with_llm(&llm, &["run", "--auto"]).code(3);
    let reason =
        "Circuit breaker: reached max refinement attempts (1/1); manual intervention required";
    assert_tripped(&env, &slug, reason, 1);
    let implements = llm.calls().into_iter().filter(|r| r.role == "implement");
    assert_eq!(implements.count(), 2);
}

#[tokio::test]
async fn a_disabled_breaker_warns_and_lets_reworks_go_past_the_limit() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    configure(&env, "refinement.enableCircuitBreaker", "false");
    configure(&env, "refinement.maxIterations", "1");
    phases_make_progress(&llm);
    llm.set_default("code-review", changing_blocker_verdict());
    let (_, slug, _) = env.add("Flaky limiter", &[]);

    // refine, research, plan, implement, review, rework, implement, review, rework, implement.
    env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "10"])
        .success()
        .stderr_has("circuit breaker is disabled");
    let path = env.story_path(&slug);
    assert!(
        path.starts_with(env.board().join("in-progress")),
        "{path:?}"
    );
    let front = front_json(&env, &path);
    assert_eq!(front["refinement_count"], 2, "{front}");
    assert!(front.get("blocked_reason").is_none());
}

#[tokio::test]
async fn unblock_re_opens_a_tripped_story() {
    for how in ["unblock --reset", "hand edit and unblock"] {
        let env = TestEnv::init();
        let llm = FakeLlm::start().await;
        let (slug, out) = trip(&env, &llm);
        out.code(3);
        assert_tripped(&env, &slug, TRIPPED, 3);
        assert_eq!(planned(&env), [], "{how}: a blocked story takes no action");

        if how == "unblock --reset" {
            env.run(&["unblock", &slug, "--reset"]).success();
        } else {
            let path = env.story_path(&slug);
            env.edit(&path, "refinement_count: 3\n", "refinement_count: 0\n");
            env.run(&["unblock", &slug]).success();
        }
        let path = env.story_path(&slug);
        assert!(path.starts_with(env.board().join("in-progress")), "{how}");
        let front = front_json(&env, &path);
        assert_eq!(front["refinement_count"], 0, "{how}");
        assert!(front.get("blocked_reason").is_none(), "{how}");
        assert!(front.get("last_error").is_none(), "{how}");
        // The rejection that tripped the breaker is answered by a rework now.
        assert_eq!(
            planned(&env),
            [("rework".to_string(), slug.clone())],
            "{how}"
        );

        // This time the code review passes (a queued reply comes before the standing rule).
        llm.push("code-review", Reply::verdict(true, json!([])));
        env.run_with_llm(&llm, &["run", "--auto"]).success();
        let path = env.story_path(&slug);
        assert!(path.starts_with(env.board().join("done")), "{how}");
        let front = front_json(&env, &path);
        assert_eq!(front["refinement_count"], 1, "{how}: {front}");
        let last = front["refinement_iterations"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(last["result"], "success", "{how}");
        assert_eq!(
            front["review_history"].as_array().unwrap().last().unwrap()["decision"],
            "APPROVED"
        );
    }
}
