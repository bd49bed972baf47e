//! Story branches: creating them from the base, switching the shared tree, committing work.

use std::path::Path;

use super::command::{checked, git, optional, run};
use super::repo::{
    branch_exists, current_branch, dirty_paths, head_commit, normalize_ignore, whole_repo_pathspecs,
};
use super::{BranchSwitch, GitError};

/// Story branches live under this prefix so they are easy to find and clean up.
pub const BRANCH_PREFIX: &str = "agentic-sdlc/";
/// Per-branch config key holding the commit a story branch was created from. Git removes the
/// `branch.<name>` section with the branch, so a recreated branch never inherits a stale base.
const BASE_KEY: &str = "agentic-base";
/// Identity used only when the repository has none, so a commit never fails on a fresh machine.
const FALLBACK_IDENTITY: [&str; 4] = [
    "-c",
    "user.name=agentic-sdlc",
    "-c",
    "user.email=agentic-sdlc@localhost",
];

/// The base recorded when the story branch was created.
pub fn recorded_base(dir: &Path, branch: &str) -> Result<Option<String>, GitError> {
    let key = format!("branch.{branch}.{BASE_KEY}");
    optional(git(dir).args(["config", "--get", &key]))
}

pub(super) fn record_base(dir: &Path, branch: &str, base: &str) -> Result<(), GitError> {
    let key = format!("branch.{branch}.{BASE_KEY}");
    checked(git(dir).args(["config", &key, base]))?;
    Ok(())
}

pub fn story_branch(slug: &str) -> String {
    format!("{BRANCH_PREFIX}{slug}")
}

/// Puts the working tree on `agentic-sdlc/<slug>`, creating it from HEAD when missing.
///
/// A switch is refused while there are changes outside `ignore`, because checking out another
/// branch could carry or clobber the user's unfinished work.
pub fn ensure_story_branch(
    dir: &Path,
    slug: &str,
    ignore: &[&Path],
) -> Result<BranchSwitch, GitError> {
    let branch = story_branch(slug);
    let previous = current_branch(dir)?;
    if previous.as_deref() == Some(branch.as_str()) {
        let base = recorded_base(dir, &branch)?;
        return Ok(BranchSwitch {
            branch,
            created: false,
            base,
            previous: None,
        });
    }
    let head = head_commit(dir)?.ok_or_else(|| GitError::NoCommits {
        dir: dir.to_path_buf(),
    })?;
    let paths = dirty_paths(dir, ignore)?;
    if !paths.is_empty() {
        return Err(GitError::DirtyTree { branch, paths });
    }
    let created = create_branch_if_missing(dir, &branch, &head)?;
    checkout(dir, &branch)?;
    let base = recorded_base(dir, &branch)?;
    Ok(BranchSwitch {
        branch,
        created,
        base,
        previous,
    })
}

/// Checks out an existing branch. Changes outside the tool's own files must have been committed
/// first; git itself refuses a checkout that would overwrite them.
pub fn checkout(dir: &Path, branch: &str) -> Result<(), GitError> {
    checked(git(dir).args(["checkout", "--quiet", branch, "--"]))?;
    Ok(())
}

/// Creates `branch` at `head` and records `head` as its base, so the story's diff keeps its
/// starting point across restarts. Returns whether it was created.
pub(super) fn create_branch_if_missing(
    dir: &Path,
    branch: &str,
    head: &str,
) -> Result<bool, GitError> {
    if branch_exists(dir, branch)? {
        return Ok(false);
    }
    checked(git(dir).args(["branch", "--quiet", branch, head]))?;
    record_base(dir, branch, head)?;
    Ok(true)
}

/// Stages every change outside `ignore` and commits it. Returns the new commit, or `None` when
/// there was nothing to commit. Changes the user staged under `ignore` themselves stay staged and
/// are committed with the rest; the tool only never stages them on its own.
pub fn commit_all(dir: &Path, message: &str, ignore: &[&Path]) -> Result<Option<String>, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    let pathspecs = whole_repo_pathspecs(&ignored);
    checked(git(dir).args(["add", "--all", "--"]).args(&pathspecs))?;
    let staged = run(git(dir)
        .args(["diff", "--cached", "--quiet", "--"])
        .args(&pathspecs))?;
    if staged.status.success() {
        return Ok(None);
    }
    let mut commit = git(dir);
    if !identity_configured(dir)? {
        commit.args(FALLBACK_IDENTITY);
    }
    // Hooks run: a repository's pre-commit policy applies to the tool as to anyone.
    checked(commit.args(["commit", "--quiet", "-m", message]))?;
    head_commit(dir)
}

