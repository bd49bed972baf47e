//! Where a story's acceptance tests go (docs/design.md §21): beside the project's own tests, in
//! their language and naming.

use std::path::{Path, PathBuf};

use crate::agents::prompts::is_test_path;

/// Where the tests go: beside the project's existing tests, named after the story, with their
/// extension; `tests/test_<slug>.py` when the project has none yet.
pub fn suggested_path(root: &Path, slug: &str) -> String {
    let stem: String = slug
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    let stem = stem.trim_matches('_');
    match first_test_file(root) {
        Some(existing) => {
            let dir = existing.parent().unwrap_or(Path::new(""));
            let ext = existing
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("py");
            let name = existing
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let file = if name.starts_with("test_") || ext == "py" {
                format!("test_{stem}.{ext}")
            } else if name.contains(".test.") {
                format!("{stem}.test.{ext}")
            } else if name.contains(".spec.") {
                format!("{stem}.spec.{ext}")
            } else {
                format!("{stem}_test.{ext}")
            };
            dir.join(file).to_string_lossy().into_owned()
        }
        None => format!("tests/test_{stem}.py"),
    }
}

/// The first test file of the tree, by path.
fn first_test_file(root: &Path) -> Option<PathBuf> {
    crate::workflow::tree_definitions::tree_files(root)
        .into_iter()
        .find(|path| is_test_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tests_go_beside_the_projects_own() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            suggested_path(root.path(), "add-median"),
            "tests/test_add_median.py"
        );
        std::fs::create_dir_all(root.path().join("tests")).unwrap();
        std::fs::write(root.path().join("tests/test_stats.py"), "").unwrap();
        assert_eq!(
            suggested_path(root.path(), "add-median"),
            "tests/test_add_median.py"
        );
        let js = tempfile::tempdir().unwrap();
        std::fs::write(js.path().join("cart.test.js"), "").unwrap();
        assert_eq!(
            suggested_path(js.path(), "remove-item"),
            "remove_item.test.js"
        );
    }
}
