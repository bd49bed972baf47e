//! What a run takes on: `--story`, `--step`, `--max-actions`, and its `--json` events.

use serde_json::Value as Json;

use super::{front_json, life_cycle_roles, normalised_roles, requests_about};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

#[tokio::test]
async fn story_limits_a_run_to_one_story() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, first, first_path) = env.add("Add a rate limiter", &["--priority", "10"]);
    let (_, second, _) = env.add("Export to CSV", &["--priority", "20"]);
    let untouched = env.read(&first_path);

    // One action, for the story named even though the other comes first by priority.
    env.run_with_llm(&llm, &["run", "--story", &second])
        .success();
    assert_eq!(llm.roles(), ["refine"]);
    assert!(env
        .story_path(&second)
        .starts_with(env.board().join("ready")));
    assert_eq!(env.read(&first_path), untouched);

    // With --auto, its whole life cycle, and nothing of the other story.
    env.run_with_llm(&llm, &["run", "--auto", "--story", "export"])
        .success();
    assert!(env
        .story_path(&second)
        .starts_with(env.board().join("done")));
    assert_eq!(env.read(&first_path), untouched);
    assert_eq!(env.story_path(&first), first_path);
    assert_eq!(normalised_roles(&llm.requests()), life_cycle_roles());
    assert!(requests_about(&llm, "Add a rate limiter").is_empty());

    env.run_with_llm(&llm, &["run", "--story", "no-such-story"])
        .code(1)
        .stderr_has("no-such-story");
}

#[tokio::test]
async fn step_runs_only_actions_of_that_type() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, a, _) = env.add("Add a rate limiter", &["--priority", "10"]);
    let (_, b, _) = env.add("Export to CSV", &["--priority", "20"]);
    let (_, c, c_path) = env.add("Dark mode", &["--priority", "30"]);

    env.run_with_llm(
        &llm,
        &["run", "--auto", "--step", "refine", "--max-actions", "2"],
    )
    .success();
    assert_eq!(llm.roles(), ["refine", "refine"]);
    let backlog = env.read(&c_path);

    env.run_with_llm(&llm, &["run", "--auto", "--step", "research"])
        .success();
    assert_eq!(llm.roles(), ["refine", "refine", "research", "research"]);
    for slug in [&a, &b] {
        let front = front_json(&env, env.story_path(slug));
        assert_eq!(front["research_complete"], true, "{slug}");
        assert_eq!(front["plan_complete"], false, "{slug}");
    }
    assert_eq!(
        env.read(env.story_path(&c)),
        backlog,
        "a story in backlog is not refined"
    );

    // Nothing of that type is left: a run with the filter has nothing to do.
    env.run_with_llm(&llm, &["run", "--auto", "--step", "research"])
        .success()
        .stdout_has("Nothing to do.");
    assert_eq!(llm.requests().len(), 4);
    env.run_with_llm(&llm, &["run", "--step", "researching"])
        .code(2)
        .stderr_has("--step researching");
}

#[tokio::test]
async fn max_actions_stops_after_that_many_actions() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);

    env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "3"])
        .success();
    assert_eq!(llm.roles(), ["refine", "research", "plan"]);
    let front = front_json(&env, env.story_path(&slug));
    assert_eq!(front["plan_complete"], true);
    assert_eq!(front["implementation_complete"], false);
}

#[tokio::test]
async fn json_prints_one_event_per_line() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (id, _, _) = env.add("Add a rate limiter", &[]);

    let out = env.run_with_llm(&llm, &["run", "--auto", "--json"]);
    out.success();
    let events: Vec<Json> = out
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: not JSON: {line}")))
        .collect();
    for event in &events {
        assert!(event["event"].is_string(), "{event}");
        assert!(event.get("storyId").is_some(), "{event}");
    }
    let of_story: Vec<(&str, &str)> = events
        .iter()
        .filter(|e| e["storyId"] == id.as_str())
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["action"]["type"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let mut expected = Vec::new();
    for action in [
        "refine",
        "research",
        "plan",
        "implement",
        "review",
        "move_to_done",
    ] {
        expected.push(("action_started", action));
        if action == "review" {
            // The review's decision has an event of its own, within the action.
            expected.push(("review_decided", ""));
        }
        expected.push(("action_completed", action));
    }
    assert_eq!(of_story, expected);
    let last = events.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["exitCode"], 0);
    assert_eq!(last["actions"], 6);
}
