//! `run --dry-run` and `status` are read-only (docs/design.md §5, §6): no byte of the board changes
//! and no model is asked.

use serde_json::json;

use super::{blocker_verdict, front_json};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

/// A board with a story in each state: one rejected and waiting for rework, one half way, one in
/// backlog, one blocked and one done.
async fn busy_board(env: &TestEnv) -> Vec<String> {
    let llm = FakeLlm::start().await;
    llm.push("code-review", blocker_verdict());
    let (_, rejected, _) = env.add("Rejected limiter", &["--priority", "10"]);
    env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "5"])
        .success();
    let (_, halfway, _) = env.add("Halfway export", &["--priority", "20"]);
    env.run_with_llm(
        &llm,
        &["run", "--story", &halfway, "--auto", "--max-actions", "2"],
    )
    .success();
    let (_, fresh, _) = env.add("Fresh idea", &["--priority", "30"]);
    let (_, stuck, _) = env.add("Stuck story", &["--priority", "5"]);
    env.run(&["move", &stuck, "blocked"]).success();
    let (_, finished, _) = env.add("Finished story", &["--priority", "1"]);
    env.run(&["move", &finished, "done"]).success();
    assert!(front_json(env, env.story_path(&rejected))["review_history"].is_array());
    vec![rejected, halfway, fresh]
}

#[tokio::test]
async fn dry_run_and_status_change_nothing_and_call_no_model() {
    let env = TestEnv::init();
    let slugs = busy_board(&env).await;
    let quiet = FakeLlm::start().await;
    let before = env.files();

    let one = env.run_with_llm(&quiet, &["run", "--dry-run", "--json"]);
    one.success();
    let one = one.json();
    let all = env.run_with_llm(&quiet, &["run", "--dry-run", "--auto", "--json"]);
    all.success();
    let all = all.json();
    for args in [
        &["run", "--dry-run"][..],
        &["run", "--dry-run", "--auto"],
        &["run", "--dry-run", "--auto", "--story", &slugs[2]],
        &["run", "--dry-run", "--auto", "--step", "research"],
        &["status"],
        &["status", "--json"],
        &["status", "--active"],
    ] {
        env.run_with_llm(&quiet, args).success();
    }
    // Without any model configured at all, a dry run still works.
    env.run(&["run", "--dry-run", "--auto"])
        .success()
        .stdout_has("Would run 3 action(s):");

    assert!(quiet.requests().is_empty(), "{:?}", quiet.roles());
    assert!(
        env.files() == before,
        "a read-only command changed the board"
    );

    let keys = |value: &serde_json::Value| {
        let mut keys: Vec<String> = value.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        keys
    };
    for plan in [&one, &all] {
        assert_eq!(keys(plan), ["actions", "kind", "schemaVersion"]);
        assert_eq!(plan["schemaVersion"], 1);
        assert_eq!(plan["kind"], "plan");
        for action in plan["actions"].as_array().unwrap() {
            assert_eq!(
                keys(action),
                ["priority", "reason", "slug", "storyId", "type"]
            );
        }
    }
    let summary = |plan: &serde_json::Value| -> Vec<serde_json::Value> {
        plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| json!([a["type"], a["slug"], a["priority"]]))
            .collect()
    };
    // Rework first (offset 0), then plan (300), then refine (500), each plus the story's priority.
    let expected = vec![
        json!(["rework", slugs[0], 10]),
        json!(["plan", slugs[1], 320]),
        json!(["refine", slugs[2], 530]),
    ];
    assert_eq!(summary(&all), expected);
    assert_eq!(summary(&one), expected[..1]);
}
