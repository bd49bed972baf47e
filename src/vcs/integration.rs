//! Delivering a story into its base branch (docs/design.md §12), by the "not rocket science" rule:
//! the base only ever moves, as a fast-forward, to a commit whose tree was tested as merged.
//!
//! The merge that is tested is computed with `git merge-tree`, which touches no working tree and
//! no index, so a conflict leaves nothing half done anywhere. The only merge that does run in a
//! working tree is the one that brings the base into a story branch for its implement agent to
//! resolve; [`conclude_merge`] commits it only once no conflict marker is left, and
//! [`abort_merge`] puts the tree back otherwise.

use std::path::{Path, PathBuf};

use super::branches::committing;
use super::command::{checked, git, optional, run, text};
use super::error::GitError;
use super::joined_additions::joined_tree;
use super::refs::branch_tip;
use super::repo::dirty_paths;
use super::worktrees::worktree_entries;

/// Base commits listed per conflicting file in a rework's instructions.
const COMMITS_PER_FILE: usize = 5;

/// A file both sides changed in ways git cannot combine, with the base commits that touched it
/// since the story branched off (`<short sha> <subject>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub path: String,
    pub base_commits: Vec<String>,
}

/// What bringing the base's tip into a story's work gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integration {
    /// A merge commit (first parent the base, second the story) whose tree is the two combined;
    /// `joined`: the files whose conflicts were only lines both sides added at one place, each
    /// joined the base's first (`joined_additions`).
    Merged {
        commit: String,
        base_tip: String,
        joined: Vec<String>,
    },
    /// The base already holds the story's work (a run killed after advancing it, or a merge by
    /// hand); `commit` is the story's tip.
    AlreadyMerged { commit: String },
    /// Nothing was written anywhere.
    Conflicts(Vec<Conflict>),
}

/// Computes the merge of `base`'s tip and `story`'s tip without touching any working tree, and
/// on success writes it as a commit that no branch points at yet.
pub fn integrate(
    dir: &Path,
    story: &str,
    base: &str,
    message: &str,
) -> Result<Integration, GitError> {
    let base_tip = branch_tip(dir, base)?.ok_or_else(|| GitError::BaseMissing {
        branch: base.to_string(),
    })?;
    integrate_onto(dir, story, &base_tip, message)
}

/// [`integrate`] onto the commit `base_tip` rather than a local branch's tip: the base's tip
/// on a shared remote, say.
pub fn integrate_onto(
    dir: &Path,
    story: &str,
    base_tip: &str,
    message: &str,
) -> Result<Integration, GitError> {
    let story_tip = branch_tip(dir, story)?.ok_or_else(|| GitError::StoryBranchMissing {
        branch: story.to_string(),
    })?;
    let base_tip = base_tip.to_string();
    if is_ancestor(dir, &story_tip, &base_tip)? {
        return Ok(Integration::AlreadyMerged { commit: story_tip });
    }
    let merged = run(git(dir, "merge-tree").args([
        "--write-tree",
        "--name-only",
        "--no-messages",
        &base_tip,
        &story_tip,
    ]))?;
    let stdout = text(&merged.stdout);
    let mut lines = stdout.lines();
    let mut tree = lines.next().unwrap_or_default().to_string();
    let mut joined = Vec::new();
    match merged.status.code() {
        Some(0) => {}
        Some(1) => {
            let fork = merge_base(dir, &base_tip, &story_tip)?;
            let mut paths: Vec<String> = Vec::new();
            for path in lines.filter(|line| !line.is_empty()) {
                if !paths.iter().any(|known| known == path) {
                    paths.push(path.to_string());
                }
            }
            let joined_tree = match fork.as_deref() {
                Some(fork) => joined_tree(dir, &tree, fork, &base_tip, &story_tip, &paths)?,
                None => None,
            };
            match joined_tree {
                Some(joined_tree) => {
                    tree = joined_tree;
                    joined = paths;
                }
                None => {
                    let mut conflicts = Vec::new();
                    for path in paths {
                        let base_commits =
                            commits_touching(dir, fork.as_deref(), &base_tip, &path)?;
                        conflicts.push(Conflict { path, base_commits });
                    }
                    return Ok(Integration::Conflicts(conflicts));
                }
            }
        }
        _ => {
            return Err(GitError::Failed {
                command: format!("git merge-tree --write-tree {base_tip} {story_tip}"),
                status: merged.status.to_string(),
                stderr: text(&merged.stderr),
            })
        }
    }
    let output = checked(
        committing(dir, "commit-tree")?
            .args([&tree, "-p", &base_tip, "-p", &story_tip, "-m", message]),
    )?;
    Ok(Integration::Merged {
        commit: text(&output.stdout),
        base_tip,
        joined,
    })
}

