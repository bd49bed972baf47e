//! The plan as the implement agent reads it (docs/design.md §21): without the code blocks that
//! touch nothing the story calls, and without the steps about files the story does not name.
//! The 1.5B model's plan for `slugify` held the tree's `textkit.py` without it, and tests of the
//! two stories before with values of its own (`word_count("  Many   spaces  ") == 4`);
//! implement wrote that `textkit.py` out in every reply and never wrote `slugify` (textkit,
//! 2026-12-05). Its plan for a new `inventory/money.py` went on with four steps that changed
//! the cart, the prices and their tests; implement followed them, its `Cart.remove` broke the
//! cart's tests, and the story was lost (inventory `format-price`, 2026-12-05).

use std::borrow::Cow;
use std::path::Path;

use super::named_files::{names_file, path_words};
use super::repo_map::{backtick_spans, called_name, is_test_path};

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

/// `plan` without each step that names files, none of them one that `own_words` (the story's
/// own) names, when the story names a file that is not a test. A step is a line that starts a
/// numbered item or a heading at the left margin, with the lines below it up to the next. The
/// plan stays as it is when the story names no such file (a story that names only its test
/// file leaves where its code goes to the plan), when no step would be left, or when it has no
/// steps.
pub fn steps_about<'a>(plan: &'a str, own_words: &str) -> Cow<'a, str> {
    let named: Vec<&str> = path_words(own_words).collect();
    if !named.iter().any(|path| !is_test_path(Path::new(path))) {
        return Cow::Borrowed(plan);
    }
    let lines: Vec<&str> = plan.lines().collect();
    let mut starts = Vec::new();
    let mut fenced = false;
    for (at, line) in lines.iter().enumerate() {
        if is_fence(line) {
            fenced = !fenced;
        } else if !fenced && starts_a_step(line) {
            starts.push(at);
        }
    }
    let Some(&first) = starts.first() else {
        return Cow::Borrowed(plan);
    };
    let mut kept: Vec<&str> = lines[..first].to_vec();
    let mut steps_kept = 0;
    for (index, &start) in starts.iter().enumerate() {
        let end = starts.get(index + 1).copied().unwrap_or(lines.len());
        let step = lines[start..end].join("\n");
        let elsewhere =
            path_words(&step).next().is_some() && !named.iter().any(|path| names_file(&step, path));
        if !elsewhere {
            kept.extend(&lines[start..end]);
            steps_kept += 1;
        }
    }
    match steps_kept {
        0 => Cow::Borrowed(plan),
        n if n == starts.len() => Cow::Borrowed(plan),
        _ => Cow::Owned(kept.join("\n")),
    }
}

/// `1. **Create money.py**` or `### Step 2`, at the left margin.
fn starts_a_step(line: &str) -> bool {
    let numbered = line.split_once(". ").is_some_and(|(number, _)| {
        !number.is_empty() && number.chars().all(|c| c.is_ascii_digit())
    });
    numbered || line.starts_with('#')
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

    /// Recorded in part (Qwen2.5-Coder-1.5B's plan for inventory's `format-price`, 2026-12-05).
    const STEPS: &str = "\
1. **Create `money.py`**: This file will contain the `format_price` function.

2. **Update `test_money.py`**: This file will contain the test for the `format_price` function.

3. **Change `inventory/cart.py`**: This file will contain the `Cart` class. The class should be
updated to include a method `remove_an_item_from_the_cart`.

4. **Update `tests/test_cart.py`**: This file will contain the test for the `Cart` class.

5. **Check the examples**: every example of the story passes.";

    #[test]
    fn steps_about_files_the_story_does_not_name_are_left_out() {
        let own = "Add a new module inventory/money.py with a function `format_price(cents)`.\n- [ ] a test in tests/test_money.py covers it";

        let read = steps_about(STEPS, own);

        assert_eq!(
            read,
            "1. **Create `money.py`**: This file will contain the `format_price` function.\n\n2. **Update `test_money.py`**: This file will contain the test for the `format_price` function.\n\n5. **Check the examples**: every example of the story passes."
        );
    }

    #[test]
    fn steps_stay_when_the_story_names_no_file_or_no_step_would_be_left() {
        assert_eq!(steps_about(STEPS, "Add `format_price(cents)`."), STEPS);
        assert_eq!(
            steps_about(STEPS, "- [ ] a test in tests/test_money.py covers it"),
            STEPS
        );
        let elsewhere = "1. Change `cart.py`.\n2. Change `pricing.py`.";
        assert_eq!(steps_about(elsewhere, "Add it to money.py"), elsewhere);
        let fenced = "Steps:\n```\n1. cart.py\n```\n1. Change `money.py`.";
        assert_eq!(steps_about(fenced, "Add it to money.py"), fenced);
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
