//! Story branches: creating them from the base, switching the shared tree, committing work.

use std::path::Path;
use std::process::Command;

use super::command::{checked, config_set, config_unset, git, git_with, optional, run, text};
use super::error::GitError;
use super::refs::{branch_tip, BRANCH_PREFIX};
use super::repo::{
    branch_exists, current_branch, dirty_tracked_paths, head_commit, normalize_ignore,
    whole_repo_pathspecs,
};

/// What `ensure_story_branch` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSwitch {
    pub branch: String,
    /// The branch did not exist and was created from the base's tip: that commit.
    pub created: Option<String>,
    /// The branch the tree was on before the switch (`None` when it already was on the story
    /// branch, or HEAD was detached), so the caller can go back to it.
    pub previous: Option<String>,
}

/// Per-branch config key holding the commit a story branch was created from. Git removes the
/// `branch.<name>` section with the branch, so a recreated branch never inherits a stale base.
const BASE_KEY: &str = "agentic-base";
/// Per-branch config key naming the story the tool made the branch for: a branch without it
/// (a person's, of the same name) is never adopted.
const STORY_KEY: &str = "agentic-story";
/// Identity used only when the repository has none, so a commit never fails on a fresh machine.
pub(super) const FALLBACK_IDENTITY: [&str; 2] = [
    "user.name=agentic-sdlc",
    "user.email=agentic-sdlc@localhost",
];

/// The base recorded when the story branch was created.
pub fn recorded_base(dir: &Path, branch: &str) -> Result<Option<String>, GitError> {
    let key = format!("branch.{branch}.{BASE_KEY}");
    optional(git(dir, "config").args(["--get", &key]))
}

pub fn record_base(dir: &Path, branch: &str, base: &str) -> Result<(), GitError> {
    let key = format!("branch.{branch}.{BASE_KEY}");
    config_set(dir, &[&key, base])?;
    Ok(())
}

pub fn story_branch(slug: &str) -> String {
    format!("{BRANCH_PREFIX}{slug}")
}

/// The story the tool made `branch` for, if it made it. Branches made before the tool
/// recorded the story count as made for `legacy_owner` when they carry the tool's base key.
pub fn branch_owner(
    dir: &Path,
    branch: &str,
    legacy_owner: Option<&str>,
) -> Result<Option<String>, GitError> {
    let key = format!("branch.{branch}.{STORY_KEY}");
    if let Some(owner) = optional(git(dir, "config").args(["--get", &key]))? {
        return Ok(Some(owner));
    }
    let made_by_tool = recorded_base(dir, branch)?.is_some();
    Ok(legacy_owner.filter(|_| made_by_tool).map(str::to_string))
}

/// Whether the tool made `branch` (for any story).
pub fn made_by_tool(dir: &Path, branch: &str) -> Result<bool, GitError> {
    Ok(branch_owner(dir, branch, None)?.is_some() || recorded_base(dir, branch)?.is_some())
}

/// A name for a new branch of story `story_id`: `agentic-sdlc/<slug>`, or `-2`, `-3`… when a
/// branch of that name exists that the tool did not make for this story.
pub fn free_story_branch(dir: &Path, slug: &str, story_id: &str) -> Result<String, GitError> {
    for n in 1.. {
        let name = match n {
            1 => story_branch(slug),
            n => story_branch(&format!("{slug}-{n}")),
        };
        if !branch_exists(dir, &name)?
            || branch_owner(dir, &name, None)?.as_deref() == Some(story_id)
        {
            return Ok(name);
        }
    }
    unreachable!("some suffix is always free")
}

/// Records that the tool made `branch` for `story_id`.
pub fn record_owner(dir: &Path, branch: &str, story_id: &str) -> Result<(), GitError> {
    let key = format!("branch.{branch}.{STORY_KEY}");
    config_set(dir, &[&key, story_id])?;
    Ok(())
}

