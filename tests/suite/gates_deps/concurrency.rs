//! `run --concurrency N` (docs/design.md §11): independent stories at once, never two actions of
//! one story at once, a failing story does not stop the others, a manual escalation stops new work.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::Value as Json;

use super::{backlog_story, column, details, events, run_llm, section, Story};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

const TITLES: [&str; 4] = [
    "Alpha login form",
    "Bravo audit log",
    "Charlie export button",
    "Delta search box",
];

fn four_stories(env: &TestEnv) -> Vec<Story> {
    TITLES
        .iter()
        .map(|title| backlog_story(env, title, &[]))
        .collect()
}

/// Per story, an `action_started` is always followed by the end of that action before the next
/// one starts: `action_completed`/`action_failed` for it, or `story_blocked`/`story_waiting`.
/// Returns the most actions that were in flight at once.
#[track_caller]
fn assert_one_action_per_story(events: &[Json]) -> usize {
    let mut running: HashMap<String, String> = HashMap::new();
    let mut most = 0;
    for event in events {
        let Some(story) = event["storyId"].as_str() else {
            continue;
        };
        let kind = event["action"]["type"].as_str().unwrap_or_default();
        match event["event"].as_str() {
            Some("action_started") => {
                if let Some(other) = running.insert(story.to_string(), kind.to_string()) {
                    panic!("{story} started {kind} while {other} was running");
                }
                most = most.max(running.len());
            }
            Some("action_completed" | "action_failed") => {
                assert_eq!(
                    running.remove(story).as_deref(),
                    Some(kind),
                    "{story} finished an action it had not started"
                );
            }
            Some("story_blocked" | "story_waiting") => {
                assert!(
                    running.remove(story).is_some(),
                    "{story} ended an action it had not started"
                );
            }
            _ => {}
        }
    }
    assert!(running.is_empty(), "unfinished actions: {running:?}");
    most
}

/// Per story, the transcripts of its actions (one file each) do not overlap in time.
#[track_caller]
fn assert_transcripts_do_not_overlap(env: &TestEnv, story: &Story) {
    let dir = env.board().join("logs").join(&story.id);
    let mut spans: Vec<(String, String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let stamps: Vec<String> = std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .map(|line| {
                    let line: Json = serde_json::from_str(line).unwrap();
                    line["timestamp"].as_str().unwrap().to_string()
                })
                .collect();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            (
                stamps.iter().min().cloned().unwrap_or_default(),
                stamps.iter().max().cloned().unwrap_or_default(),
                name,
            )
        })
        .collect();
    spans.sort();
    assert!(spans.len() >= 5, "one transcript per phase: {spans:?}");
    for pair in spans.windows(2) {
        assert!(
            pair[0].1 <= pair[1].0,
            "{}: {} overlaps {}",
            story.slug,
            pair[0].2,
            pair[1].2
        );
    }
}

#[tokio::test]
async fn independent_stories_run_at_once_and_each_runs_one_action_at_a_time() {
    let fake = FakeLlm::start_with_delay(Some(Duration::from_millis(300))).await;
    let env = TestEnv::init();
    let stories = four_stories(&env);

    let out = run_llm(
        &env,
        &fake,
        &["run", "--auto", "--concurrency", "4", "--json"],
    );
    out.success();

    let events = events(&out);
    let most = assert_one_action_per_story(&events);
    assert!(most > 1, "never more than one action in flight");
    for story in &stories {
        assert_eq!(column(&env, &story.slug), "done", "{}", out.stderr);
        assert_transcripts_do_not_overlap(&env, story);
    }
    env.run(&["validate"]).success();
}

