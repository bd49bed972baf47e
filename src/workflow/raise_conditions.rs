//! Raises a story conditions on one argument (docs/design.md §21). "An empty author raises
//! `ValueError`" says which argument makes `shelf_mark(title, author)` raise. The 1.5B model's
//! acceptance tests beside it expected `shelf_mark("", "Frank Herbert")` to raise too: an empty
//! title, which no sentence of the story makes an error, with an author the story's own example
//! `shelf_mark("Dune", "Frank Herbert")` shows returning. Implement's samples split the title
//! and failed on an `IndexError`, and the story was lost on a rule nobody wrote (a drive,
//! 2026-12-07).
//!
//! Only a plain function is judged (what it returns depends on its arguments alone), and only
//! where every sentence of the story that makes something raise names exactly one of its
//! parameters: a rule over two ("a piece longer than the board") may hold for values each
//! shown alone, and a sentence that names none may mean any argument.

use super::call_text::{arguments, callee, list_end, signature_parameters};
use super::examples::{calls_at, normalized, Example};
use crate::agents::prompts::backtick_spans;

/// Whether `line`, which a test expects to raise, calls a plain function that the story's
/// `examples` (those that return a value) show, with an argument the examples show returning
/// at each parameter that a raising sentence of `story` names: no rule the story writes makes
/// that call raise.
pub fn raises_for_shown_arguments(line: &str, story: &str, examples: &[Example]) -> bool {
    let mut functions: Vec<&str> = examples
        .iter()
        .filter(|example| !example.raises())
        .map(|example| callee(&example.call))
        .filter(|name| !name.is_empty() && !name.contains('.'))
        .collect();
    functions.sort_unstable();
    functions.dedup();
    functions.into_iter().any(|function| {
        let Some(parameters) = parameters(story, function) else {
            return false;
        };
        let Some(named) = named_by_raise_conditions(story, &parameters) else {
            return false;
        };
        let shown = |parameter: &str, argument: &str| {
            examples
                .iter()
                .filter(|example| !example.raises() && callee(&example.call) == function)
                .filter_map(|example| argument_for(&example.call, &parameters, parameter))
                .any(|given| normalized(&given) == normalized(argument))
        };
        calls_in(line, function).into_iter().any(|call| {
            named.iter().all(|parameter| {
                argument_for(&call, &parameters, parameter)
                    .is_some_and(|argument| shown(parameter, &argument))
            })
        })
    })
}

/// The parameters of the signature the story writes for `function` (`shelf_mark(title,
/// author)` → `title`, `author`), defaults dropped; `None` when it writes none, or one with
/// `*args` or `**kwargs`.
fn parameters(story: &str, function: &str) -> Option<Vec<String>> {
    backtick_spans(story).into_iter().find_map(|(span, _)| {
        let span = span.trim();
        let open = span.find('(')?;
        if span[..open].trim() != function || !span.ends_with(')') {
            return None;
        }
        let names = signature_parameters(&span[open..])?;
        let plain = !names.is_empty() && !names.iter().any(|name| name.starts_with('*'));
        plain.then_some(names)
    })
}

/// The parameter each sentence of `story` that makes something raise names, in words
/// (`piece_length` as "piece length" too); `None` when there is no such sentence, or one names
/// none or more than one of `parameters`, or joins conditions ("or an …"). A sentence that
/// says nothing raises ("should not raise") makes no condition.
fn named_by_raise_conditions(story: &str, parameters: &[String]) -> Option<Vec<String>> {
    let mut named: Vec<String> = Vec::new();
    for sentence in sentences(story) {
        let lower = sentence.to_lowercase();
        if !lower.contains("raise") || says_nothing_raises(&lower) {
            continue;
        }
        // "A negative quantity or an unknown sku raises": a second condition may name its
        // parameter in words of its own (`qty`), which no match of names would see. "Zero or
        // less" is one condition.
        let joined = lower.contains("as does")
            || ["or", "and", "nor"].iter().any(|joint| {
                ["a", "an", "the", "any"]
                    .iter()
                    .any(|article| lower.contains(&format!(" {joint} {article} ")))
            });
        if joined {
            return None;
        }
        let words: Vec<&str> = lower
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|word| !word.is_empty())
            .collect();
        let mentioned: Vec<&String> = parameters
            .iter()
            .filter(|parameter| {
                let spelled: Vec<String> = parameter
                    .to_lowercase()
                    .split('_')
                    .map(str::to_string)
                    .collect();
                let as_is = parameter.to_lowercase();
                words.contains(&as_is.as_str())
                    || words
                        .windows(spelled.len())
                        .any(|run| run.iter().zip(&spelled).all(|(a, b)| a == b))
            })
            .collect();
        let [only] = mentioned.as_slice() else {
            return None;
        };
        if !named.contains(only) {
            named.push((*only).clone());
        }
    }
    (!named.is_empty()).then_some(named)
}

