//! Acceptance tests the story's own examples outvote (docs/design.md §21). The model writes the
//! acceptance tests, and a 1.5B model gets some of them wrong in ways no static check sees: for
//! "`remove(sku)` takes the item out of the cart, whatever its quantity", it expected
//! `total_items() == 3` after adding three apples and a pear and removing the apples (the
//! inventory benchmark's `cart-remove`, 2026-11-29). Implement's narrowed `remove` was right
//! and passed every test carrying one of the story's examples, and the story failed on that test
//! alone.
//!
//! The story's literal examples are its word. When a test round (or implement's last run) finds
//! every acceptance test that carries one of them passing and the only acceptance tests that
//! fail carrying none, those are taken out of their files, with a note to the model, in the
//! Implementation Notes and in the transcript: the tool amends the acceptance tests as the
//! acceptance phase's keeper, which the implementer never may. In the round, so that no later
//! reply is held to them. A file whose tests would all go keeps them (it holds no example to outvote them),
//! and a story without examples has nothing to outvote with.

use std::path::Path;

use super::call_criteria::tests_a_criterion;
use super::examples::Example;
use super::fixed_tests::FixedTests;
use super::unasked_tests::{failed_tests, FailedTest};
use super::unloaded_tests::unloaded_files;
use crate::agents::tools::{defined_name, source_of};

/// The failing acceptance tests of `output` (a run of the tests in `dir`) that the story's
/// `examples` outvote: each carries no example, while in its own file a test carrying one
/// exists, and every test carrying one passes. Empty when anything else is so: an example's test
/// fails, a file did not load, or no acceptance test fails.
pub fn outvoted_acceptance_tests(
    dir: &Path,
    output: &str,
    examples: &[Example],
    fixed: &FixedTests,
) -> Vec<FailedTest> {
    let failed = failed_tests(output);
    if examples.is_empty() || failed.is_empty() || !unloaded_files(output).is_empty() {
        return Vec::new();
    }
    let mut outvoted = Vec::new();
    for path in fixed.paths() {
        let Ok(text) = std::fs::read_to_string(dir.join(path)) else {
            continue;
        };
        let tests = tests_of(&text);
        // A test of a criterion the tool wrote ("`f` calls `g`") is the story's word as well.
        let carries = |name: &str| {
            source_of(&text, name).is_some_and(|body| {
                examples.iter().any(|e| e.carried_by(&body)) || tests_a_criterion(name, &body)
            })
        };
        let failing: Vec<&String> = tests
            .iter()
            .filter(|name| {
                failed
                    .iter()
                    .any(|test| test.file == path && &test.name == *name)
            })
            .collect();
        if failing.iter().any(|name| carries(name)) {
            return Vec::new();
        }
        let has_example = tests.iter().any(|name| carries(name));
        if !failing.is_empty() && has_example {
            outvoted.extend(failing.into_iter().map(|name| FailedTest {
                file: path.to_string(),
                name: name.clone(),
            }));
        }
    }
    outvoted
}

/// The names of the test functions of a Python test file, top-level or in a class.
fn tests_of(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.trim_start().starts_with("def test"))
        .filter_map(defined_name)
        .collect()
}

