//! Test files of the implementer's own that do not load (docs/design.md §21). pytest stops
//! before any test when a test module fails to import, the story's acceptance tests among them,
//! so such a round tells the model nothing of the story's work: a 1.5B model's own
//! `tests/test_pricing.py` with a syntax error stopped inventory's `receipt-line` in every round,
//! and an `import inventory.money.format_price` (a function imported as a module) stopped
//! `parse-quantity` (the inventory benchmark, 2026-11-29). Such a file is put back as the story's
//! base has it, the tests run again, and the model hears why its file went.

use std::path::Path;

use super::fixed_tests::FixedTests;
use crate::agents::prompts::is_test_path;
use crate::vcs;

/// A test file pytest could not load, with the `E ` lines of its error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnloadedFile {
    /// The test file, as pytest names it (relative to the tree it ran in).
    pub file: String,
    /// The error, line by line: `SyntaxError: invalid syntax`, or the file and line before it.
    pub errors: Vec<String>,
}

/// Every test file of pytest's `output` that failed to load: each `ERROR collecting <file>`
/// section with its `E ` lines, or, where the output has no such section, the short summary's
/// `ERROR <file>.py` lines (with the error after ` - ` when pytest gives one). A summary line
/// that names a test (`file::test`) is that test's error, not its file's.
pub fn unloaded_files(output: &str) -> Vec<UnloadedFile> {
    let lines: Vec<&str> = output.lines().collect();
    let mut found: Vec<UnloadedFile> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(after) = line.split("ERROR collecting ").nth(1) else {
            continue;
        };
        let file = after.trim_end_matches(['_', ' ']).trim().to_string();
        let errors = lines[at + 1..]
            .iter()
            .take_while(|line| !line.contains("ERROR collecting ") && !line.starts_with("=="))
            .filter_map(|line| line.strip_prefix("E "))
            .map(|error| error.trim().to_string())
            .filter(|error| !error.is_empty())
            .collect();
        found.push(UnloadedFile { file, errors });
    }
    if !found.is_empty() {
        return found;
    }
    for line in &lines {
        let Some(rest) = line.trim().strip_prefix("ERROR ") else {
            continue;
        };
        let (file, error) = rest.split_once(" - ").unwrap_or((rest, ""));
        let file = file.trim();
        if file.ends_with(".py") && !file.contains(' ') && !file.contains("::") {
            found.push(UnloadedFile {
                file: file.to_string(),
                errors: Some(error.trim().to_string())
                    .filter(|error| !error.is_empty())
                    .into_iter()
                    .collect(),
            });
        }
    }
    found
}

/// The files of [`unloaded_files`] that are the implementer's own tests: test files of `dir`
/// that the story's work added or changed since commit `base`, none of the story's acceptance
/// tests (`fixed`), which are not the implementer's to lose.
pub fn own_unloaded_tests(
    dir: &Path,
    base: &str,
    output: &str,
    fixed: &FixedTests,
) -> Vec<UnloadedFile> {
    let unloaded = unloaded_files(output);
    if unloaded.is_empty() {
        return unloaded;
    }
    let changed = vcs::worktree_changes(dir, base, &[]).unwrap_or_default();
    unloaded
        .into_iter()
        .filter(|unloaded| {
            changed.contains(&unloaded.file)
                && is_test_path(Path::new(&unloaded.file))
                && !fixed.paths().any(|path| path == unloaded.file)
        })
        .collect()
}

