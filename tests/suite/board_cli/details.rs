//! `details` (alias `d`): one story, found by id, slug, any case or a unique prefix.

use serde_json::json;

use crate::suite::common::TestEnv;

/// A hand-written story with keys the tool does not know and prose in its sections.
const HAND_WRITTEN: &str = "\
---
id: story-mwrovghh-7lzs
title: Add dark mode toggle
priority: 10
status: ready
type: feature
created: '2026-01-02'
updated: '2026-01-03'
labels: [ui]
team: platform   # a key only people read
estimate_points: 3
research_complete: true
plan_complete: false
implementation_complete: false
reviews_complete: false
refinement_count: 1
---
# Add dark mode toggle

## Summary
Night owls want a dark theme.

## Acceptance Criteria
- a toggle in settings

## Research
Uses CSS variables.

## Implementation Plan

## Review Notes
";

#[test]
fn details_finds_a_story_by_id_slug_case_and_prefix() {
    let env = TestEnv::init();
    let (id, _, _) = env.add("Add dark mode toggle", &[]);
    env.add("Login page", &[]);
    let queries = [
        id.clone(),
        id.to_uppercase(),
        "add-dark-mode-toggle".to_string(),
        "ADD-Dark-Mode-Toggle".to_string(),
        "add-dark".to_string(),
        "ADD".to_string(),
        id[..id.len() - 2].to_string(),
    ];
    for query in &queries {
        for command in ["details", "d"] {
            let details = env.run_json(&[command, query]);
            assert_eq!(details["story"]["id"], id.as_str(), "`{command} {query}`");
        }
    }
}

#[test]
fn details_lists_the_candidates_of_an_ambiguous_prefix() {
    let env = TestEnv::init();
    env.add("Login page", &[]);
    env.add("Login form", &[]);
    env.run(&["details", "login"])
        .code(1)
        .stderr_has("login-page")
        .stderr_has("login-form")
        .stdout_empty();
}

#[test]
fn details_suggests_close_matches_when_nothing_is_found() {
    let env = TestEnv::init();
    env.add("Login page", &[]);
    env.add("Payment flow", &[]);
    env.run(&["details", "logn-page"])
        .code(1)
        .stderr_has("logn-page")
        .stderr_has("Did you mean: login-page");
    env.run(&["d", "logn-page", "--json"])
        .code(1)
        .stdout_empty()
        .stderr_has("Did you mean");
    env.run(&["details", "zzzzzz"])
        .code(1)
        .stderr_has("not found");
}

#[test]
fn details_json_carries_every_frontmatter_key_and_the_sections() {
    let env = TestEnv::init();
    let path = env.write_story("ready", "add-dark-mode-toggle.md", HAND_WRITTEN);
    let details = env.run_json(&["details", "add-dark-mode-toggle"]);
    assert_eq!(
        details,
        json!({
            "schemaVersion": 1,
            "kind": "story",
            "story": {
                "id": "story-mwrovghh-7lzs",
                "title": "Add dark mode toggle",
                "priority": 10,
                "status": "ready",
                "type": "feature",
                "created": "2026-01-02",
                "updated": "2026-01-03",
                "labels": ["ui"],
                "team": "platform",
                "estimate_points": 3,
                "research_complete": true,
                "plan_complete": false,
                "implementation_complete": false,
                "reviews_complete": false,
                "refinement_count": 1,
                "slug": "add-dark-mode-toggle",
                "path": path.to_str().unwrap(),
                "sections": {
                    "Summary": "Night owls want a dark theme.",
                    "Acceptance Criteria": "- a toggle in settings",
                    "Research": "Uses CSS variables.",
                    "Implementation Plan": "",
                    "Review Notes": "",
                },
            },
        })
    );
}

#[test]
fn details_shows_metadata_and_the_non_empty_sections() {
    let env = TestEnv::init();
    env.write_story("ready", "add-dark-mode-toggle.md", HAND_WRITTEN);
    let out = env.run(&["d", "add-dark"]);
    out.success();
    assert!(
        !out.stdout.contains("## Implementation Plan"),
        "empty sections are left out:\n{}",
        out.stdout
    );
    env.snapshot_settings().bind(|| {
        insta::assert_snapshot!("details_hand_written", out.stdout);
    });
}

