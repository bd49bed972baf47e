//! refine, research and plan write their sections, and a re-run replaces what an earlier run
//! wrote instead of adding to it.

use super::{heading_count, section, Made, Project};
use crate::suite::fake_llm::Reply;

/// A rough story in the backlog, refined once with the model answering `answer`; asserts the
/// story went to ready with `summary` and the one `criterion`.
#[track_caller]
fn refined_once(p: &Project, answer: &str, summary: &str, criterion: &str) -> Made {
    let story = p.story(
        "Rough story",
        "ROUGH-SUMMARY",
        "- [ ] ROUGH-CRITERION",
        "backlog",
        &[],
    );
    p.fake.push("refine", Reply::text(answer));

    p.step(&story, "refine").success();

    assert_eq!(p.column(&story), "ready");
    assert_eq!(p.front(&story)["status"], "ready");
    let body = p.body(&story);
    assert_eq!(section(&body, "Summary"), summary);
    assert_eq!(
        section(&body, "Acceptance Criteria"),
        format!("- [ ] {criterion}")
    );
    story
}

#[tokio::test]
async fn refine_rewrites_summary_and_criteria_and_moves_the_story_to_ready() {
    let p = Project::new().await;
    let story = refined_once(
        &p,
        "## Summary\nFIRST-SUMMARY\n\n## Acceptance Criteria\n- [ ] FIRST-CRITERION",
        "FIRST-SUMMARY",
        "FIRST-CRITERION",
    );
    // The refine agent saw the rough text it was asked to improve.
    assert!(p.fake.requests_for("refine")[0]
        .user_message()
        .contains("ROUGH-SUMMARY"));

    // Sent back by hand and refined again: the new text replaces the old one.
    p.env.run(&["move", &story.id, "backlog"]).success();
    p.fake.push(
        "refine",
        Reply::text("## Summary\nSECOND-SUMMARY\n\n## Acceptance Criteria\n- [ ] SECOND-CRITERION"),
    );
    p.step(&story, "refine").success();

    assert_eq!(p.column(&story), "ready");
    let body = p.body(&story);
    for name in ["Summary", "Acceptance Criteria"] {
        assert_eq!(heading_count(&body, name), 1, "{name}:\n{body}");
    }
    assert_eq!(section(&body, "Summary"), "SECOND-SUMMARY");
    assert_eq!(
        section(&body, "Acceptance Criteria"),
        "- [ ] SECOND-CRITERION"
    );
    assert!(!body.contains("FIRST-"), "{body}");
}

#[tokio::test]
async fn a_refine_answer_with_its_sections_at_another_heading_level_is_kept() {
    let p = Project::new().await;
    // As the 1.5B model answered twice for inventory `format-price` (2026-12-05), and the
    // story was lost at refine.
    refined_once(
        &p,
        "### Summary\nLEVELED-SUMMARY\n\n### Acceptance Criteria:\n- [ ] LEVELED-CRITERION",
        "LEVELED-SUMMARY",
        "LEVELED-CRITERION",
    );
    assert_eq!(p.fake.requests_for("refine").len(), 1, "taken at once");
}

#[tokio::test]
async fn examples_refine_invents_do_not_become_the_story_s_criteria() {
    let p = Project::new().await;
    let story = p.story(
        "Add is_low_stock(count, threshold) to stock.py",
        "True when the count is below the threshold; `is_low_stock(3, 5)` returns `True`.",
        "- [ ] it works",
        "backlog",
        &[],
    );
    p.fake.push(
        "refine",
        Reply::text("## Summary\nAdd `is_low_stock(count, threshold)` to stock.py: it returns True when count is below threshold, as `is_low_stock(3, 5)` returns `True` shows.\n\n## Acceptance Criteria\n- [ ] `is_low_stock(3, 5)` returns `True`\n- [ ] `is_low_stock(10, 0)` returns `True`\n- [ ] it returns False when count is at or above threshold"),
    );

    p.step(&story, "refine").success();

    assert_eq!(
        section(&p.body(&story), "Acceptance Criteria"),
        "- [ ] `is_low_stock(3, 5)` returns `True`\n- [ ] it returns False when count is at or above threshold",
        "the example the story gave stays; the one refine made up goes"
    );

    // A rewrite of nothing but made-up examples leaves the criteria as they were.
    let sketch = refined_sketch(
        &p,
        "Add is_high_stock(count, limit) to stock.py",
        "## Summary\nAdd `is_high_stock(count, limit)` to stock.py, which returns True when count is above limit.\n\n## Acceptance Criteria\n- [ ] `is_high_stock(0, 10)` returns `True`",
    );
    assert_eq!(
        section(&p.body(&sketch), "Acceptance Criteria"),
        "- [ ] it works"
    );
}

#[tokio::test]
async fn what_refine_writes_after_the_criteria_list_is_not_a_criterion() {
    let p = Project::new().await;
    // Recorded (Qwen2.5-Coder-1.5B, transit, 2026-12-06): the prompt's own list of what the
    // story mentions, written after the criteria, stood in the story.
    let story = refined_sketch(
        &p,
        "Minutes between two times",
        "## Summary\nAdd a function `minutes_between(start, end)` to `transit/times.py` that returns how many minutes pass from `start` to `end`.\n\n## Acceptance Criteria\n- [ ] it returns the minutes from `start` to `end`\n- [ ] the same time twice gives 0\n\nThe story mentions:\n- file transit/times.py (exists)\n- `minutes_between`: not defined yet (the story asks for it)",
    );
    assert_eq!(
        section(&p.body(&story), "Acceptance Criteria"),
        "- [ ] it returns the minutes from `start` to `end`\n- [ ] the same time twice gives 0"
    );
}

