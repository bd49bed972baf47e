//! `depends_on` (docs/design.md §3, §6, §11): a dependent is refined at any time and goes no
//! further until every dependency is done; a cycle is a validation error and no run starts on it.

use serde_json::{json, Value as Json};

use super::{backlog_story, column, details, events, run_llm, story_title, Story};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

/// Position of the first event matching `pred` in a run's event stream.
#[track_caller]
fn position(events: &[Json], what: &str, pred: impl Fn(&Json) -> bool) -> usize {
    events
        .iter()
        .position(pred)
        .unwrap_or_else(|| panic!("no event for {what} in\n{events:#?}"))
}

fn is_action(event: &Json, kind: &str, story: &Story) -> bool {
    event["event"] == kind && event["storyId"] == story.id.as_str()
}

/// Where `story`'s move_to_done started. Its file is in done/ before that action ends, so a
/// dependent may rightly start while the action is still cleaning up; the start is the moment
/// before which no dependent may go past refinement.
#[track_caller]
fn moved_to_done(events: &[Json], story: &Story) -> usize {
    position(events, &format!("{} move_to_done", story.slug), |e| {
        is_action(e, "action_started", story) && e["action"]["type"] == "move_to_done"
    })
}

/// Asserts from the run's events and the fake's request log that `dependent` went past
/// refinement only after each of `dependencies` reached done.
#[track_caller]
fn assert_waited(fake: &FakeLlm, events: &[Json], dependent: &Story, dependencies: &[&Story]) {
    let started_past_refine = position(events, &format!("{} past refine", dependent.slug), |e| {
        is_action(e, "action_started", dependent) && e["action"]["type"] != "refine"
    });
    let requests = fake.requests();
    let about = |story: &Story| -> Vec<usize> {
        requests
            .iter()
            .enumerate()
            .filter(|(_, r)| story_title(r).as_deref() == Some(story.title.as_str()))
            .map(|(i, _)| i)
            .collect()
    };
    let first_work = requests
        .iter()
        .enumerate()
        .find(|(_, r)| {
            r.role != "refine" && story_title(r).as_deref() == Some(dependent.title.as_str())
        })
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("no work request for {}", dependent.slug));
    for dependency in dependencies {
        let done = moved_to_done(events, dependency);
        assert!(
            started_past_refine > done,
            "{} started work before {} was done",
            dependent.slug,
            dependency.slug
        );
        let last = *about(dependency)
            .last()
            .expect("the dependency made requests");
        assert!(
            first_work > last,
            "request {first_work} ({}) came before the last request of {} ({last})",
            dependent.slug,
            dependency.slug
        );
    }
}

/// The dependent's refine started in the first round, long before its dependency was done.
#[track_caller]
fn assert_refined_early(events: &[Json], dependent: &Story, dependency: &Story) {
    let refine = position(events, &format!("{} refine", dependent.slug), |e| {
        is_action(e, "action_started", dependent) && e["action"]["type"] == "refine"
    });
    let done = moved_to_done(events, dependency);
    assert!(
        refine < done,
        "{} was refined only after {}",
        dependent.slug,
        dependency.slug
    );
}

#[tokio::test]
async fn a_chain_runs_in_dependency_order() {
    let fake = FakeLlm::start_with_delay(Some(std::time::Duration::from_millis(50))).await;
    let env = TestEnv::init();
    let a = backlog_story(&env, "Alpha storage layer", &[]);
    let b = backlog_story(&env, "Bravo service", &["--depends-on", &a.id]);
    let c = backlog_story(&env, "Charlie screen", &["--depends-on", &b.id]);
    assert_eq!(details(&env, &b.slug)["depends_on"], json!([a.id]));
    assert_eq!(details(&env, &c.slug)["depends_on"], json!([b.id]));

    let out = run_llm(
        &env,
        &fake,
        &["run", "--auto", "--concurrency", "4", "--json"],
    );
    out.success();
    let events = events(&out);

    for story in [&a, &b, &c] {
        assert_eq!(column(&env, &story.slug), "done", "{}", out.stderr);
    }
    assert_waited(&fake, &events, &b, &[&a]);
    assert_waited(&fake, &events, &c, &[&b]);
    assert_refined_early(&events, &c, &a);
}

#[tokio::test]
async fn a_diamond_waits_for_both_sides() {
    let fake = FakeLlm::start_with_delay(Some(std::time::Duration::from_millis(50))).await;
    let env = TestEnv::init();
    let a = backlog_story(&env, "Alpha schema", &[]);
    let b = backlog_story(&env, "Bravo reader", &["--depends-on", &a.id]);
    let c = backlog_story(&env, "Charlie writer", &["--depends-on", &a.id]);
    let d = backlog_story(
        &env,
        "Delta sync job",
        &["--depends-on", &b.id, "--depends-on", &c.id],
    );
    assert_eq!(details(&env, &d.slug)["depends_on"], json!([b.id, c.id]));

    let out = run_llm(
        &env,
        &fake,
        &["run", "--auto", "--concurrency", "4", "--json"],
    );
    out.success();
    let events = events(&out);

    for story in [&a, &b, &c, &d] {
        assert_eq!(column(&env, &story.slug), "done", "{}", out.stderr);
    }
    assert_waited(&fake, &events, &b, &[&a]);
    assert_waited(&fake, &events, &c, &[&a]);
    assert_waited(&fake, &events, &d, &[&b, &c]);
    assert_refined_early(&events, &d, &a);
}

#[tokio::test]
async fn a_cycle_fails_validate_and_no_run_starts() {
    let fake = FakeLlm::start().await;
    let env = TestEnv::init();
    let a = backlog_story(&env, "Alpha", &[]);
    let b = backlog_story(&env, "Bravo", &["--depends-on", &a.id]);
    let c = backlog_story(&env, "Charlie", &["--depends-on", &b.id]);
    env.edit(
        env.story_path(&a.slug),
        "labels: []\n",
        &format!("labels: []\ndepends_on:\n- {}\n", c.id),
    );

    let out = env.run(&["validate"]);
    out.code(1);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("cycle"), "{said}");
    for story in [&a, &b, &c] {
        assert!(
            said.contains(&story.id),
            "validate names {} in\n{said}",
            story.id
        );
    }

    let before = env.files();
    for args in [&["run"][..], &["run", "--auto", "--concurrency", "4"]] {
        let out = run_llm(&env, &fake, args);
        out.code(1).stderr_has("cycle");
        assert_eq!(fake.requests().len(), 0, "{args:?} made a request");
    }
    assert!(env.files() == before, "a refused run writes nothing");
}

#[tokio::test]
async fn a_story_depending_on_itself_is_a_cycle_too() {
    let fake = FakeLlm::start().await;
    let env = TestEnv::init();
    let a = backlog_story(&env, "Alpha", &[]);
    env.edit(
        env.story_path(&a.slug),
        "labels: []\n",
        &format!("labels: []\ndepends_on:\n- {}\n", a.id),
    );

    env.run(&["validate"]).code(1);
    run_llm(&env, &fake, &["run", "--auto"])
        .code(1)
        .stderr_has("cycle");
    assert_eq!(fake.requests().len(), 0);
}