/// The slugs of the story branches that exist (`agentic-sdlc/<slug>`), so that a new story
/// never takes a slug whose branch is someone else's work.
pub fn story_branch_slugs(dir: &Path) -> Result<Vec<String>, GitError> {
    let prefix = format!("refs/heads/{BRANCH_PREFIX}");
    let output = checked(
        git(dir, "for-each-ref")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .args(["--format=%(refname)", &prefix]),
    )?;
    Ok(text(&output.stdout)
        .lines()
        .filter_map(|name| name.strip_prefix(&prefix))
        .map(str::to_string)
        .collect())
}

/// The branch a story's work goes into: `configured` (git.baseBranch) when set, else the branch
/// checked out in `dir`. Refused when that is no branch at all (detached HEAD) or a story branch
/// (an interrupted run's checkout that recovery could not put back).
pub fn resolve_base(dir: &Path, configured: Option<&str>) -> Result<String, GitError> {
    if let Some(base) = configured {
        if !branch_exists(dir, base)? {
            return Err(GitError::BaseMissing {
                branch: base.to_string(),
            });
        }
        return Ok(base.to_string());
    }
    match current_branch(dir)? {
        None => Err(GitError::DetachedHead {
            dir: dir.to_path_buf(),
        }),
        Some(branch) if branch.starts_with(BRANCH_PREFIX) => Err(GitError::OnStoryBranch {
            dir: dir.to_path_buf(),
            branch,
        }),
        Some(branch) => Ok(branch),
    }
}

/// Puts the working tree on the story branch `branch`, creating it from the tip of `base` when
/// missing.
///
/// A switch is refused while tracked files outside `ignore` have changes, because checking out
/// another branch could carry or clobber the user's unfinished work, and while a merge or
/// rebase the user started is in progress. Untracked files stay where they are across the
/// switch (git refuses one that would overwrite them); the caller keeps them out of the
/// story's commits. The branch the tree was on is remembered in the repository's
/// config until [`switch_back`], so a run killed in between can put the user's checkout back.
pub fn ensure_story_branch(
    dir: &Path,
    branch: &str,
    owner: &str,
    base: &str,
    ignore: &[&Path],
) -> Result<BranchSwitch, GitError> {
    let branch = branch.to_string();
    let previous = current_branch(dir)?;
    if previous.as_deref() == Some(branch.as_str()) {
        return Ok(BranchSwitch {
            branch,
            created: None,
            previous: None,
        });
    }
    if head_commit(dir)?.is_none() {
        return Err(GitError::NoCommits {
            dir: dir.to_path_buf(),
        });
    }
    refuse_operation_in_progress(dir)?;
    let paths = dirty_tracked_paths(dir, ignore)?;
    if !paths.is_empty() {
        return Err(GitError::DirtyTree { branch, paths });
    }
    let start = branch_tip(dir, base)?.ok_or_else(|| GitError::BaseMissing {
        branch: base.to_string(),
    })?;
    let created = create_branch_if_missing(dir, &branch, owner, &start)?.then_some(start);
    if let Some(previous) = &previous {
        remember_return_branch(dir, previous)?;
    }
    checkout(dir, &branch)?;
    Ok(BranchSwitch {
        branch,
        created,
        previous,
    })
}

/// Config key holding the branch to go back to while the shared tree is on a story branch.
const RETURN_KEY: &str = "agentic-sdlc.returnTo";

fn remember_return_branch(dir: &Path, branch: &str) -> Result<(), GitError> {
    config_set(dir, &[RETURN_KEY, branch])?;
    Ok(())
}

/// The branch an interrupted run left the shared tree away from, if any.
pub fn remembered_return_branch(dir: &Path) -> Result<Option<String>, GitError> {
    optional(git(dir, "config").args(["--get", RETURN_KEY]))
}

/// Config key listing the untracked files a person had in the shared tree when the tool
/// switched it: after a crash, recovery leaves them out of what it commits.
const THEIRS_KEY: &str = "agentic-sdlc.personsFile";

/// Remembers `paths` as the person's, until [`switch_back`].
pub fn remember_persons_files(dir: &Path, paths: &[String]) -> Result<(), GitError> {
    config_unset(dir, &["--unset-all", THEIRS_KEY])?;
    for path in paths {
        config_set(dir, &["--add", THEIRS_KEY, path])?;
    }
    Ok(())
}

