//! What the repository is like: its root, branch, HEAD, and the user's uncommitted work.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};

use super::command::{checked, git, optional, run, text};
use super::error::GitError;

/// Whether `dir` is inside a git working tree (a bare repository or `.git` itself is not).
pub fn is_repo(dir: &Path) -> bool {
    if !may_be_in_repo(dir) {
        return false;
    }
    run(git(dir, "rev-parse").args(["--is-inside-work-tree"]))
        .is_ok_and(|output| output.status.success() && text(&output.stdout) == "true")
}

/// Whether git could find a repository from `dir` at all: a `.git` folder or file in it or in
/// a folder above, or `GIT_DIR` set. Asking this first spares a board outside git the spawn of
/// a git that would only say no (a few milliseconds of every run there).
pub fn may_be_in_repo(dir: &Path) -> bool {
    if std::env::var_os("GIT_DIR").is_some() {
        return true;
    }
    std::path::absolute(dir).map_or(true, |dir| {
        dir.ancestors()
            .any(|folder| folder.join(".git").symlink_metadata().is_ok())
    })
}

/// The root of the working tree that holds `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, GitError> {
    let output = checked(git(dir, "rev-parse").args(["--show-toplevel"]))?;
    // Raw bytes: a repository path need not be UTF-8.
    let mut raw = output.stdout;
    while raw.last() == Some(&b'\n') {
        raw.pop();
    }
    Ok(PathBuf::from(OsString::from_vec(raw)))
}

/// The checked-out branch, `None` when HEAD is detached.
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    // The full ref, not `--short`: a tag of the same name would make the short form ambiguous.
    let head = optional(git(dir, "symbolic-ref").args(["--quiet", "HEAD"]))?;
    Ok(head.map(|name| name.trim_start_matches("refs/heads/").to_string()))
}

/// The commit HEAD points at, `None` on an unborn branch (a repository without commits).
pub fn head_commit(dir: &Path) -> Result<Option<String>, GitError> {
    optional(git(dir, "rev-parse").args(["--verify", "--quiet", "HEAD^{commit}"]))
}

/// Whether `.gitignore` (or `info/exclude`) keeps `path` out of git.
pub fn gitignored(dir: &Path, path: &Path) -> Result<bool, GitError> {
    let answer = optional(
        git(dir, "check-ignore")
            .args(["--quiet", "--no-index", "--"])
            .arg(path),
    )?;
    Ok(answer.is_some())
}

pub(super) fn commit_exists(dir: &Path, rev: &str) -> Result<bool, GitError> {
    let rev = format!("{rev}^{{commit}}");
    Ok(optional(git(dir, "rev-parse").args(["--verify", "--quiet", &rev]))?.is_some())
}

pub(super) fn branch_exists(dir: &Path, branch: &str) -> Result<bool, GitError> {
    let reference = format!("refs/heads/{branch}");
    Ok(optional(git(dir, "rev-parse").args(["--verify", "--quiet", &reference]))?.is_some())
}

// ---------------------------------------------------------------------------------------------
// Ignore paths

