//! The board's faces (docs/design.md §19): `serve` in a real browser and over plain HTTP, `mcp`
//! with a real MCP client, notifications to a local receiver and a local command, and `run
//! --watch`.

mod acts;
mod browser;
mod browser_acts;
mod browser_large;
mod browser_live;
mod cdp;
mod large;
mod live;
mod mcp;
mod notify;
mod serve;
mod watch;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::suite::common::{Outcome, TestEnv};
use crate::suite::fake_llm::FakeLlm;

/// A running `serve` on a free port, stopped (SIGTERM, then waited for) when dropped.
pub(super) struct Served {
    child: Child,
    pub url: String,
}

impl Served {
    /// `serve --port 0 --json` in the project, plus `extra` arguments; returns once the server
    /// said where it listens.
    #[track_caller]
    pub fn start(env: &TestEnv, llm: Option<&FakeLlm>, extra: &[&str]) -> Served {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
        cmd.current_dir(env.root())
            .env("NO_COLOR", "1")
            .env_remove("AGENTIC_SDLC_SERVE_TOKEN")
            .args(["serve", "--port", "0", "--json"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some(llm) = llm {
            cmd.env("OPENAI_BASE_URL", llm.base_url());
        }
        let mut child = cmd.spawn().expect("start agentic-sdlc serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read what serve printed");
        let ready: Json = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("serve did not say where it listens ({e}): {line:?}"));
        assert_eq!(ready["kind"], "serving", "{ready}");
        let url = ready["url"].as_str().expect("a url").to_string();
        Served { child, url }
    }

    /// The server's address for `path` (which starts with `/`).
    pub fn at(&self, path: &str) -> String {
        format!("{}{}", self.url.trim_end_matches('/'), path)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        terminate(&mut self.child, nix::sys::signal::Signal::SIGTERM);
    }
}

/// Sends `signal` to a child this test started and waits for it (killing it after a while).
pub(super) fn terminate(child: &mut Child, signal: nix::sys::signal::Signal) -> Option<i32> {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, signal);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// Polls `probe` every 50 ms until it gives a value or `limit` passes.
pub(super) fn within<T>(limit: Duration, mut probe: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(found) = probe() {
            return Some(found);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The column folder a story's file sits in.
#[track_caller]
pub(super) fn column_of(env: &TestEnv, slug: &str) -> String {
    env.story_path(slug)
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string()
}

/// `details --json` of a story.
#[track_caller]
pub(super) fn details(env: &TestEnv, slug: &str) -> Json {
    env.run_json(&["details", slug])["story"].clone()
}

/// A run that left a story waiting at a human gate: it ends well (exit 0), or says that a
/// person is needed (exit 3), but never fails.
#[track_caller]
pub(super) fn stopped_for_a_person(out: &Outcome) {
    assert!(
        [0, 3].contains(&out.code),
        "unexpected exit code {}\n--- stderr\n{}",
        out.code,
        out.stderr
    );
}

/// Writes `count` story files straight into `column` (faster than `add` for a large board):
/// ids `story-<column>-0000`, … in priority order, titles `<column> story <n>`, and the label
/// `even` or `odd`. Returns the ids in the column's order.
pub(super) fn write_stories(env: &TestEnv, column: &str, count: usize) -> Vec<String> {
    (0..count)
        .map(|n| {
            let id = format!("story-{column}-{n:04}");
            let blocked = if column == "blocked" {
                "blocked_reason: Waits for a person\n"
            } else {
                ""
            };
            let parity = if n % 2 == 0 { "even" } else { "odd" };
            let text = format!(
                "---\nid: {id}\ntitle: {column} story {n}\npriority: {}\nstatus: {column}\ntype: feature\ncreated: '2026-11-28'\nupdated: '2026-11-28'\nlabels:\n- {parity}\n{blocked}research_complete: false\nplan_complete: false\nimplementation_complete: false\nreviews_complete: false\n---\n# {column} story {n}\n\n## Summary\nA story written for a large board.\n",
                (n + 1) * 10
            );
            env.write_story(column, &format!("{column}-story-{n:04}.md"), &text);
            id
        })
        .collect()
}