/// Whether `into` already holds every commit of `branch`.
pub fn is_merged(dir: &Path, branch: &str, into: &str) -> Result<bool, GitError> {
    match (branch_tip(dir, branch)?, branch_tip(dir, into)?) {
        (Some(branch), Some(into)) => is_ancestor(dir, &branch, &into),
        _ => Ok(false),
    }
}

/// The files `story` changes since it forked from `base` (what a merge would bring in).
pub fn story_changes(dir: &Path, story: &str, base: &str) -> Result<Vec<String>, GitError> {
    let (Some(story_tip), Some(base_tip)) = (branch_tip(dir, story)?, branch_tip(dir, base)?)
    else {
        return Ok(Vec::new());
    };
    let Some(fork) = merge_base(dir, &base_tip, &story_tip)? else {
        return Ok(Vec::new());
    };
    changed_files(dir, &fork, &story_tip)
}

/// Commits on `branch` since `start` that do not descend from `start`: history the tool did not
/// make there (an unrelated branch merged in, a rewrite). Empty when all is as expected.
pub fn commits_not_from(dir: &Path, start: &str, branch: &str) -> Result<Vec<String>, GitError> {
    let range = format!("{start}..refs/heads/{branch}");
    let all = checked(git(dir, "rev-list").args([&range]))?;
    let descendants = checked(git(dir, "rev-list").args(["--ancestry-path", &range]))?;
    let descendants = text(&descendants.stdout);
    let descendants: Vec<&str> = descendants.lines().collect();
    Ok(text(&all.stdout)
        .lines()
        .filter(|commit| !descendants.contains(commit))
        .map(str::to_string)
        .collect())
}

/// Whether `descendant` holds `ancestor` (or is it).
pub fn descends_from(dir: &Path, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
    is_ancestor(dir, ancestor, descendant)
}

fn is_ancestor(dir: &Path, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
    let answer = optional(git(dir, "merge-base").args(["--is-ancestor", ancestor, descendant]))?;
    Ok(answer.is_some())
}

fn merge_base(dir: &Path, one: &str, other: &str) -> Result<Option<String>, GitError> {
    optional(git(dir, "merge-base").args([one, other]))
}

/// The base commits since the fork point that changed `path`, newest first.
fn commits_touching(
    dir: &Path,
    fork: Option<&str>,
    base_tip: &str,
    path: &str,
) -> Result<Vec<String>, GitError> {
    let range = match fork {
        Some(fork) => format!("{fork}..{base_tip}"),
        None => base_tip.to_string(),
    };
    let limit = format!("--max-count={COMMITS_PER_FILE}");
    let output = checked(git(dir, "log").args(["--format=%h %s", &limit, &range, "--", path]))?;
    Ok(text(&output.stdout).lines().map(str::to_string).collect())
}

/// Moves the branch checked out in `dir` forward to `commit` (which must descend from it),
/// working tree included.
pub fn fast_forward_checkout(dir: &Path, commit: &str) -> Result<(), GitError> {
    super::refs::moving_head(dir, || {
        checked(git(dir, "merge").args(["--ff-only", "--quiet", commit]))
    })?;
    Ok(())
}

/// Why the base did not move.
#[derive(Debug)]
pub enum AdvanceRefused {
    /// Someone committed to the base since it was integrated: integrate again.
    Moved,
    Error(GitError),
}

impl From<GitError> for AdvanceRefused {
    fn from(error: GitError) -> Self {
        AdvanceRefused::Error(error)
    }
}

/// Fast-forwards `base` from `old_tip` to `new_tip`. Where the base is checked out, that
/// working tree moves with it, and it is refused (nothing moved) when it has uncommitted changes
/// to files the move would change, or an operation of the user's in progress. Elsewhere the
/// branch is moved with a compare-and-swap, so a commit made meanwhile is never lost. Either
/// way the branch ref changes in one atomic step: a kill leaves it at the old tip or the new.
pub fn advance_base(
    repo: &Path,
    base: &str,
    old_tip: &str,
    new_tip: &str,
    ignore: &[&Path],
) -> Result<(), AdvanceRefused> {
    super::refs::moving_branch(repo, base, || {
        advance_base_now(repo, base, old_tip, new_tip, ignore)
    })
}