/// The person's untracked files an interrupted run had remembered.
pub fn remembered_persons_files(dir: &Path) -> Result<Vec<String>, GitError> {
    Ok(
        optional(git(dir, "config").args(["--get-all", THEIRS_KEY]))?
            .map(|text| text.lines().map(str::to_string).collect())
            .unwrap_or_default(),
    )
}

/// Checks `branch` out again after a story's action and forgets the remembered branch and
/// files.
pub fn switch_back(dir: &Path, branch: &str) -> Result<(), GitError> {
    checkout(dir, branch)?;
    // Exit 5 means the key was already gone, which is the state wanted.
    config_unset(dir, &["--unset", RETURN_KEY])?;
    config_unset(dir, &["--unset-all", THEIRS_KEY])?;
    Ok(())
}

/// Refuses to touch a tree where a merge, rebase, cherry-pick or revert is under way: it is
/// someone's unfinished work, and a checkout or merge would mix the tool's work into it.
pub fn refuse_operation_in_progress(dir: &Path) -> Result<(), GitError> {
    match operation_in_progress(dir)? {
        Some(operation) => Err(GitError::OperationInProgress {
            dir: dir.to_path_buf(),
            operation,
        }),
        None => Ok(()),
    }
}

/// The git operation under way in `dir`'s working tree, by the state files git keeps for it.
pub fn operation_in_progress(dir: &Path) -> Result<Option<&'static str>, GitError> {
    const MARKERS: [(&str, &str); 5] = [
        ("rebase-merge", "rebase"),
        ("rebase-apply", "rebase"),
        ("MERGE_HEAD", "merge"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
    ];
    for (marker, operation) in MARKERS {
        let path = text(&checked(git(dir, "rev-parse").args(["--git-path", marker]))?.stdout);
        if dir.join(path).exists() {
            return Ok(Some(operation));
        }
    }
    Ok(None)
}

/// Checks out an existing branch. Changes outside the tool's own files must have been committed
/// first; git itself refuses a checkout that would overwrite them.
pub fn checkout(dir: &Path, branch: &str) -> Result<(), GitError> {
    checked(git(dir, "checkout").args(["--quiet", branch, "--"]))?;
    Ok(())
}

/// Creates `branch` at `head` for story `owner`, and records both: `head` as its base, so the
/// story's diff keeps its starting point across restarts, and the owner, so only that story
/// ever adopts it. Returns whether it was created.
pub(super) fn create_branch_if_missing(
    dir: &Path,
    branch: &str,
    owner: &str,
    head: &str,
) -> Result<bool, GitError> {
    if branch_exists(dir, branch)? {
        return Ok(false);
    }
    super::refs::moving_branch(dir, branch, || {
        checked(git(dir, "branch").args(["--quiet", branch, head]))
    })?;
    record_base(dir, branch, head)?;
    record_owner(dir, branch, owner)?;
    Ok(true)
}

/// Stages every change outside `ignore` and commits it. Returns the new commit, or `None` when
/// there was nothing to commit. Changes the user staged under `ignore` themselves stay staged and
/// are committed with the rest; the tool only never stages them on its own.
pub fn commit_all(dir: &Path, message: &str, ignore: &[&Path]) -> Result<Option<String>, GitError> {
    super::refs::moving_head(dir, || commit_all_now(dir, message, ignore))
}

fn commit_all_now(dir: &Path, message: &str, ignore: &[&Path]) -> Result<Option<String>, GitError> {
    let pathspecs = stage_all(dir, ignore)?;
    let staged = run(git(dir, "diff")
        .args(["--cached", "--quiet", "--"])
        .args(&pathspecs))?;
    // A merge being concluded is committed even when its result equals HEAD: the commit is
    // what records that the other side was merged.
    if staged.status.success() && operation_in_progress(dir)? != Some("merge") {
        return Ok(None);
    }
    // No hooks run (see `command::git`).
    checked(committing(dir, "commit")?.args(["--quiet", "-m", message]))?;
    head_commit(dir)
}

