//! Commits of a few files made without touching the user's index or working tree, and the
//! checkout brought forward to a commit made elsewhere: what keeping the board in step with a
//! remote's base needs (docs/design.md §20).
//!
//! A board commit is built on a temporary index (`GIT_INDEX_FILE`) from the parent's tree with
//! the changed files replaced, so the user's staging area is never used and the tree can be a
//! commit other than the one checked out (a merge that was just tested, say).

use std::collections::HashMap;
use std::path::Path;

use super::branches::committing;
use super::command::{checked, checked_with_input, git, optional, run, text};
use super::error::GitError;
use super::repo::{current_branch, dirty_paths, head_commit};

/// Whether `ancestor` is `descendant` or one of its ancestors.
pub fn is_ancestor(dir: &Path, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
    let answer = optional(git(dir, "merge-base").args(["--is-ancestor", ancestor, descendant]))?;
    Ok(answer.is_some())
}

/// The commit `rev` names, `None` when it names nothing.
pub fn resolve(dir: &Path, rev: &str) -> Result<Option<String>, GitError> {
    let rev = format!("{rev}^{{commit}}");
    optional(git(dir, "rev-parse").args(["--verify", "--quiet", &rev]))
}

/// Points `refname` at `new`; with `old`, only if it still points there.
pub fn set_ref(dir: &Path, refname: &str, new: &str, old: Option<&str>) -> Result<(), GitError> {
    let mut cmd = git(dir, "update-ref");
    cmd.args([refname, new]);
    if let Some(old) = old {
        cmd.arg(old);
    }
    super::refs::moving_ref(dir, refname, || checked(&mut cmd))?;
    Ok(())
}

fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes
        .split(|byte| *byte == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect()
}

/// Paths matching `pathspecs` that differ between commits `from` and `to` (added, changed or
/// removed; a rename is a removal and an addition).
pub fn changed_paths(
    dir: &Path,
    from: &str,
    to: &str,
    pathspecs: &[String],
) -> Result<Vec<String>, GitError> {
    let output = checked(
        git(dir, "diff")
            .args(["--name-only", "-z", "--no-renames", from, to, "--"])
            .args(pathspecs),
    )?;
    Ok(split_nul(&output.stdout))
}

/// Whether commits `from` and `to` differ anywhere outside the folder `own`.
pub fn differ_outside(dir: &Path, from: &str, to: &str, own: &Path) -> Result<bool, GitError> {
    let own_spec = format!(":(top,exclude,literal){}", own.display());
    let output = run(git(dir, "diff")
        .args(["--quiet", "--no-renames", from, to, "--", ":/"])
        .arg(&own_spec))?;
    match output.status.code() {
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        _ => Err(super::command::failure(&git(dir, "diff"), &output)),
    }
}

/// Puts the branch checked out in `dir` back at `commit`, working tree included; untracked
/// files stay.
pub fn reset_checkout(dir: &Path, commit: &str) -> Result<(), GitError> {
    super::refs::moving_head(dir, || {
        checked(git(dir, "reset").args(["--hard", "--quiet", commit]))
    })?;
    Ok(())
}

