//! `.workflow-state.json` and `run --continue` (docs/design.md §11).

use serde_json::{json, Value as Json};

use super::front_json;
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

fn checkpoint_path(env: &TestEnv) -> std::path::PathBuf {
    env.board().join(".workflow-state.json")
}

fn checkpoint(env: &TestEnv) -> Json {
    serde_json::from_str(&env.read(checkpoint_path(env))).expect("the checkpoint is JSON")
}

fn keys(value: &Json) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    keys
}

fn completed(checkpoint: &Json) -> Vec<(String, String)> {
    checkpoint["completedActions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["type"].as_str().unwrap().to_string(),
                a["storyId"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn continue_resumes_with_the_same_options() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (id, slug, _) = env.add("Add a rate limiter", &["--priority", "20"]);
    let (_, other, other_path) = env.add("Export to CSV", &["--priority", "10"]);
    let other_text = env.read(&other_path);

    env.run_with_llm(
        &llm,
        &["run", "--auto", "--story", &slug, "--max-actions", "2"],
    )
    .success();
    assert_eq!(llm.roles(), ["refine", "research"]);
    let state = checkpoint(&env);
    assert_eq!(
        keys(&state),
        [
            "completedActions",
            "context",
            "currentAction",
            "timestamp",
            "version",
            "workflowId"
        ]
    );
    assert_eq!(state["version"], "1.0");
    assert!(state["workflowId"].as_str().is_some_and(|w| !w.is_empty()));
    let timestamp = state["timestamp"].as_str().expect("timestamp");
    assert!(
        timestamp.len() >= 20 && timestamp.as_bytes()[10] == b'T',
        "{timestamp} is not RFC 3339"
    );
    assert_eq!(state["currentAction"], Json::Null);
    assert_eq!(
        completed(&state),
        [
            ("refine".to_string(), id.clone()),
            ("research".to_string(), id.clone())
        ]
    );
    for action in state["completedActions"].as_array().unwrap() {
        assert_eq!(
            keys(action),
            ["completedAt", "storyId", "storyPath", "type"]
        );
    }
    let story_path = state["completedActions"][1]["storyPath"].as_str().unwrap();
    assert_eq!(std::path::Path::new(story_path), env.story_path(&slug));
    assert_eq!(
        keys(&state["context"]),
        ["options", "sdlcRoot", "storyContentHash"]
    );
    assert_eq!(
        state["context"]["sdlcRoot"],
        env.board().display().to_string()
    );
    assert_eq!(
        state["context"]["options"],
        json!({"auto": true, "story": id, "maxActions": 2})
    );
    assert!(state["context"]["storyContentHash"]
        .as_str()
        .is_some_and(|h| !h.is_empty()));

    // The same options: two more actions, still only for that story. Nothing changed since
    // the checkpoint, so there is nothing to warn about.
    let resumed = env.run_with_llm(&llm, &["run", "--continue"]);
    resumed.success();
    assert!(!resumed.stderr.contains("warning"), "{}", resumed.stderr);
    assert_eq!(llm.roles(), ["refine", "research", "plan", "implement"]);
    let resumed = checkpoint(&env);
    assert_eq!(resumed["workflowId"], state["workflowId"]);
    assert_eq!(resumed["context"]["options"], state["context"]["options"]);
    let types: Vec<String> = completed(&resumed).into_iter().map(|(t, _)| t).collect();
    assert_eq!(types, ["refine", "research", "plan", "implement"]);

    // Review and done: nothing is left for these options, so the checkpoint goes.
    env.run_with_llm(&llm, &["run", "--continue"]).success();
    assert!(env.story_path(&slug).starts_with(env.board().join("done")));
    assert!(!checkpoint_path(&env).exists());
    assert_eq!(
        env.read(env.story_path(&other)),
        other_text,
        "not the story asked for"
    );
    env.run_with_llm(&llm, &["run", "--continue"])
        .code(1)
        .stderr_has("No checkpoint found");
}

#[tokio::test]
async fn continue_without_a_checkpoint_or_with_a_corrupt_one_fails() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.add("Add a rate limiter", &[]);

    env.run_with_llm(&llm, &["run", "--continue"])
        .code(1)
        .stdout_empty()
        .stderr_has("No checkpoint found");

    env.write(
        checkpoint_path(&env),
        "{\"version\": \"1.0\", \"workflowId\": ",
    );
    let out = env.run_with_llm(&llm, &["run", "--continue", "--json"]);
    out.code(1)
        .stdout_empty()
        .stderr_has(&checkpoint_path(&env).display().to_string())
        .stderr_has("delete");
    assert!(llm.requests().is_empty());
    assert!(
        checkpoint_path(&env).exists(),
        "the user decides what to do with it"
    );
}

#[tokio::test]
async fn an_old_checkpoint_warns_and_resumes() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);
    env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "2"])
        .success();
    let mut state = checkpoint(&env);
    // The same instant a year earlier.
    let written = state["timestamp"].as_str().unwrap().to_string();
    let year: u32 = written[..4].parse().expect("a year");
    state["timestamp"] = json!(format!("{}{}", year - 1, &written[4..]));
    env.write(checkpoint_path(&env), &state.to_string());

    env.run_with_llm(&llm, &["run", "--continue"])
        .success()
        .stderr_has("warning:")
        .stderr_has("older than 48 hours");
    assert_eq!(llm.roles(), ["refine", "research", "plan", "implement"]);
    assert!(env
        .story_path(&slug)
        .starts_with(env.board().join("in-progress")));
}

#[tokio::test]
async fn a_finished_checkpoint_is_removed() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);
    env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "2"])
        .success();
    assert!(checkpoint_path(&env).exists());
    // The rest was finished by hand.
    env.run(&["move", &slug, "done"]).success();

    env.run_with_llm(&llm, &["run", "--continue"])
        .success()
        .stdout_has("All actions from checkpoint already completed!")
        .stderr_has("stories changed since the checkpoint");
    assert!(!checkpoint_path(&env).exists());
    assert_eq!(llm.requests().len(), 2);
    assert_eq!(front_json(&env, env.story_path(&slug))["status"], "done");
}
