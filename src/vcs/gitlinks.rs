//! Nested repositories and gitlinks (docs/design.md §22, "No nested repositories").
//!
//! A repository inside a story's tree carries its own configuration (`core.fsmonitor`, say),
//! which git runs whenever it looks inside it, and once committed as a gitlink it reaches the
//! base and every clone. The guard removes such a repository after each boxed process
//! (`workflow/guard.rs`); here the tool never stages a gitlink the commit before did not have, and never merges a branch that adds one.

use std::collections::BTreeSet;
use std::path::Path;

use super::command::{checked, git, optional};
use super::error::GitError;
use super::refs::branch_tip;

/// Git's mode for a gitlink: a commit of another repository recorded in a tree.
const GITLINK_MODE: &str = "160000";

/// The paths of the gitlinks in commit `rev`.
fn gitlinks_in(dir: &Path, rev: &str) -> Result<BTreeSet<String>, GitError> {
    let output = checked(git(dir, "ls-tree").args(["-r", "-z", "--full-tree", rev]))?;
    Ok(gitlink_paths(&output.stdout))
}

/// The gitlinks of a NUL-separated listing whose entries are `<mode> … \t<path>`
/// (`ls-tree -z`, `ls-files --stage -z`).
fn gitlink_paths(listing: &[u8]) -> BTreeSet<String> {
    listing
        .split(|byte| *byte == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (meta, path) = entry.split_once('\t')?;
            meta.starts_with(GITLINK_MODE).then(|| path.to_string())
        })
        .collect()
}

/// The gitlinks the tip of `story` has that its fork point from `base` did not.
pub fn story_gitlinks(dir: &Path, story: &str, base: &str) -> Result<Vec<String>, GitError> {
    let (Some(story_tip), Some(base_tip)) = (branch_tip(dir, story)?, branch_tip(dir, base)?)
    else {
        return Ok(Vec::new());
    };
    let Some(fork) = optional(git(dir, "merge-base").args([&base_tip, &story_tip]))? else {
        return Ok(Vec::new());
    };
    let before = gitlinks_in(dir, &fork)?;
    Ok(gitlinks_in(dir, &story_tip)?
        .into_iter()
        .filter(|path| !before.contains(path))
        .collect())
}

/// Takes out of the index every gitlink that HEAD does not have (a nested repository that
/// `git add --all` just staged), and names them.
pub(super) fn unstage_new_gitlinks(dir: &Path) -> Result<Vec<String>, GitError> {
    let output = checked(git(dir, "ls-files").args(["--stage", "-z"]))?;
    let staged = gitlink_paths(&output.stdout);
    if staged.is_empty() {
        return Ok(Vec::new());
    }
    let before = match super::repo::head_commit(dir)? {
        Some(head) => gitlinks_in(dir, &head)?,
        None => BTreeSet::new(),
    };
    let new: Vec<String> = staged.difference(&before).cloned().collect();
    if !new.is_empty() {
        checked(
            git(dir, "update-index")
                .args(["--force-remove", "--"])
                .args(&new),
        )?;
    }
    Ok(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;
    use crate::vcs::*;

    fn nested_repo(dir: &Path, at: &str) {
        let inner = dir.join(at);
        fs_err::create_dir_all(&inner).unwrap();
        sh(&inner, &["init", "-q", "-b", "main"]);
        write(&inner, "x.txt", "x\n");
        sh(&inner, &["add", "x.txt"]);
        sh(
            &inner,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@e",
                "commit",
                "-q",
                "-m",
                "x",
            ],
        );
    }

    #[test]
    fn a_nested_repository_is_found_and_never_committed() {
        let dir = repo();
        nested_repo(dir.path(), "vendor/helper");
        write(dir.path(), "src/ok.rs", "fn ok() {}\n");
        let err = commit_all(dir.path(), "work", &board()).unwrap_err();
        assert!(err.to_string().contains("vendor/helper"), "{err}");
        let staged = sh(dir.path(), &["ls-files", "--stage"]);
        assert!(!staged.contains("160000"), "{staged}");
        assert!(!staged.contains("vendor/helper"), "{staged}");
    }

    #[test]
    fn a_branch_that_adds_a_gitlink_is_named() {
        let dir = repo();
        ensure_story_branch(dir.path(), "agentic-sdlc/s", "story-s", "main", &board()).unwrap();
        nested_repo(dir.path(), "vendor/helper");
        // As a person (or an older build) could have committed it, bypassing the tool.
        sh(dir.path(), &["add", "vendor/helper"]);
        sh(dir.path(), &["commit", "-q", "-m", "link"]);
        assert_eq!(
            story_gitlinks(dir.path(), "agentic-sdlc/s", "main").unwrap(),
            vec!["vendor/helper".to_string()]
        );
    }
}
