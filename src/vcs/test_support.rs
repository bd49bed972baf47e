//! Test helpers shared by the vcs unit tests: throwaway repositories isolated from the
//! machine's git configuration.

#![allow(dead_code)]

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;

use tempfile::TempDir;

use super::command::{checked, git, text};

thread_local! {
    /// Extra environment for the commands this test thread spawns; the process environment
    /// is never touched, so tests running in parallel cannot see each other's settings.
    static EXTRA_ENV: RefCell<Vec<(OsString, OsString)>> = const { RefCell::new(Vec::new()) };
}

/// Isolates every spawned git from the machine's global and system config, so a user's
/// aliases, hooks path or default branch cannot change what the tests see.
pub fn apply_test_env(cmd: &mut Command) {
    cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1");
    // Running inside a git hook or with an identity exported would redirect or rename
    // everything the tests do.
    for key in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "EMAIL",
    ] {
        cmd.env_remove(key);
    }
    EXTRA_ENV.with(|extra| {
        for (key, value) in extra.borrow().iter() {
            cmd.env(key, value);
        }
    });
}

pub fn with_env<T>(key: &str, value: impl Into<OsString>, body: impl FnOnce() -> T) -> T {
    EXTRA_ENV.with(|extra| extra.borrow_mut().push((key.into(), value.into())));
    let result = body();
    EXTRA_ENV.with(|extra| extra.borrow_mut().clear());
    result
}

pub const BOARD: &str = ".agentic-sdlc";
pub const CONFIG: &str = ".agentic-sdlc.json";

pub fn board() -> [&'static Path; 2] {
    [Path::new(BOARD), Path::new(CONFIG)]
}

pub fn sh(dir: &Path, args: &[&str]) -> String {
    let output = checked(git(dir, args[0]).args(&args[1..])).unwrap_or_else(|e| panic!("{e}"));
    text(&output.stdout)
}

pub fn write(dir: &Path, path: &str, content: &str) {
    let path = dir.join(path);
    fs_err::create_dir_all(path.parent().unwrap()).unwrap();
    fs_err::write(path, content).unwrap();
}

/// An empty repository with a local identity and no commits.
pub fn unborn_repo() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    sh(dir.path(), &["init", "-q", "-b", "main"]);
    sh(dir.path(), &["config", "user.name", "Test Person"]);
    sh(dir.path(), &["config", "user.email", "test@example.com"]);
    dir
}

/// A repository with one commit holding a source file, a story and the config.
pub fn repo() -> TempDir {
    let dir = unborn_repo();
    write(dir.path(), "src/lib.rs", "fn one() {}\n");
    write(dir.path(), ".agentic-sdlc/backlog/story.md", "# Story\n");
    write(dir.path(), CONFIG, "{}\n");
    sh(dir.path(), &["add", "-A"]);
    sh(dir.path(), &["commit", "-q", "-m", "initial"]);
    dir
}
