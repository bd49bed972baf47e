//! The story's acceptance tests once the acceptance phase kept them (docs/design.md §21): the
//! listing the phase writes into the story, and the tests held fixed while implement works.

use std::path::{Path, PathBuf};

use crate::agents::prompts::backticked;
use crate::vcs;

/// The line that starts the tool's listing of the tests in the `## Acceptance Tests` section.
const LISTING_HEAD: &str = "Acceptance tests, fixed for implement:";

/// The longest test file the section shows whole.
const SHOWN_CHARS: usize = 4_000;

/// The section the phase writes: the tool's listing of the tests, then what the model said,
/// then each test as it is fixed in `dir`.
///
/// The model's own code is left out of what it said: the tool changes the files after the
/// model wrote them (imports added, invented expectations taken out), and the section showed
/// implement the model's `assert cart.quantity("apple") == 2` beside the file's fixed `== 0`
/// (2026-12-05, inventory `cart-remove`).
pub fn listing(dir: &Path, paths: &[String], model_text: &str) -> String {
    let mut out = format!("{LISTING_HEAD}\n");
    for path in paths {
        out.push_str(&format!("- `{path}`\n"));
    }
    let said = prose_of(model_text);
    if !said.is_empty() {
        out.push('\n');
        out.push_str(&said);
        out.push('\n');
    }
    for path in paths {
        let Ok(text) = std::fs::read_to_string(dir.join(path)) else {
            continue;
        };
        let language = match path.rsplit_once('.') {
            Some((_, "py")) => "python",
            _ => "",
        };
        out.push_str(&format!(
            "\n{path}\n```{language}\n{}\n```\n",
            crate::exec::head_tail(text.trim_end(), SHOWN_CHARS)
        ));
    }
    out.trim_end().to_string()
}

/// `text` without its fenced code blocks and the path written above each.
fn prose_of(text: &str) -> String {
    let mut kept: Vec<&str> = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            if !fenced && kept.last().is_some_and(|above| is_path_label(above)) {
                kept.pop();
            }
            fenced = !fenced;
            continue;
        }
        if !fenced {
            kept.push(line);
        }
    }
    kept.join("\n").trim().to_string()
}

/// Whether a line names a file alone (`tests/test_cart.py`, `# tests/test_cart.py:`,
/// `**tests/test_cart.py**`), as a model writes it above the file's block.
fn is_path_label(line: &str) -> bool {
    let label = line
        .trim()
        .trim_start_matches(['#', ' '])
        .trim_matches(['*', '`', ':', ' ']);
    !label.is_empty() && !label.contains(' ') && (label.contains('.') || label.contains('/'))
}

/// The paths of a [`listing`], read back when the phase's output is written into the story.
pub fn listed_paths(section: &str) -> Vec<String> {
    let Some(after) = section.split_once(LISTING_HEAD).map(|(_, rest)| rest) else {
        return Vec::new();
    };
    after
        .lines()
        .skip_while(|line| line.trim().is_empty())
        .map_while(|line| {
            line.trim()
                .strip_prefix("- `")
                .and_then(|rest| rest.strip_suffix('`'))
        })
        .map(str::to_string)
        .collect()
}

/// Puts `paths` (relative to the repository of `dir`) back as the checkout's HEAD has them; a
/// path HEAD lacks is removed. Returns the paths put back. Outside git nothing can be put back.
pub fn put_back(dir: &Path, paths: &[String]) -> Vec<String> {
    put_back_as_of(dir, "HEAD", paths)
}

/// Puts `paths` back as commit `rev` has them, as [`put_back`] does for HEAD.
pub fn put_back_as_of(dir: &Path, rev: &str, paths: &[String]) -> Vec<String> {
    if paths.is_empty() || !vcs::is_repo(dir) {
        return Vec::new();
    }
    let Ok(top) = vcs::toplevel(dir) else {
        return Vec::new();
    };
    let Ok(committed) = vcs::read_files(dir, rev, paths) else {
        return Vec::new();
    };
    let mut restored = Vec::new();
    for path in paths {
        if write_back(&top.join(path), committed.get(path).map(Vec::as_slice)) {
            restored.push(path.clone());
        }
    }
    restored
}