fn advance_base_now(
    repo: &Path,
    base: &str,
    old_tip: &str,
    new_tip: &str,
    ignore: &[&Path],
) -> Result<(), AdvanceRefused> {
    if branch_tip(repo, base)?.as_deref() != Some(old_tip) {
        return Err(AdvanceRefused::Moved);
    }
    let checkout = worktree_entries(repo)?
        .into_iter()
        .find(|entry| entry.branch.as_deref() == Some(base))
        .map(|entry| entry.path);
    let Some(checkout) = checkout else {
        let reference = format!("refs/heads/{base}");
        let swapped = run(git(repo, "update-ref").args([&reference, new_tip, old_tip]))?;
        return if swapped.status.success() {
            Ok(())
        } else {
            Err(AdvanceRefused::Moved)
        };
    };
    super::branches::refuse_operation_in_progress(&checkout)?;
    let touched = changed_files(repo, old_tip, new_tip)?;
    let in_the_way: Vec<String> = dirty_paths(&checkout, ignore)?
        .into_iter()
        .filter(|path| touched.contains(path))
        .collect();
    if !in_the_way.is_empty() {
        return Err(AdvanceRefused::Error(GitError::DirtyBase {
            branch: base.to_string(),
            dir: checkout,
            paths: in_the_way,
        }));
    }
    fast_forward_checkout(&checkout, new_tip)?;
    Ok(())
}

fn changed_files(dir: &Path, from: &str, to: &str) -> Result<Vec<String>, GitError> {
    let output = checked(git(dir, "diff").args(["--name-only", "-z", from, to]))?;
    Ok(output
        .stdout
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect())
}

/// How many commits of `base` the story branch does not hold yet.
pub fn commits_behind(dir: &Path, branch: &str, base: &str) -> Result<Option<u32>, GitError> {
    let (Some(_), Some(_)) = (branch_tip(dir, branch)?, branch_tip(dir, base)?) else {
        return Ok(None);
    };
    let range = format!("refs/heads/{branch}..refs/heads/{base}");
    let output = checked(git(dir, "rev-list").args(["--count", &range]))?;
    Ok(text(&output.stdout).parse().ok())
}

/// What merging a branch into the checkout gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// The checkout already held it.
    UpToDate,
    /// Merged and committed.
    Merged,
    /// The merge stopped with these files conflicted; it is still in progress in the tree.
    Conflicted(Vec<String>),
}

/// Merges `rev` into the branch checked out in `dir` (always as a merge commit). On a conflict
/// the merge is left in progress, markers in the files, for the implement agent to resolve.
pub fn merge_into_checkout(dir: &Path, rev: &str, message: &str) -> Result<MergeOutcome, GitError> {
    super::refs::moving_head(dir, || merge_into_checkout_now(dir, rev, message))
}

fn merge_into_checkout_now(dir: &Path, rev: &str, message: &str) -> Result<MergeOutcome, GitError> {
    let head = super::repo::head_commit(dir)?.unwrap_or_default();
    if is_ancestor(dir, rev, &head)? {
        return Ok(MergeOutcome::UpToDate);
    }
    let output = run(committing(dir, "merge")?.args([
        "--no-ff",
        "--no-edit",
        "--quiet",
        "-m",
        message,
        rev,
    ]))?;
    if output.status.success() {
        return Ok(MergeOutcome::Merged);
    }
    let conflicted = unmerged_paths(dir)?;
    if conflicted.is_empty() {
        // Refused before it started (an untracked file in the way, say): nothing is in progress.
        return Err(GitError::Failed {
            command: format!("git merge {rev}"),
            status: output.status.to_string(),
            stderr: text(&output.stderr),
        });
    }
    Ok(MergeOutcome::Conflicted(conflicted))
}

/// Files the index still holds as conflicted.
pub fn unmerged_paths(dir: &Path) -> Result<Vec<String>, GitError> {
    let output = checked(git(dir, "diff").args(["--name-only", "--diff-filter=U", "-z"]))?;
    let mut paths: Vec<String> = output
        .stdout
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    paths.dedup();
    Ok(paths)
}

/// Conflicted files whose text still holds a conflict marker line, so the merge must not be
/// committed. Git's markers are seven `<` or `>` at the start of a line.
pub fn files_with_markers(dir: &Path, paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .filter(|path| {
            let full: PathBuf = dir.join(path);
            std::fs::read(full).is_ok_and(|bytes| has_conflict_markers(&bytes))
        })
        .cloned()
        .collect()
}

pub fn has_conflict_markers(bytes: &[u8]) -> bool {
    bytes
        .split(|byte| *byte == b'\n')
        .any(|line| line.starts_with(b"<<<<<<<") || line.starts_with(b">>>>>>>"))
}

