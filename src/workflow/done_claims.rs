//! Research and plans that say the story's work is done before any code exists (docs/design.md
//! §21). A 1.5B model, asked to research "Add to_kelvin(celsius) to temperature.py", wrote that
//! "the `to_kelvin` function is already implemented in the repository", and its plan that "the
//! `to_kelvin` function is correctly implemented … and passes the tests" (a drive, 2026-11-29);
//! the phases after read that as the state of the tree. Which of the story's functions the tree
//! defines is a fact the tool checks, so a sentence that claims one it lacks is taken out.

use super::named_functions::mentions_word;

/// Words that say a thing is there and done.
const DONE: &[&str] = &[
    "already",
    "is implemented",
    "are implemented",
    "is correctly implemented",
    "has been implemented",
    "have been implemented",
    "is defined",
    "are defined",
    "exists",
    "passes the tests",
    "pass the tests",
    "is present",
    "is complete",
];

/// Words that turn a claim around: "does not exist yet", "is missing".
const NOT: &[&str] = &[
    " not ", "n't ", "missing", " yet", "needs to", "should", "must", "will be",
];

/// A text without its sentences that claim a function of `missing` done; with the sentences
/// taken out. `None` when none claims one.
pub fn without_done_claims(text: &str, missing: &[String]) -> Option<(String, Vec<String>)> {
    let mut dropped = Vec::new();
    let mut kept_lines = Vec::new();
    for line in text.lines() {
        let (kept, taken) = without_claiming_sentences(line, missing);
        if taken.is_empty() {
            kept_lines.push(line.to_string());
            continue;
        }
        dropped.extend(taken);
        // A list item or line of nothing but claims goes whole.
        let bare = kept.trim().trim_start_matches(['-', '*', '+', ' ']);
        if !bare.trim().is_empty() && !bare.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
            kept_lines.push(kept);
        }
    }
    if dropped.is_empty() {
        return None;
    }
    Some((kept_lines.join("\n"), dropped))
}

/// `line` without its sentences that claim a function of `missing` done, and those sentences.
fn without_claiming_sentences(line: &str, missing: &[String]) -> (String, Vec<String>) {
    let mut kept = String::new();
    let mut taken = Vec::new();
    for sentence in sentences(line) {
        if claims_done(sentence, missing) {
            taken.push(sentence.trim().to_string());
        } else {
            kept.push_str(sentence);
        }
    }
    (kept.trim_end().to_string(), taken)
}

/// The sentences of a line, each with the space after it: split after `. `, `! ` and `? `.
fn sentences(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for at in 1..bytes.len() {
        if bytes[at] == b' ' && matches!(bytes[at - 1], b'.' | b'!' | b'?') {
            parts.push(&line[start..=at]);
            start = at + 1;
        }
    }
    if start < line.len() {
        parts.push(&line[start..]);
    }
    parts
}

fn claims_done(sentence: &str, missing: &[String]) -> bool {
    let lower = format!(" {} ", sentence.to_lowercase());
    missing.iter().any(|name| mentions_word(sentence, name))
        && DONE.iter().any(|words| lower.contains(words))
        && !NOT.iter().any(|words| lower.contains(words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn missing() -> Vec<String> {
        vec!["to_kelvin".to_string()]
    }

    #[test]
    fn recorded_claims_of_a_function_the_tree_lacks_are_taken_out() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-11-29): the research's risk and the plan.
        let research = "- **File temperature.py**:\n  - Contains `to_fahrenheit`.\n- **Risk**: The `to_kelvin` function is already implemented in the repository, so no additional risks need to be addressed.";
        let (kept, taken) = without_done_claims(research, &missing()).unwrap();
        assert_eq!(
            kept,
            "- **File temperature.py**:\n  - Contains `to_fahrenheit`."
        );
        assert_eq!(taken.len(), 1);
        let plan = "The `to_kelvin` function is correctly implemented in `temperature.py` and documented with a docstring. Add a test of `to_kelvin(0)` to test_temperature.py.";
        let (kept, _) = without_done_claims(plan, &missing()).unwrap();
        assert_eq!(kept, "Add a test of `to_kelvin(0)` to test_temperature.py.");
    }

    #[test]
    fn plans_for_the_function_and_claims_of_others_stay() {
        let plan = "1. Add `to_kelvin(celsius)` to temperature.py; it does not exist yet.\n2. `to_fahrenheit` is already implemented, use it as a model.\n3. The function to_kelvin should be defined next to it.";
        assert_eq!(without_done_claims(plan, &missing()), None);
        assert_eq!(without_done_claims(plan, &[]), None);
    }
}
