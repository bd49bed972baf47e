//! Tests of earlier work that the story's raising examples contradict (docs/design.md §21). A
//! story may change what earlier work did: "`cart.add("apple", 0)` raises `ValueError`" makes
//! the project's `test_remove_removes_all_units_if_zero`, which starts with
//! `cart.add("date", 0)`, fail on that very `ValueError`. The implementer may not change the
//! project's tests of other work, so such a test failed in every round and the story was lost
//! with a right `add` (the inventory benchmark's `add-positive`, 2026-12-05).
//!
//! The story is the newer word. A failing test is contradicted when the line its own frame
//! stopped on calls what a raising example calls, with the same arguments, and it failed on the
//! exception the example names. Arguments may differ only in string literals, and only when
//! another argument, not a string, is the same: `add("date", 0)` is `add("apple", 0)` with
//! another name, while `parse_quantity("5")` is not `parse_quantity("0")`. Such a test is taken
//! out of its file by the tool, never on the implementer's word, and the Implementation Notes
//! and the diff say so. The story's acceptance tests are never taken out here.

use std::path::Path;

use super::call_text::{arguments, list_end, split_arguments};
use super::examples::{calls_at, normalized, Example};
use super::fixed_tests::FixedTests;
use super::pytest_report::sections;
use super::unasked_tests::{failed_tests, FailedTest};
use crate::agents::prompts::is_test_path;

/// A failing test whose own line makes a call the story says raises, and that failed on that
/// exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contradicted {
    pub test: FailedTest,
    /// The call on the test's line: `cart.add("date", 0)`.
    pub call: String,
    /// The story's example it is the same call as.
    pub example: Example,
}

/// The failing tests of pytest's `output` (its default, long report) that the story's raising
/// `examples` contradict, the story's acceptance tests (`fixed`) left out.
pub fn contradicted_tests(
    output: &str,
    examples: &[Example],
    fixed: &FixedTests,
) -> Vec<Contradicted> {
    let raising: Vec<&Example> = examples.iter().filter(|e| e.raises()).collect();
    if raising.is_empty() {
        return Vec::new();
    }
    let failed = failed_tests(output);
    let mut found: Vec<Contradicted> = Vec::new();
    for section in sections(output) {
        let Some(test) = section.test() else {
            continue;
        };
        let acceptance = fixed.paths().any(|path| path == test.file);
        if acceptance
            || !failed.contains(&test)
            || !is_test_path(Path::new(&test.file))
            || found.iter().any(|known| known.test == test)
        {
            continue;
        }
        let (Some(raised), Some(line)) = (section.raised(), section.stopped_on()) else {
            continue;
        };
        let same = raising.iter().find_map(|example| {
            let exception = example.expected.rsplit('.').next().unwrap_or_default();
            (exception == raised)
                .then(|| same_call(line, &example.call))
                .flatten()
                .map(|call| (call, (*example).clone()))
        });
        if let Some((call, example)) = same {
            found.push(Contradicted {
                test,
                call,
                example,
            });
        }
    }
    found
}

/// What the model and the story's Implementation Notes are told of the tests taken out.
pub fn note(contradicted: &[Contradicted]) -> String {
    let each: Vec<String> = contradicted
        .iter()
        .map(|one| {
            format!(
                "`{}` ({}), whose `{}` the story says raises `{}` (`{}`)",
                one.test.name, one.test.file, one.call, one.example.expected, one.example.call
            )
        })
        .collect();
    format!(
        "Taken out of the project's tests by the tool, as the story changes what they expected: \
         {}.",
        each.join("; ")
    )
}

/// The call on `line` that is the example's call with the same arguments (see the module's
/// doc), as the line writes it.
fn same_call(line: &str, example: &str) -> Option<String> {
    let (name, wanted) = last_call(example)?;
    let wanted = normalized_all(split_arguments(wanted));
    line.match_indices(&format!("{name}("))
        .filter(|(at, _)| calls_at(line, *at))
        .find_map(|(at, _)| {
            let list = &line[at + name.len()..];
            let given = normalized_all(arguments(list)?);
            let close = at + name.len() + list_end(list) - 1;
            same_arguments(&wanted, &given).then(|| called_from(line, at, close))
        })
}

/// Each argument without spaces and with one kind of quote.
fn normalized_all(arguments: Vec<String>) -> Vec<String> {
    arguments
        .iter()
        .map(|argument| normalized(argument))
        .collect()
}

/// The call as the line writes it, with the object it is made on: `cart.add("date", 0)`.
fn called_from(line: &str, at: usize, close: usize) -> String {
    let start = line[..at]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |before| before + 1);
    line[start..=close].to_string()
}

/// The name and the argument text of the last call of `call`: `Cart().remove("kiwi")` →
/// `remove`, `"kiwi"`.
fn last_call(call: &str) -> Option<(&str, &str)> {
    let call = call.trim();
    let mut depth = 0usize;
    let mut open = None;
    for (at, c) in call.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    open = Some(at);
                    break;
                }
            }
            _ => {}
        }
    }
    let open = open?;
    let name_start = call[..open]
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |before| before + 1);
    let name = &call[name_start..open];
    (!name.is_empty() && call.ends_with(')')).then(|| (name, &call[open + 1..call.len() - 1]))
}

