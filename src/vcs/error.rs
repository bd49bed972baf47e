//! What can go wrong with git, in words a person can act on.

use std::io;
use std::path::PathBuf;

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

    #[error("cannot push {branch}: the repository has no `origin` remote\nHint: add one with `git remote add origin <url>`, or set git.integrate to \"merge\" or \"none\"")]
    NoRemote { branch: String },

    #[error("the GitHub CLI `gh` is not on PATH, so no pull request can be opened\nHint: install it from https://cli.github.com and run `gh auth login`, or set git.integrate to \"merge\" or \"none\"")]
    GhMissing,

    #[error("`gh pr create` succeeded but printed no pull request URL; its output was: {output}")]
    PrUrlMissing { output: String },

    #[error("cannot use {} as the worktree for {branch}: {reason}\nHint: move or remove that folder, then run again", .path.display())]
    WorktreePathTaken {
        path: PathBuf,
        branch: String,
        reason: String,
    },

    #[error("the base branch `{branch}` does not exist\nHint: create it, or set git.baseBranch to an existing branch (null means the branch checked out)")]
    BaseMissing { branch: String },

    #[error("HEAD is detached in {}, so there is no branch to build the story on\nHint: check out a branch (`git switch main`), or set git.baseBranch", .dir.display())]
    DetachedHead { dir: PathBuf },

    #[error("{} is on the story branch {branch}, not on a branch of yours\nHint: check out your own branch (`git switch main`), or set git.baseBranch", .dir.display())]
    OnStoryBranch { dir: PathBuf, branch: String },

    #[error("the story branch `{branch}` no longer exists (deleted by hand?)\nHint: restore it with `git branch {branch} <commit>` (`git reflog` lists recent commits), or set implementation_complete: false in the story to implement it again")]
    StoryBranchMissing { branch: String },

    #[error("a {operation} is in progress in {} (started outside agentic-sdlc), so the tool leaves that tree alone\nHint: finish it (`git {operation} --continue`) or abort it (`git {operation} --abort`), then run again", .dir.display())]
    OperationInProgress {
        dir: PathBuf,
        operation: &'static str,
    },

    #[error("{}", dirty_base_message(.branch, .dir, .paths))]
    DirtyBase {
        branch: String,
        dir: PathBuf,
        paths: Vec<String>,
    },

    #[error("the branches of its dependencies conflict when merged into {branch}, in: {}\nHint: merge the dependencies' branches by hand, then run again", .paths.join(", "))]
    DependencyConflict { branch: String, paths: Vec<String> },

    #[error("there is no git remote named `{remote}`; add it with `git remote add {remote} <url>`, or name another with --remote")]
    NoSuchRemote { remote: String },

    #[error("the remote `{remote}` ({url}) cannot be reached: {detail}")]
    RemoteUnreachable {
        remote: String,
        url: String,
        detail: String,
    },

    #[error("the remote `{remote}` ({url}) rejected this clone's credentials: {detail}")]
    RemoteCredentials {
        remote: String,
        url: String,
        detail: String,
    },

    #[error("the remote `{remote}` has no branch `{branch}` to work on; push it first (`git push {remote} {branch}`), or set git.baseBranch")]
    RemoteBaseMissing { remote: String, branch: String },

    #[error("the remote `{remote}` ({url}) does not support atomic pushes, so two runners could take the same story; use a git server that does (any git since 2.4, GitHub, GitLab, Gitea), or run without --remote")]
    RemoteNotAtomic { remote: String, url: String },

    #[error("`{command}` gave no answer within {seconds}s and was stopped")]
    RemoteTimedOut { command: String, seconds: u64 },

    #[error("the story's tree holds a git repository of its own at {}, which is never committed (git would run its settings outside the box); it was left out of the commit\nHint: remove the folder's .git, or vendor the files without it", .paths.join(", "))]
    NestedRepository { paths: Vec<String> },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

pub(super) fn dirty_message(branch: &str, paths: &[String]) -> String {
    format!(
        "cannot switch to branch {branch}: the working tree has uncommitted changes in {} path(s):{}\nHint: commit or stash them, or set git.branchPerStory to false",
        paths.len(),
        listed(paths)
    )
}

fn dirty_base_message(branch: &str, dir: &std::path::Path, paths: &[String]) -> String {
    format!(
        "cannot advance {branch}: its checkout at {} has uncommitted changes to {} file(s) the story changes:{}\nHint: commit or stash them, then run again; the story waits in its column and nothing was merged",
        dir.display(),
        paths.len(),
        listed(paths)
    )
}

/// One indented line per path, the first `DIRTY_LIST_CAP`, then how many more.
fn listed(paths: &[String]) -> String {
    let mut list = String::new();
    for path in paths.iter().take(DIRTY_LIST_CAP) {
        list.push_str("\n  ");
        list.push_str(path);
    }
    if paths.len() > DIRTY_LIST_CAP {
        list.push_str(&format!("\n  … and {} more", paths.len() - DIRTY_LIST_CAP));
    }
    list
}
