//! Conflicted files of a merge in progress, made the base's again (docs/design.md §12). When
//! the base's latest work conflicts with a story's on a line both changed, the implementer used
//! to get the files with `<<<<<<<` blocks to resolve; a 1.5B model writing whole files failed
//! that three rounds in a row and the story was parked (a drive, 2026-12-06). Each conflicted
//! file now takes the base's version, and the story's own change to it is kept as a diff, for
//! the implementer to make again on the file as it now is.

use std::path::Path;

use super::command::{checked, git, run, text};
use super::error::GitError;

/// A conflicted file that now holds the base's version, with the change the story had made to
/// it since its fork.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartedFile {
    pub path: String,
    /// `git diff` of the file from the fork to the story's last commit.
    pub story_change: String,
}

/// In `dir`, where a merge of the base is in progress, gives each conflicted file of `paths`
/// the base's version (`MERGE_HEAD`'s) and marks it resolved; returns those files with the
/// story's change to each. A file the base side does not have (it deleted it) keeps its
/// markers and is not returned.
pub fn restart_from_base(dir: &Path, paths: &[String]) -> Result<Vec<RestartedFile>, GitError> {
    let fork = text(&checked(git(dir, "merge-base").args(["HEAD", "MERGE_HEAD"]))?.stdout);
    let mut restarted = Vec::new();
    for path in paths {
        let story_change = text(
            &checked(git(dir, "diff").args(["--no-color", &fork, "HEAD", "--", path]))?.stdout,
        );
        let taken = run(git(dir, "checkout").args(["--theirs", "--", path]))?;
        if !taken.status.success() {
            continue;
        }
        checked(git(dir, "add").args(["--", path]))?;
        restarted.push(RestartedFile {
            path: path.clone(),
            story_change,
        });
    }
    Ok(restarted)
}

#[cfg(test)]
mod tests {
    use super::super::integration::{merge_into_checkout, MergeOutcome};
    use super::super::test_support::{repo, sh, write};
    use super::*;

    #[test]
    fn a_conflicted_file_takes_the_base_version_and_keeps_the_story_change_as_a_diff() {
        let dir = repo();
        let dir = dir.path();
        write(dir, "cart.py", "def total():\n    return 0\n");
        sh(dir, &["add", "."]);
        sh(dir, &["commit", "-q", "-m", "A cart"]);
        sh(dir, &["switch", "-q", "-c", "story"]);
        write(dir, "cart.py", "def total():\n    return 1\n");
        write(dir, "tests_story.py", "assert True\n");
        sh(dir, &["add", "."]);
        sh(dir, &["commit", "-q", "-m", "Story"]);
        sh(dir, &["switch", "-q", "main"]);
        write(dir, "cart.py", "def total():\n    return 2\n");
        sh(dir, &["commit", "-q", "-am", "Teammate"]);
        sh(dir, &["switch", "-q", "story"]);
        let outcome = merge_into_checkout(dir, "main", "Merge main").unwrap();
        assert_eq!(outcome, MergeOutcome::Conflicted(vec!["cart.py".into()]));

        let restarted = restart_from_base(dir, &["cart.py".into()]).unwrap();

        assert_eq!(restarted.len(), 1);
        assert_eq!(restarted[0].path, "cart.py");
        assert!(
            restarted[0]
                .story_change
                .contains("-    return 0\n+    return 1"),
            "{}",
            restarted[0].story_change
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("cart.py")).unwrap(),
            "def total():\n    return 2\n"
        );
        // Resolved in the index; the story's other files stay, and the merge can be committed.
        assert!(sh(dir, &["diff", "--name-only", "--diff-filter=U"]).is_empty());
        assert!(dir.join("tests_story.py").exists());
        sh(dir, &["commit", "-q", "--no-edit"]);
        assert_eq!(sh(dir, &["rev-list", "--count", "--merges", "HEAD"]), "1");
    }
}