/// What the story's Implementation Notes say of the tests taken out.
pub fn note(tests: &[FailedTest]) -> String {
    let named: Vec<String> = tests
        .iter()
        .map(|test| format!("`{}` ({})", test.name, test.file))
        .collect();
    format!(
        "Taken out of the acceptance tests by the tool: {}. {} failed while every test carrying \
         the story's own examples passed, so {} the story's examples contradict.",
        named.join(", "),
        if tests.len() == 1 { "It" } else { "They" },
        if tests.len() == 1 {
            "it expected what"
        } else {
            "they expected what"
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::examples::examples;

    const STORY: &str = "- [ ] after `cart.add(\"apple\", 3)` and `cart.remove(\"apple\")`, `cart.quantity(\"apple\")` returns `0`\n- [ ] `Cart().remove(\"kiwi\")` raises `KeyError`";

    /// Recorded (Qwen2.5-Coder-1.5B, 2026-11-29, inventory `cart-remove`): the model's own
    /// test, then the tests the tool carried the story's examples in.
    const TESTS: &str = "import pytest\nfrom inventory.cart import Cart\n\n\ndef test_remove_counts_quantities():\n    cart = Cart()\n    cart.add(\"apple\", 2)\n    cart.add(\"apple\")\n    cart.add(\"pear\")\n    cart.remove(\"apple\")\n    assert cart.total_items() == 3\n\n\ndef test_quantity_example_1():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    cart.remove(\"apple\")\n    assert cart.quantity(\"apple\") == 0\n\n\ndef test_cart_example_2():\n    with pytest.raises(KeyError): Cart().remove(\"kiwi\")\n";

    fn acceptance(text: &str) -> (tempfile::TempDir, FixedTests) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_remove.py"), text).unwrap();
        let fixed = FixedTests::take(dir.path(), &["tests/test_remove.py".to_string()]);
        (dir, fixed)
    }

    #[test]
    fn a_failing_test_with_no_example_is_outvoted_when_the_examples_pass() {
        let (dir, fixed) = acceptance(TESTS);
        let examples = examples(STORY);
        let output = "FAILED tests/test_remove.py::test_remove_counts_quantities - assert 1 == 3\nFAILED tests/test_cart.py::test_mine - assert 1 == 3\n2 failed, 2 passed";

        let outvoted = outvoted_acceptance_tests(dir.path(), output, &examples, &fixed);

        assert_eq!(
            outvoted,
            [FailedTest {
                file: "tests/test_remove.py".into(),
                name: "test_remove_counts_quantities".into()
            }]
        );
        assert_eq!(
            note(&outvoted),
            "Taken out of the acceptance tests by the tool: `test_remove_counts_quantities` (tests/test_remove.py). It failed while every test carrying the story's own examples passed, so it expected what the story's examples contradict."
        );
    }

    #[test]
    fn a_failing_test_of_a_calls_criterion_is_the_story_word_and_is_not_outvoted() {
        // As the tool writes it (call_criteria), beside a test of the story's example.
        let spy = "\n\ndef test_quantity_calls_lookup(monkeypatch):\n    import inventory.cart as callee_home\n    import inventory.cart as caller_home\n    called = []\n    real = callee_home.lookup\n\n    def spy(*args, **kwargs):\n        called.append(args)\n        return real(*args, **kwargs)\n\n    monkeypatch.setattr(callee_home, \"lookup\", spy)\n    caller_home.quantity(\"apple\")\n    assert called\n";
        let (dir, fixed) = acceptance(&format!("{TESTS}{spy}"));
        let examples = examples(STORY);
        let output = "FAILED tests/test_remove.py::test_quantity_calls_lookup - AssertionError\nFAILED tests/test_remove.py::test_remove_counts_quantities - assert 1 == 3\n2 failed, 2 passed";
        assert!(outvoted_acceptance_tests(dir.path(), output, &examples, &fixed).is_empty());
        let passing = "FAILED tests/test_remove.py::test_remove_counts_quantities - assert 1 == 3\n1 failed, 3 passed";
        let outvoted = outvoted_acceptance_tests(dir.path(), passing, &examples, &fixed);
        assert_eq!(outvoted.len(), 1, "{outvoted:?}");
        assert_eq!(outvoted[0].name, "test_remove_counts_quantities");
    }

    #[test]
    fn nothing_is_outvoted_while_an_example_fails_or_without_examples() {
        let (dir, fixed) = acceptance(TESTS);
        let examples = examples(STORY);
        let with_example = "FAILED tests/test_remove.py::test_remove_counts_quantities - assert\nFAILED tests/test_remove.py::test_cart_example_2 - DID NOT RAISE";
        assert!(outvoted_acceptance_tests(dir.path(), with_example, &examples, &fixed).is_empty());
        let only_mine = "FAILED tests/test_remove.py::test_remove_counts_quantities - assert";
        assert!(outvoted_acceptance_tests(dir.path(), only_mine, &[], &fixed).is_empty());
        let unloaded = format!("{only_mine}\nERROR tests/test_other.py - SyntaxError");
        assert!(outvoted_acceptance_tests(dir.path(), &unloaded, &examples, &fixed).is_empty());
        // A file of nothing but the model's own tests holds no example to outvote them.
        let (dir, fixed) = acceptance(&TESTS[..TESTS.find("def test_quantity_example_1").unwrap()]);
        assert!(outvoted_acceptance_tests(dir.path(), only_mine, &examples, &fixed).is_empty());
    }
}