#[test]
fn a_story_that_does_not_parse_is_named_with_path_and_line() {
    let env = TestEnv::init();
    env.add("Healthy", &[]);
    env.write_story(
        "ready",
        "broken-one.md",
        "---\nid: story-broken-0001\ntitle: Broken\nlabels: [a\n---\n# Broken\n",
    );
    let before = env.files();
    let commands: [&[&str]; 4] = [
        &["details", "broken-one"],
        &["d", "BROKEN-ONE", "--json"],
        &["move", "broken-one", "done"],
        &["unblock", "broken-one"],
    ];
    for args in commands {
        env.run(args)
            .code(1)
            .stdout_empty()
            .stderr_has("ready/broken-one.md:4:")
            .stderr_has("agentic-sdlc validate");
    }
    env.run(&["add", "Needs it", "--depends-on", "broken-one"])
        .code(1)
        .stderr_has("broken-one.md:4:");
    assert_eq!(env.files(), before);
    // The rest of the board keeps working.
    env.run(&["details", "healthy"]).success();
}

/// A story after a run went badly: every optional key and record of docs/design.md §3 is set.
/// `{login}` is replaced by the id of a real story it depends on.
const WORKED_ON: &str = "\
---
id: story-rich-0001
title: Remember me
priority: 12
status: blocked
type: feature
created: '2026-01-02'
updated: '2026-01-05'
labels: [auth, ui]
assignee: alice
estimated_effort: medium
research_complete: true
plan_complete: true
implementation_complete: true
reviews_complete: false
depends_on:
- {login}
- story-gone-zzzz
branch: agentic-sdlc/remember-me
pr_url: https://example.com/pr/7
last_error: 'Circuit breaker: reached max refinement attempts (3/3); manual intervention required'
blocked_reason: 'Circuit breaker: reached max refinement attempts (3/3); manual intervention required'
refinement_count: 3
max_refinement_attempts: 3
refinement_iterations:
- iteration: 1
  agentType: implement
  startedAt: '2026-01-03T10:00:00Z'
  completedAt: '2026-01-03T11:00:00Z'
  reviewFeedback: 'Review failed: 1 blocker(s), 2 critical'
  result: failed
review_history:
- timestamp: '2026-01-03T09:00:00Z'
  decision: REJECTED
  severity: CRITICAL
  feedback: Tokens are stored in plain text.
  blockers: [Store a hash of the token]
  codeReviewPassed: true
  securityReviewPassed: false
  poReviewPassed: true
phase_reviews:
  plan:
    attempts: 2
    decision: APPROVE
    predecessor_retries: 1
  implement:
    attempts: 3
    decision: RETRY
    exhausted: true
    feedback: Add tests for expiry.
usage:
  prompt_tokens: 1200
  completion_tokens: 340
  requests: 4
---
# Remember me

## Summary
Stay signed in for 30 days.

## Implementation Notes
Cookie-based.
";

#[test]
fn details_shows_dependencies_records_usage_and_errors() {
    let env = TestEnv::init();
    let (login, _, _) = env.add("Login page", &[]);
    env.write_story(
        "blocked",
        "remember-me.md",
        &WORKED_ON.replace("{login}", &login),
    );
    let out = env.run(&["details", "remember-me"]);
    out.success();
    env.snapshot_settings().bind(|| {
        insta::assert_snapshot!("details_worked_on", out.stdout);
    });

    let story = &env.run_json(&["details", "remember-me"])["story"];
    assert_eq!(story["depends_on"], json!([login, "story-gone-zzzz"]));
    assert_eq!(story["max_refinement_attempts"], 3);
    assert_eq!(story["review_history"][0]["decision"], "REJECTED");
    assert_eq!(story["review_history"][0]["securityReviewPassed"], false);
    assert_eq!(story["refinement_iterations"][0]["result"], "failed");
    assert_eq!(story["phase_reviews"]["implement"]["exhausted"], true);
    assert_eq!(
        story["usage"],
        json!({"prompt_tokens": 1200, "completion_tokens": 340, "requests": 4})
    );
    assert_eq!(
        story["sections"],
        json!({"Summary": "Stay signed in for 30 days.", "Implementation Notes": "Cookie-based."})
    );
}