#[tokio::test]
async fn a_failing_story_does_not_stop_the_others() {
    let fake = FakeLlm::start_with_delay(Some(Duration::from_millis(100))).await;
    fake.push_for(
        "implement",
        "# Story: Delta search box",
        Reply::Status {
            code: 401,
            body: r#"{"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}"#.into(),
            retry_after: None,
        },
    );
    let env = TestEnv::init();
    let stories = four_stories(&env);

    let out = run_llm(
        &env,
        &fake,
        &["run", "--auto", "--concurrency", "4", "--json"],
    );
    out.code(1);

    assert_one_action_per_story(&events(&out));
    let (failing, others) = stories.split_last().unwrap();
    for story in others {
        assert_eq!(column(&env, &story.slug), "done", "{}", out.stderr);
    }
    let failed = details(&env, &failing.slug);
    assert_eq!(failed["implementation_complete"], false);
    assert!(
        failed["last_error"].as_str().is_some_and(|e| !e.is_empty()),
        "{failed}"
    );
    let implements = fake
        .requests_for("implement")
        .into_iter()
        .filter(|r| super::story_title(r).as_deref() == Some(failing.title.as_str()))
        .count();
    assert_eq!(implements, 1, "the failed story takes no further action");

    env.run(&["validate"]).success();
    let checkpoint: Json =
        serde_json::from_str(&env.read(env.board().join(".workflow-state.json")))
            .expect("the checkpoint is JSON");
    assert_eq!(checkpoint["version"], "1.0", "{checkpoint}");
    assert!(checkpoint["completedActions"].as_array().unwrap().len() >= 15);
}

/// A story whose circuit breaker trips on its next action (rework at its limit).
fn breaker_story(env: &TestEnv) -> Story {
    let story = backlog_story(env, "Echo flaky importer", &["--priority", "1"]);
    env.run(&["move", &story.slug, "in-progress"]).success();
    let path = env.story_path(&story.slug);
    for flag in [
        "research_complete",
        "plan_complete",
        "implementation_complete",
    ] {
        env.edit(&path, &format!("{flag}: false"), &format!("{flag}: true"));
    }
    env.edit(
        &path,
        "labels: []\n",
        "labels: []\nrefinement_count: 3\nreview_history:\n- timestamp: '2026-01-01T00:00:00.000Z'\n  decision: REJECTED\n  severity: CRITICAL\n  feedback: 'Review failed: 1 blocker(s)'\n  blockers:\n  - the tests fail\n  codeReviewPassed: false\n  securityReviewPassed: true\n  poReviewPassed: true\n",
    );
    story
}

#[tokio::test]
async fn a_manual_escalation_stops_new_work_and_lets_running_actions_finish() {
    let fake = FakeLlm::start_with_delay(Some(Duration::from_millis(300))).await;
    let env = TestEnv::init();
    let stopper = breaker_story(&env);
    let stories: Vec<Story> = TITLES[..3]
        .iter()
        .map(|title| backlog_story(&env, title, &["--priority", "20"]))
        .collect();
    assert_eq!(
        env.status_json()["recommended"][0]["type"],
        "rework",
        "the breaker story acts first"
    );

    let out = run_llm(
        &env,
        &fake,
        &["run", "--auto", "--concurrency", "4", "--json"],
    );
    out.code(3);

    assert_eq!(column(&env, &stopper.slug), "blocked");
    let blocked = details(&env, &stopper.slug);
    assert!(
        blocked["blocked_reason"]
            .as_str()
            .is_some_and(|r| r.contains("Circuit breaker")),
        "{blocked}"
    );
    // The refines that were running when the breaker tripped finished and were written ...
    for story in &stories {
        assert_eq!(column(&env, &story.slug), "ready", "{}", out.stderr);
        assert_eq!(section(&env, &story.slug, "Summary"), "Refined summary.");
    }
    // ... and nothing new started.
    assert_eq!(fake.roles(), ["refine", "refine", "refine"]);
    assert_one_action_per_story(&events(&out));
    let started = events(&out)
        .iter()
        .filter(|e| e["event"] == "action_started")
        .count();
    assert_eq!(started, 4);
    env.run(&["validate"]).success();
    for story in &stories {
        let lines = env.transcript_lines(&story.id);
        assert!(
            !lines.is_empty(),
            "{} has its refine transcript",
            story.slug
        );
    }
}