/// A backlog story of `title` alone (an empty summary, one vague criterion), refined by the
/// model's `reply`.
fn refined_sketch(p: &Project, title: &str, reply: &str) -> Made {
    let story = p.story(title, "", "- [ ] it works", "backlog", &[]);
    p.fake.push("refine", Reply::text(reply));
    p.step(&story, "refine").success();
    story
}

#[tokio::test]
async fn a_refine_that_turns_the_story_s_conversion_around_changes_nothing_of_it() {
    let p = Project::new().await;
    // Recorded in kind (Qwen2.5-Coder-1.5B, a drive, 2026-11-29): acceptance made tests of
    // the turned criterion, and no right code could pass them.
    let story = refined_sketch(
        &p,
        "Add to_celsius(fahrenheit) to temperature.py, the inverse of to_fahrenheit",
        "## Summary\nConverts a temperature from Celsius to Fahrenheit.\n\n## Acceptance Criteria\n- [ ] `to_celsius` converts temperatures from Celsius to Fahrenheit\n- [ ] `to_celsius` is defined in `temperature.py`",
    );

    let body = p.body(&story);
    assert_eq!(section(&body, "Summary"), "", "{body}");
    assert_eq!(
        section(&body, "Acceptance Criteria"),
        "- [ ] `to_celsius` is defined in `temperature.py`"
    );
}

/// Runs `step` twice with a hand reset of `flag` between; the second answer starts with its own
/// heading, which must not end up as a second section.
async fn rerun_replaces(step: &str, role: &str, flag: &str, heading: &str, done: &[&str]) {
    let p = Project::new().await;
    let story = p.story("Rerun", "A summary.", "- [ ] It works", "ready", done);
    p.fake
        .push(role, Reply::text("FIRST-OUTPUT line one\n\nline two"));

    p.step(&story, step).success();

    assert_eq!(p.front(&story)[flag], true);
    let body = p.body(&story);
    assert_eq!(section(&body, heading), "FIRST-OUTPUT line one\n\nline two");

    p.set_flag(&story.slug, flag, false);
    p.fake.push(
        role,
        Reply::text(format!(
            "## {heading}\n\nSECOND-OUTPUT\n\n### Details\nmore\n\n## Risks\nRISK-MARK"
        )),
    );
    p.step(&story, step).success();

    assert_eq!(p.front(&story)[flag], true);
    let body = p.body(&story);
    assert_eq!(heading_count(&body, heading), 1, "{body}");
    let text = section(&body, heading);
    assert!(text.starts_with("SECOND-OUTPUT"), "{body}");
    assert!(
        text.contains("### Details\nmore"),
        "sub-headings stay inside: {body}"
    );
    // A level-2 heading of the answer's own is kept inside the section, not made a new one.
    assert_eq!(heading_count(&body, "Risks"), 0, "{body}");
    assert!(text.contains("RISK-MARK"), "{body}");
    assert!(!body.contains("FIRST-OUTPUT"), "{body}");
    // The other sections are where they were, once each.
    for name in [
        "Summary",
        "Acceptance Criteria",
        "Implementation Notes",
        "Review Notes",
    ] {
        assert_eq!(heading_count(&body, name), 1, "{name}:\n{body}");
    }
}

#[tokio::test]
async fn research_replaces_its_section_on_a_rerun() {
    rerun_replaces("research", "research", "research_complete", "Research", &[]).await;
}

#[tokio::test]
async fn plan_replaces_its_section_on_a_rerun() {
    rerun_replaces(
        "plan",
        "plan",
        "plan_complete",
        "Implementation Plan",
        &["research"],
    )
    .await;
}

#[tokio::test]
async fn research_that_copies_its_prompt_back_keeps_only_what_it_found() {
    // CI's textkit `mean-empty` (2026-12-06): one sentence, then the prompt from `## Summary`
    // on, which put the story's `## Summary` and `## Acceptance Criteria` into its file twice.
    let p = Project::new().await;
    // Long enough that a copy of it is an echo, not a quote.
    let summary = "The mean of an empty list is 0.0 rather than an error. ".repeat(8);
    let story = p.story("Echo", &summary, "- [ ] It works", "ready", &[]);
    p.fake.push("research", Reply::text("The first finding."));
    p.step(&story, "research").success();
    let prompt = p.fake.requests_for("research")[0].user_message();
    let from = prompt
        .find("## Summary")
        .expect("the prompt shows the summary");

    p.set_flag(&story.slug, "research_complete", false);
    let echo = format!(
        "The second finding.\n\n{}\n```\n{}```\n",
        &prompt[from..],
        &prompt[from..]
    );
    p.fake.push("research", Reply::text(echo));
    p.step(&story, "research").success();

    let body = p.body(&story);
    assert_eq!(section(&body, "Research"), "The second finding.", "{body}");
    for name in ["Summary", "Acceptance Criteria"] {
        assert_eq!(heading_count(&body, name), 1, "{name}:\n{body}");
    }
}
