//! What can go wrong with git, in words a person can act on.

use std::io;
use std::path::PathBuf;

use crate::hint::Hint;

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

    #[error("the repository at {} has no commits yet, so there is nothing to branch from", .dir.display())]
    NoCommits { dir: PathBuf },

    #[error("cannot push {branch}: the repository has no `origin` remote")]
    NoRemote { branch: String },

    #[error("the GitHub CLI `gh` is not on PATH, so no pull request can be opened")]
    GhMissing,

    #[error("`gh pr create` succeeded but printed no pull request URL; its output was: {output}")]
    PrUrlMissing { output: String },

    #[error("cannot use {} as the worktree for {branch}: {reason}", .path.display())]
    WorktreePathTaken {
        path: PathBuf,
        branch: String,
        reason: String,
    },

    #[error("the base branch `{branch}` does not exist")]
    BaseMissing { branch: String },

    #[error("HEAD is detached in {}, so there is no branch to build the story on", .dir.display())]
    DetachedHead { dir: PathBuf },

    #[error("{} is on the story branch {branch}, not on a branch of yours", .dir.display())]
    OnStoryBranch { dir: PathBuf, branch: String },

    #[error("the story branch `{branch}` no longer exists (deleted by hand?)")]
    StoryBranchMissing { branch: String },

    #[error("a {operation} is in progress in {} (started outside agentic-sdlc), so the tool leaves that tree alone", .dir.display())]
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

    #[error("the branches of its dependencies conflict when merged into {branch}, in: {}", .paths.join(", "))]
    DependencyConflict { branch: String, paths: Vec<String> },

    #[error("there is no git remote named `{remote}`")]
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

    #[error("the remote `{remote}` has no branch `{branch}` to work on")]
    RemoteBaseMissing { remote: String, branch: String },

    #[error("the remote `{remote}` ({url}) does not support atomic pushes, so two runners could take the same story")]
    RemoteNotAtomic { remote: String, url: String },

    #[error("`{command}` gave no answer within {seconds}s and was stopped")]
    RemoteTimedOut { command: String, seconds: u64 },

    #[error("the story's tree holds a git repository of its own at {}, which is never committed (git would run its settings outside the box); it was left out of the commit", .paths.join(", "))]
    NestedRepository { paths: Vec<String> },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl Hint for GitError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            GitError::DirtyTree { .. } => {
                "commit or stash them, or set git.branchPerStory to false".into()
            }
            GitError::DirtyBase { .. } => "commit or stash them, then run again; the story waits \
                                           in its column and nothing was merged"
                .into(),
            GitError::NoCommits { .. } => {
                "make a first commit (`git commit --allow-empty -m \
                                           \"Initial commit\"`), or set git.branchPerStory to false"
                    .into()
            }
            GitError::NoRemote { .. } => "add one with `git remote add origin <url>`, or set \
                                          git.integrate to \"merge\" or \"none\""
                .into(),
            GitError::GhMissing => "install it from https://cli.github.com and run `gh auth \
                                    login`, or set git.integrate to \"merge\" or \"none\""
                .into(),
            GitError::WorktreePathTaken { .. } => {
                "move or remove that folder, then run again".into()
            }
            GitError::BaseMissing { .. } => {
                "create it, or set git.baseBranch to an existing branch \
                                             (null means the branch checked out)"
                    .into()
            }
            GitError::DetachedHead { .. } => {
                "check out a branch (`git switch main`), or set git.baseBranch".into()
            }
            GitError::OnStoryBranch { .. } => {
                "check out your own branch (`git switch main`), or set git.baseBranch".into()
            }
            GitError::StoryBranchMissing { branch } => format!(
                "restore it with `git branch {branch} <commit>` (`git reflog` lists recent \
                 commits), or set implementation_complete: false in the story to implement it \
                 again"
            ),
            GitError::OperationInProgress { operation, .. } => format!(
                "finish it (`git {operation} --continue`) or abort it (`git {operation} \
                 --abort`), then run again"
            ),
            GitError::DependencyConflict { .. } => {
                "merge the dependencies' branches by hand, then run again".into()
            }
            GitError::NoSuchRemote { remote } => {
                format!(
                    "add it with `git remote add {remote} <url>`, or name another with --remote"
                )
            }
            GitError::RemoteBaseMissing { remote, branch } => {
                format!("push it first (`git push {remote} {branch}`), or set git.baseBranch")
            }
            GitError::RemoteNotAtomic { .. } => "use a git server that does (any git since 2.4, \
                                                 GitHub, GitLab, Gitea), or run without --remote"
                .into(),
            GitError::NestedRepository { .. } => {
                "remove the folder's .git, or vendor the files without it".into()
            }
            _ => return None,
        };
        Some(hint)
    }
}

pub(super) fn dirty_message(branch: &str, paths: &[String]) -> String {
    format!(
        "cannot switch to branch {branch}: the working tree has uncommitted changes in {} path(s):{}",
        paths.len(),
        listed(paths)
    )
}

fn dirty_base_message(branch: &str, dir: &std::path::Path, paths: &[String]) -> String {
    format!(
        "cannot advance {branch}: its checkout at {} has uncommitted changes to {} file(s) the story changes:{}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_errors_say_what_happened_and_hint_what_to_do_apart() {
        let errors = [
            GitError::DirtyTree {
                branch: "agentic-sdlc/x".into(),
                paths: vec!["a.txt".into()],
            },
            GitError::NoCommits { dir: "/r".into() },
            GitError::StoryBranchMissing {
                branch: "agentic-sdlc/x".into(),
            },
            GitError::OperationInProgress {
                dir: "/r".into(),
                operation: "rebase",
            },
            GitError::NoSuchRemote {
                remote: "up".into(),
            },
        ];
        for err in errors {
            let message = err.to_string();
            let hint = err.hint().unwrap_or_else(|| panic!("{err:?} has no hint"));
            assert!(!message.contains("Hint"), "{message}");
            assert!(!hint.is_empty() && !hint.contains('\n'), "{hint}");
        }
        let branch_gone = GitError::StoryBranchMissing {
            branch: "agentic-sdlc/x".into(),
        };
        assert!(branch_gone
            .hint()
            .unwrap()
            .starts_with("restore it with `git branch agentic-sdlc/x <commit>`"));
        let failed = GitError::Failed {
            command: "git x".into(),
            status: "1".into(),
            stderr: "no".into(),
        };
        assert_eq!(failed.hint(), None);
    }
}
