//! Mends of the implementer's own Python files, made before each of implement's test runs
//! (docs/design.md §21), where a small model gets the form wrong and the code right: its code
//! loses an import of its own module, its tests get the imports they lack and lose a `self` a
//! top-level test never uses. The story's acceptance tests are not its own: they stay as they
//! were fixed.

use std::path::Path;

use super::examples::{add_missing_imports, unused_self_dropped};
use super::fixed_tests::FixedTests;
use super::python_imports::without_imports_of_itself;
use crate::agents::prompts::is_test_path;
use crate::agents::transcript::Transcript;

/// Mends the Python files of `changed` (relative to `dir`) that are none of `fixed`; `homes`
/// says where each function the story names lives, for the tests' imports. Each mend is
/// recorded in `transcript`.
pub fn mend(
    dir: &Path,
    changed: &[String],
    fixed: &FixedTests,
    homes: &[(String, String)],
    transcript: &Transcript,
) {
    let mine = |path: &&String| {
        path.ends_with(".py") && !fixed.paths().any(|fixed| fixed == path.as_str())
    };
    for path in changed.iter().filter(mine) {
        let full = dir.join(path);
        if !is_test_path(Path::new(path)) {
            let Ok(text) = std::fs::read_to_string(&full) else {
                continue;
            };
            let mended = without_imports_of_itself(&text, path);
            if mended != text && crate::atomic_file::write(&full, mended.as_bytes()).is_ok() {
                transcript.record("self_import_dropped", serde_json::json!({"path": path}));
            }
            continue;
        }
        if let Some(added) = add_missing_imports(dir, path, homes) {
            transcript.record(
                "test_imports_added",
                serde_json::json!({"path": path, "imports": added}),
            );
        }
        let mended = std::fs::read_to_string(&full)
            .ok()
            .and_then(|text| unused_self_dropped(&text));
        if let Some(text) = mended {
            if crate::atomic_file::write(&full, text.as_bytes()).is_ok() {
                transcript.record("test_self_dropped", serde_json::json!({"path": path}));
            }
        }
    }
}
