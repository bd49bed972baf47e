//! A failing test run without the code it ran through (docs/design.md §21). pytest quotes each
//! frame of a traceback, the failing definition's whole body among them; a further sample of a
//! narrowed task is not to be shown the failing code it would copy, and that quote is the same
//! code. Asked for `median` again with the traceback in view, the 1.5B model wrote the same
//! `median` that raised `IndexError` on `[]`, character for character, in three samples of four
//! at temperatures 0.2 to 1.0 (textkit, 2026-12-05).
//!
//! Kept: everything outside the failures, each failure's header and its first frame (the test
//! itself, which says what was called and what was expected), and from the frames below it the
//! error lines (`E   IndexError: …`) and where they were raised (`stats.py:17: IndexError`).
//! Output that is not pytest's has no frame separators and stays as it is.

/// `output` without the source lines of the frames below each failing test's own.
pub fn without_code_frames(output: &str) -> String {
    let mut kept = Vec::new();
    let mut below_the_test = false;
    for line in output.lines() {
        if is_frame_separator(line) {
            below_the_test = true;
            continue;
        }
        if is_section_header(line) {
            below_the_test = false;
        }
        if !below_the_test || line.starts_with("E ") || is_location(line) {
            kept.push(line);
        }
    }
    let mut digest = kept.join("\n");
    if output.ends_with('\n') {
        digest.push('\n');
    }
    digest
}

/// `output` with only the failures whose report calls `name` (`name(` in the test's quoted
/// source or its error lines), and a line that says how many others were left out; `None` when
/// every failure or none calls it, or the output is not pytest's. A narrowed task for one
/// function is shown what the tests say of it: inventory's `format-price` (2026-12-05) failed
/// 15 tests after the model had also rewritten `cart.py`, and the narrowed `format_price` was
/// shown the cart's failures, cut to fit, while the three of its own were cut out.
pub fn failures_that_call(output: &str, name: &str) -> Option<String> {
    let call = format!("{name}(");
    // The report cut into parts: each failure's section (its test and lines), and the lines
    // between them.
    let mut parts: Vec<(Option<&str>, Vec<&str>)> = vec![(None, Vec::new())];
    for line in output.lines() {
        if let Some(test) = failure_header(line) {
            parts.push((Some(test), Vec::new()));
        } else if line.starts_with("===") {
            parts.push((None, Vec::new()));
        }
        if let Some((_, lines)) = parts.last_mut() {
            lines.push(line);
        }
    }
    let calls_it = |lines: &Vec<&str>| lines.iter().any(|line| line.contains(&call));
    let kept_tests: Vec<&str> = parts
        .iter()
        .filter(|(_, lines)| calls_it(lines))
        .filter_map(|(test, _)| *test)
        .collect();
    let left_out = parts
        .iter()
        .filter(|(test, lines)| test.is_some() && !calls_it(lines))
        .count();
    if kept_tests.is_empty() || left_out == 0 {
        return None;
    }
    let summary_of_another =
        |line: &str| summary_test(line).is_some_and(|test| !kept_tests.contains(&test));
    let mut digest: Vec<&str> = parts
        .iter()
        .filter(|(test, lines)| test.is_none() || calls_it(lines))
        .flat_map(|(_, lines)| lines.iter().copied())
        .filter(|line| !summary_of_another(line))
        .collect();
    let note = format!(
        "({left_out} other failing test{} not calling `{name}` left out here)",
        if left_out == 1 { "" } else { "s" }
    );
    digest.push(&note);
    Some(digest.join("\n"))
}

/// The test a failure's header names: `____ test_median ____` → `test_median`,
/// `____ TestCart.test_add ____` → `test_add`.
fn failure_header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("___")?.trim_matches('_').trim();
    let test = inner.rsplit('.').next()?;
    (!test.is_empty() && !test.contains(' ')).then_some(test)
}

/// The test a summary line names: `FAILED tests/test_x.py::test_y - …` → `test_y`.
fn summary_test(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("FAILED ")
        .or_else(|| line.strip_prefix("ERROR "))?;
    let id = rest.split_whitespace().next()?;
    id.contains("::")
        .then(|| id.rsplit("::").next().unwrap_or(id))
}

/// `_ _ _ _ _`: pytest's line between two frames of one traceback.
fn is_frame_separator(line: &str) -> bool {
    let line = line.trim();
    line.starts_with("_ _") && line.chars().all(|c| c == '_' || c == ' ')
}

/// `____ test_name ____` (a failure's header) or `==== … ====` (a part of the report).
fn is_section_header(line: &str) -> bool {
    line.starts_with("___") || line.starts_with("===")
}

