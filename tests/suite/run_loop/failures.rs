//! Failures: a review with no verdict (docs/design.md §7.5, §10) and an agent whose API call fails
//! (§10, §11). Neither may loop, and neither may stop the other stories.

use super::{front_json, planned, requests_about};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

#[tokio::test]
async fn a_review_without_a_verdict_is_failed_not_rejected() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    // Prose with no JSON, to the question and to the reminder alike.
    llm.when(
        "security-review",
        "# Story: Vague limiter\n",
        Reply::text("Looks reasonable to me; nothing stands out."),
    );
    let (_, vague, _) = env.add("Vague limiter", &["--priority", "10"]);
    let (_, solid, _) = env.add("Solid export", &["--priority", "20"]);

    let out = env.run_with_llm(&llm, &["run", "--auto"]);
    out.code(1);

    // The failing story took no further action after its review: one request per phase, one
    // per passing perspective, and the security question plus its one reminder.
    let requests = requests_about(&llm, "Vague limiter");
    let roles: Vec<&str> = requests.iter().map(|r| r.role.as_str()).collect();
    assert_eq!(requests.len(), 8, "{roles:?}");
    assert_eq!(roles.iter().filter(|r| **r == "security-review").count(), 2);
    let reminder = requests
        .iter()
        .filter(|r| r.role == "security-review")
        .nth(1)
        .unwrap()
        .user_message();
    assert!(reminder.contains("Looks reasonable to me"), "{reminder}");

    let path = env.story_path(&vague);
    assert!(
        path.starts_with(env.board().join("in-progress")),
        "{path:?}"
    );
    let front = front_json(&env, &path);
    let history = front["review_history"].as_array().expect("review_history");
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["decision"], "FAILED");
    let error = front["last_error"].as_str().expect("last_error");
    assert!(error.contains("security-review"), "{error}");
    assert_eq!(front["reviews_complete"], false);
    assert!(
        front.get("refinement_count").is_none_or(|c| c == 0),
        "{front}"
    );
    assert!(front.get("refinement_iterations").is_none(), "{front}");
    assert!(!env.body(&path).contains("### Refinement Iteration"));
    // No rework: the next action is another review.
    assert!(planned(&env).contains(&("review".to_string(), vague.clone())));

    // The other story went its whole way in the same run.
    assert!(env.story_path(&solid).starts_with(env.board().join("done")));
    // The failure is on stderr as it happens, the summary on stdout.
    assert!(
        out.stderr.contains("review FAILED: no verdict"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout
            .contains(&format!("1 action(s) failed: {vague} (review);")),
        "the summary names the story: {}",
        out.stdout
    );
}

/// Every frontmatter key but the ones an error is allowed to touch.
fn without_error(mut front: serde_json::Value) -> serde_json::Value {
    let map = front.as_object_mut().unwrap();
    map.remove("last_error");
    map.remove("updated");
    // The failed request is counted all the same (docs/design.md §15).
    map.remove("usage");
    front
}

#[tokio::test]
async fn an_agent_failure_leaves_the_story_as_it_was() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.set_default("refine", Reply::status(401));
    let (_, slug, path) = env.add("Add a rate limiter", &[]);
    let before = front_json(&env, &path);
    let body = env.body(&path);

    let out = env.run_with_llm(&llm, &["run", "--auto"]);
    out.code(1);
    assert_eq!(
        llm.requests().len(),
        1,
        "an authentication error is not retried"
    );
    assert_eq!(env.story_path(&slug), path, "still in backlog");
    let after = front_json(&env, &path);
    let error = after["last_error"]
        .as_str()
        .expect("last_error")
        .to_string();
    assert!(error.contains("refine"), "{error}");
    assert!(error.contains("401"), "{error}");
    assert_eq!(without_error(after), without_error(before));
    assert_eq!(env.body(&path), body);
    assert!(out.stderr.contains(&error), "{}", out.stderr);
}

#[tokio::test]
async fn a_failure_mid_way_keeps_earlier_phases_and_a_later_run_clears_it() {
    let env = TestEnv::init();
    let failing = FakeLlm::start().await;
    failing.when(
        "research",
        "# Story: Add a rate limiter\n",
        Reply::status(401),
    );
    let (_, slug, _) = env.add("Add a rate limiter", &["--priority", "10"]);
    let (_, other, _) = env.add("Export to CSV", &["--priority", "20"]);

    env.run_with_llm(&failing, &["run", "--auto"]).code(1);
    let roles: Vec<String> = requests_about(&failing, "Add a rate limiter")
        .into_iter()
        .map(|r| r.role)
        .collect();
    assert_eq!(
        roles,
        ["refine", "research"],
        "no second try in the same run"
    );
    assert!(env.story_path(&other).starts_with(env.board().join("done")));
    let path = env.story_path(&slug);
    assert!(path.starts_with(env.board().join("ready")));
    let front = front_json(&env, &path);
    assert_eq!(front["research_complete"], false);
    assert!(front["last_error"].as_str().unwrap().contains("research"));
    let body = env.body(&path);
    assert!(body.contains("## Summary\nRefined summary.\n"), "{body}");
    let research = body.split("## Research\n").nth(1).unwrap();
    assert!(
        research.trim_start().starts_with("## Implementation Plan"),
        "{body}"
    );

    let working = FakeLlm::start().await;
    env.run_with_llm(&working, &["run", "--auto"]).success();
    let path = env.story_path(&slug);
    assert!(path.starts_with(env.board().join("done")));
    assert!(front_json(&env, &path).get("last_error").is_none());
}