/// Whether `text` (lower case) says something does not raise: "should not raise", "never
/// raises", "without raising".
pub fn says_nothing_raises(text: &str) -> bool {
    ["not raise", "never raise", "n't raise", "without raising"]
        .iter()
        .any(|words| text.contains(words))
}

/// The sentences of `text`: its lines, each cut at ". ", so that a list item is a sentence.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(|line| line.split(". "))
}

/// The calls of `function` on `line`, each as `function(…)` with its argument list whole.
fn calls_in(line: &str, function: &str) -> Vec<String> {
    let opener = format!("{function}(");
    line.match_indices(&opener)
        .filter(|(at, _)| calls_at(line, *at))
        .filter_map(|(at, _)| {
            let rest = &line[at + function.len()..];
            let end = list_end(rest);
            (end <= rest.len()).then(|| format!("{function}{}", &rest[..end]))
        })
        .collect()
}

/// The argument `call` passes for `parameter`, by keyword or by place; `None` when it passes
/// none (the default stands, which no example need show).
fn argument_for(call: &str, parameters: &[String], parameter: &str) -> Option<String> {
    let args = arguments(&call[call.find('(')?..])?;
    let keyword = format!("{parameter}=");
    if let Some(given) = args
        .iter()
        .find_map(|arg| normalized(arg).strip_prefix(&keyword).map(str::to_string))
    {
        return Some(given);
    }
    let place = parameters.iter().position(|name| name == parameter)?;
    args.get(place)
        .filter(|arg| !arg.contains('=') || arg.starts_with(['"', '\'']))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::examples::examples;

    const STORY: &str = "Add a function `shelf_mark(title, author)` to `shelf/books.py`.\n\
        - `shelf_mark(\"The Hobbit\", \"J. R. R. Tolkien\")` returns `\"TOL the\"`\n\
        - `shelf_mark(\"Dune\", \"Frank Herbert\")` returns `\"HER dune\"`\n\
        - An empty author raises `ValueError`.\n\
        - The function should not raise any exceptions.";

    fn judged(line: &str, story: &str) -> bool {
        raises_for_shown_arguments(line, story, &examples(story))
    }

    #[test]
    fn a_raise_for_an_argument_the_condition_does_not_name_is_the_models_own() {
        assert!(judged("        shelf_mark(\"\", \"Frank Herbert\")", STORY));
        assert!(judged(
            "    shelf_mark(title='', author='Frank Herbert')",
            STORY
        ));
    }

    #[test]
    fn a_raise_for_an_argument_the_condition_names_stays() {
        assert!(!judged("        shelf_mark(\"Dune\", \"\")", STORY));
        assert!(!judged("        shelf_mark(\"\", \"\")", STORY));
        assert!(!judged("        shelf_mark(\"\")", STORY));
    }

    #[test]
    fn a_condition_over_two_parameters_or_none_judges_nothing() {
        let two = STORY.replace("An empty author", "An empty author or title");
        assert!(!judged("        shelf_mark(\"\", \"Frank Herbert\")", &two));
        let none = STORY.replace("An empty author raises", "Bad input raises");
        assert!(!judged(
            "        shelf_mark(\"\", \"Frank Herbert\")",
            &none
        ));
        let joined = STORY.replace(
            "An empty author raises",
            "An empty author or a bad mark raises",
        );
        assert!(!judged(
            "        shelf_mark(\"\", \"Frank Herbert\")",
            &joined
        ));
    }

    #[test]
    fn parameters_spelled_in_words_are_named() {
        let story = "Add `pieces_per_board(board_length, piece_length, kerf=4)`.\n\
            - `pieces_per_board(4800, 1200)` returns `3`\n\
            - A piece length of zero or less should raise `ValueError`.";
        assert!(!judged("    pieces_per_board(4800, 0)", story));
        assert!(judged("    pieces_per_board(-1, 1200)", story));
    }
}
