//! SPEC §13 through the binary: a model scripted to behave as an attacker tries to steal the key,
//! take the config over, hang or exhaust the tool, and leave processes behind.

mod bounds;
mod key;
mod processes;

use std::time::Duration;

/// Processes of this machine whose command line holds `marker`, zombies aside.
pub fn live_processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|stat| stat.contains(") Z"))
            .unwrap_or(true);
        if !zombie && String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// Waits until no process holds `marker` (a killed process takes a moment to be reaped), and
/// returns the ones still alive after a generous while.
pub fn survivors(marker: &str) -> Vec<String> {
    for _ in 0..100 {
        let alive = live_processes_with(marker);
        if alive.is_empty() {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let alive = live_processes_with(marker);
    // Leave nothing behind, whatever the verdict.
    for pid in &alive {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid])
            .status();
    }
    alive
}

/// A `sleep` duration no other process uses, to find a test's processes by.
pub fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{}.{:09}", 500 + std::process::id() % 300, nanos)
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
