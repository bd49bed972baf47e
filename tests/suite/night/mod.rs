//! The unattended night: checks before spending, human gates that never decide alone, exit
//! codes and reports that tell the truth, stable slugs, budgets within one request, and the
//! conventions (config origins, completions, man page).

mod budget;
mod conventions;
mod gates;
mod local_model;
mod lost_server;
mod preflight;
pub(super) mod pty;
mod report;
mod slugs;
mod streams;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use crate::suite::common::{Outcome, TestEnv};

/// Every file of the board, to prove a command changed none.
pub(super) fn board_files(env: &TestEnv) -> BTreeMap<PathBuf, Vec<u8>> {
    let board = env.board();
    env.files()
        .into_iter()
        .filter(|(path, _)| env.root().join(path).starts_with(&board))
        .collect()
}

/// Runs git in the project; panics when it fails.
#[track_caller]
pub(super) fn git(env: &TestEnv, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(env.root())
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Makes the project a git repository on `main` (with a commit when `commit`), the board and
/// config ignored as most users keep them, and stories on branches of their own.
pub(super) fn make_repository(env: &TestEnv, commit: bool) {
    git(env, &["init", "--quiet", "-b", "main"]);
    git(env, &["config", "user.name", "Night Tester"]);
    git(env, &["config", "user.email", "night@example.com"]);
    git(env, &["config", "commit.gpgsign", "false"]);
    env.write(".gitignore", ".agentic-sdlc/\n.agentic-sdlc.json\n");
    env.write("src/lib.rs", "pub fn base() {}\n");
    if commit {
        git(env, &["add", "--all"]);
        git(env, &["commit", "--quiet", "-m", "Initial commit"]);
    }
    env.use_git_branches();
}

/// Asserts the shape of a refusal before spending: exit 2 and exactly one line on stderr, an
/// error that holds every one of `needles`.
#[track_caller]
pub(super) fn assert_one_line_refusal(out: &Outcome, needles: &[&str]) {
    out.code(2);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr:\n{}", out.stderr);
    assert!(lines[0].starts_with("error: "), "{}", lines[0]);
    for needle in needles {
        assert!(
            lines[0].contains(needle),
            "{needle:?} missing in: {}",
            lines[0]
        );
    }
}
