//! Conflicts of additions alone, joined (docs/design.md §12). Two stories that each add a
//! method at the end of one class conflict when the second is merged, though neither changed a
//! line of the other's: git sees two insertions at one place and cannot order them. A 1.5B
//! model sent back to resolve the markers failed three rounds in a row and the story was
//! parked (a drive, 2026-12-06). When every conflict of every file is such a pair of
//! insertions, the merge takes the base's lines and then the story's, and the tests on the
//! merge, which run before the base moves, judge the result as they judge any merge.

use std::io::Write;
use std::path::Path;

use super::command::{checked, git, run, text};
use super::error::GitError;

/// The tree of a merge of `story_tip` into `base_tip` (forked at `fork`) that `git merge-tree`
/// stopped on, with each file of `paths` joined: every conflict's base-side lines, then the
/// story's. `None` unless every conflict of every file is lines both sides added where the
/// fork had none, and each file is a plain file on all three sides.
pub(super) fn joined_tree(
    dir: &Path,
    tree: &str,
    fork: &str,
    base_tip: &str,
    story_tip: &str,
    paths: &[String],
) -> Result<Option<String>, GitError> {
    let mut joined_files = Vec::new();
    for path in paths {
        let Some(mode) = plain_file_mode(dir, story_tip, path)? else {
            return Ok(None);
        };
        let mut sides = Vec::new();
        for rev in [base_tip, fork, story_tip] {
            match blob(dir, rev, path)? {
                Some(bytes) => sides.push(bytes),
                None => return Ok(None),
            }
        }
        let Some(merged) = merged_with_base(dir, &sides)? else {
            return Ok(None);
        };
        let Some(joined) = joined(&merged) else {
            return Ok(None);
        };
        joined_files.push((path, mode, joined));
    }
    let index = tempfile::NamedTempFile::new().map_err(io_error)?;
    let with_index = |subcommand: &str| {
        let mut cmd = git(dir, subcommand);
        cmd.env("GIT_INDEX_FILE", index.path());
        cmd
    };
    checked(with_index("read-tree").arg(tree))?;
    for (path, mode, content) in joined_files {
        let file = temp_file_with(content.as_bytes())?;
        let blob = text(
            &checked(
                git(dir, "hash-object")
                    .args(["-w", "--no-filters", "--"])
                    .arg(file.path()),
            )?
            .stdout,
        );
        let entry = format!("{mode},{blob},{path}");
        checked(with_index("update-index").args(["--add", "--cacheinfo", &entry]))?;
    }
    Ok(Some(text(&checked(&mut with_index("write-tree"))?.stdout)))
}

/// `path`'s mode in `rev` when it is a regular file there (`100644`, `100755`).
fn plain_file_mode(dir: &Path, rev: &str, path: &str) -> Result<Option<String>, GitError> {
    let listed = checked(git(dir, "ls-tree").args([rev, "--", path]))?;
    let line = text(&listed.stdout);
    let mode = line.split_whitespace().next().unwrap_or_default();
    Ok(matches!(mode, "100644" | "100755").then(|| mode.to_string()))
}

/// The bytes of `path` in `rev`; `None` when `rev` does not hold it.
fn blob(dir: &Path, rev: &str, path: &str) -> Result<Option<Vec<u8>>, GitError> {
    let output = run(git(dir, "cat-file").args(["blob", &format!("{rev}:{path}")]))?;
    Ok(output.status.success().then_some(output.stdout))
}

/// `git merge-file` of the three sides (base tip, fork, story tip) with the fork's lines in
/// each conflict (`|||||||`); `None` when it is not text.
fn merged_with_base(dir: &Path, sides: &[Vec<u8>]) -> Result<Option<String>, GitError> {
    let files = sides
        .iter()
        .map(|bytes| temp_file_with(bytes))
        .collect::<Result<Vec<_>, _>>()?;
    let output = run(git(dir, "merge-file")
        .args(["-p", "--diff3", "-L", "base", "-L", "fork", "-L", "story"])
        .args(files.iter().map(|file| file.path())))?;
    // The exit status counts the conflicts; a negative one is an error.
    if output.status.code().is_none_or(|code| code < 0) {
        return Ok(None);
    }
    Ok(String::from_utf8(output.stdout).ok())
}

/// `merged` (with `git merge-file --diff3` markers) with each conflict replaced by its base-side
/// lines and then its story-side lines; `None` when a conflict's fork lines are not empty (one
/// side changed what the other kept) or the markers do not nest as expected.
fn joined(merged: &str) -> Option<String> {
    enum Part {
        Outside,
        Base,
        Fork,
        Story,
    }
    let mut out = String::new();
    let mut part = Part::Outside;
    for line in merged.split_inclusive('\n') {
        let marker = |mark: &str| line.starts_with(mark);
        part = match part {
            Part::Outside if marker("<<<<<<< ") => Part::Base,
            Part::Base if marker("||||||| ") => Part::Fork,
            Part::Fork if marker("=======") => Part::Story,
            Part::Fork => return None,
            Part::Story if marker(">>>>>>> ") => Part::Outside,
            Part::Outside | Part::Base | Part::Story
                if ["<<<<<<< ", "||||||| ", "=======", ">>>>>>> "]
                    .iter()
                    .any(|mark| marker(mark)) =>
            {
                return None
            }
            other => {
                out.push_str(line);
                other
            }
        };
    }
    matches!(part, Part::Outside).then_some(out)
}

fn temp_file_with(bytes: &[u8]) -> Result<tempfile::NamedTempFile, GitError> {
    let mut file = tempfile::NamedTempFile::new().map_err(io_error)?;
    file.write_all(bytes).map_err(io_error)?;
    file.flush().map_err(io_error)?;
    Ok(file)
}

fn io_error(source: std::io::Error) -> GitError {
    GitError::Io {
        context: "a temporary file for joining a merge's additions".to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_of_additions_alone_are_joined_base_first() {
        let merged = "class Cart:\n    def add(self):\n        pass\n<<<<<<< base\n\n    def total_items(self):\n        return 0\n||||||| fork\n=======\n\n    def clear(self):\n        self.items = {}\n>>>>>>> story\n";
        assert_eq!(
            joined(merged).unwrap(),
            "class Cart:\n    def add(self):\n        pass\n\n    def total_items(self):\n        return 0\n\n    def clear(self):\n        self.items = {}\n"
        );
        // One side changed a line the other kept: no join.
        let changed = "<<<<<<< base\nx = 2\n||||||| fork\nx = 1\n=======\nx = 3\n>>>>>>> story\n";
        assert_eq!(joined(changed), None);
        assert_eq!(joined("<<<<<<< base\nx = 2\n"), None, "unclosed");
    }
}
