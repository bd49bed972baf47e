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
