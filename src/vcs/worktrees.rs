//! Git worktrees: one working tree per story, so implementations can run in parallel.

use std::path::{Path, PathBuf};

use super::branches::{create_branch_if_missing, stage_all};
use super::command::{checked, failure, git, with_input};
use super::error::GitError;
use super::refs::{branch_tip, BRANCH_PREFIX};
use super::repo::{head_commit, is_repo};

/// A working tree of the repository as `git worktree list --porcelain` describes it.
pub(super) struct WorktreeEntry {
    pub(super) path: PathBuf,
    pub(super) branch: Option<String>,
}

/// Gives the story its own working tree at `<worktrees_dir>/<name>` on the story branch
/// `agentic-sdlc/<name>`, so parallel implement actions do not share files. A relative
/// `worktrees_dir` is taken from `repo`. An existing worktree of this repository on that branch
/// is reused. Returns the tree, and the commit the branch was made from when it was made now.
pub fn ensure_worktree(
    repo: &Path,
    worktrees_dir: &Path,
    branch: &str,
    owner: &str,
    base: &str,
) -> Result<(PathBuf, Option<String>), GitError> {
    let name = branch.strip_prefix(BRANCH_PREFIX).unwrap_or(branch);
    let branch = branch.to_string();
    let path = absolute(&repo.join(worktrees_dir).join(name))?;
    if path.exists() {
        return Ok((reuse_worktree(repo, path, branch)?, None));
    }
    if head_commit(repo)?.is_none() {
        return Err(GitError::NoCommits {
            dir: repo.to_path_buf(),
        });
    }
    let start = branch_tip(repo, base)?.ok_or_else(|| GitError::BaseMissing {
        branch: base.to_string(),
    })?;
    // A worktree folder deleted by hand stays registered and would block `worktree add`.
    checked(git(repo, "worktree").args(["prune"]))?;
    let created = create_branch_if_missing(repo, &branch, owner, &start)?.then_some(start);
    checked(
        git(repo, "worktree")
            .args(["add", "--quiet"])
            .arg(&path)
            .arg(&branch),
    )?;
    Ok((path, created))
}

pub(super) fn reuse_worktree(
    repo: &Path,
    path: PathBuf,
    branch: String,
) -> Result<PathBuf, GitError> {
    let real = fs_err::canonicalize(&path).map_err(|source| GitError::Io {
        context: "could not resolve the worktree path".into(),
        source,
    })?;
    let registered = worktree_entries(repo)?
        .into_iter()
        .find(|entry| fs_err::canonicalize(&entry.path).is_ok_and(|p| p == real));
    let reason = match registered {
        Some(entry) if entry.branch.as_deref() == Some(branch.as_str()) && is_repo(&path) => {
            return Ok(path)
        }
        Some(entry) => match entry.branch {
            Some(other) if other != branch => format!("it is a worktree on branch {other}"),
            _ => "it is a worktree that is broken or not on a branch".to_string(),
        },
        None => "the folder exists and is not a worktree of this repository".to_string(),
    };
    Err(GitError::WorktreePathTaken {
        path,
        branch,
        reason,
    })
}

pub(super) fn absolute(path: &Path) -> Result<PathBuf, GitError> {
    std::path::absolute(path).map_err(|source| GitError::Io {
        context: format!("could not make {} absolute", path.display()),
        source,
    })
}

/// Removes a story's worktree, changes and all (its commits stay on the branch), and forgets
/// worktrees whose folders are gone. A path that no longer exists is not an error.
pub fn remove_worktree(repo: &Path, path: &Path) -> Result<(), GitError> {
    if path.exists() {
        checked(git(repo, "worktree").args(["remove", "--force"]).arg(path))?;
    }
    checked(git(repo, "worktree").args(["prune"]))?;
    Ok(())
}

/// A throwaway working tree at `path` with `commit` checked out and no branch: one of several
/// independent attempts at the same work, which is kept only as a patch.
pub fn add_scratch_worktree(repo: &Path, path: &Path, commit: &str) -> Result<(), GitError> {
    let _ = checked(git(repo, "worktree").args(["prune"]));
    if path.exists() {
        remove_worktree(repo, path)?;
        // A leftover folder that is not a worktree (a crash in the middle of a removal).
        let _ = std::fs::remove_dir_all(path);
    }
    checked(
        git(repo, "worktree")
            .args(["add", "--quiet", "--detach"])
            .arg(path)
            .arg(commit),
    )?;
    Ok(())
}

