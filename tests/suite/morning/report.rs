//! `report` (docs/design.md §14) in its three forms, and its bad input: no journal, an unknown run,
//! a corrupt line, a run killed mid-way.

use std::time::Duration;

use serde_json::json;

use super::{configure, front, journals, price_the_model, run, COST_PER_CALL};
use crate::suite::common::{assert_contains_all, finish, strings_of, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Reply};

/// Two stories: alpha goes to done after its plan gate asked for one retry; beta's plan gate
/// rejects it.
async fn night(env: &TestEnv) -> FakeLlm {
    let llm = FakeLlm::start().await;
    price_the_model(env);
    configure(
        env,
        json!({"phases": {"plan": {"review": {"reviewer": "ai"}}}}),
    );
    llm.push_for(
        "phase-review",
        "Alpha story",
        Reply::text("RETRY: Add a rollback step\nand say how to test it"),
    )
    .push_for(
        "phase-review",
        "Beta story",
        Reply::text("REJECT: Out of scope"),
    )
    .set_default("plan", Reply::text("1. Change src/lib.rs (take {call})"));
    env.add("Alpha story", &["--priority", "10"]);
    env.add("Beta story", &["--priority", "20"]);
    run(env, &llm, &["run", "--auto"]).code(3);
    llm
}

#[tokio::test]
async fn the_terminal_table_tells_the_night_story_by_story() {
    let env = TestEnv::init();
    let _llm = night(&env).await;
    let out = env.run(&["report"]);
    out.success();
    let text = &out.stdout;
    assert_contains_all(
        text,
        &[
            "STORY",
            "OUTCOME",
            "REWORKS",
            "alpha-story",
            "beta-story",
            "Phase plan rejected by review: Out of scope",
            "plan gate, attempt 1: RETRY: Add a rollback step",
            "plan gate, attempt 1: REJECT: Out of scope",
            "next: agentic-sdlc unblock beta-story",
            "Totals: 2 stories, 9 actions (0 failed, 0 interrupted), 0 reworks",
            "exit 3",
        ],
    );
    // The feedback's first line only.
    assert!(!text.contains("say how to test it"), "{text}");
    let alpha_row = text.lines().find(|l| l.starts_with("alpha-story")).unwrap();
    assert!(alpha_row.contains("done"), "{alpha_row}");
    let beta_row = text.lines().find(|l| l.starts_with("beta-story")).unwrap();
    assert!(beta_row.contains("blocked"), "{beta_row}");
}