/// Paths matching `pathspecs` whose working-tree file differs from commit `base`: changed,
/// deleted, or new (untracked and not ignored).
pub fn worktree_changes(
    dir: &Path,
    base: &str,
    pathspecs: &[String],
) -> Result<Vec<String>, GitError> {
    let changed = checked(
        git(dir, "diff")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .args(["--name-only", "-z", "--no-renames", base, "--"])
            .args(pathspecs),
    )?;
    let untracked = checked(
        git(dir, "ls-files")
            .args(["-z", "--others", "--exclude-standard", "--"])
            .args(pathspecs),
    )?;
    let mut paths = split_nul(&changed.stdout);
    paths.extend(split_nul(&untracked.stdout));
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// The bytes of `paths` in commit `rev`, in one `git cat-file --batch`; a path the commit does
/// not hold is left out.
pub fn read_files(
    dir: &Path,
    rev: &str,
    paths: &[String],
) -> Result<HashMap<String, Vec<u8>>, GitError> {
    let mut files = HashMap::new();
    if paths.is_empty() {
        return Ok(files);
    }
    let request: String = paths.iter().map(|p| format!("{rev}:{p}\n")).collect();
    let output = checked_with_input(git(dir, "cat-file").args(["--batch"]), request.as_bytes())?;
    let mut rest = output.stdout.as_slice();
    for path in paths {
        let Some(end) = rest.iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        // `<oid> <type> <size>` or `<object> missing`.
        let mut fields = header.split(' ');
        let (Some(_), Some(kind), Some(size)) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Ok(size) = size.parse::<usize>() else {
            continue;
        };
        let body = rest.get(..size).unwrap_or(rest).to_vec();
        rest = rest.get(size + 1..).unwrap_or_default();
        if kind == "blob" {
            files.insert(path.clone(), body);
        }
    }
    Ok(files)
}

/// Makes a commit on `parent` whose tree is the parent's with `files` replaced: `Some(bytes)`
/// writes a file, `None` removes it. Returns the parent itself when nothing changes. Neither the
/// user's index nor any working tree is touched.
pub fn commit_files(
    dir: &Path,
    parent: &str,
    files: &[(String, Option<Vec<u8>>)],
    message: &str,
) -> Result<String, GitError> {
    if files.is_empty() {
        return Ok(parent.to_string());
    }
    let scratch = tempfile::tempdir().map_err(|source| GitError::Io {
        context: "could not make a temporary index".into(),
        source,
    })?;
    let index = scratch.path().join("index");
    let with_index = |cmd: &mut std::process::Command| {
        cmd.env("GIT_INDEX_FILE", &index);
    };
    let mut read = git(dir, "read-tree");
    with_index(&mut read);
    checked(read.arg(parent))?;
    // A removal is written as mode 0 with the null object id, of the repository's hash length.
    let null = "0".repeat(parent.len());
    let mut entries = String::new();
    for (path, bytes) in files {
        match bytes {
            Some(bytes) => {
                let output =
                    checked_with_input(git(dir, "hash-object").args(["-w", "--stdin"]), bytes)?;
                entries.push_str(&format!("100644 {}\t{path}\n", text(&output.stdout)));
            }
            None => entries.push_str(&format!("0 {null}\t{path}\n")),
        }
    }
    let mut update = git(dir, "update-index");
    with_index(&mut update);
    checked_with_input(update.arg("--index-info"), entries.as_bytes())?;
    let mut write = git(dir, "write-tree");
    with_index(&mut write);
    let tree = text(&checked(&mut write)?.stdout);
    let parent_tree =
        text(&checked(git(dir, "rev-parse").args([&format!("{parent}^{{tree}}")]))?.stdout);
    if tree == parent_tree {
        return Ok(parent.to_string());
    }
    let output =
        checked(committing(dir, "commit-tree")?.args([&tree, "-p", parent, "-m", message]))?;
    Ok(text(&output.stdout))
}

/// What bringing the checkout to a new base commit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    /// The branch, its index and working tree are at the commit (or already were).
    Moved,
    /// The checkout is not on the base branch: only the branch ref could have moved, and it
    /// was left for the person who switched away.
    NotCheckedOut,
    /// The branch holds commits the new one does not: it was left alone.
    Diverged,
    /// Uncommitted changes to files the move would change: nothing moved.
    Blocked(Vec<String>),
}

