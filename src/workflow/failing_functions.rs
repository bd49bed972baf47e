//! Which of the story's functions the failing acceptance tests point at, in the order the
//! implement phase asks for them again (docs/design.md §21).

use std::path::Path;

use super::examples::calls;
use super::fixed_tests::FixedTests;
use super::named_functions::NamedFunction;
use super::tree_definitions::python_file_defining;
use crate::agents::tools::source_of;

/// The functions the story names that a failing acceptance test of `output` calls, each once,
/// those that another of them calls first: a failing caller may fail only through its callee.
/// "`add_minutes("23:50", 20)` returns "24:10" because `from_minutes` never wraps the hour": the
/// tool asked the 1.5B model for `add_minutes` alone five times, since the first failing test
/// called it, while `from_minutes(1450)` failed its own test beside it (transit, 2026-12-06).
pub fn failing_in_acceptance(
    dir: &Path,
    output: &str,
    named: &[NamedFunction],
    fixed: &FixedTests,
) -> Vec<NamedFunction> {
    let mut found: Vec<NamedFunction> = Vec::new();
    for test in super::unasked_tests::failed_tests(output) {
        if !fixed.paths().any(|path| path == test.file) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(dir.join(&test.file)) else {
            continue;
        };
        let Some(body) = source_of(&text, &test.name) else {
            continue;
        };
        for function in named {
            let called = body.lines().any(|line| calls(line, &function.name));
            if called && !found.contains(function) {
                found.push(function.clone());
            }
        }
    }
    callees_first(dir, found)
}

/// `functions` with those that another of them calls first, in their order otherwise.
fn callees_first(dir: &Path, functions: Vec<NamedFunction>) -> Vec<NamedFunction> {
    let bodies: Vec<String> = functions
        .iter()
        .map(|function| definition(dir, function).unwrap_or_default())
        .collect();
    let called_by_another = |at: usize| {
        bodies.iter().enumerate().any(|(other, body)| {
            other != at
                && body
                    .lines()
                    .skip(1)
                    .any(|line| calls(line, &functions[at].name))
        })
    };
    let callees = (0..functions.len()).filter(|&at| called_by_another(at));
    let callers = (0..functions.len()).filter(|&at| !called_by_another(at));
    callees
        .chain(callers)
        .map(|at| functions[at].clone())
        .collect()
}

/// The source of `function` where the tree defines it: the file the story names, else the
/// Python file that defines it.
fn definition(dir: &Path, function: &NamedFunction) -> Option<String> {
    let file = function
        .files
        .iter()
        .find(|file| dir.join(file).is_file())
        .cloned()
        .or_else(|| python_file_defining(dir, &function.name))?;
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    source_of(&text, &function.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str) -> NamedFunction {
        NamedFunction {
            name: name.to_string(),
            files: Vec::new(),
        }
    }

    #[test]
    fn a_failing_acceptance_test_names_the_story_functions_it_calls() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("test_accept.py"),
            "from textkit import truncate, shout\n\ndef test_truncate():\n    assert truncate('hello', 10) == 'hello'\n\ndef test_shout():\n    assert shout('a') == 'A!'\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("test_own.py"),
            "def test_truncate():\n    assert truncate('a', 1) == 'b'\n",
        )
        .unwrap();
        let fixed = FixedTests::take(dir.path(), &["test_accept.py".to_string()]);
        let named = [function("truncate"), function("headline")];
        let output = "FAILED test_accept.py::test_truncate - AssertionError\nFAILED test_own.py::test_truncate - AssertionError\n";
        assert_eq!(
            failing_in_acceptance(dir.path(), output, &named, &fixed),
            [function("truncate")]
        );
        let only_own = "FAILED test_own.py::test_truncate - AssertionError\n";
        assert!(failing_in_acceptance(dir.path(), only_own, &named, &fixed).is_empty());
    }

    #[test]
    fn a_failing_function_another_failing_one_calls_comes_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("transit")).unwrap();
        std::fs::write(
            dir.path().join("transit/times.py"),
            "def from_minutes(total):\n    hours, minutes = divmod(total, 60)\n    return f'{hours:02d}:{minutes:02d}'\n\n\ndef add_minutes(text, delta):\n    return from_minutes(to_minutes(text) + delta)\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("test_wrap.py"),
            "from transit.times import add_minutes, from_minutes\n\ndef test_story_examples():\n    assert add_minutes('23:50', 20) == '00:10'\n\ndef test_from_minutes_example_1():\n    assert from_minutes(1450) == '00:10'\n",
        )
        .unwrap();
        let fixed = FixedTests::take(dir.path(), &["test_wrap.py".to_string()]);
        let in_times = |name: &str| NamedFunction {
            name: name.to_string(),
            files: vec!["transit/times.py".to_string()],
        };
        let named = [in_times("add_minutes"), in_times("from_minutes")];
        let output = "FAILED test_wrap.py::test_story_examples - AssertionError\nFAILED test_wrap.py::test_from_minutes_example_1 - AssertionError\n";

        assert_eq!(
            failing_in_acceptance(dir.path(), output, &named, &fixed),
            [in_times("from_minutes"), in_times("add_minutes")]
        );
    }
}
