//! The calls a story makes before one of its examples, put back into a test that asserts the
//! example without them (docs/design.md §21).

use super::examples::{calls_before, normalized, Example};
use super::python_lines::{enclosing_test, indent};

/// A call the story writes before an example, added to a test that asserted the example
/// without it, or put in place of the test's own call to the same method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupAdded {
    /// The test function's name.
    pub test: String,
    /// The call, as the story writes it.
    pub call: String,
    /// The test's call it took the place of, as the test wrote it; `None` when it was added.
    pub replaced: Option<String>,
}

/// A Python test file whose tests assert an example of the story on an object without all the
/// calls the story makes on it first, with the missing calls added in the story's order; `None`
/// when no test lacks one.
///
/// "After `cart.add("apple", 3)` and `cart.add("pear", 2)`, `cart.total_items()` returns `5`":
/// the 1.5B model split it into a test adding apples that asserted `3` and one adding only pears
/// that asserted `5`. The second carried the example word for word, so the check passed it, and
/// no code could pass it (a drive, 2026-12-06).
///
/// A test is mended only when it makes the object itself (`cart = …`) and every other call it
/// makes on it before the assertion is one of the story's: a test that reaches the same value
/// another way (`cart.add("apple", 1)` three times) is left as it is. The one exception is a
/// test making the same calls as the story, method for method, with other arguments and no
/// assertion before the example's: `cart.add("apple", 2)` and `cart.add("pear", 1)` then
/// `5` asserts a value those calls cannot give (a drive, 2026-12-06), so the story's calls take
/// their places.
pub fn setups_completed(
    text: &str,
    examples: &[Example],
    story_text: &str,
) -> Option<(String, Vec<SetupAdded>)> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut added = Vec::new();
    for example in examples.iter().filter(|example| !example.raises()) {
        let Some((object, _)) = example.call.trim().split_once('.') else {
            continue;
        };
        let Some(setup) = calls_before(story_text, example, object) else {
            continue;
        };
        if setup.is_empty() {
            continue;
        }
        let mut at = 0;
        while at < lines.len() {
            if let Some(more) = complete_one(&mut lines, at, example, object, &setup) {
                at += more.len();
                added.extend(more);
            }
            at += 1;
        }
    }
    if added.is_empty() {
        return None;
    }
    let mut mended = lines.join("\n");
    if text.ends_with('\n') {
        mended.push('\n');
    }
    Some((mended, added))
}

/// Adds to the test holding `lines[at]` the calls of `setup` it lacks, when that line asserts
/// `example` on `object`; what it added.
fn complete_one(
    lines: &mut Vec<String>,
    at: usize,
    example: &Example,
    object: &str,
    setup: &[String],
) -> Option<Vec<SetupAdded>> {
    if !asserts(&lines[at], example) {
        return None;
    }
    let start = enclosing_test(lines, at)?;
    let body = start + 1..at;
    let made = format!("{object}=");
    if !lines[body.clone()].iter().any(|line| {
        normalized(line).starts_with(&made) && !normalized(line).starts_with(&format!("{made}="))
    }) {
        return None;
    }
    let wanted: Vec<String> = setup.iter().map(|call| normalized(call)).collect();
    let on_object = format!("{object}.");
    let test = lines[start]
        .trim_start()
        .trim_start_matches("def ")
        .split('(')
        .next()
        .unwrap_or_default()
        .to_string();
    let calls: Vec<usize> = body
        .clone()
        .filter(|&line| normalized(&lines[line]).starts_with(&on_object))
        .collect();
    // Where each of the story's calls stands in the test, if it does.
    let mut found: Vec<Option<usize>> = vec![None; setup.len()];
    for &line in &calls {
        let statement = normalized(&lines[line]);
        match wanted.iter().position(|call| *call == statement) {
            Some(position) => {
                found[position].get_or_insert(line);
            }
            None => {
                let asserts_before = lines[body.clone()]
                    .iter()
                    .any(|line| line.trim_start().starts_with("assert"));
                return (!asserts_before)
                    .then(|| arguments_replaced(lines, &calls, &wanted, setup, &test))
                    .flatten();
            }
        }
    }
    if found.iter().all(Option::is_some) {
        return None;
    }
    let mut added = Vec::new();
    // From the last, so that the places found before stay where they are.
    for index in (0..setup.len()).rev() {
        if found[index].is_some() {
            continue;
        }
        let before = found[index + 1..]
            .iter()
            .flatten()
            .next()
            .copied()
            .unwrap_or(at);
        let line = format!("{}{}", " ".repeat(indent(&lines[before])), setup[index]);
        lines.insert(before, line);
        for place in found.iter_mut().flatten() {
            if *place >= before {
                *place += 1;
            }
        }
        added.push(SetupAdded {
            test: test.clone(),
            call: setup[index].clone(),
            replaced: None,
        });
    }
    added.reverse();
    Some(added)
}

/// The story's calls put in place of the test's `calls` on the object, when the test calls the
/// same methods in the same order with other arguments; what it replaced.
fn arguments_replaced(
    lines: &mut [String],
    calls: &[usize],
    wanted: &[String],
    setup: &[String],
    test: &str,
) -> Option<Vec<SetupAdded>> {
    let method = |call: &str| call.split_once('(').map(|(method, _)| method.to_string());
    let same_methods = calls.len() == wanted.len()
        && calls.iter().zip(wanted).all(|(&line, call)| {
            method(&normalized(&lines[line])).is_some_and(|name| Some(name) == method(call))
        });
    if !same_methods {
        return None;
    }
    let mut replaced = Vec::new();
    for ((&line, call), story_call) in calls.iter().zip(wanted).zip(setup) {
        if normalized(&lines[line]) == *call {
            continue;
        }
        let own = lines[line].trim().to_string();
        lines[line] = format!("{}{}", " ".repeat(indent(&lines[line])), story_call);
        replaced.push(SetupAdded {
            test: test.to_string(),
            call: story_call.clone(),
            replaced: Some(own),
        });
    }
    Some(replaced)
}