/// What the model is told of its test files put back.
pub fn put_back_note(files: &[UnloadedFile]) -> String {
    let described: Vec<String> = files
        .iter()
        .map(|unloaded| {
            let errors = unloaded.errors.join("\n");
            match errors.is_empty() {
                true => format!("`{}`", unloaded.file),
                false => format!("`{}`:\n{errors}", unloaded.file),
            }
        })
        .collect();
    let (files_word, it) = match files.len() {
        1 => ("test file", "it was"),
        _ => ("test files", "they were"),
    };
    format!(
        "Your {files_word} did not load, so no test could run: {}\nSo {it} put back as the \
         story's branch has it, and the tests ran without. Write a test file again only whole \
         and valid, importing functions with `from module import name`.",
        described.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::{sh, unborn_repo, write};

    /// Recorded from pytest 8 (`-q`): a syntax error in one test file, a function imported as a
    /// module in another.
    const TWO_UNLOADED: &str = "\n==================================== ERRORS ====================================\n______________________ ERROR collecting tests/test_bad.py ______________________\n../pyvenv/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule\n    mod = import_path(\n/root/.pyenv/versions/3.11.7/lib/python3.11/ast.py:50: in parse\n    return compile(source, filename, mode, flags,\nE     File \"/tmp/pyt/tests/test_bad.py\", line 2\nE       def test_g(:\nE                  ^\nE   SyntaxError: invalid syntax\n______________________ ERROR collecting tests/test_imp.py ______________________\nImportError while importing test module '/tmp/pyt/tests/test_imp.py'.\nHint: make sure your test modules/packages have valid Python names.\nTraceback:\ntests/test_imp.py:1: in <module>\n    import m.f\nE   ModuleNotFoundError: No module named 'm.f'; 'm' is not a package\n=========================== short test summary info ============================\nERROR tests/test_bad.py\nERROR tests/test_imp.py\n!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!\n2 errors in 0.48s\n";

    #[test]
    fn each_file_that_did_not_load_comes_with_its_error() {
        assert_eq!(
            unloaded_files(TWO_UNLOADED),
            vec![
                UnloadedFile {
                    file: "tests/test_bad.py".into(),
                    errors: vec![
                        "File \"/tmp/pyt/tests/test_bad.py\", line 2".into(),
                        "def test_g(:".into(),
                        "^".into(),
                        "SyntaxError: invalid syntax".into(),
                    ],
                },
                UnloadedFile {
                    file: "tests/test_imp.py".into(),
                    errors: vec![
                        "ModuleNotFoundError: No module named 'm.f'; 'm' is not a package".into()
                    ],
                },
            ]
        );
        // The short summary alone (`--tb=no`), a test's own error, and a run that loaded all.
        let summary = "ERROR tests/test_a.py - SyntaxError: invalid syntax\nERROR tests/test_b.py\nERROR tests/test_c.py::test_x - fixture 'self' not found\n1 failed";
        assert_eq!(
            unloaded_files(summary),
            vec![
                UnloadedFile {
                    file: "tests/test_a.py".into(),
                    errors: vec!["SyntaxError: invalid syntax".into()],
                },
                UnloadedFile {
                    file: "tests/test_b.py".into(),
                    errors: vec![],
                },
            ]
        );
        assert!(unloaded_files("FAILED tests/test_a.py::test_x - assert\n1 failed").is_empty());
    }

    #[test]
    fn only_the_implementers_own_test_files_are_its_to_lose() {
        let repo = unborn_repo();
        let dir = repo.path();
        write(dir, "m.py", "def f():\n    return 1\n");
        write(
            dir,
            "tests/test_old.py",
            "def test_old():\n    assert True\n",
        );
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "base"]);
        write(dir, "tests/test_bad.py", "def test_g(:\n    pass\n");
        write(dir, "tests/test_imp.py", "import m.f\n");
        write(dir, "tests/test_accept.py", "import m.g\n");
        let fixed = FixedTests::take(dir, &["tests/test_accept.py".to_string()]);
        let output = "ERROR tests/test_bad.py - SyntaxError\nERROR tests/test_imp.py - x\nERROR tests/test_old.py - y\nERROR tests/test_accept.py - z\n";

        let own: Vec<String> = own_unloaded_tests(dir, "HEAD", output, &fixed)
            .into_iter()
            .map(|unloaded| unloaded.file)
            .collect();

        // test_old.py is the project's, unchanged (its failure to load is the code's doing);
        // test_accept.py is the story's acceptance test.
        assert_eq!(own, ["tests/test_bad.py", "tests/test_imp.py"]);
        let note = put_back_note(&own_unloaded_tests(dir, "HEAD", TWO_UNLOADED, &fixed)[..1]);
        assert!(note.starts_with("Your test file did not load"), "{note}");
        assert!(note.contains("`tests/test_bad.py`:\n"), "{note}");
        assert!(note.contains("SyntaxError: invalid syntax"), "{note}");
        assert!(note.contains("it was put back"), "{note}");
    }
}
