//! Finding a test's processes by a marker in their command line, and making sure none outlive
//! it. The integration suite and the library's own tests of the process runner (src/exec)
//! both need this; the library compiles this same file into its unit tests with `#[path]`,
//! so the two cannot drift apart and nothing test-only reaches the library's API.

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
/// returns the ones still alive after a generous while: 30 seconds, as a keeper that sweeps the
/// tree after a cancelled call is one process among many on a loaded machine (the cancelled
/// call's test once found its sleeps alive after 10 seconds, with the tests under `nice -n 19`
/// beside a model server busy on both cores, and passed alone).
pub fn survivors(marker: &str) -> Vec<String> {
    for _ in 0..300 {
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
