//! docs/design.md §13 through the binary: a model scripted to behave as an attacker tries to steal
//! the key, take the config over, hang or exhaust the tool, and leave processes behind.

mod bounds;
pub mod breaches;
mod escapes;
mod key;
mod outside_text;
mod processes;
mod scenarios;
mod terminal;

use std::time::Duration;

use serde_json::json;

use super::agents_e2e::Project;
use super::fake_llm::Reply;
use super::process_probe::live_processes_with;

/// Scripts the implement agent to run `command` with run_command, then to end with `closing`.
pub fn implement_runs(p: &Project, command: &str, closing: &str) {
    p.fake
        .push(
            "implement",
            Reply::tool("run_command", json!({ "command": command })),
        )
        .push("implement", Reply::text(closing));
}

/// Waits until a process holding `marker` runs; false if none came.
pub fn wait_for_process(marker: &str) -> bool {
    for _ in 0..600 {
        if !live_processes_with(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}
