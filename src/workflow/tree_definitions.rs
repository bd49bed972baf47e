//! Where the tree at hand defines a Python name: a bounded walk of its files, and the first
//! source file (not a test) that defines a name at its top level. What a story's names are
//! placed by when the story does not say where they go (docs/design.md §21).

use std::path::{Path, PathBuf};

use crate::agents::prompts::is_test_path;

/// Files looked at for definitions; a larger tree is not searched further.
pub const DEFINITION_SCAN: usize = 5_000;

/// Each of `names` that a Python source file (not a test) of the tree at `dir` defines at its
/// top level, with the first such file, relative to `dir`: one walk for them all.
pub fn python_files_defining(dir: &Path, names: &[String]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let sources = tree_files(dir)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "py") && !is_test_path(path));
    for path in sources.take(DEFINITION_SCAN) {
        let Ok(text) = std::fs::read_to_string(dir.join(&path)) else {
            continue;
        };
        for line in text
            .lines()
            .filter(|line| !line.starts_with(char::is_whitespace))
        {
            let Some(name) = crate::agents::tools::defined_name(line) else {
                continue;
            };
            if names.contains(&name) && !found.iter().any(|(known, _)| *known == name) {
                found.push((name, path.to_string_lossy().into_owned()));
            }
        }
    }
    found
}

/// The first Python source file (not a test) under `dir` that defines `name` at its top level,
/// relative to `dir`.
pub fn python_file_defining(dir: &Path, name: &str) -> Option<String> {
    let defines = |path: &PathBuf| {
        std::fs::read_to_string(dir.join(path)).is_ok_and(|text| {
            text.lines().any(|line| {
                !line.starts_with(char::is_whitespace)
                    && crate::agents::tools::defined_name(line).as_deref() == Some(name)
            })
        })
    };
    tree_files(dir)
        .into_iter()
        .filter(|path| path.extension().is_some_and(|e| e == "py") && !is_test_path(path))
        .find(defines)
        .map(|path| path.to_string_lossy().into_owned())
}

/// The files of the tree, relative to `root` and sorted: a bounded walk that skips hidden,
/// vendored and build folders, for lookups by name and by kind.
pub fn tree_files(root: &Path) -> Vec<PathBuf> {
    const LOOKED_AT: usize = 5_000;
    let mut pending = vec![PathBuf::new()];
    let mut seen = 0;
    let mut found: Vec<PathBuf> = Vec::new();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > LOOKED_AT {
                break;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.')
                || matches!(
                    name.as_str(),
                    "node_modules" | "target" | "venv" | "__pycache__"
                )
            {
                continue;
            }
            let relative = dir.join(&name);
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(relative),
                Ok(kind) if kind.is_file() => found.push(relative),
                _ => {}
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_function_is_found_where_it_is_defined() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(
            dir.path().join("pkg/stats.py"),
            "def mean(v):\n    return 0\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("test_stats.py"), "def mean(v):\n    pass\n").unwrap();
        assert_eq!(
            python_file_defining(dir.path(), "mean").as_deref(),
            Some("pkg/stats.py")
        );
        assert_eq!(python_file_defining(dir.path(), "median"), None);
    }
}
