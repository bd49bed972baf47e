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

/// The conflicted files of a merge, after [`restart_from_base`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restart {
    /// Files that still hold their conflict markers.
    pub marked: Vec<String>,
    /// Files that now hold the base's version.
    pub restarted: Vec<RestartedFile>,
}

/// In `dir`, where a merge of the base is in progress, gives each conflicted file of `paths`
/// but those in `keep` the base's version (`MERGE_HEAD`'s) and marks it resolved, keeping the
/// story's change to each. A file of `keep`, and one the base side does not have (it deleted
/// it), keeps its markers.
pub fn restart_from_base(
    dir: &Path,
    paths: &[String],
    keep: &[String],
) -> Result<Restart, GitError> {
    let fork = text(&checked(git(dir, "merge-base").args(["HEAD", "MERGE_HEAD"]))?.stdout);
    let mut restart = Restart::default();
    for path in paths {
        if keep.contains(path) {
            restart.marked.push(path.clone());
            continue;
        }
        let story_change = text(
            &checked(git(dir, "diff").args(["--no-color", &fork, "HEAD", "--", path]))?.stdout,
        );
        let taken = run(git(dir, "checkout").args(["--theirs", "--", path]))?;
        if !taken.status.success() {
            restart.marked.push(path.clone());
            continue;
        }
        checked(git(dir, "add").args(["--", path]))?;
        restart.restarted.push(RestartedFile {
            path: path.clone(),
            story_change,
        });
    }
    Ok(restart)
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
        write(dir, "test_total.py", "assert total() == 1\n");
        sh(dir, &["add", "."]);
        sh(dir, &["commit", "-q", "-m", "Story"]);
        sh(dir, &["switch", "-q", "main"]);
        write(dir, "cart.py", "def total():\n    return 2\n");
        write(dir, "test_total.py", "assert total() == 2\n");
        sh(dir, &["add", "."]);
        sh(dir, &["commit", "-q", "-m", "Teammate"]);
        sh(dir, &["switch", "-q", "story"]);
        let outcome = merge_into_checkout(dir, "main", "Merge main").unwrap();
        let MergeOutcome::Conflicted(files) = outcome else {
            panic!("{outcome:?}")
        };
        assert_eq!(files, ["cart.py", "test_total.py"]);

        // test_total.py is the story's acceptance test: it keeps its markers.
        let Restart { marked, restarted } =
            restart_from_base(dir, &files, &["test_total.py".into()]).unwrap();

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
        assert_eq!(marked, ["test_total.py"]);
        let kept = std::fs::read_to_string(dir.join("test_total.py")).unwrap();
        assert!(kept.contains("<<<<<<<"), "{kept}");
        // The others are resolved in the index, the story's other files stay, and the merge
        // can be committed once the kept file is.
        assert_eq!(
            sh(dir, &["diff", "--name-only", "--diff-filter=U"]),
            "test_total.py"
        );
        write(dir, "test_total.py", "assert total() == 1\n");
        sh(dir, &["add", "test_total.py"]);
        assert!(dir.join("tests_story.py").exists());
        sh(dir, &["commit", "-q", "--no-edit"]);
        assert_eq!(sh(dir, &["rev-list", "--count", "--merges", "HEAD"]), "1");
    }
}
