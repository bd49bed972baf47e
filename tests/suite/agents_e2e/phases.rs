//! refine, research and plan write their sections, and a re-run replaces what an earlier run
//! wrote instead of adding to it.

use super::{heading_count, section, Project};
use crate::suite::fake_llm::Reply;

#[tokio::test]
async fn refine_rewrites_summary_and_criteria_and_moves_the_story_to_ready() {
    let p = Project::new().await;
    let story = p.story(
        "Rough story",
        "ROUGH-SUMMARY",
        "- [ ] ROUGH-CRITERION",
        "backlog",
        &[],
    );
    p.fake.push(
        "refine",
        Reply::text("## Summary\nFIRST-SUMMARY\n\n## Acceptance Criteria\n- [ ] FIRST-CRITERION"),
    );

    p.step(&story, "refine").success();

    assert_eq!(p.column(&story), "ready");
    assert_eq!(p.front(&story)["status"], "ready");
    let body = p.body(&story);
    assert_eq!(section(&body, "Summary"), "FIRST-SUMMARY");
    assert_eq!(
        section(&body, "Acceptance Criteria"),
        "- [ ] FIRST-CRITERION"
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