pub(super) fn identity_configured(dir: &Path) -> Result<bool, GitError> {
    for key in ["user.name", "user.email"] {
        let value = optional(git(dir).args(["config", "--get", key]))?;
        if value.is_none_or(|value| value.is_empty()) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;
    use crate::vcs::*;

    #[test]
    fn story_branch_is_created_from_head_with_its_base_recorded() {
        let dir = repo();
        let head = head_commit(dir.path()).unwrap();
        let switch = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert_eq!(
            switch,
            BranchSwitch {
                branch: "agentic-sdlc/dark-mode".into(),
                created: true,
                base: head.clone(),
                previous: Some("main".into()),
            }
        );
        assert_eq!(
            current_branch(dir.path()).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
        // Already on it: nothing happens, and the base survives (it lives in git config).
        let again = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert!(!again.created);
        assert_eq!(again.base, head);
        // Back from another branch: the existing branch is checked out, not recreated.
        sh(dir.path(), &["checkout", "-q", "main"]);
        let back = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert!(!back.created);
        assert_eq!(back.base, head);
        assert_eq!(
            current_branch(dir.path()).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
    }

    #[test]
    fn story_branch_is_refused_on_a_dirty_tree() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn unsaved_work() {}\n");
        let error = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap_err();
        assert!(
            matches!(&error, GitError::DirtyTree { paths, .. } if paths == &["src/lib.rs"]),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("agentic-sdlc/dark-mode"), "{message}");
        assert!(message.contains("src/lib.rs"), "{message}");
        assert!(message.contains("commit or stash them"), "{message}");
        assert!(message.contains("git.branchPerStory to false"), "{message}");
        // The user's work is where it was.
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));
        let content = fs_err::read_to_string(dir.path().join("src/lib.rs")).unwrap();
        assert_eq!(content, "fn unsaved_work() {}\n");
    }

    #[test]
    fn dirty_tree_message_lists_at_most_ten_paths() {
        let paths: Vec<String> = (0..13).map(|n| format!("file{n}")).collect();
        let message = dirty_message("agentic-sdlc/x", &paths);
        assert!(message.contains("13 path(s)"));
        assert!(message.contains("file9"));
        assert!(!message.contains("file10"));
        assert!(message.contains("… and 3 more"));
    }

    #[test]
    fn board_changes_do_not_block_the_story_branch() {
        let dir = repo();
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nstatus\n",
        );
        write(
            dir.path(),
            ".agentic-sdlc/in-progress/other.md",
            "# Other\n",
        );
        write(dir.path(), CONFIG, "{\"theme\": \"dark\"}\n");
        let switch = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert!(switch.created);
        // The board edits came along untouched.
        let story = fs_err::read_to_string(dir.path().join(".agentic-sdlc/backlog/story.md"));
        assert_eq!(story.unwrap(), "# Story\nstatus\n");
    }

    #[test]
    fn story_branch_needs_a_first_commit() {
        let dir = unborn_repo();
        let error = ensure_story_branch(dir.path(), "x", &board()).unwrap_err();
        assert!(matches!(error, GitError::NoCommits { .. }), "{error:?}");
        assert!(error.to_string().contains("no commits yet"));
    }
    #[test]
    fn commit_all_commits_everything_but_the_board() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        write(dir.path(), "src/new.rs", "fn new() {}\n");
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nboard\n",
        );
        let sha = commit_all(dir.path(), "Implement the story", &board()).unwrap();
        assert_eq!(sha, head_commit(dir.path()).unwrap());
        let files = sh(
            dir.path(),
            &["show", "--name-only", "--format=%an|%s", "HEAD"],
        );
        assert_eq!(
            files,
            "Test Person|Implement the story\n\nsrc/lib.rs\nsrc/new.rs"
        );
        assert_eq!(
            dirty_paths(dir.path(), &[]).unwrap(),
            [".agentic-sdlc/backlog/story.md"]
        );
        assert_eq!(commit_all(dir.path(), "again", &board()).unwrap(), None);
    }

    #[test]
    fn commit_all_falls_back_to_its_own_identity() {
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), &["init", "-q", "-b", "main"]);
        write(dir.path(), "a.txt", "a\n");
        let sha = commit_all(dir.path(), "first", &[]).unwrap();
        assert!(sha.is_some());
        let author = sh(dir.path(), &["log", "-1", "--format=%an <%ae>"]);
        assert_eq!(author, "agentic-sdlc <agentic-sdlc@localhost>");
    }
}
