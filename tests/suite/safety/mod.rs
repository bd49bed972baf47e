//! SPEC §13 through the binary: a model scripted to behave as an attacker tries to steal the key,
//! take the config over, hang or exhaust the tool, and leave processes behind.

mod bounds;
mod key;
mod processes;

use std::time::Duration;

use super::process_probe::live_processes_with;

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