#[tokio::test]
async fn the_json_report_is_the_envelope_with_every_story() {
    let env = TestEnv::init();
    let _llm = night(&env).await;
    let run_id = journals(&env)[0]
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let report = env.run_json(&["report", "--run", &run_id]);
    assert_eq!(report["schemaVersion"], 1);
    assert_eq!(report["kind"], "report");
    assert_eq!(report["runId"], run_id.as_str());
    assert_eq!(report["exitCode"], 3);
    let stories = report["stories"].as_array().unwrap();
    let alpha = stories.iter().find(|s| s["slug"] == "alpha-story").unwrap();
    let beta = stories.iter().find(|s| s["slug"] == "beta-story").unwrap();
    assert_eq!(alpha["outcome"], "done");
    let types = strings_of(&alpha["actions"], "type");
    assert_eq!(
        types,
        [
            "refine",
            "research",
            "plan",
            "implement",
            "review",
            "move_to_done"
        ]
    );
    assert!(alpha["actions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|a| a["outcome"] == "completed" && a["durationMs"].is_u64()));
    assert_eq!(
        alpha["gates"],
        json!([{"phase": "plan", "attempt": 1, "decision": "RETRY", "feedback": "Add a rollback step"},
               {"phase": "plan", "attempt": 2, "decision": "APPROVE", "feedback": null}])
    );
    // Tokens and cost agree with the story's own usage.
    let usage = &front(&env, "alpha-story")["usage"];
    let tokens =
        usage["prompt_tokens"].as_u64().unwrap() + usage["completion_tokens"].as_u64().unwrap();
    assert_eq!(alpha["tokens"], tokens);
    super::assert_usd(&alpha["costUsd"], COST_PER_CALL * (tokens / 120) as f64);
    assert_eq!(beta["outcome"], "blocked");
    assert_eq!(beta["actions"][2]["type"], "plan");
    // The gate's REJECT is a rejection, with its reason, not a completed plan.
    assert_eq!(beta["actions"][2]["outcome"], "rejected");
    assert_eq!(beta["actions"][2]["feedback"], "Out of scope");
    assert_eq!(beta["blockCause"], json!({"kind": "rejected"}));
    assert_eq!(beta["title"], "Beta story");
    assert_eq!(
        beta["blockedReason"],
        "Phase plan rejected by review: Out of scope"
    );
    assert_eq!(beta["nextCommand"], "agentic-sdlc unblock beta-story");
    assert_eq!(report["totals"]["stories"], 2);
    assert_eq!(report["totals"]["actions"], 9);
}

#[tokio::test]
async fn the_html_page_is_self_contained_well_formed_and_complete() {
    let env = TestEnv::init();
    let _llm = night(&env).await;
    env.run(&["report", "--html", "night.html"]).success();
    let page = env.read("night.html");
    let document = roxmltree::Document::parse_with_options(
        &page,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|err| panic!("not well-formed: {err}\n{page}"));
    let elements = |name: &str| {
        document
            .descendants()
            .filter(|n| n.tag_name().name() == name)
            .collect::<Vec<_>>()
    };
    // Nothing from the network: no scripts, links, images or remote URLs.
    for tag in ["script", "link", "img", "iframe"] {
        assert!(elements(tag).is_empty(), "<{tag}> in the page");
    }
    assert!(!page.contains("url("), "a CSS url() in the page");
    for node in document.descendants() {
        for attribute in node.attributes() {
            assert!(
                !attribute.value().starts_with("http") || attribute.name() == "xmlns",
                "{}={}",
                attribute.name(),
                attribute.value()
            );
        }
    }
    // The timeline: one lane label per story and one bar per action, coloured by outcome.
    let svg = elements("svg");
    assert_eq!(svg.len(), 1);
    let bars: Vec<_> = svg[0]
        .descendants()
        .filter(|n| n.tag_name().name() == "rect")
        .collect();
    let classes: Vec<&str> = bars.iter().filter_map(|b| b.attribute("class")).collect();
    assert_eq!(classes.len(), 9);
    assert_eq!(classes.iter().filter(|c| **c == "completed").count(), 8);
    assert_eq!(classes.iter().filter(|c| **c == "rejected").count(), 1);
    let lanes: Vec<&str> = svg[0]
        .descendants()
        .filter(|n| n.tag_name().name() == "text" && n.attribute("class") == Some("lane"))
        .filter_map(|n| n.text())
        .collect();
    assert_eq!(
        lanes,
        ["alpha-story (Alpha story)", "beta-story (Beta story)"]
    );
    // The same tables as the terminal.
    let text: String = document
        .descendants()
        .filter_map(|n| n.text())
        .collect::<Vec<_>>()
        .join(" ");
    assert_contains_all(
        &text,
        &[
            "Phase plan rejected by review: Out of scope",
            "agentic-sdlc unblock beta-story",
            "Add a rollback step",
            "move_to_done",
        ],
    );
    assert_eq!(
        elements("table").len(),
        4,
        "stories, actions, reviews, gates"
    );
}

#[tokio::test]
async fn corrupt_lines_are_skipped_with_their_file_and_line() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.add("Only story", &[]);
    run(&env, &llm, &["run"]).success();
    let path = journals(&env).pop().unwrap();
    let mut text = env.read(&path);
    let lines = text.lines().count();
    text.push_str("{\"event\": \"action_started\", \"stor\n[1, 2]\n");
    env.write(&path, &text);
    let out = env.run(&["report", "--json"]);
    out.success()
        .stderr_has(&format!(
            "{}:{}: skipped a corrupt journal line",
            path.display(),
            lines + 1
        ))
        .stderr_has(&format!("{}:{}:", path.display(), lines + 2));
    let report = out.json();
    assert_eq!(report["stories"][0]["actions"][0]["outcome"], "completed");
    assert_eq!(report["warnings"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn no_journal_or_an_unknown_run_is_said_plainly() {
    let env = TestEnv::init();
    env.run(&["report"])
        .code(1)
        .stderr_has("no run journal yet")
        .stdout_empty();
    let llm = FakeLlm::start().await;
    env.add("Only story", &[]);
    run(&env, &llm, &["run"]).success();
    env.run(&["report", "--run", "19990101T000000000Z", "--json"])
        .code(1)
        .stderr_has("no run `19990101T000000000Z`")
        .stdout_empty();
}

#[tokio::test]
async fn a_killed_run_shows_its_open_actions_as_interrupted() {
    let env = TestEnv::init();
    let llm = FakeLlm::start_with_delay(Some(Duration::from_secs(30))).await;
    env.add("Slow story", &[]);
    let mut child = env.spawn_with_llm(&llm, &["run", "--auto"]);
    crate::suite::run_loop::wait_until(
        "the run to start an action",
        Duration::from_secs(60),
        || {
            journals(&env)
                .last()
                .map(|path| env.read(path).contains("action_started"))
                .unwrap_or(false)
        },
    );
    // While the run works, its open action is running, not interrupted.
    let live = env.run_json(&["report"]);
    assert_eq!(live["running"], true, "{live}");
    assert_eq!(live["stories"][0]["actions"][0]["outcome"], "running");
    child.kill().expect("kill the run");
    finish(child);

    let report = env.run_json(&["report"]);
    assert!(report["exitCode"].is_null(), "{report}");
    assert_eq!(report["running"], false);
    let story = &report["stories"][0];
    assert_eq!(story["outcome"], "interrupted");
    assert_eq!(story["actions"][0]["type"], "refine");
    assert_eq!(story["actions"][0]["outcome"], "interrupted");
    assert_eq!(
        story["nextCommand"],
        "agentic-sdlc run --auto --story slow-story"
    );
    assert_eq!(report["totals"]["interrupted"], 1);
    env.run(&["report"])
        .success()
        .stdout_has("refine … interrupted")
        .stdout_has("interrupted: the run ended without finishing its journal");
}

#[tokio::test]
async fn a_story_waiting_on_a_blocked_dependency_says_so_and_names_unblock() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    configure(
        &env,
        json!({"phases": {"plan": {"review": {"reviewer": "ai"}}}}),
    );
    llm.push_for(
        "phase-review",
        "Beta story",
        Reply::text("REJECT: Out of scope"),
    )
    .set_default("plan", Reply::text("1. Change src/lib.rs (take {call})"));
    let (beta, _, _) = env.add("Beta story", &["--priority", "10"]);
    env.add("Gamma story", &["--priority", "20", "--depends-on", &beta]);
    run(&env, &llm, &["run", "--auto"]).code(3);
    let report = env.run_json(&["report"]);
    let gamma = report["stories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["slug"] == "gamma-story")
        .unwrap_or_else(|| panic!("gamma in the report: {report}"));
    assert_eq!(
        gamma["nextCommand"], "agentic-sdlc unblock beta-story",
        "{gamma}"
    );
    assert_eq!(
        gamma["nextNote"], "waits on beta-story, which is blocked",
        "{gamma}"
    );
    env.run(&["report"])
        .success()
        .stdout_has("next: agentic-sdlc unblock beta-story");
}