/// Everything changed in `dir` since `base`, new files included and `ignore` left out, as a
/// patch `git apply` takes (binary files too). Stages in `dir`'s own index.
pub fn patch_since(dir: &Path, base: &str, ignore: &[&Path]) -> Result<String, GitError> {
    let pathspecs = stage_all(dir, ignore)?;
    let output = checked(
        git(dir, "diff")
            .args(["--cached", "--binary", "--no-color", base, "--"])
            .args(&pathspecs),
    )?;
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Applies a patch made by [`patch_since`] to the working tree of `dir`.
pub fn apply_patch(dir: &Path, patch: &str) -> Result<(), GitError> {
    if patch.trim().is_empty() {
        return Ok(());
    }
    let mut apply = git(dir, "apply");
    apply.args(["--binary", "--whitespace=nowarn", "-"]);
    let output = with_input(&mut apply, patch.as_bytes()).map_err(|source| GitError::Spawn {
        command: "git apply".to_string(),
        source,
    })?;
    if output.status.success() {
        Ok(())
    } else {
        Err(failure(&apply, &output))
    }
}

/// Every working tree of the repository, the main one first (git's order).
#[cfg(test)]
pub fn list_worktrees(repo: &Path) -> Result<Vec<PathBuf>, GitError> {
    Ok(worktree_entries(repo)?
        .into_iter()
        .map(|entry| entry.path)
        .collect())
}

pub(super) fn worktree_entries(repo: &Path) -> Result<Vec<WorktreeEntry>, GitError> {
    let output = checked(git(repo, "worktree").args(["list", "--porcelain"]))?;
    let mut entries: Vec<WorktreeEntry> = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            entries.push(WorktreeEntry {
                path: PathBuf::from(path),
                branch: None,
            });
        } else if let (Some(reference), Some(entry)) =
            (line.strip_prefix("branch "), entries.last_mut())
        {
            entry.branch = Some(reference.trim_start_matches("refs/heads/").to_string());
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::branches::recorded_base;
    use crate::vcs::test_support::*;
    use crate::vcs::*;

    #[test]
    fn worktrees_are_created_reused_listed_and_removed() {
        let dir = repo();
        let trees = tempfile::tempdir().unwrap();
        let path = ensure_worktree(
            dir.path(),
            trees.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
        )
        .unwrap()
        .0;
        assert_eq!(path, trees.path().join("dark-mode"));
        assert!(path.join("src/lib.rs").exists());
        assert_eq!(
            current_branch(&path).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
        let base = recorded_base(dir.path(), "agentic-sdlc/dark-mode").unwrap();
        assert_eq!(base, head_commit(dir.path()).unwrap());
        // The main working tree stays on its branch.
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));

        write(&path, "src/wip.rs", "work in progress\n");
        let reused = ensure_worktree(
            dir.path(),
            trees.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
        )
        .unwrap()
        .0;
        assert_eq!(reused, path);
        assert!(path.join("src/wip.rs").exists(), "reuse must keep the work");

        let listed: Vec<PathBuf> = list_worktrees(dir.path())
            .unwrap()
            .iter()
            .map(|p| fs_err::canonicalize(p).unwrap())
            .collect();
        assert_eq!(listed.len(), 2);
        assert!(listed.contains(&fs_err::canonicalize(&path).unwrap()));

        remove_worktree(dir.path(), &path).unwrap();
        assert!(!path.exists());
        assert_eq!(list_worktrees(dir.path()).unwrap().len(), 1);
        remove_worktree(dir.path(), &path).unwrap(); // already gone: fine
                                                     // The branch, and so the committed work, is kept; a new worktree picks it up again.
        let again = ensure_worktree(
            dir.path(),
            trees.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
        )
        .unwrap()
        .0;
        assert_eq!(
            current_branch(&again).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
    }

    #[test]
    fn worktree_folder_deleted_by_hand_is_recreated() {
        let dir = repo();
        let trees = tempfile::tempdir().unwrap();
        let path = ensure_worktree(
            dir.path(),
            trees.path(),
            "agentic-sdlc/a",
            "story-test",
            "main",
        )
        .unwrap()
        .0;
        fs_err::remove_dir_all(&path).unwrap();
        let again = ensure_worktree(
            dir.path(),
            trees.path(),
            "agentic-sdlc/a",
            "story-test",
            "main",
        )
        .unwrap()
        .0;
        assert!(is_repo(&again));
    }

    #[test]
    fn worktree_path_holding_something_else_is_refused() {
        let dir = repo();
        let trees = tempfile::tempdir().unwrap();
        write(trees.path(), "taken/file.txt", "mine\n");
        let error = ensure_worktree(
            dir.path(),
            trees.path(),
            "agentic-sdlc/taken",
            "story-test",
            "main",
        )
        .unwrap_err();
        assert!(
            matches!(error, GitError::WorktreePathTaken { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("not a worktree"), "{error}");
        assert!(trees.path().join("taken/file.txt").exists());
    }
}
