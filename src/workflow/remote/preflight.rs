//! The checks `run --remote` makes before it starts anything (docs/design.md §17, §20): a problem
//! with the remote stops the run with one line and exit 2, before any model is called and before
//! the board is touched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::{Integrate, Project};
use crate::error::{Error, Result};
use crate::names::BranchName;
use crate::vcs::{self as git, GitError, RemoteTarget};

/// What the checks found: the remote to work with and the base branch.
#[derive(Debug, Clone)]
pub struct RemotePlan {
    pub target: RemoteTarget,
    pub base: BranchName,
}

/// One line, exit 2: what is wrong and what to do.
fn refuse(message: String) -> Error {
    Error::Usage(message.lines().next().unwrap_or_default().to_string())
}

fn refuse_git(error: GitError) -> Error {
    refuse(error.to_string())
}

/// Checks everything `run --remote <name>` relies on, in the order a person would fix it:
/// the repository and its checkout, the remote's name, that it answers and takes this clone's
/// credentials for a push, that it supports atomic pushes (claims rely on them), that it has
/// the base branch, and that this clone has no commits on it the remote lacks.
pub fn remote_preflight(project: &Project, name: &str) -> Result<RemotePlan> {
    let root = &project.root;
    let timeout = Duration::from_secs(project.config.remote.timeout_seconds);
    if !git::is_repo(root) {
        return Err(refuse(format!(
            "run --remote needs a git clone, and {} is not in one",
            root.display()
        )));
    }
    let Some(head) = git::head_commit(root).map_err(refuse_git)? else {
        return Err(refuse(format!(
            "run --remote needs a clone with commits; {} has none yet (clone the remote instead)",
            root.display()
        )));
    };
    let checked_out = git::current_branch(root).map_err(refuse_git)?;
    let base = match (&project.config.git.base_branch, &checked_out) {
        (Some(base), _) => base.clone(),
        (None, Some(branch)) if !branch.starts_with(git::BRANCH_PREFIX) => {
            BranchName::from(branch.as_str())
        }
        _ => {
            return Err(refuse(
                "run --remote works on a checkout of the base branch, and HEAD is not on one; check it out (`git switch main`) or set git.baseBranch".into(),
            ))
        }
    };
    if checked_out.as_deref() != Some(base.as_str()) {
        return Err(refuse(format!(
            "run --remote works on a checkout of the base branch {base}, and this one is on {}; run `git switch {base}` first",
            checked_out.as_deref().unwrap_or("a detached HEAD")
        )));
    }
    if project.config.git.integrate == Integrate::None {
        return Err(refuse(
            "run --remote delivers stories by merge or pull request, and git.integrate is \"none\", which would leave each story's work on the runner that made it; set git.integrate to \"merge\" or \"pr\"".into(),
        ));
    }
    let board = project.board_dir();
    if board_is_ignored(root, &board)? {
        return Err(refuse(format!(
            "the board folder {} is ignored by git, so other clones could never see it; remove it from .gitignore and commit it",
            relative(root, &board).display()
        )));
    }
    let target = git::remote_target(root, name).map_err(refuse_git)?;
    git::probe_push(root, &target, &head, timeout).map_err(refuse_git)?;
    let fetched = git::fetch(root, &target, &base, timeout).map_err(refuse_git)?;
    if !git::is_ancestor(root, &head, &fetched.base_tip).map_err(refuse_git)? {
        return Err(refuse(format!(
            "{base} here has commits that {name}/{base} does not; push them (`git push {name} {base}`) or reset to {name}/{base} before running with --remote"
        )));
    }
    Ok(RemotePlan { target, base })
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// Whether `.gitignore` keeps story files out of git (checked on a file name a story could
/// have, since the folder itself may hold nothing yet).
fn board_is_ignored(root: &Path, board: &Path) -> Result<bool> {
    let probe = relative(root, board).join("backlog").join("probe.md");
    Ok(git::gitignored(root, &probe)?)
}
