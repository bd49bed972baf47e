//! Mends of the implementer's own Python files, made before each of implement's test runs
//! (docs/design.md §21), where a small model gets the form wrong and the code right: its code
//! loses an import of its own module and imports a function as Python can, its tests get the imports they lack and lose a `self` a
//! top-level test never uses. The story's acceptance tests are not its own: they stay as they
//! were fixed.

use std::path::Path;

use super::examples::{add_missing_imports, unused_self_dropped};
use super::fixed_tests::FixedTests;
use super::misplaced_imports::{
    definitions_imported_as_modules, file_imports_module, names_the_tree_lacks,
};
use super::python_imports::{imports_from_homes, python_module, without_imports_of_itself};
use super::tree_definitions::python_files_defining;
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
            // `import sawmill.timber.pieces_per_board` in the 1.5B model's `orders.py` failed
            // every test run at collection (sawmill `boards-needed`, 2026-12-07).
            let text = match definitions_imported_as_modules(dir, &text) {
                Some(mended) if crate::atomic_file::write(&full, mended.as_bytes()).is_ok() => {
                    transcript.record(
                        "source_imports_moved",
                        serde_json::json!({"path": path, "definitions_as_modules": true}),
                    );
                    mended
                }
                _ => text,
            };
            let text = match imports_from_tree_homes(dir, &text, path) {
                Some((mended, replaced))
                    if crate::atomic_file::write(&full, mended.as_bytes()).is_ok() =>
                {
                    transcript.record(
                        "source_imports_moved",
                        serde_json::json!({"path": path, "replaced": replaced}),
                    );
                    mended
                }
                _ => text,
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

/// `code`, the source file `path` of the tree at `dir`, with each name it imports from a module
/// of the tree that does not bind it imported from the file that defines it (the replaced lines
/// with it); `None` when there is none. A name the file defines itself becomes an import of
/// itself, which the self-import mend then drops; a home that imports `path`'s module is left
/// alone, for the import would go round in a circle.
fn imports_from_tree_homes(dir: &Path, code: &str, path: &str) -> Option<(String, Vec<String>)> {
    let names = names_the_tree_lacks(dir, code);
    if names.is_empty() {
        return None;
    }
    let own_module = python_module(path);
    let homes: Vec<(String, String)> = python_files_defining(dir, &names)
        .into_iter()
        .filter(|(_, home)| {
            home == path
                || own_module
                    .as_deref()
                    .is_none_or(|module| !file_imports_module(dir, home, module))
        })
        .collect();
    imports_from_homes(dir, code, &homes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        }
        dir
    }

    #[test]
    fn a_name_imported_from_a_module_no_one_wrote_comes_from_the_file_that_defines_it() {
        let statement = "from datetime import date\nfrom tollbooth.account import Account, Missing\n\n\ndef statement(account: Account) -> str:\n    return ''\n";
        let dir = tree(&[
            ("tollbooth/__init__.py", ""),
            (
                "tollbooth/trips.py",
                "class Trip:\n    pass\n\n\nclass Account:\n    pass\n",
            ),
            ("tollbooth/statement.py", statement),
        ]);
        let (mended, replaced) =
            imports_from_tree_homes(dir.path(), statement, "tollbooth/statement.py").unwrap();
        assert_eq!(
            mended,
            "from datetime import date\nfrom tollbooth.account import Missing\nfrom tollbooth.trips import Account\n\n\ndef statement(account: Account) -> str:\n    return ''\n"
        );
        assert_eq!(
            replaced,
            ["from tollbooth.account import Account, Missing".to_string()]
        );
    }

    #[test]
    fn a_function_the_source_imports_as_a_module_is_imported_as_python_can() {
        // Recorded (Qwen2.5-Coder-1.5B, sawmill `boards-needed`, 2026-12-07), shortened.
        let orders = "from .timber import parse_section\nimport sawmill.timber.pieces_per_board\n\n\nclass Order:\n    def boards_needed(self, board_length):\n        return sawmill.timber.pieces_per_board(board_length, 1200)\n";
        let dir = tree(&[
            ("sawmill/__init__.py", ""),
            (
                "sawmill/timber.py",
                "def pieces_per_board(board_length, piece_length, kerf=4):\n    return 0\n",
            ),
            ("sawmill/orders.py", orders),
        ]);
        let board = tempfile::tempdir().unwrap();
        let transcript = Transcript::create(
            board.path(),
            &crate::board::StoryId::from("story-1"),
            "implement",
        )
        .unwrap();
        let changed = ["sawmill/orders.py".to_string()];
        mend(
            dir.path(),
            &changed,
            &FixedTests::default(),
            &[],
            &transcript,
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sawmill/orders.py")).unwrap(),
            orders.replace(
                "import sawmill.timber.pieces_per_board\n",
                "import sawmill.timber\nfrom sawmill.timber import pieces_per_board\n"
            )
        );
    }

    #[test]
    fn imports_of_the_standard_library_and_of_modules_that_bind_the_name_are_left_alone() {
        let code = "from dataclasses import dataclass\nfrom tollbooth.trips import Account\n";
        let dir = tree(&[
            ("tollbooth/trips.py", "class Account:\n    pass\n"),
            ("tollbooth/rates.py", "def dataclass():\n    pass\n"),
            ("tollbooth/statement.py", code),
        ]);
        assert_eq!(
            imports_from_tree_homes(dir.path(), code, "tollbooth/statement.py"),
            None
        );
    }

    #[test]
    fn a_home_that_imports_the_file_is_not_imported_back() {
        let code = "from tollbooth.account import Account\n";
        let dir = tree(&[
            (
                "tollbooth/trips.py",
                "from tollbooth.statement import statement\n\n\nclass Account:\n    pass\n",
            ),
            ("tollbooth/statement.py", code),
        ]);
        assert_eq!(
            imports_from_tree_homes(dir.path(), code, "tollbooth/statement.py"),
            None
        );
    }

    #[test]
    fn a_name_the_file_defines_itself_loses_its_import() {
        let code = "from tollbooth.account import Account\n\n\nclass Account:\n    pass\n";
        let dir = tree(&[("tollbooth/statement.py", code)]);
        let (mended, _) =
            imports_from_tree_homes(dir.path(), code, "tollbooth/statement.py").unwrap();
        assert_eq!(
            without_imports_of_itself(&mended, "tollbooth/statement.py"),
            "class Account:\n    pass\n"
        );
    }
}