/// Stages every change outside `ignore`; returns the pathspecs that name the whole repository
/// without `ignore`.
pub(super) fn stage_all(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    let pathspecs = whole_repo_pathspecs(&ignored);
    // `git add` fails when a pathspec, even an excluding one, names a path `.gitignore`
    // ignores, as users often do with the board; those are never added anyway.
    let addable = without_gitignored(dir, ignored)?;
    checked(
        git(dir, "add")
            .args(["--all", "--"])
            .args(whole_repo_pathspecs(&addable)),
    )?;
    let nested = super::gitlinks::unstage_new_gitlinks(dir)?;
    if !nested.is_empty() {
        return Err(GitError::NestedRepository { paths: nested });
    }
    Ok(pathspecs)
}

/// The paths `.gitignore` does not ignore (tracked paths never are).
fn without_gitignored(dir: &Path, paths: Vec<String>) -> Result<Vec<String>, GitError> {
    if paths.is_empty() {
        return Ok(paths);
    }
    let output = run(git(dir, "check-ignore").args(["--"]).args(&paths))?;
    let ignored: Vec<String> = text(&output.stdout).lines().map(str::to_string).collect();
    Ok(paths
        .into_iter()
        .filter(|path| !ignored.contains(path))
        .collect())
}

/// A git command that makes commits: with the repository's identity, or the tool's own where
/// none is configured.
pub(super) fn committing(dir: &Path, subcommand: &str) -> Result<Command, GitError> {
    let identity: &[&str] = if identity_configured(dir)? {
        &[]
    } else {
        &FALLBACK_IDENTITY
    };
    Ok(git_with(dir, identity, subcommand))
}

