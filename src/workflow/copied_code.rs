//! A test file's own copy of the code it is to test (docs/design.md §21). A small model asked
//! for tests of `parse_amount` may write a `parse_amount` into the test file and test that:
//! the tests pass before the story's code exists (and are refused for it), or, for a bug,
//! check a fixed copy instead of the code with the bug. The copy is taken out and the name
//! imported from the file that holds, or is to hold, the real one.

use std::path::Path;

use super::python_imports::{python_module, with_imports_on_top};
use super::python_lines::{definition_block, kept_lines};
use super::tree_definitions::python_file_defining;

/// What came out of a test file: each name with the module it is now imported from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopiesTakenOut {
    pub names: Vec<String>,
    pub imports: Vec<String>,
}

impl CopiesTakenOut {
    /// What the acceptance phase's notes say of it, for the test file `path`.
    pub fn note(&self, path: &str) -> String {
        let imported = if self.imports.is_empty() {
            String::new()
        } else {
            format!(" (`{}`)", self.imports.join("`, `"))
        };
        format!(
            "took the test file's own `{}` out of `{path}`: the tests call the code of the tree{imported}",
            self.names.join("`, `")
        )
    }
}

/// Takes out of the Python test file `path` (relative to `dir`) the top-level functions and
/// classes that the story names (`homes`: each with the file the story names for it) or that
/// a source file of the tree defines, and imports each from there. Tests, fixtures and helpers
/// of names nobody else defines stay. `None` when there is no such copy or the file cannot be
/// read or written.
pub fn take_out(dir: &Path, path: &str, homes: &[(String, String)]) -> Option<CopiesTakenOut> {
    let full = dir.join(path);
    let text = std::fs::read_to_string(&full).ok()?;
    let (kept, taken) = without_copies(&text, |name| {
        homes
            .iter()
            .find(|(named, _)| named == name)
            .map(|(_, file)| file.clone())
            .or_else(|| python_file_defining(dir, name))
            .filter(|file| file != path)
    })?;
    let mut imports = Vec::new();
    let mut names = Vec::new();
    for (name, file) in taken {
        let Some(module) = python_module(&file) else {
            continue;
        };
        let import = format!("from {module} import {name}");
        if !kept.lines().any(|line| line.trim() == import) && !imports.contains(&import) {
            imports.push(import);
        }
        names.push(name);
    }
    let updated = with_imports_on_top(&kept, &imports, true);
    crate::atomic_file::write(&full, updated.as_bytes()).ok()?;
    Some(CopiesTakenOut { names, imports })
}

/// `text` without its top-level definitions for which `home` names another file, and those
/// names with their files; `None` when there is none.
fn without_copies(
    text: &str,
    home: impl Fn(&str) -> Option<String>,
) -> Option<(String, Vec<(String, String)>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut gone = vec![false; lines.len()];
    let mut taken: Vec<(String, String)> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let defines = ["def ", "async def ", "class "]
            .iter()
            .any(|keyword| line.starts_with(keyword));
        if !defines || gone[at] {
            continue;
        }
        let Some(name) = crate::agents::tools::defined_name(line) else {
            continue;
        };
        // pytest's own: tests, test classes and fixtures are what a test file is for.
        let block = definition_block(&lines, at);
        let fixture = lines[block.start..at]
            .iter()
            .any(|decorator| decorator.contains("fixture"));
        if name.starts_with("test") || name.starts_with("Test") || fixture {
            continue;
        }
        let Some(file) = home(&name) else {
            continue;
        };
        for slot in &mut gone[block] {
            *slot = true;
        }
        taken.push((name, file));
    }
    if taken.is_empty() {
        return None;
    }
    Some((kept_lines(&lines, &gone), taken))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply of the 1.5B model's kind: the function the story asks for, written into the
    /// test file above its tests.
    const COPIED: &str = "import pytest\n\n\ndef parse_amount(text):\n    return int(text.replace('.', ''))\n\n\n@pytest.fixture\ndef amounts():\n    return ['1.00']\n\n\ndef helper(x):\n    return x\n\n\ndef test_parse_amount():\n    assert parse_amount('1.00') == 100\n";

    #[test]
    fn a_copy_of_a_named_function_goes_and_the_real_one_is_imported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_money.py"), COPIED).unwrap();
        let homes = vec![("parse_amount".to_string(), "ledger/money.py".to_string())];

        let taken = take_out(dir.path(), "tests/test_money.py", &homes).unwrap();

        assert_eq!(taken.names, vec!["parse_amount"]);
        assert_eq!(taken.imports, vec!["from ledger.money import parse_amount"]);
        let text = std::fs::read_to_string(dir.path().join("tests/test_money.py")).unwrap();
        assert_eq!(
            text,
            "from ledger.money import parse_amount\nimport pytest\n\n\n@pytest.fixture\ndef amounts():\n    return ['1.00']\n\n\ndef helper(x):\n    return x\n\n\ndef test_parse_amount():\n    assert parse_amount('1.00') == 100\n"
        );
    }

    #[test]
    fn a_copy_of_a_class_the_tree_defines_goes_and_nothing_else_is_touched() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ledger")).unwrap();
        std::fs::write(dir.path().join("ledger/book.py"), "class Book:\n    pass\n").unwrap();
        let tests = "from ledger.book import Book\n\nclass Book:\n    def withdraw(self, amount):\n        pass\n\ndef test_withdraw():\n    Book().withdraw(1)\n";
        std::fs::write(dir.path().join("test_book.py"), tests).unwrap();

        let taken = take_out(dir.path(), "test_book.py", &[]).unwrap();

        assert_eq!(taken.names, vec!["Book"]);
        assert!(taken.imports.is_empty(), "already imported: {taken:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("test_book.py")).unwrap(),
            "from ledger.book import Book\n\ndef test_withdraw():\n    Book().withdraw(1)\n"
        );

        let own = "def helper():\n    return 1\n\ndef test_it():\n    assert helper() == 1\n";
        std::fs::write(dir.path().join("test_own.py"), own).unwrap();
        assert_eq!(take_out(dir.path(), "test_own.py", &[]), None);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("test_own.py")).unwrap(),
            own
        );
    }
}
