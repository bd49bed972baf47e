//! The run loop (docs/design.md §6, §7, §11) through the real binary, with the model faked over
//! HTTP.

mod breaker;
mod checkpoint;
mod dry_run;
mod events;
mod failures;
mod lifecycle;
mod lock;
mod rework;
mod robustness;
mod selection;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Recorded, Reply};

/// The roles of one story's life cycle, in order; the three reviews run at once, so their order
/// among themselves is free.
pub const PHASE_ROLES: [&str; 4] = ["refine", "research", "plan", "implement"];
pub const REVIEW_ROLES: [&str; 3] = ["code-review", "po-review", "security-review"];

/// Tokens the fake server reports for every request.
pub const PROMPT_TOKENS: i64 = 100;
pub const COMPLETION_TOKENS: i64 = 20;

/// Sets a config key through `config`, as a person would.
#[track_caller]
pub fn configure(env: &TestEnv, key: &str, value: &str) {
    env.run(&["config", key, value]).success();
}

/// A review issue as a perspective writes it.
pub fn issue(severity: &str, category: &str, description: &str) -> Json {
    json!({"severity": severity, "category": category, "description": description})
}

/// A failing verdict with one blocker that names a file, a line and a fix.
pub fn blocker_verdict() -> Reply {
    Reply::verdict(
        false,
        json!([{
            "severity": "blocker",
            "category": "correctness",
            "description": "The limiter never resets its counter",
            "file": "src/limiter.rs",
            "line": 42,
            "suggestedFix": "Reset the counter when the window ends"
        }]),
    )
}

/// A failing verdict whose blocker is worded anew for every request, so a review that keeps
/// rejecting is still a review that sees something new (no "No progress", docs/design.md §14).
pub fn changing_blocker_verdict() -> Reply {
    Reply::verdict(
        false,
        json!([issue(
            "blocker",
            "correctness",
            "The limiter never resets its counter (seen in request {call})"
        )]),
    )
}

/// Phases that answer differently every time they run, as a model that makes progress does.
pub fn phases_make_progress(llm: &FakeLlm) {
    llm.set_default("research", Reply::text("Research findings, take {call}."))
        .set_default("plan", Reply::text("1. Change src/lib.rs (take {call})"))
        .set_default(
            "implement",
            Reply::text("Implemented the story, take {call}."),
        );
}

/// A failing verdict that sends the work back to `target_phase`.
pub fn verdict_with_target(target_phase: &str, issues: Json) -> Reply {
    Reply::text(
        json!({"passed": false, "issues": issues, "target_phase": target_phase}).to_string(),
    )
}

/// The phase and review roles of agent calls, in the order the server saw them, with the three
/// review perspectives of each review sorted so the order is stable.
pub fn normalised_roles(requests: &[Recorded]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut reviews: Vec<String> = Vec::new();
    for request in requests.iter().filter(|r| !r.continues_a_call()) {
        if REVIEW_ROLES.contains(&request.role.as_str()) {
            reviews.push(request.role.clone());
            if reviews.len() == REVIEW_ROLES.len() {
                reviews.sort();
                out.append(&mut reviews);
            }
            continue;
        }
        out.append(&mut reviews);
        out.push(request.role.clone());
    }
    out.extend(reviews);
    out
}

/// The roles of one full life cycle, from refine to the review.
pub fn life_cycle_roles() -> Vec<String> {
    PHASE_ROLES
        .iter()
        .chain(REVIEW_ROLES.iter())
        .map(|r| r.to_string())
        .collect()
}

/// The agent calls whose user message names a story, by its title.
pub fn requests_about(llm: &FakeLlm, title: &str) -> Vec<Recorded> {
    llm.calls()
        .into_iter()
        .filter(|r| r.user_message().contains(&format!("# Story: {title}\n")))
        .collect()
}

/// A frontmatter value as JSON, which is easier to compare than YAML.
pub fn front_json(env: &TestEnv, path: impl AsRef<Path>) -> Json {
    serde_json::to_value(env.frontmatter(path)).expect("YAML converts to JSON")
}

/// Polls until `ready` holds, panicking with `what` after `limit`.
#[track_caller]
pub fn wait_until(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The stories of `status --json` by column: (column, slug) pairs.
pub fn columns(env: &TestEnv) -> Vec<(String, String)> {
    let status = env.status_json();
    let mut out = Vec::new();
    for (column, stories) in status["columns"].as_object().expect("columns") {
        for story in stories.as_array().expect("a column is a list") {
            out.push((column.clone(), story["slug"].as_str().unwrap().to_string()));
        }
    }
    out.sort();
    out
}

/// The next actions `run --dry-run --auto --json` plans: (type, slug) pairs.
pub fn planned(env: &TestEnv) -> Vec<(String, String)> {
    let plan = env.run_json(&["run", "--dry-run", "--auto"]);
    plan["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|a| {
            (
                a["type"].as_str().unwrap().to_string(),
                a["slug"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
