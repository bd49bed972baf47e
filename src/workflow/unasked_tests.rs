//! Tests the implementer wrote for what the story does not ask (docs/design.md §21): a small model
//! often adds a test of a function the story never names (the benchmark's `median` story was
//! blocked by the model's own test of `mean([])`). Such a failing test goes back as "remove or
//! fix this test", and at the end it is taken out rather than block the story.

use std::path::Path;

use super::fixed_tests::FixedTests;
use super::named_functions::NamedFunction;
use crate::agents::prompts::is_test_path;
use crate::vcs;

/// A failing test as the runner names it: pytest's `FAILED tests/test_x.py::test_y - …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedTest {
    pub file: String,
    pub name: String,
}

/// The failing tests a run's output names (pytest's summary lines), each once.
pub fn failed_tests(output: &str) -> Vec<FailedTest> {
    let mut found: Vec<FailedTest> = Vec::new();
    for line in output.lines().map(str::trim) {
        let Some(rest) = line.strip_prefix("FAILED ") else {
            continue;
        };
        let id = rest.split_whitespace().next().unwrap_or("");
        let Some((file, test)) = id.split_once("::") else {
            continue;
        };
        let name = test.rsplit("::").next().unwrap_or(test);
        let name = name.split('[').next().unwrap_or(name).to_string();
        let failed = FailedTest {
            file: file.to_string(),
            name,
        };
        if !found.contains(&failed) {
            found.push(failed);
        }
    }
    found
}

/// Failing tests that only the implementer's own, unasked tests account for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unasked {
    pub tests: Vec<FailedTest>,
    /// The test files they are in, which the implementer added or changed.
    pub files: Vec<String>,
}

impl Unasked {
    /// What the model is told.
    pub fn feedback(&self) -> String {
        let tests: Vec<String> = self
            .tests
            .iter()
            .map(|t| format!("`{}` in {}", t.name, t.file))
            .collect();
        format!(
            "The only failing {} {}, which the story does not ask for: remove or fix {}; the story's own work is what counts.",
            if tests.len() == 1 { "test is" } else { "tests are" },
            tests.join(", "),
            if tests.len() == 1 { "this test" } else { "these tests" },
        )
    }
}

/// When every failing test of `output` is in a test file the implementer added or changed in
/// `dir` (not one of the story's acceptance tests) and names no function the story names: those
/// tests. `None` when anything else fails, or nothing can be told.
pub fn unasked_failures(
    dir: &Path,
    output: &str,
    named: &[NamedFunction],
    fixed: &FixedTests,
) -> Option<Unasked> {
    let failed = failed_tests(output);
    if failed.is_empty() || !vcs::is_repo(dir) {
        return None;
    }
    let changed = vcs::worktree_changes(dir, "HEAD", &[]).ok()?;
    let unasked = failed.iter().all(|test| {
        changed.contains(&test.file)
            && is_test_path(Path::new(&test.file))
            && !fixed.paths().any(|path| path == test.file)
            && !named.iter().any(|f| test.name.contains(f.name.as_str()))
    });
    if !unasked {
        return None;
    }
    let mut files: Vec<String> = failed.iter().map(|t| t.file.clone()).collect();
    files.sort();
    files.dedup();
    Some(Unasked {
        tests: failed,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::{sh, unborn_repo, write};

    fn named(name: &str) -> NamedFunction {
        NamedFunction {
            name: name.into(),
            files: Vec::new(),
        }
    }

    #[test]
    fn pytest_summary_lines_name_the_failing_tests() {
        let output = "..F\nFAILED tests/test_stats.py::test_mean_empty - ZeroDivisionError\nFAILED tests/test_stats.py::TestMedian::test_even[1-2] - assert\nERROR x\n2 failed";
        assert_eq!(
            failed_tests(output),
            vec![
                FailedTest {
                    file: "tests/test_stats.py".into(),
                    name: "test_mean_empty".into()
                },
                FailedTest {
                    file: "tests/test_stats.py".into(),
                    name: "test_even".into()
                },
            ]
        );
    }

    #[test]
    fn only_the_implementers_own_tests_of_unnamed_functions_are_unasked() {
        let repo = unborn_repo();
        let dir = repo.path();
        write(
            dir,
            "tests/test_old.py",
            "def test_old():\n    assert True\n",
        );
        write(
            dir,
            "tests/test_greet.py",
            "def test_greet():\n    assert True\n",
        );
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "base"]);
        write(
            dir,
            "tests/test_stats.py",
            "def test_mean_empty():\n    assert False\n",
        );
        let fixed = FixedTests::take(dir, &["tests/test_greet.py".to_string()]);
        let named = [named("median")];

        let mean = "FAILED tests/test_stats.py::test_mean_empty - ZeroDivisionError";
        let found = unasked_failures(dir, mean, &named, &fixed).expect("unasked");
        assert_eq!(found.files, vec!["tests/test_stats.py".to_string()]);
        assert!(found
            .feedback()
            .contains("`test_mean_empty` in tests/test_stats.py"));

        // A test of the story's own function, an old test, an acceptance test: not unasked.
        for output in [
            "FAILED tests/test_stats.py::test_median_even - assert",
            "FAILED tests/test_old.py::test_old - assert",
            "FAILED tests/test_greet.py::test_greet - assert",
            &format!("{mean}\nFAILED tests/test_old.py::test_old - assert"),
        ] {
            assert_eq!(
                unasked_failures(dir, output, &named, &fixed),
                None,
                "{output}"
            );
        }
    }
}