/// `stats.py:17: IndexError`: where a frame's error was raised.
fn is_location(line: &str) -> bool {
    let Some((path, rest)) = line.split_once(':') else {
        return false;
    };
    let Some((number, _)) = rest.split_once(':') else {
        return false;
    };
    !path.is_empty()
        && !path.contains(' ')
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shortened recorded report (inventory `format-price`, 2026-12-05): a failure of the
    /// cart the model's stray rewrite broke, and one of the story's own.
    const TWO_STORIES: &str = "\
..FF                                                                     [100%]
=================================== FAILURES ===================================
_____________________ test_add_quantity_zero_raises_error ______________________

    def test_add_quantity_zero_raises_error():
        cart = Cart()
>       with pytest.raises(ValueError):
E       Failed: DID NOT RAISE <class 'ValueError'>

tests/test_cart.py:17: Failed
___________________________ test_format_price_123456 ___________________________

    def test_format_price_123456():
>       assert format_price(123456) == \"$1,234.56\"
E       AssertionError: assert '$12.56' == '$1,234.56'

tests/test_format_a_price_for_people.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_add_quantity_zero_raises_error - Failed: DID ...
FAILED tests/test_format_a_price_for_people.py::test_format_price_123456 - As...
2 failed, 2 passed in 0.07s";

    #[test]
    fn a_narrowed_function_is_shown_only_the_failures_that_call_it() {
        let digest = failures_that_call(TWO_STORIES, "format_price").unwrap();
        assert!(
            digest.contains("E       AssertionError: assert '$12.56' == '$1,234.56'"),
            "{digest}"
        );
        assert!(
            digest.contains(
                "FAILED tests/test_format_a_price_for_people.py::test_format_price_123456"
            ),
            "{digest}"
        );
        assert!(!digest.contains("Cart()"), "{digest}");
        assert!(
            !digest.contains("test_add_quantity_zero_raises_error"),
            "{digest}"
        );
        assert!(digest.contains("2 failed, 2 passed in 0.07s"), "{digest}");
        assert!(
            digest.ends_with("(1 other failing test not calling `format_price` left out here)"),
            "{digest}"
        );
        // Every failure calls it, or none does: nothing to leave out.
        assert_eq!(failures_that_call(TWO_STORIES, "receipt_line"), None);
        assert_eq!(failures_that_call(RECORDED, "median"), None);
    }

    /// pytest's report of the 1.5B model's `median` (textkit, 2026-12-05).
    const RECORDED: &str = "\
....F.....                                                               [100%]
=================================== FAILURES ===================================
_________________________ test_median_with_empty_list __________________________

    def test_median_with_empty_list():
>       assert median([]) == 0.0
               ^^^^^^^^^^

test_median_of_a_list_of_numbers.py:11: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

values = []

    def median(values):
        sorted_values = sorted(values)
        n = len(sorted_values)
        if n % 2 == 1:
            return sorted_values[n // 2]
        else:
>           return (sorted_values[n // 2 - 1] + sorted_values[n // 2]) / 2.0
                    ^^^^^^^^^^^^^^^^^^^^^^^^^
E           IndexError: list index out of range

stats.py:17: IndexError
=========================== short test summary info ============================
FAILED test_median_of_a_list_of_numbers.py::test_median_with_empty_list - Ind...
1 failed, 9 passed in 0.02s
";

    #[test]
    fn a_traceback_keeps_the_test_and_the_error_but_not_the_failing_code() {
        let digest = without_code_frames(RECORDED);
        assert_eq!(
            digest,
            "\
....F.....                                                               [100%]
=================================== FAILURES ===================================
_________________________ test_median_with_empty_list __________________________

    def test_median_with_empty_list():
>       assert median([]) == 0.0
               ^^^^^^^^^^

test_median_of_a_list_of_numbers.py:11: 
E           IndexError: list index out of range
stats.py:17: IndexError
=========================== short test summary info ============================
FAILED test_median_of_a_list_of_numbers.py::test_median_with_empty_list - Ind...
1 failed, 9 passed in 0.02s
"
        );
    }

    #[test]
    fn the_next_failure_is_read_whole_again_and_other_output_is_untouched() {
        let two = RECORDED.replace(
            "=========================== short test summary info",
            "_____ test_median_with_even_count _____\n\n    def test_median_with_even_count():\n>       assert median([4, 1, 3, 2]) == 2.5\nE       assert 2 == 2.5\n\ntest_x.py:8: AssertionError\n=========================== short test summary info",
        );
        let digest = without_code_frames(&two);
        assert!(digest.contains(">       assert median([4, 1, 3, 2]) == 2.5\nE       assert 2 == 2.5\n\ntest_x.py:8: AssertionError"), "{digest}");
        assert!(!digest.contains("sorted_values"), "{digest}");

        let unittest = "F\n======\nFAIL: test_a (test_x.T)\nTraceback:\n  File \"x.py\", line 3\nAssertionError: 1 != 2\n";
        assert_eq!(without_code_frames(unittest), unittest);
    }
}