/// Whether the test's arguments are the example's: the same, or different only in string
/// literals while another argument, not a string, is the same.
fn same_arguments(example: &[String], test: &[String]) -> bool {
    if example.len() != test.len() {
        return false;
    }
    let is_string = |arg: &str| arg.len() >= 2 && arg.starts_with('\'') && arg.ends_with('\'');
    let mut anchored = false;
    for (wanted, given) in example.iter().zip(test) {
        if wanted == given {
            anchored |= !is_string(wanted);
        } else if !(is_string(wanted) && is_string(given)) {
            return false;
        }
    }
    anchored || example == test
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::examples::examples;

    const STORY: &str = "- [ ] `cart.add(\"apple\", 0)` raises `ValueError`\n- [ ] `cart.add(\"apple\", -2)` raises `ValueError`\n- [ ] `parse_quantity(\"0\")` raises `ValueError`";

    /// Recorded (Qwen2.5-Coder-1.5B, 2026-12-05, inventory `add-positive`): a right `add`, and
    /// the project's tests of `cart-remove` that add zero dates.
    const OUTPUT: &str = "...F.......F..                                                           [100%]
=================================== FAILURES ===================================
____________________ test_remove_removes_all_units_if_zero _____________________

    def test_remove_removes_all_units_if_zero():
        cart = Cart()
>       cart.add(\"date\", 0)

tests/test_cart.py:26: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

self = <inventory.cart.Cart object at 0x7f9ceadd7410>, sku = 'date'
quantity = 0

    def add(self, sku, quantity=1):
        \"\"\"Adds `quantity` of the item `sku`. Raises ValueError if quantity is below 1.\"\"\"
        if quantity < 1:
>           raise ValueError(\"Quantity must be positive\")
E           ValueError: Quantity must be positive

inventory/cart.py:10: ValueError
__________________ test_remove_item_removes_all_units_if_zero __________________

    def test_remove_item_removes_all_units_if_zero():
        cart = inventory.cart.Cart()
>       cart.add(\"date\", 0)

tests/test_remove_an_item_from_the_cart.py:25: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

self = <inventory.cart.Cart object at 0x7f9ceaddd250>, sku = 'date'
quantity = 0

    def add(self, sku, quantity=1):
>           raise ValueError(\"Quantity must be positive\")
E           ValueError: Quantity must be positive

inventory/cart.py:10: ValueError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_remove_removes_all_units_if_zero - ValueError: Quantity must be positive
FAILED tests/test_remove_an_item_from_the_cart.py::test_remove_item_removes_all_units_if_zero - ValueError: Quantity must be positive
2 failed, 12 passed in 0.03s
";

    fn none_fixed() -> FixedTests {
        FixedTests::take(Path::new("/nonexistent"), &[])
    }

    #[test]
    fn a_test_that_adds_what_the_story_says_raises_is_contradicted() {
        let found = contradicted_tests(OUTPUT, &examples(STORY), &none_fixed());

        let tests: Vec<(&str, &str, &str)> = found
            .iter()
            .map(|one| {
                (
                    one.test.file.as_str(),
                    one.test.name.as_str(),
                    one.call.as_str(),
                )
            })
            .collect();
        assert_eq!(
            tests,
            [
                (
                    "tests/test_cart.py",
                    "test_remove_removes_all_units_if_zero",
                    "cart.add(\"date\", 0)"
                ),
                (
                    "tests/test_remove_an_item_from_the_cart.py",
                    "test_remove_item_removes_all_units_if_zero",
                    "cart.add(\"date\", 0)"
                ),
            ]
        );
        assert_eq!(found[0].example.call, "cart.add(\"apple\", 0)");
        assert_eq!(
            note(&found[..1]),
            "Taken out of the project's tests by the tool, as the story changes what they \
             expected: `test_remove_removes_all_units_if_zero` (tests/test_cart.py), whose \
             `cart.add(\"date\", 0)` the story says raises `ValueError` (`cart.add(\"apple\", 0)`)."
        );
    }

    #[test]
    fn another_exception_another_quantity_or_an_acceptance_test_is_not() {
        let other_exception = OUTPUT.replace("cart.py:10: ValueError", "cart.py:10: KeyError");
        assert!(contradicted_tests(&other_exception, &examples(STORY), &none_fixed()).is_empty());

        let other_quantity = OUTPUT.replace("cart.add(\"date\", 0)", "cart.add(\"date\", 5)");
        assert!(contradicted_tests(&other_quantity, &examples(STORY), &none_fixed()).is_empty());

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_cart.py"),
            "def test_x():\n    pass\n",
        )
        .unwrap();
        let fixed = FixedTests::take(dir.path(), &["tests/test_cart.py".to_string()]);
        let found = contradicted_tests(OUTPUT, &examples(STORY), &fixed);
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].test.file,
            "tests/test_remove_an_item_from_the_cart.py"
        );
    }

    #[test]
    fn strings_differ_only_beside_the_same_value() {
        let args = |text: &str| normalized_all(split_arguments(text));
        assert!(same_arguments(&args("\"apple\", 0"), &args("'date', 0")));
        assert!(same_arguments(&args("\"0\""), &args("'0'")));
        assert!(!same_arguments(&args("\"0\""), &args("\"5\"")));
        assert!(!same_arguments(
            &args("\"a\", \"b\""),
            &args("\"c\", \"b\"")
        ));
        assert!(!same_arguments(&args("\"apple\", 0"), &args("\"apple\"")));
        assert_eq!(args("f(1, 2), [3, 4]"), ["f(1,2)", "[3,4]"]);
        assert_eq!(
            last_call("Cart().remove(\"kiwi\")"),
            Some(("remove", "\"kiwi\""))
        );
        assert_eq!(
            same_call("x = parse_quantity('0') + 1", "parse_quantity(\"0\")").as_deref(),
            Some("parse_quantity('0')")
        );
        assert_eq!(
            same_call("x = reparse_quantity('0')", "parse_quantity(\"0\")"),
            None
        );
    }
}
