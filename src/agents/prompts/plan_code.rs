//! The plan as the implement agent reads it (docs/design.md §21): without the code blocks that
//! touch nothing the story calls. The 1.5B model's plan for `slugify` held the tree's
//! `textkit.py` without it, and tests of the two stories before with values of its own
//! (`word_count("  Many   spaces  ") == 4`); implement wrote that `textkit.py` out in every
//! reply and never wrote `slugify` (textkit, 2026-12-05).

use std::borrow::Cow;

use super::repo_map::{backtick_spans, called_name};

/// The names the story's own words call in backticks: `slugify("Hello")` → `slugify`,
/// `cart.remove("kiwi")` → `remove`.
pub fn called_names(own_words: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (span, _) in backtick_spans(own_words) {
        if let Some(name) = called_name(&span) {
            if !names.iter().any(|known| known == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// `plan` without each fenced code block that mentions none of `called` as a word. With
/// nothing called, or a fence left open, the plan stays as it is.
pub fn code_about<'a>(plan: &'a str, called: &[String]) -> Cow<'a, str> {
    if called.is_empty() {
        return Cow::Borrowed(plan);
    }
    let lines: Vec<&str> = plan.lines().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(lines.len());
    let mut dropped = false;
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if !is_fence(line) {
            kept.push(line);
            at += 1;
            continue;
        }
        let Some(close) = (at + 1..lines.len()).find(|&end| is_fence(lines[end])) else {
            kept.extend(&lines[at..]);
            break;
        };
        let block = &lines[at + 1..close];
        if block.iter().any(|code| mentions_any(code, called)) {
            kept.extend(&lines[at..=close]);
        } else {
            dropped = true;
        }
        at = close + 1;
    }
    match dropped {
        true => Cow::Owned(kept.join("\n")),
        false => Cow::Borrowed(plan),
    }
}

fn is_fence(line: &str) -> bool {
    line.trim_start().starts_with("```")
}

/// Whether `code` holds one of `names` as a whole word.
fn mentions_any(code: &str, names: &[String]) -> bool {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|word| names.iter().any(|name| name == word))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded in part (Qwen2.5-Coder-1.5B's plan for textkit's `slugify`, 2026-12-05).
    const PLAN: &str = "\
4. **Implement the `slugify` Function**
   - Define the `slugify` function with the specified behavior.

### File Changes and Tests

1. **File Changes:**
   - **textkit.py**:
     ```python
     def shout(text):
         return text.upper() + \"!\"

     def word_count(text):
         return len(text.split())
     ```

2. **Test for `slugify` Function:**
   - **test_textkit.py**:
     ```python
     def test_slugify():
         assert textkit.slugify(\"Hello, World!\") == \"hello-world\"
     ```

3. **Test for `count_the_words_of_a_text` Function:**
   - **test_count_the_words_of_a_text.py**:
     ```python
     def test_count_the_words_of_a_text():
         assert textkit.word_count(\"  Many   spaces  \") == 4
     ```
";

    #[test]
    fn code_blocks_that_call_nothing_the_story_calls_are_left_out() {
        let called = called_names(
            "Add `slugify(text)`.\n- [ ] `slugify(\"Hello, World!\")` returns `\"hello-world\"`",
        );
        assert_eq!(called, ["slugify"]);

        let read = code_about(PLAN, &called);

        assert!(!read.contains("word_count"), "{read}");
        assert!(!read.contains("def shout"), "{read}");
        assert!(
            read.contains("     ```python\n     def test_slugify():\n         assert textkit.slugify(\"Hello, World!\") == \"hello-world\"\n     ```"),
            "{read}"
        );
        assert!(
            read.contains("1. **File Changes:**\n   - **textkit.py**:\n\n2."),
            "{read}"
        );
    }

    #[test]
    fn a_plan_stays_whole_without_a_call_or_with_a_fence_left_open() {
        assert_eq!(code_about(PLAN, &[]), PLAN);
        let open = "Steps:\n```python\ndef shout(text):\n";
        assert_eq!(code_about(open, &["slugify".to_string()]), open);
        let method =
            called_names("- [ ] after `cart.remove(\"kiwi\")`, `cart.quantity(\"kiwi\")` is `0`");
        assert_eq!(method, ["remove", "quantity"]);
    }
}