/// Ignore paths as repository-relative, `/`-separated strings, the form `git status` prints.
/// Absolute paths are accepted too and made relative to the working tree root.
pub(super) fn normalize_ignore(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    let mut root = None;
    let mut normalized = Vec::new();
    for path in ignore {
        let relative = if path.is_absolute() {
            if root.is_none() {
                root = Some(toplevel(dir)?);
            }
            match strip_root(path, root.as_deref().unwrap_or(Path::new("/"))) {
                Some(relative) => relative,
                None => continue, // outside the repository: nothing there to ignore
            }
        } else {
            path.to_path_buf()
        };
        let parts: Vec<_> = relative
            .components()
            .filter_map(|part| match part {
                Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if !parts.is_empty() {
            normalized.push(parts.join("/"));
        }
    }
    Ok(normalized)
}

pub(super) fn strip_root(path: &Path, root: &Path) -> Option<PathBuf> {
    if let Ok(relative) = path.strip_prefix(root) {
        return Some(relative.to_path_buf());
    }
    // git reports the real path; the caller may have given one through a symlink.
    let real = fs_err::canonicalize(path).ok()?;
    real.strip_prefix(root).ok().map(Path::to_path_buf)
}

pub(super) fn is_ignored(path: &str, ignored: &[String]) -> bool {
    let path = path.trim_end_matches('/');
    ignored.iter().any(|ignore| {
        path == ignore
            || path
                .strip_prefix(ignore.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Pathspecs for "the whole repository except the ignore paths". `top` makes them independent
/// of the folder git runs in; `literal` keeps a `*` in a name from acting as a glob.
pub(super) fn whole_repo_pathspecs(ignored: &[String]) -> Vec<String> {
    let mut specs = vec![":/".to_string()];
    specs.extend(
        ignored
            .iter()
            .map(|path| format!(":(top,exclude,literal){path}")),
    );
    specs
}

// ---------------------------------------------------------------------------------------------
// Working tree state

/// Paths with uncommitted changes (staged, unstaged or untracked), relative to the repository
/// root, leaving out those under `ignore`. A rename reports both its new and its old path.
pub fn dirty_paths(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    changed_paths(dir, ignore, "--untracked-files=all")
}

/// Tracked files with uncommitted changes (staged or not), leaving out those under `ignore`:
/// the changes a branch switch could carry or clobber. New files git does not track yet are
/// left out; a switch leaves them alone.
pub fn dirty_tracked_paths(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    changed_paths(dir, ignore, "--untracked-files=no")
}

/// Files git does not track and `.gitignore` does not ignore, repository-relative, leaving out
/// those under `ignore`.
pub fn untracked_paths(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    let output = checked(git(dir, "ls-files").env("GIT_OPTIONAL_LOCKS", "0").args([
        "--others",
        "--exclude-standard",
        "--full-name",
        "-z",
        ":/",
    ]))?;
    Ok(output
        .stdout
        .split(|byte| *byte == 0)
        .filter(|raw| !raw.is_empty())
        .map(|raw| String::from_utf8_lossy(raw).into_owned())
        .filter(|path| !is_ignored(path, &ignored))
        .collect())
}

fn changed_paths(dir: &Path, ignore: &[&Path], untracked: &str) -> Result<Vec<String>, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    // No optional locks: a status check must not fight the user's own git over index.lock.
    let output = checked(git(dir, "status").env("GIT_OPTIONAL_LOCKS", "0").args([
        "--porcelain=v1",
        "-z",
        untracked,
    ]))?;
    Ok(parse_porcelain(&output.stdout)
        .into_iter()
        .filter(|path| !is_ignored(path, &ignored))
        .collect())
}

/// Reads `git status --porcelain=v1 -z`: entries `XY <path>`, NUL-terminated; a rename or copy
/// is followed by one more NUL-terminated field holding the source path.
pub(super) fn parse_porcelain(raw: &[u8]) -> Vec<String> {
    let mut fields = raw
        .split(|byte| *byte == 0)
        .filter(|field| !field.is_empty());
    let mut paths = Vec::new();
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let (status, path) = (&entry[..2], &entry[3..]);
        paths.push(String::from_utf8_lossy(path).into_owned());
        if status.iter().any(|code| matches!(code, b'R' | b'C')) {
            let source = fields.next();
            // A rename changes its source; a copy leaves it as it was.
            if status.contains(&b'R') {
                paths.extend(source.map(|raw| String::from_utf8_lossy(raw).into_owned()));
            }
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;

    #[test]
    fn repository_facts() {
        let dir = repo();
        let plain = tempfile::tempdir().unwrap();
        assert!(is_repo(dir.path()));
        assert!(!is_repo(plain.path()));
        assert!(may_be_in_repo(&dir.path().join("sub/folder")));
        assert!(!may_be_in_repo(plain.path()));
        let root = fs_err::canonicalize(dir.path()).unwrap();
        assert_eq!(toplevel(&dir.path().join("src")).unwrap(), root);
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));
        let head = head_commit(dir.path()).unwrap().unwrap();
        assert_eq!(head.len(), 40);
        sh(dir.path(), &["checkout", "-q", "--detach"]);
        assert_eq!(current_branch(dir.path()).unwrap(), None);
        assert!(toplevel(plain.path()).is_err());
    }

    #[test]
    fn head_commit_is_none_on_an_unborn_branch() {
        let dir = unborn_repo();
        assert_eq!(head_commit(dir.path()).unwrap(), None);
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));
    }

    #[test]
    fn porcelain_entries_are_parsed() {
        let cases: &[(&[u8], &[&str])] = &[
            (b"", &[]),
            (b" M src/a.rs\0", &["src/a.rs"]),
            (b"?? new file.txt\0", &["new file.txt"]),
            (b"R  new.rs\0old.rs\0?? x\0", &["new.rs", "old.rs", "x"]),
            (b"C  copy.rs\0orig.rs\0 D gone\0", &["copy.rs", "gone"]),
            (b"RM moved\0from\0", &["moved", "from"]),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                parse_porcelain(raw),
                *expected,
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn ignore_matches_whole_path_components() {
        let ignored = vec![BOARD.to_string(), CONFIG.to_string()];
        assert!(is_ignored(".agentic-sdlc", &ignored));
        assert!(is_ignored(".agentic-sdlc/ready/a.md", &ignored));
        assert!(is_ignored(".agentic-sdlc/", &ignored));
        assert!(is_ignored(".agentic-sdlc.json", &ignored));
        assert!(!is_ignored(".agentic-sdlc.json.bak", &ignored));
        assert!(!is_ignored(".agentic-sdlcx/a", &ignored));
    }

    #[test]
    fn dirty_paths_leave_out_the_board_and_config() {
        let dir = repo();
        assert!(dirty_paths(dir.path(), &board()).unwrap().is_empty());
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nedited\n",
        );
        write(dir.path(), ".agentic-sdlc/ready/new.md", "# New\n");
        write(dir.path(), CONFIG, "{\"concurrency\": 2}\n");
        assert!(dirty_paths(dir.path(), &board()).unwrap().is_empty());
        write(dir.path(), "src/lib.rs", "fn two() {}\n");
        write(dir.path(), "docs/deep/note.md", "note\n");
        let mut paths = dirty_paths(dir.path(), &board()).unwrap();
        paths.sort();
        assert_eq!(paths, ["docs/deep/note.md", "src/lib.rs"]);
        // Without ignore paths the board shows up, proving the filter is what hides it.
        assert_eq!(dirty_paths(dir.path(), &[]).unwrap().len(), 5);
    }

    #[test]
    fn untracked_paths_are_listed_from_the_repository_root() {
        let dir = repo();
        write(dir.path(), "notes.txt", "mine\n");
        write(dir.path(), "src/new.rs", "fn new() {}\n");
        write(dir.path(), ".agentic-sdlc/ready/other.md", "# Other\n");
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        let mut paths = untracked_paths(&dir.path().join("src"), &board()).unwrap();
        paths.sort();
        assert_eq!(paths, ["notes.txt", "src/new.rs"]);
    }

    #[test]
    fn dirty_tracked_paths_leave_out_new_files() {
        let dir = repo();
        write(dir.path(), "notes.txt", "untracked\n");
        assert!(dirty_tracked_paths(dir.path(), &board())
            .unwrap()
            .is_empty());
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        write(dir.path(), ".agentic-sdlc/backlog/story.md", "edited\n");
        assert_eq!(
            dirty_tracked_paths(dir.path(), &board()).unwrap(),
            ["src/lib.rs"]
        );
    }

    #[test]
    fn dirty_paths_accept_absolute_ignore_paths_and_run_from_subfolders() {
        let dir = repo();
        write(dir.path(), ".agentic-sdlc/backlog/story.md", "changed\n");
        let absolute = dir.path().join(BOARD);
        let paths = dirty_paths(&dir.path().join("src"), &[absolute.as_path()]).unwrap();
        assert!(paths.is_empty(), "{paths:?}");
    }

    #[test]
    fn dirty_paths_report_both_sides_of_a_rename() {
        let dir = repo();
        sh(dir.path(), &["mv", "src/lib.rs", "src/main.rs"]);
        sh(
            dir.path(),
            &[
                "mv",
                ".agentic-sdlc/backlog/story.md",
                ".agentic-sdlc/story.md",
            ],
        );
        let mut paths = dirty_paths(dir.path(), &board()).unwrap();
        paths.sort();
        assert_eq!(paths, ["src/lib.rs", "src/main.rs"]);
    }
}