fn identity_configured(dir: &Path) -> Result<bool, GitError> {
    for key in ["user.name", "user.email"] {
        let value = optional(git(dir, "config").args(["--get", key]))?;
        if value.is_none_or(|value| value.is_empty()) {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::error::dirty_message;
    use crate::vcs::test_support::*;
    use crate::vcs::*;

    #[test]
    fn the_slugs_of_story_branches_are_listed() {
        let dir = repo();
        assert!(story_branch_slugs(dir.path()).unwrap().is_empty());
        sh(dir.path(), &["branch", "agentic-sdlc/dark-mode"]);
        sh(dir.path(), &["branch", "agentic-sdlc/nested/name"]);
        sh(dir.path(), &["branch", "feature/other"]);
        let mut slugs = story_branch_slugs(dir.path()).unwrap();
        slugs.sort();
        assert_eq!(slugs, ["dark-mode", "nested/name"]);
    }

    #[test]
    fn story_branch_is_created_from_the_base_tip_with_its_start_recorded() {
        let dir = repo();
        let head = head_commit(dir.path()).unwrap();
        let switch = ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap();
        assert_eq!(
            switch,
            BranchSwitch {
                branch: "agentic-sdlc/dark-mode".into(),
                created: Some(head.clone().unwrap()),
                previous: Some("main".into()),
            }
        );
        let recorded = |d: &Path| recorded_base(d, "agentic-sdlc/dark-mode").unwrap();
        assert_eq!(recorded(dir.path()), head);
        assert_eq!(
            remembered_return_branch(dir.path()).unwrap().as_deref(),
            Some("main")
        );
        assert_eq!(
            current_branch(dir.path()).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
        // Already on it: nothing happens, and the base survives (it lives in git config).
        let again = ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap();
        assert_eq!(again.created, None);
        assert_eq!(recorded(dir.path()), head);
        // Back from another branch: the existing branch is checked out, not recreated.
        sh(dir.path(), &["checkout", "-q", "main"]);
        let back = ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap();
        assert_eq!(back.created, None);
        assert_eq!(recorded(dir.path()), head);
        assert_eq!(
            current_branch(dir.path()).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
        switch_back(dir.path(), "main").unwrap();
        assert_eq!(remembered_return_branch(dir.path()).unwrap(), None);
    }

    #[test]
    fn the_base_is_the_configured_branch_or_the_checked_out_one() {
        let dir = repo();
        assert_eq!(resolve_base(dir.path(), None).unwrap(), "main");
        let missing = resolve_base(dir.path(), Some("develop")).unwrap_err();
        assert!(matches!(missing, GitError::BaseMissing { .. }), "{missing}");
        assert!(
            crate::hint::told(&missing).contains("git.baseBranch"),
            "{missing}"
        );
        sh(dir.path(), &["branch", "develop"]);
        assert_eq!(
            resolve_base(dir.path(), Some("develop")).unwrap(),
            "develop"
        );
        sh(dir.path(), &["checkout", "-q", "--detach"]);
        let detached = resolve_base(dir.path(), None).unwrap_err();
        assert!(detached.to_string().contains("detached"), "{detached}");
    }

    #[test]
    fn a_story_branch_starts_at_the_base_tip_not_at_head() {
        let dir = repo();
        sh(dir.path(), &["checkout", "-q", "-b", "develop"]);
        write(dir.path(), "src/develop.rs", "fn develop() {}\n");
        sh(dir.path(), &["add", "-A"]);
        sh(dir.path(), &["commit", "-q", "-m", "develop only"]);
        sh(dir.path(), &["checkout", "-q", "main"]);
        ensure_story_branch(
            dir.path(),
            "agentic-sdlc/s",
            "story-test",
            "develop",
            &board(),
        )
        .unwrap();
        assert!(dir.path().join("src/develop.rs").exists());
    }

    #[test]
    fn commit_all_works_when_the_board_is_gitignored() {
        let dir = repo();
        write(
            dir.path(),
            ".gitignore",
            ".agentic-sdlc/\n.agentic-sdlc.json\n",
        );
        sh(
            dir.path(),
            &[
                "rm",
                "-q",
                "-r",
                "--cached",
                ".agentic-sdlc",
                ".agentic-sdlc.json",
            ],
        );
        sh(dir.path(), &["add", ".gitignore"]);
        sh(
            dir.path(),
            &["commit", "-q", "-m", "keep the board out of git"],
        );
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        write(dir.path(), ".agentic-sdlc/ready/new.md", "# New\n");
        let commit = commit_all(dir.path(), "work", &board()).unwrap();
        assert!(commit.is_some());
        let files = sh(dir.path(), &["show", "--name-only", "--format=", "HEAD"]);
        assert!(
            files.contains("src/lib.rs") && !files.contains(".agentic-sdlc/"),
            "{files}"
        );
    }

    #[test]
    fn a_merge_the_user_started_is_never_touched() {
        let dir = repo();
        sh(dir.path(), &["checkout", "-q", "-b", "other"]);
        write(dir.path(), "src/lib.rs", "fn other() {}\n");
        sh(dir.path(), &["commit", "-q", "-am", "other"]);
        sh(dir.path(), &["checkout", "-q", "main"]);
        write(dir.path(), "src/lib.rs", "fn mine() {}\n");
        sh(dir.path(), &["commit", "-q", "-am", "mine"]);
        let _ = run(git(dir.path(), "merge").arg("other"));
        let error = ensure_story_branch(dir.path(), "agentic-sdlc/s", "story-test", "main", &[])
            .unwrap_err();
        assert!(
            error.to_string().contains("a merge is in progress"),
            "{error}"
        );
        assert_eq!(operation_in_progress(dir.path()).unwrap(), Some("merge"));
    }

    #[test]
    fn story_branch_is_refused_on_a_dirty_tree() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn unsaved_work() {}\n");
        let error = ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap_err();
        assert!(
            matches!(&error, GitError::DirtyTree { paths, .. } if paths == &["src/lib.rs"]),
            "{error:?}"
        );
        let message = crate::hint::told(&error);
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
        let switch = ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap();
        assert!(switch.created.is_some());
        // The board edits came along untouched.
        let story = fs_err::read_to_string(dir.path().join(".agentic-sdlc/backlog/story.md"));
        assert_eq!(story.unwrap(), "# Story\nstatus\n");
    }

    #[test]
    fn story_branch_needs_a_first_commit() {
        let dir = unborn_repo();
        let error =
            ensure_story_branch(dir.path(), "agentic-sdlc/x", "story-test", "main", &board())
                .unwrap_err();
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
