//! A class's base that a story gives in words ("an exception class `UnknownBikeError`, a
//! subclass of `ValueError`"), as the check Python makes of it: `issubclass(UnknownBikeError,
//! ValueError) is True` (docs/design.md §21). Every exception story of the benchmark suites
//! says so, and their hidden tests ask it; the small model's tests and the tool's own left it
//! out. Pure functions of text.

use super::examples::Example;
use crate::agents::prompts::backtick_spans;
use crate::python_builtins::PYTHON_EXCEPTIONS;

/// The words that put a class's base after them.
const BASE_AFTER: [&str; 5] = [
    "subclass of",
    "inherits from",
    "inheriting from",
    "derives from",
    "derived from",
];

/// Each class of the story's `text` with the base its line gives it in words, as an example
/// of `issubclass` (the class: the last name in backticks before the words that is not
/// Python's own; the base: the span right after them), in order, each once.
pub fn subclass_examples(text: &str) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    for line in text.lines() {
        let lower = line.to_ascii_lowercase();
        let spans = backtick_spans(line);
        for words in BASE_AFTER {
            for (at, _) in lower.match_indices(words) {
                let after = line[at + words.len()..].trim_start();
                let Some(base) = after
                    .strip_prefix('`')
                    .and_then(|rest| rest.split_once('`'))
                    .map(|(base, _)| base.trim())
                    .filter(|base| is_class_name(base))
                else {
                    continue;
                };
                // A span closes before `at` when its closing backtick does.
                let class = spans
                    .iter()
                    .filter(|(_, close)| *close < at)
                    .map(|(span, _)| span.trim())
                    .rfind(|span| {
                        is_class_name(span) && *span != base && !PYTHON_EXCEPTIONS.contains(span)
                    });
                let Some(class) = class else { continue };
                let example = Example {
                    call: format!("issubclass({class}, {base})"),
                    expected: "True".to_string(),
                    comparison: "is",
                };
                if !found.contains(&example) {
                    found.push(example);
                }
            }
        }
    }
    found
}

/// `UnknownBikeError` or `errors.UnknownBikeError`: a capitalised Python name.
fn is_class_name(text: &str) -> bool {
    let last = text.rsplit('.').next().unwrap_or(text);
    last.starts_with(|c: char| c.is_ascii_uppercase())
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(text: &str) -> Vec<String> {
        subclass_examples(text)
            .into_iter()
            .map(|example| example.assertion())
            .collect()
    }

    #[test]
    fn the_benchmark_suites_ways_of_giving_a_base_are_each_an_issubclass() {
        // The read suites' exception stories, as their summaries put it.
        assert_eq!(
            calls("Add an exception class `UnknownVehicleClassError` to `tollbooth/rates.py`, a subclass of `ValueError`, and raise it from `toll`."),
            ["assert issubclass(UnknownVehicleClassError, ValueError) is True"]
        );
        assert_eq!(
            calls("Define an exception class `UnknownTreeError` in `orchard/harvest.py`, as a subclass of `KeyError` so existing error handling keeps working."),
            ["assert issubclass(UnknownTreeError, KeyError) is True"]
        );
        assert_eq!(
            calls("Define an `InvalidScoreError` exception (subclass of `ValueError`) in `gradebook/book.py`."),
            ["assert issubclass(InvalidScoreError, ValueError) is True"]
        );
        assert_eq!(
            calls("- [ ] `Overdrawn` inherits from `ledger.LedgerError`"),
            ["assert issubclass(Overdrawn, ledger.LedgerError) is True"]
        );
    }

    #[test]
    fn a_base_given_without_a_class_or_in_prose_is_no_example() {
        assert!(calls("It fails with a bare `KeyError`, a subclass of `LookupError`.").is_empty());
        assert!(calls("Make `UnknownTree` a subclass of the usual error.").is_empty());
        assert!(calls("Add `parse(text)`, a subclass of `ValueError` handler.").is_empty());
    }
}
