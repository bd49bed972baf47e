//! Empty or broken phase output is refused, never written (docs/design.md §15): it is produced once
//! more with feedback naming what was missing, and then the action fails with the story as it was.

use super::{heading_count, section, Made, Project};
use crate::suite::common::split_frontmatter;
use crate::suite::fake_llm::Reply;

/// Runs `step` with `bad` as both answers of its agent (a phase's agent is named after it) and
/// checks the refusal: two requests, the second with Revision Instructions naming `missing`,
/// exit 1, last_error naming it too, and the story exactly as it was apart from last_error and
/// usage.
async fn refused_twice(p: &Project, story: &Made, step: &str, bad: Reply, missing: &[&str]) {
    p.fake.push(step, bad.clone()).push(step, bad);
    let before = p.env.read(p.path_of(story));
    let column = p.column(story);

    p.step(story, step).code(1);

    let asks = p.fake.requests_for(step);
    assert_eq!(asks.len(), 2, "{step}: one retry");
    let retry = asks[1].user_message();
    assert!(
        retry.contains("## Revision Instructions (Attempt 2)")
            && retry.contains("Your previous output was refused"),
        "{retry}"
    );
    let error = p.last_error(story);
    for needle in missing {
        assert!(
            retry.contains(needle),
            "{step}: {needle:?} not in the retry:\n{retry}"
        );
        assert!(
            error.contains(needle),
            "{step}: {needle:?} not in {error:?}"
        );
    }
    assert_eq!(p.column(story), column, "{step}");
    let (old_front, old_body) = split_frontmatter(&before);
    let mut old: serde_norway::Value = serde_norway::from_str(old_front).unwrap();
    let mut now = p.front(story);
    for key in ["last_error", "updated", "usage"] {
        old.as_mapping_mut().unwrap().remove(key);
        now.as_mapping_mut().unwrap().remove(key);
    }
    assert_eq!(now, old, "{step}");
    assert_eq!(p.body(story), old_body, "{step}");
}

#[tokio::test]
async fn refine_without_a_summary_or_real_criteria_is_refused() {
    let p = Project::new().await;
    let story = p.story("Vague", "ROUGH", "- [ ] ROUGH-CRITERION", "backlog", &[]);
    refused_twice(
        &p,
        &story,
        "refine",
        Reply::text("## Acceptance Criteria\n- [ ] ...\n- [ ]\n- [ ] <a testable criterion>"),
        &["Summary", "Acceptance Criteria", "placeholder"],
    )
    .await;
}

#[tokio::test]
async fn research_and_plan_of_only_fences_or_headings_are_refused() {
    let p = Project::new().await;
    // Each story is made just before its step runs, by the Project constructor named.
    type MakeStory = fn(&Project, &str) -> Made;
    let cases: [(&str, MakeStory, &str, &str); 2] = [
        (
            "research",
            Project::ready,
            "Fenced",
            "## Findings\n### Details\n",
        ),
        (
            "plan",
            Project::researched,
            "Fenced plan",
            "```\n\n```\n```\n\n```\n```rust\n```\n```\n",
        ),
    ];
    for (step, make_story, title, only_markup) in cases {
        let story = make_story(&p, title);
        let bad = Reply::text(only_markup);
        refused_twice(&p, &story, step, bad, &["no prose"]).await;
    }
}

#[tokio::test]
async fn an_implement_of_a_feature_that_changes_nothing_fails() {
    let p = Project::new().await;
    let story = p.planned("Idle");
    refused_twice(
        &p,
        &story,
        "implement",
        Reply::text("Implemented everything, trust me."),
        &["must change at least one file", "no tool call", "--jinja"],
    )
    .await;
    assert_eq!(p.front(&story)["implementation_complete"], false);
    assert_eq!(section(&p.body(&story), "Implementation Notes"), "");

    // Told to write whole files into its reply, the model is not sent after tool calling.
    let p = Project::new().await;
    p.config(&[("implement.editFormat", "whole")]);
    let story = p.planned("Idle");
    refused_twice(
        &p,
        &story,
        "implement",
        Reply::text("Implemented everything, trust me."),
        &["must change at least one file", "no file under its path"],
    )
    .await;
    assert!(!p.last_error(&story).contains("--jinja"));
}

#[tokio::test]
async fn a_refused_output_gets_one_retry_that_can_succeed() {
    let p = Project::new().await;
    let story = p.story("Second try", "ROUGH", "- [ ] ROUGH", "backlog", &[]);
    p.fake
        .push(
            "refine",
            Reply::text("## Summary\n\n## Acceptance Criteria\n- [ ]"),
        )
        .push(
            "refine",
            Reply::text("## Summary\nGOOD-SUMMARY\n\n## Acceptance Criteria\n- [ ] GOOD-CRITERION"),
        );

    p.step(&story, "refine").success();

    assert_eq!(p.column(&story), "ready");
    let body = p.body(&story);
    assert_eq!(section(&body, "Summary"), "GOOD-SUMMARY");
    assert_eq!(
        section(&body, "Acceptance Criteria"),
        "- [ ] GOOD-CRITERION"
    );
    assert!(p.front(&story).get("last_error").is_none());
}

