//! Cost, budgets, no progress, the run journal, `report` and `logs` (docs/design.md §14), through
//! the real binary with the model faked over HTTP.

mod budget;
mod cost;
mod live;
mod logs;
mod no_progress;
mod report;

use std::path::PathBuf;

use serde_json::{json, Value as Json};

use crate::suite::common::{Outcome, TestEnv};
use crate::suite::fake_llm::FakeLlm;

/// Tokens the fake server reports for every request: 100 prompt + 20 completion.
pub const TOKENS_PER_CALL: u64 = 120;

/// A price that makes every fake call cost exactly $0.027: 100 × 150/1e6 + 20 × 600/1e6.
pub const COST_PER_CALL: f64 = 0.027;

/// Merges `patch` into the project's config file, as a person editing it would.
pub fn configure(env: &TestEnv, patch: Json) {
    env.configure_json(&patch);
}

/// Prices the default model so that every fake call costs [`COST_PER_CALL`].
pub fn price_the_model(env: &TestEnv) {
    configure(
        env,
        json!({"pricing": {"gpt-4o-mini": {"inputPerMTok": 150, "outputPerMTok": 600}}}),
    );
}

pub fn run(env: &TestEnv, llm: &FakeLlm, args: &[&str]) -> Outcome {
    env.run_with_llm(llm, args)
}

/// The run journals of the board, oldest first.
pub fn journals(env: &TestEnv) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(env.board().join("runs"))
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    // The runs folder also remembers the model's tool protocol; journals are `.jsonl`.
    paths.retain(|path| path.extension().is_some_and(|e| e == "jsonl"));
    paths.sort();
    paths
}

/// The lines of the latest journal.
pub fn journal_events(env: &TestEnv) -> Vec<Json> {
    let path = journals(env).pop().expect("a journal");
    env.read(&path)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every journal line is JSON"))
        .collect()
}

/// A story's frontmatter as JSON.
pub fn front(env: &TestEnv, slug: &str) -> Json {
    serde_json::to_value(env.frontmatter(env.story_path(slug))).unwrap()
}

/// The column a story's file sits in.
pub fn column(env: &TestEnv, slug: &str) -> String {
    let path = env.story_path(slug);
    path.parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap()
        .to_string()
}

/// Floats from JSON and YAML compared to a billionth, the precision costs are kept at.
#[track_caller]
pub fn assert_usd(actual: &Json, expected: f64) {
    let value = actual
        .as_f64()
        .unwrap_or_else(|| panic!("{actual} is not a number"));
    assert!(
        (value - expected).abs() < 1e-9,
        "expected ${expected}, got ${value}"
    );
}