/// Whether `line` asserts `example`: `assert <call> <comparison> <value>`, spacing and quotes
/// aside.
fn asserts(line: &str, example: &Example) -> bool {
    let line = normalized(line);
    let wanted = normalized(&format!(
        "assert {}{}{}",
        example.call, example.comparison, example.expected
    ));
    line == wanted || line.starts_with(&format!("{wanted}#"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::examples::examples;

    const STORY: &str =
        "Count the items in the cart\n\nAdd a method `total_items()` to the `Cart` \
        class in cart.py.\n\n- [ ] after `cart.add(\"apple\", 3)` and `cart.add(\"pear\", 2)`, \
        `cart.total_items()` returns `5`\n- [ ] an empty cart's `total_items()` returns `0`\n";

    #[test]
    fn a_test_asserting_an_example_without_the_calls_the_story_makes_first_gets_them_in_order() {
        let tests = "from cart import Cart\n\ndef test_apple():\n    cart = Cart()\n    \
            cart.add(\"apple\", 3)\n    assert cart.total_items() == 3\n\ndef test_pear():\n    \
            cart = Cart()\n    cart.add(\"pear\", 2)\n    assert cart.total_items() == 5\n";
        let (mended, added) = setups_completed(tests, &examples(STORY), STORY).unwrap();
        assert_eq!(
            mended,
            "from cart import Cart\n\ndef test_apple():\n    cart = Cart()\n    \
            cart.add(\"apple\", 3)\n    assert cart.total_items() == 3\n\ndef test_pear():\n    \
            cart = Cart()\n    cart.add(\"apple\", 3)\n    cart.add(\"pear\", 2)\n    \
            assert cart.total_items() == 5\n"
        );
        assert_eq!(
            added,
            vec![SetupAdded {
                test: "test_pear".to_string(),
                call: "cart.add(\"apple\", 3)".to_string(),
                replaced: None,
            }]
        );
    }

    #[test]
    fn a_test_with_no_setup_gets_all_of_it_before_its_assertion() {
        let tests = "def test_total():\n    cart = Cart()\n    assert cart.total_items() == 5\n";
        let (mended, _) = setups_completed(tests, &examples(STORY), STORY).unwrap();
        assert_eq!(
            mended,
            "def test_total():\n    cart = Cart()\n    cart.add('apple', 3)\n    \
            cart.add('pear', 2)\n    assert cart.total_items() == 5\n"
                .replace('\'', "\"")
        );
    }

    #[test]
    fn a_test_that_has_the_calls_or_reaches_the_value_its_own_way_is_left_alone() {
        let whole = "def test_total():\n    cart = Cart()\n    cart.add('apple', 3)\n    \
            cart.add('pear', 2)\n    assert cart.total_items() == 5\n";
        assert_eq!(setups_completed(whole, &examples(STORY), STORY), None);
        let own_way = "def test_total():\n    cart = Cart()\n    cart.add('apple', 1)\n    \
            cart.add('apple', 2)\n    cart.add('pear', 2)\n    assert cart.total_items() == 5\n";
        assert_eq!(setups_completed(own_way, &examples(STORY), STORY), None);
        let given = "def test_total(cart):\n    assert cart.total_items() == 5\n";
        assert_eq!(
            setups_completed(given, &examples(STORY), STORY),
            None,
            "a fixture's object"
        );
        let other_value = "def test_total():\n    cart = Cart()\n    cart.add('pear', 2)\n    \
            assert cart.total_items() == 15\n";
        assert_eq!(setups_completed(other_value, &examples(STORY), STORY), None);
    }

    #[test]
    fn a_test_making_the_storys_calls_with_other_arguments_gets_the_storys_arguments() {
        // The drive's test, word for word.
        let tests = "def test_total_items():\n    cart = Cart()\n    cart.add(\"apple\", 2)\n    \
            cart.add(\"pear\", 1)\n    assert cart.total_items() == 5\n";
        let (mended, replaced) = setups_completed(tests, &examples(STORY), STORY).unwrap();
        assert_eq!(
            mended,
            "def test_total_items():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    \
            cart.add(\"pear\", 2)\n    assert cart.total_items() == 5\n"
        );
        assert_eq!(
            replaced[0],
            SetupAdded {
                test: "test_total_items".to_string(),
                call: "cart.add(\"apple\", 3)".to_string(),
                replaced: Some("cart.add(\"apple\", 2)".to_string()),
            }
        );
        assert_eq!(replaced.len(), 2);
    }

    #[test]
    fn a_test_asserting_along_the_way_or_calling_other_methods_keeps_its_arguments() {
        let along_the_way = "def test_total():\n    cart = Cart()\n    cart.add('apple', 2)\n    \
            assert cart.total_items() == 2\n    cart.add('pear', 1)\n    \
            assert cart.total_items() == 5\n";
        assert_eq!(
            setups_completed(along_the_way, &examples(STORY), STORY),
            None
        );
        let other_method = "def test_total():\n    cart = Cart()\n    cart.add('apple', 2)\n    \
            cart.remove('pear', 1)\n    assert cart.total_items() == 5\n";
        assert_eq!(
            setups_completed(other_method, &examples(STORY), STORY),
            None
        );
    }
}
