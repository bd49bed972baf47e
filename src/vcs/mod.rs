//! Version control: everything the workflow needs from git and the GitHub CLI (SPEC §10, §12).
//!
//! Every function runs `git` (or `gh`) as a child process with an argument vector, never
//! through a shell, so slugs, titles and paths cannot be interpreted as shell syntax. The
//! functions are synchronous because each is a quick local command; async callers wrap them in
//! `spawn_blocking`.
//!
//! Two rules run through the module. The user's work is never clobbered: a branch switch is
//! refused while the working tree has changes, and the review diff is built on a temporary index
//! so the user's staging area is untouched. And the files the tool itself keeps rewriting (the
//! board folder, `.agentic-sdlc.json`) are passed in as `ignore` paths, so they neither block a
//! switch nor end up in a diff or a commit.
//!
//! One file per concern: `repo` (facts and the user's uncommitted work), `branches`,
//! `worktrees`, `diff` (for reviewers), `integration` (delivering a story into its base) and
//! `forge` (push and pull requests).

use std::io;
use std::path::PathBuf;

mod branches;
mod command;
mod diff;
mod forge;
mod integration;
mod repo;
#[cfg(test)]
mod test_support;
mod worktrees;

pub use branches::{
    checkout, commit_all, ensure_story_branch, recorded_base, story_branch, BRANCH_PREFIX,
};
pub use diff::diff_for_review;
pub use forge::{create_pull_request, gh_available, push_branch};
pub use repo::{current_branch, dirty_paths, head_commit, is_repo, toplevel};
pub use worktrees::{ensure_worktree, list_worktrees, remove_worktree};

/// Dirty paths a `DirtyTree` message lists before summarising the rest.
const DIRTY_LIST_CAP: usize = 10;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },

    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },

    #[error("{}", dirty_message(.branch, .paths))]
    DirtyTree { branch: String, paths: Vec<String> },

    #[error("the repository at {} has no commits yet, so there is nothing to branch from\nHint: make a first commit (`git commit --allow-empty -m \"Initial commit\"`), or set git.branchPerStory to false", .dir.display())]
    NoCommits { dir: PathBuf },

    #[error("cannot push {branch}: the repository has no `origin` remote\nHint: add one with `git remote add origin <url>`, or set git.createPr to false")]
    NoRemote { branch: String },

    #[error("the GitHub CLI `gh` is not on PATH, so no pull request can be opened\nHint: install it from https://cli.github.com and run `gh auth login`, or set git.createPr to false")]
    GhMissing,

    #[error("`gh pr create` succeeded but printed no pull request URL; its output was: {output}")]
    PrUrlMissing { output: String },

    #[error("cannot use {} as the worktree for {branch}: {reason}\nHint: move or remove that folder, then run again", .path.display())]
    WorktreePathTaken {
        path: PathBuf,
        branch: String,
        reason: String,
    },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

fn dirty_message(branch: &str, paths: &[String]) -> String {
    let mut message = format!(
        "cannot switch to branch {branch}: the working tree has uncommitted changes in {} path(s):",
        paths.len()
    );
    for path in paths.iter().take(DIRTY_LIST_CAP) {
        message.push_str("\n  ");
        message.push_str(path);
    }
    if paths.len() > DIRTY_LIST_CAP {
        message.push_str(&format!("\n  … and {} more", paths.len() - DIRTY_LIST_CAP));
    }
    message.push_str("\nHint: commit or stash them, or set git.branchPerStory to false");
    message
}

/// What `ensure_story_branch` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSwitch {
    pub branch: String,
    /// The branch did not exist and was created from HEAD.
    pub created: bool,
    /// The commit the branch was created from, when it was recorded.
    pub base: Option<String>,
    /// The branch the tree was on before the switch (`None` when it already was on the story
    /// branch, or HEAD was detached), so the caller can go back to it.
    pub previous: Option<String>,
}
