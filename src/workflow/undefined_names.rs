//! Names a Python test uses without importing, which the test run names in a `NameError`, and
//! the standard import that defines them (docs/design.md §21). A 1.5B model writes
//! `pytest.raises` or `Decimal("1.50")` and forgets the import line; its test is right and the
//! import is not a matter of judgement, so the tool adds it rather than refuse the tests.

use std::path::Path;

/// The name the first `NameError: name 'X' is not defined` of a test run's `output` names.
pub fn undefined_name(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line.split("NameError: name '").nth(1)?;
        let name = rest.split('\'').next()?;
        is_identifier(name).then(|| name.to_string())
    })
}

/// The import line that defines `name` from the test framework or Python's standard library:
/// a module (`pytest`, `math`, `re`) or a name commonly imported from one (`Decimal`,
/// `defaultdict`). `None` for any other name: that one is the story's, or a mistake.
pub fn import_of(name: &str) -> Option<String> {
    const MODULES: &[&str] = &[
        "pytest",
        "math",
        "re",
        "json",
        "decimal",
        "fractions",
        "datetime",
        "collections",
        "itertools",
        "functools",
        "string",
        "random",
        "statistics",
        "os",
        "sys",
        "io",
        "csv",
        "time",
        "typing",
        "dataclasses",
        "enum",
        "operator",
    ];
    const FROM: &[(&str, &str)] = &[
        ("Decimal", "decimal"),
        ("InvalidOperation", "decimal"),
        ("ROUND_HALF_UP", "decimal"),
        ("ROUND_HALF_EVEN", "decimal"),
        ("Fraction", "fractions"),
        ("date", "datetime"),
        ("timedelta", "datetime"),
        ("defaultdict", "collections"),
        ("Counter", "collections"),
        ("OrderedDict", "collections"),
        ("namedtuple", "collections"),
        ("dataclass", "dataclasses"),
        ("StringIO", "io"),
        ("reduce", "functools"),
    ];
    if MODULES.contains(&name) {
        return Some(format!("import {name}"));
    }
    FROM.iter()
        .find(|(known, _)| *known == name)
        .map(|(_, module)| format!("from {module} import {name}"))
}

/// Adds the import of `name` ([`import_of`]) to the top of each Python file of `paths` (relative
/// to `dir`) that uses it as a word. Returns the import line and the files it went into; `None`
/// when the name has no standard import or no file uses it.
pub fn import_where_used(
    dir: &Path,
    paths: &[String],
    name: &str,
) -> Option<(String, Vec<String>)> {
    let import = import_of(name)?;
    let mut changed = Vec::new();
    for path in paths.iter().filter(|path| path.ends_with(".py")) {
        let full = dir.join(path);
        let Ok(text) = std::fs::read_to_string(&full) else {
            continue;
        };
        if !uses_word(&text, name) || text.lines().any(|line| line == import) {
            continue;
        }
        let updated =
            super::examples::with_imports_on_top(&text, std::slice::from_ref(&import), false);
        if crate::atomic_file::write(&full, updated.as_bytes()).is_ok() {
            changed.push(path.clone());
        }
    }
    (!changed.is_empty()).then_some((import, changed))
}

fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

fn uses_word(text: &str, name: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| word == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_undefined_name_is_read_from_a_pytest_run() {
        let output = "F\n=== FAILURES ===\nE       NameError: name 'pytest' is not defined\n\
                      FAILED tests/test_ledger.py::test_unknown - NameError: name 'pytest' is not defined\n";
        assert_eq!(undefined_name(output).as_deref(), Some("pytest"));
        assert_eq!(undefined_name("1 failed\nAssertionError"), None);
    }

    #[test]
    fn standard_names_have_imports_and_the_storys_do_not() {
        assert_eq!(import_of("pytest").as_deref(), Some("import pytest"));
        assert_eq!(
            import_of("Decimal").as_deref(),
            Some("from decimal import Decimal")
        );
        assert_eq!(import_of("withdraw"), None);
    }

    #[test]
    fn the_import_goes_into_the_files_that_use_the_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        let using = "from ledger import Ledger\n\ndef test_unknown():\n    with pytest.raises(KeyError):\n        Ledger().balance('x')\n";
        std::fs::write(dir.path().join("tests/test_a.py"), using).unwrap();
        std::fs::write(
            dir.path().join("tests/test_b.py"),
            "def test_b():\n    assert 1\n",
        )
        .unwrap();
        let paths = vec!["tests/test_a.py".to_string(), "tests/test_b.py".to_string()];

        let (import, changed) = import_where_used(dir.path(), &paths, "pytest").unwrap();

        assert_eq!(import, "import pytest");
        assert_eq!(changed, vec!["tests/test_a.py".to_string()]);
        let text = std::fs::read_to_string(dir.path().join("tests/test_a.py")).unwrap();
        assert!(
            text.starts_with("import pytest\nfrom ledger import Ledger\n"),
            "{text}"
        );
        let untouched = std::fs::read_to_string(dir.path().join("tests/test_b.py")).unwrap();
        assert!(!untouched.contains("import"));
        // A second pass finds the import there and adds nothing.
        assert_eq!(import_where_used(dir.path(), &paths, "pytest"), None);
        assert_eq!(import_where_used(dir.path(), &paths, "withdraw"), None);
    }
}