#[tokio::test]
async fn a_chore_may_change_nothing_and_its_notes_say_so() {
    let p = Project::new().await;
    let story = p.planned("Tidy up");
    p.set_type(&story, "chore");
    p.fake
        .push("implement", Reply::text("Looked; nothing needed changing."));

    p.step(&story, "implement").success();

    assert_eq!(p.fake.requests_for("implement").len(), 1);
    assert_eq!(p.front(&story)["implementation_complete"], true);
    let notes = section(&p.body(&story), "Implementation Notes");
    assert!(
        notes.starts_with("Looked; nothing needed changing."),
        "{notes}"
    );
    assert!(
        notes.contains("No files were changed: a chore may change none."),
        "{notes}"
    );
}

#[tokio::test]
async fn a_truncated_section_is_kept_marked_and_shown_to_the_gate() {
    let p = Project::new().await;
    p.config(&[
        ("phases.plan.review", r#"{"reviewer": "ai"}"#),
        ("phases.plan.maxTokens", "64"),
    ]);
    let story = p.researched("Long plan");
    p.fake.push(
        "plan",
        Reply::truncated("1. PLAN-STEP-MARK\n```rust\nfn half_written() {"),
    );

    p.step(&story, "plan").success();

    let body = p.body(&story);
    let plan = section(&body, "Implementation Plan");
    assert!(plan.starts_with("1. PLAN-STEP-MARK"), "{plan}");
    assert!(
        plan.contains("**Truncated:** this output was cut off at the reply limit of 64 tokens"),
        "{plan}"
    );
    // The open fence was closed: the sections after the plan are still sections.
    for name in ["Implementation Notes", "Review Notes"] {
        assert_eq!(heading_count(&body, name), 1, "{name}:\n{body}");
    }
    let gate = &p.fake.requests_for("phase-review")[0];
    assert!(gate.user_message().contains("**Truncated:**"));
    assert_eq!(p.front(&story)["plan_complete"], true);
}

#[tokio::test]
async fn a_server_that_refuses_tools_gets_a_clear_error_in_implement() {
    let p = Project::new().await;
    let story = p.planned("No tools");
    let refusal = || Reply::bad_request("tools param requires --jinja flag");
    p.fake
        .push("implement", refusal())
        .push("implement", Reply::text("I cannot change files."))
        .push("implement", refusal())
        .push("implement", Reply::text("Still cannot."));

    p.step(&story, "implement").code(1);

    let asks = p.fake.requests_for("implement");
    assert_eq!(asks.len(), 4);
    assert!(asks[0].body.get("tools").is_some());
    assert!(asks[1].body.get("tools").is_none(), "retried without tools");
    let error = p.last_error(&story);
    assert!(error.contains("refused the tools"), "{error}");
    assert!(error.contains("--jinja"), "{error}");
    assert_eq!(p.front(&story)["implementation_complete"], false);
}

#[tokio::test]
async fn a_gate_retry_of_implement_may_keep_the_first_attempts_edits() {
    let p = Project::new().await;
    p.config(&[("phases.implement.review", r#"{"reviewer": "ai"}"#)]);
    let story = p.planned("Explain better");
    // The first attempt writes a file (the fake's default); the gate asks for better notes,
    // and the second attempt only gives them. The action as a whole changed a file.
    p.fake
        .push(
            "phase-review",
            Reply::text("RETRY: Say which file you changed"),
        )
        .push("phase-review", Reply::text("APPROVE"));
    p.fake.push_for(
        "implement",
        "Say which file you changed",
        Reply::text("SECOND-NOTES: changed agentic-change.txt"),
    );

    p.step(&story, "implement").success();

    assert_eq!(p.front(&story)["implementation_complete"], true);
    let notes = section(&p.body(&story), "Implementation Notes");
    assert!(notes.starts_with("SECOND-NOTES"), "{notes}");
}

#[tokio::test]
async fn another_try_of_best_of_n_keeps_its_attempts_and_builds_on_the_kept_one() {
    let p = Project::new().await;
    p.env.write("README.md", "A project.\n");
    p.git_init(false);
    p.config(&[
        ("implement.attempts", "2"),
        ("phases.implement.review", r#"{"reviewer": "ai"}"#),
    ]);
    let story = p.planned("Try twice");
    p.fake
        .push(
            "phase-review",
            Reply::text("RETRY: Say which file you changed"),
        )
        .push("phase-review", Reply::text("APPROVE"));

    p.step(&story, "implement").success();

    let events: Vec<String> = p
        .env
        .transcript_lines(&story.id)
        .iter()
        .filter_map(|line| line["event"].as_str().map(str::to_string))
        .collect();
    assert!(
        !events.iter().any(|e| e == "attempts_skipped"),
        "the retry made its attempts: {events:?}"
    );
    assert_eq!(
        events.iter().filter(|e| *e == "attempts").count(),
        2,
        "best of two, twice: {events:?}"
    );
    assert!(
        events.iter().any(|e| e == "attempt_committed"),
        "{events:?}"
    );
    assert_eq!(p.front(&story)["implementation_complete"], true);
}

#[tokio::test]
async fn a_research_that_read_files_but_answers_no_prose_twice_completes_with_what_it_has() {
    let p = Project::new().await;
    let story = p.ready("Reads but never says");
    for _ in 0..2 {
        p.fake
            .push("research", Reply::tool("list_files", serde_json::json!({})))
            .push("research", Reply::text("## Findings\n### Details\n"));
    }

    completes_with_the_fallback(&p, &story);
}

/// Runs research on `story`, and asserts it completed with the tool's own text.
#[track_caller]
fn completes_with_the_fallback(p: &Project, story: &Made) {
    p.step(story, "research").success();

    assert_eq!(p.front(story)["research_complete"], true);
    let research = section(&p.body(story), "Research");
    assert!(
        research
            .starts_with("Written by agentic-sdlc: the research agent's answer was refused twice"),
        "{research}"
    );
}

/// Step headings and code, no sentence, and nothing read: in kind as the 1.5B model planned
/// transit's `midnight-wraparound` (2026-12-06).
const STEPS: &str = "## 1. Update `add_minutes` in times.py to wrap the hour\n```python\n\
                     def add_minutes(text, delta):\n    return text\n```\n";

#[tokio::test]
async fn a_plan_of_step_headings_is_the_plan() {
    let p = Project::new().await;
    let story = p.researched("Steps only");
    p.fake.push("plan", Reply::text(STEPS));

    p.step(&story, "plan").success();

    assert_eq!(p.front(&story)["plan_complete"], true);
    let plan = section(&p.body(&story), "Implementation Plan");
    assert!(
        plan.starts_with("### 1. Update `add_minutes` in times.py to wrap the hour"),
        "{plan}"
    );
    assert_eq!(p.fake.requests_for("plan").len(), 1, "no retry");
}

#[tokio::test]
async fn a_research_of_steps_without_prose_twice_completes_with_what_it_has() {
    let p = Project::new().await;
    let story = p.story("Steps only", "A summary.", "- [ ] It works", "ready", &[]);
    p.fake
        .push("research", Reply::text(STEPS))
        .push("research", Reply::text(STEPS));

    completes_with_the_fallback(&p, &story);
    assert_eq!(p.fake.requests_for("research").len(), 2);
}

#[tokio::test]
async fn a_research_or_plan_that_claims_the_story_done_loses_those_sentences() {
    let p = Project::new().await;
    p.env.write(
        "temperature.py",
        "def to_fahrenheit(celsius):\n    return celsius * 9 / 5 + 32\n",
    );
    p.git_init(false);
    let story = p.story(
        "Kelvin",
        "Add `to_kelvin(celsius)` to temperature.py.",
        "- [ ] `to_kelvin(0) == 273.15`",
        "ready",
        &[],
    );
    // Recorded in kind (Qwen2.5-Coder-1.5B, a drive, 2026-11-29): the research's risk, and a
    // plan of nothing but the claim, which its retry makes again.
    p.fake
        .push(
            "research",
            Reply::text("- temperature.py holds `to_fahrenheit`.\n- **Risk**: The `to_kelvin` function is already implemented in the repository, so no risks remain."),
        )
        .push(
            "plan",
            Reply::text("The `to_kelvin` function is correctly implemented in `temperature.py` and passes the tests."),
        )
        .push(
            "plan",
            Reply::text("The `to_kelvin` function is correctly implemented in `temperature.py`."),
        );

    p.step(&story, "research").success();
    p.step(&story, "plan").success();

    let research = section(&p.body(&story), "Research");
    assert_eq!(research.trim(), "- temperature.py holds `to_fahrenheit`.");
    // The plan's retry heard why; its second claim leaves the tool's fallback, not the claim.
    let asks = p.fake.requests_for("plan");
    assert_eq!(asks.len(), 2);
    assert!(
        asks[1]
            .last_message()
            .contains("it said `to_kelvin` done, which the repository does not define yet"),
        "{}",
        asks[1].last_message()
    );
    let plan = section(&p.body(&story), "Implementation Plan");
    assert!(!plan.contains("correctly implemented"), "{plan}");
    assert_eq!(p.front(&story)["plan_complete"], true);
}