/// Gives up the merge in progress in `dir`, putting the tree back as it was before it started.
/// Returns what had been done to the tree since, as a patch, so an attempt is never lost
/// without a trace.
pub fn abort_merge(dir: &Path) -> Result<String, GitError> {
    let patch = run(git(dir, "diff").args(["--no-color", "HEAD"]))?;
    checked(git(dir, "merge").args(["--abort"]))?;
    Ok(String::from_utf8_lossy(&patch.stdout).into_owned())
}

/// Every working tree of the repository with the branch it has checked out.
pub fn checkouts(repo: &Path) -> Result<Vec<(PathBuf, Option<String>)>, GitError> {
    Ok(worktree_entries(repo)?
        .into_iter()
        .map(|entry| (entry.path, entry.branch))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;
    use crate::vcs::*;

    fn story_with(dir: &Path, file: &str, content: &str) {
        sh(dir, &["checkout", "-q", "-b", "agentic-sdlc/s"]);
        write(dir, file, content);
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "story work"]);
        sh(dir, &["checkout", "-q", "main"]);
    }

    #[test]
    fn a_clean_merge_is_a_commit_on_top_of_both_tips_and_no_tree_changes() {
        let dir = repo();
        story_with(dir.path(), "src/story.rs", "fn story() {}\n");
        write(dir.path(), "src/teammate.rs", "fn teammate() {}\n");
        sh(dir.path(), &["add", "-A"]);
        sh(dir.path(), &["commit", "-q", "-m", "teammate"]);
        let main_before = sh(dir.path(), &["rev-parse", "main"]);
        let result = integrate(dir.path(), "agentic-sdlc/s", "main", "Merge s").unwrap();
        let Integration::Merged {
            commit, base_tip, ..
        } = result
        else {
            panic!("{result:?}")
        };
        assert_eq!(base_tip, main_before);
        assert_eq!(sh(dir.path(), &["rev-parse", "main"]), main_before);
        let parents = sh(dir.path(), &["rev-list", "--parents", "-n", "1", &commit]);
        assert!(parents.contains(&main_before), "{parents}");
        let files = sh(dir.path(), &["ls-tree", "-r", "--name-only", &commit]);
        assert!(files.contains("src/story.rs") && files.contains("src/teammate.rs"));
        assert!(!dir.path().join("src/story.rs").exists());

        advance_base(dir.path(), "main", &main_before, &commit, &board()).unwrap();
        assert_eq!(sh(dir.path(), &["rev-parse", "main"]), commit);
        assert!(
            dir.path().join("src/story.rs").exists(),
            "the checkout moved"
        );
        let again = integrate(dir.path(), "agentic-sdlc/s", "main", "Merge s").unwrap();
        assert!(
            matches!(again, Integration::AlreadyMerged { .. }),
            "{again:?}"
        );
    }

    #[test]
    fn a_conflict_names_the_file_and_the_base_commits_and_writes_nothing() {
        let dir = repo();
        story_with(dir.path(), "src/lib.rs", "fn story() {}\n");
        write(dir.path(), "src/lib.rs", "fn teammate() {}\n");
        sh(
            dir.path(),
            &["commit", "-q", "-am", "Teammate rewrites lib"],
        );
        let main_before = sh(dir.path(), &["rev-parse", "main"]);
        let result = integrate(dir.path(), "agentic-sdlc/s", "main", "Merge s").unwrap();
        let Integration::Conflicts(conflicts) = result else {
            panic!("{result:?}")
        };
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].path, "src/lib.rs");
        assert!(conflicts[0].base_commits[0].ends_with("Teammate rewrites lib"));
        assert_eq!(sh(dir.path(), &["rev-parse", "main"]), main_before);
        assert!(sh(dir.path(), &["status", "--porcelain"]).is_empty());
    }

    #[test]
    fn methods_both_sides_add_at_one_place_are_joined_and_a_changed_line_is_not() {
        let dir = repo();
        let cart = "class Cart:\n    def add(self, sku):\n        self.items[sku] = 1\n";
        write(dir.path(), "cart.py", cart);
        sh(dir.path(), &["add", "-A"]);
        sh(dir.path(), &["commit", "-q", "-m", "A cart"]);
        // A drive (2026-12-06): two stories, each a method at the end of `Cart`.
        let clear = "\n    def clear(self):\n        self.items = {}\n";
        story_with(dir.path(), "cart.py", &format!("{cart}{clear}"));
        let total = "\n    def total_items(self):\n        return sum(self.items.values())\n";
        write(dir.path(), "cart.py", &format!("{cart}{total}"));
        sh(dir.path(), &["commit", "-q", "-am", "Count the items"]);

        let result = integrate(dir.path(), "agentic-sdlc/s", "main", "Merge s").unwrap();

        let Integration::Merged { commit, joined, .. } = result else {
            panic!("{result:?}")
        };
        assert_eq!(joined, ["cart.py"]);
        assert_eq!(
            sh(dir.path(), &["show", &format!("{commit}:cart.py")]),
            format!("{cart}{total}{clear}").trim_end()
        );
        // A line the story changed where the base changed it too stays a conflict.
        sh(dir.path(), &["checkout", "-q", "agentic-sdlc/s"]);
        write(
            dir.path(),
            "cart.py",
            &format!("{}{clear}", cart.replace("= 1", "= 2")),
        );
        sh(dir.path(), &["commit", "-q", "-am", "story changes add"]);
        sh(dir.path(), &["checkout", "-q", "main"]);
        write(
            dir.path(),
            "cart.py",
            &format!("{}{total}", cart.replace("= 1", "= 3")),
        );
        sh(dir.path(), &["commit", "-q", "-am", "base changes add"]);
        let result = integrate(dir.path(), "agentic-sdlc/s", "main", "Merge s").unwrap();
        assert!(matches!(result, Integration::Conflicts(_)), "{result:?}");
    }

    #[test]
    fn advancing_refuses_a_dirty_checkout_in_the_way_and_a_moved_base() {
        let dir = repo();
        story_with(dir.path(), "src/lib.rs", "fn story() {}\n");
        let Integration::Merged {
            commit, base_tip, ..
        } = integrate(dir.path(), "agentic-sdlc/s", "main", "Merge s").unwrap()
        else {
            panic!()
        };
        write(dir.path(), "src/lib.rs", "fn unsaved() {}\n");
        let refused = advance_base(dir.path(), "main", &base_tip, &commit, &board()).unwrap_err();
        let AdvanceRefused::Error(error) = refused else {
            panic!("{refused:?}")
        };
        assert!(error.to_string().contains("src/lib.rs"), "{error}");
        assert_eq!(sh(dir.path(), &["rev-parse", "main"]), base_tip);
        assert_eq!(
            fs_err::read_to_string(dir.path().join("src/lib.rs")).unwrap(),
            "fn unsaved() {}\n"
        );
        let moved = advance_base(dir.path(), "main", "0000000", &commit, &board());
        assert!(matches!(moved, Err(AdvanceRefused::Moved)));
    }

    #[test]
    fn a_conflicted_merge_in_a_checkout_is_concluded_only_without_markers() {
        let dir = repo();
        story_with(dir.path(), "src/lib.rs", "fn story() {}\n");
        write(dir.path(), "src/lib.rs", "fn teammate() {}\n");
        sh(dir.path(), &["commit", "-q", "-am", "teammate"]);
        sh(dir.path(), &["checkout", "-q", "agentic-sdlc/s"]);
        let outcome = merge_into_checkout(dir.path(), "main", "Merge main").unwrap();
        assert_eq!(outcome, MergeOutcome::Conflicted(vec!["src/lib.rs".into()]));
        let conflicted = unmerged_paths(dir.path()).unwrap();
        assert_eq!(files_with_markers(dir.path(), &conflicted), ["src/lib.rs"]);
        let patch = abort_merge(dir.path()).unwrap();
        assert!(patch.contains("<<<<<<<"), "{patch}");
        assert_eq!(operation_in_progress(dir.path()).unwrap(), None);

        merge_into_checkout(dir.path(), "main", "Merge main").unwrap();
        write(
            dir.path(),
            "src/lib.rs",
            "fn story() {}\nfn teammate() {}\n",
        );
        assert!(files_with_markers(dir.path(), &conflicted).is_empty());
        commit_all(dir.path(), "resolved", &board()).unwrap();
        let parents = sh(dir.path(), &["rev-list", "--parents", "-n", "1", "HEAD"]);
        assert_eq!(parents.split(' ').count(), 3, "a merge commit: {parents}");
        assert_eq!(
            commits_behind(dir.path(), "agentic-sdlc/s", "main").unwrap(),
            Some(0)
        );
    }

    #[test]
    fn marker_lines_are_recognised_only_at_line_starts() {
        assert!(has_conflict_markers(b"a\n<<<<<<< HEAD\nb\n"));
        assert!(has_conflict_markers(b">>>>>>> main"));
        assert!(!has_conflict_markers(b"text <<<<<<< inside\n=======\n"));
    }
}