/// Writes `bytes` to `full` atomically, or removes the file when there were none; whether it
/// was done.
pub fn write_back(full: &Path, bytes: Option<&[u8]>) -> bool {
    match bytes {
        Some(bytes) => crate::atomic_file::write(full, bytes).is_ok(),
        None => std::fs::remove_file(full).is_ok(),
    }
}

/// The story's acceptance tests as they were when implement started, put back whenever a
/// command or a write changed them (docs/design.md §21: the implementer cannot change them).
#[derive(Debug, Clone, Default)]
pub struct FixedTests {
    dir: PathBuf,
    /// Each test's path and its bytes; `None` when it was missing at the start.
    files: Vec<(String, Option<Vec<u8>>)>,
}

impl FixedTests {
    /// What the implementer is told about the acceptance tests: that they are fixed, and which
    /// of them it changed were put back (`restored`).
    pub fn note(&self, restored: &[String]) -> Option<String> {
        let paths: Vec<&str> = self.paths().collect();
        if paths.is_empty() {
            return None;
        }
        let mut note = format!(
            "The story's acceptance tests ({}) are fixed: make the code pass them.",
            backticked(&paths)
        );
        if !restored.is_empty() {
            note.push_str(&format!(
                " Your change to {} was put back.",
                backticked(restored)
            ));
        }
        Some(note)
    }

    pub fn take(dir: &Path, paths: &[String]) -> FixedTests {
        FixedTests {
            dir: dir.to_path_buf(),
            files: paths
                .iter()
                .map(|path| (path.clone(), std::fs::read(dir.join(path)).ok()))
                .collect(),
        }
    }

    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(path, _)| path.as_str())
    }

    /// Puts back every test that changed; returns their paths.
    pub fn restore(&self) -> Vec<String> {
        let mut restored = Vec::new();
        for (path, bytes) in &self.files {
            let Some(bytes) = bytes else { continue };
            let full = self.dir.join(path);
            if std::fs::read(&full).ok().as_ref() != Some(bytes)
                && crate::atomic_file::write(&full, bytes).is_ok()
            {
                restored.push(path.clone());
            }
        }
        restored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_reads_back_its_paths() {
        let dir = tempfile::tempdir().unwrap();
        let paths = vec!["tests/test_a.py".to_string(), "tests/test_b.py".to_string()];
        let section = listing(dir.path(), &paths, "test_median_odd: the middle value");
        assert!(section.ends_with("test_median_odd: the middle value"));
        assert_eq!(listed_paths(&section), paths);
        assert!(listed_paths("what the model said").is_empty());
    }

    #[test]
    fn the_listing_shows_the_tests_as_fixed_not_as_the_model_wrote_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        let fixed = "import pytest\nfrom inventory.cart import Cart\n\n\ndef test_example():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    cart.remove(\"apple\")\n    assert cart.quantity(\"apple\") == 0\n";
        std::fs::write(dir.path().join("tests/test_remove.py"), fixed).unwrap();
        let answer = "tests/test_remove.py\n```python\ndef test_example():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    cart.remove(\"apple\")\n    assert cart.quantity(\"apple\") == 2\n```\nOne test, from the first criterion.";
        let section = listing(dir.path(), &["tests/test_remove.py".to_string()], answer);
        assert_eq!(
            section,
            format!("Acceptance tests, fixed for implement:\n- `tests/test_remove.py`\n\nOne test, from the first criterion.\n\ntests/test_remove.py\n```python\n{}\n```", fixed.trim_end())
        );
        assert!(!section.contains("== 2"));
    }

    #[test]
    fn fixed_tests_are_put_back() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("test_a.py"), "assert f(1) == 2\n").unwrap();
        let fixed = FixedTests::take(dir.path(), &["test_a.py".to_string()]);
        assert!(fixed.restore().is_empty());
        std::fs::write(dir.path().join("test_a.py"), "assert True\n").unwrap();
        assert_eq!(fixed.restore(), vec!["test_a.py".to_string()]);
        std::fs::remove_file(dir.path().join("test_a.py")).unwrap();
        assert_eq!(fixed.restore(), vec!["test_a.py".to_string()]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("test_a.py")).unwrap(),
            "assert f(1) == 2\n"
        );
    }
}