/// Moves the base branch checked out in `dir` forward to `new`, with its index and working
/// tree, except the paths under `own`: the board, whose files the caller keeps itself (only
/// their index entries move, so `git status` shows the board's unsynced changes). The user's
/// uncommitted work is never overwritten: when a file the move would change has changes (or an
/// untracked file stands where one would be written), nothing moves.
pub fn follow_checkout(
    dir: &Path,
    base: &str,
    new: &str,
    own: &Path,
    ignore: &[&Path],
) -> Result<Followed, GitError> {
    if current_branch(dir)?.as_deref() != Some(base) {
        return Ok(Followed::NotCheckedOut);
    }
    let Some(head) = head_commit(dir)? else {
        return Ok(Followed::Diverged);
    };
    if head == new {
        return Ok(Followed::Moved);
    }
    if !is_ancestor(dir, &head, new)? {
        return Ok(Followed::Diverged);
    }
    let own_spec = format!(":(top,exclude,literal){}", own.display());
    let code = checked(
        git(dir, "diff")
            .args(["--name-only", "-z", "--no-renames", &head, new, "--", ":/"])
            .arg(&own_spec),
    )?;
    let code = split_nul(&code.stdout);
    let in_the_way: Vec<String> = dirty_paths(dir, ignore)?
        .into_iter()
        .filter(|path| code.contains(path))
        .collect();
    if !in_the_way.is_empty() {
        return Ok(Followed::Blocked(in_the_way));
    }
    if !code.is_empty() {
        let list: Vec<u8> = code
            .iter()
            .flat_map(|path| path.bytes().chain(std::iter::once(0)))
            .collect();
        let mut restore = git(dir, "restore");
        restore.env("GIT_LITERAL_PATHSPECS", "1").args([
            "--quiet",
            &format!("--source={new}"),
            "--staged",
            "--worktree",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ]);
        checked_with_input(&mut restore, &list)?;
    }
    // The board's index entries follow too; its files are the caller's to write.
    let own_literal = format!(":(top,literal){}", own.display());
    let reset = run(git(dir, "reset").args(["--quiet", new, "--", &own_literal]))?;
    if reset.status.code().is_none_or(|code| code > 1) {
        return Err(super::command::failure(&git(dir, "reset"), &reset));
    }
    let reference = format!("refs/heads/{base}");
    super::refs::moving_ref(dir, &reference, || {
        checked(git(dir, "update-ref").args([&reference, new, &head]))
    })?;
    Ok(Followed::Moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;

    #[test]
    fn a_commit_of_files_leaves_index_and_tree_alone() {
        let dir = repo();
        let root = dir.path();
        let head = sh(root, &["rev-parse", "HEAD"]);
        write(root, "src/lib.rs", "fn dirty() {}\n");
        let files = vec![
            (
                ".agentic-sdlc/ready/new.md".to_string(),
                Some(b"# New\n".to_vec()),
            ),
            (".agentic-sdlc/backlog/story.md".to_string(), None),
        ];
        let commit = commit_files(root, &head, &files, "board").unwrap();
        assert_ne!(commit, head);
        let listed = sh(root, &["ls-tree", "-r", "--name-only", &commit]);
        assert!(listed.contains(".agentic-sdlc/ready/new.md"), "{listed}");
        assert!(!listed.contains("backlog/story.md"), "{listed}");
        assert_eq!(sh(root, &["rev-parse", "HEAD"]), head, "no branch moved");
        assert_eq!(
            sh(root, &["status", "--porcelain"]),
            " M src/lib.rs",
            "the user's change is untouched and nothing staged"
        );
        let read = read_files(
            root,
            &commit,
            &[".agentic-sdlc/ready/new.md".into(), "missing.md".into()],
        )
        .unwrap();
        assert_eq!(read[".agentic-sdlc/ready/new.md"], b"# New\n");
        assert!(!read.contains_key("missing.md"));
        // The same content again is no commit at all.
        let same = vec![(
            ".agentic-sdlc/ready/new.md".to_string(),
            Some(b"# New\n".to_vec()),
        )];
        assert_eq!(commit_files(root, &commit, &same, "again").unwrap(), commit);
    }

    #[test]
    fn worktree_changes_list_edits_removals_and_new_files() {
        let dir = repo();
        let root = dir.path();
        let specs = vec![":(top,glob).agentic-sdlc/*/*.md".to_string()];
        assert!(worktree_changes(root, "HEAD", &specs).unwrap().is_empty());
        write(root, ".agentic-sdlc/backlog/story.md", "# Story\nedited\n");
        write(root, ".agentic-sdlc/ready/new.md", "# New\n");
        write(root, "src/lib.rs", "fn not_the_board() {}\n");
        assert_eq!(
            worktree_changes(root, "HEAD", &specs).unwrap(),
            [
                ".agentic-sdlc/backlog/story.md",
                ".agentic-sdlc/ready/new.md"
            ]
        );
    }

    #[test]
    fn the_checkout_follows_unless_the_users_work_is_in_the_way() {
        let dir = repo();
        let root = dir.path();
        let head = sh(root, &["rev-parse", "HEAD"]);
        let files = vec![
            (
                "src/remote.rs".to_string(),
                Some(b"fn remote() {}\n".to_vec()),
            ),
            (
                ".agentic-sdlc/ready/new.md".to_string(),
                Some(b"# New\n".to_vec()),
            ),
        ];
        let new = commit_files(root, &head, &files, "from elsewhere").unwrap();
        write(root, "src/remote.rs", "my own file\n");
        let own = Path::new(".agentic-sdlc");
        let blocked = follow_checkout(root, "main", &new, own, &[own]).unwrap();
        assert_eq!(blocked, Followed::Blocked(vec!["src/remote.rs".into()]));
        assert_eq!(sh(root, &["rev-parse", "HEAD"]), head);
        fs_err::remove_file(root.join("src/remote.rs")).unwrap();
        write(root, "src/lib.rs", "fn unrelated_wip() {}\n");
        assert_eq!(
            follow_checkout(root, "main", &new, own, &[own]).unwrap(),
            Followed::Moved
        );
        assert_eq!(sh(root, &["rev-parse", "HEAD"]), new);
        assert!(
            root.join("src/remote.rs").exists(),
            "code moved with the branch"
        );
        assert!(
            !root.join(".agentic-sdlc/ready/new.md").exists(),
            "the board is the caller's"
        );
        let status = sh(root, &["status", "--porcelain"]);
        assert!(status.contains(" M src/lib.rs"), "{status}");
        assert!(status.contains(" D .agentic-sdlc/ready/new.md"), "{status}");
        sh(root, &["checkout", "-q", "-b", "other"]);
        assert_eq!(
            follow_checkout(root, "main", &head, own, &[own]).unwrap(),
            Followed::NotCheckedOut
        );
    }
}
