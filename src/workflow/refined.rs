//! What refine may replace (docs/design.md §21). Refine rewrites a story's Summary and
//! Acceptance Criteria, but a small model's rewrite of a story that was already precise loses
//! its rules: "replaces every run of characters that are not letters or digits with one hyphen,
//! and strips hyphens from both ends" came back as "replacing spaces with hyphens" (Qwen2.5-
//! Coder-1.5B, 2026-11-28), and every phase after worked from the weaker text. A rewrite keeps
//! the words and the examples it was given, or the given text stays.

use std::collections::BTreeSet;

/// The share of the existing summary's words a rewrite must keep to replace it.
const KEPT_SHARE: f64 = 0.7;

/// A summary of fewer distinct words than this is a sketch for refine to write out, whatever
/// it keeps of it.
const PRECISE_WORDS: usize = 8;

/// Words shorter than this are too common to tell a rule from its paraphrase.
const WORD_LEN: usize = 4;

/// The summary to write: `refined`, unless `existing` (what the author, or the last refine,
/// wrote) was already precise and the rewrite drops more than a few of its words.
pub fn summary<'t>(existing: Option<&'t str>, refined: &'t str) -> &'t str {
    match existing {
        Some(existing) if !keeps_words(existing, refined) => existing,
        _ => refined,
    }
}

/// The criteria to write: `refined`, unless it leaves out code the existing criteria quote
/// (`slugify("Hello, World!")`, `"hello-world"`): the story's literal examples are its word.
pub fn criteria<'t>(existing: Option<&'t str>, refined: &'t str) -> &'t str {
    match existing {
        Some(existing)
            if quoted(existing)
                .iter()
                .any(|code| !refined.contains(code.as_str())) =>
        {
            existing
        }
        _ => refined,
    }
}

fn keeps_words(existing: &str, refined: &str) -> bool {
    let before = words(existing);
    if before.len() < PRECISE_WORDS {
        return true;
    }
    let after = words(refined);
    let kept = before.intersection(&after).count();
    kept as f64 >= KEPT_SHARE * before.len() as f64
}

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| word.chars().count() >= WORD_LEN)
        .map(str::to_lowercase)
        .collect()
}

/// The backticked spans of `text`.
fn quoted(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|code| !code.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const AUTHOR: &str = "Add a function `slugify(text)` to textkit.py. It lower-cases the text, replaces every run of characters that are not letters or digits with one hyphen, and strips hyphens from both ends.";

    #[test]
    fn a_rewrite_that_loses_the_authors_rule_leaves_the_summary_as_it_was() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, textkit `slugify`).
        let lossy = "Add a function `slugify(text)` to the `textkit.py` module. The function should convert a string to a slug, which is a URL-friendly string that is created by replacing spaces with hyphens and converting all characters to lowercase.";
        assert_eq!(summary(Some(AUTHOR), lossy), AUTHOR);
        let fuller = format!("{AUTHOR} An empty text gives an empty slug.");
        assert_eq!(summary(Some(AUTHOR), &fuller), fuller);
        // A short or missing summary is the refine's to write.
        assert_eq!(summary(Some("Add slugify"), lossy), lossy);
        assert_eq!(summary(None, lossy), lossy);
    }

    #[test]
    fn criteria_that_drop_an_example_leave_the_criteria_as_they_were() {
        let author = "- [ ] `slugify(\"Hello, World!\")` returns `\"hello-world\"`\n- [ ] `slugify(\"a  b\")` returns `\"a-b\"`";
        let dropped =
            "- [ ] `slugify(\"Hello, World!\")` returns `\"hello-world\"`\n- [ ] it handles spaces";
        assert_eq!(criteria(Some(author), dropped), author);
        let kept = format!("{author}\n- [ ] an empty text gives `\"\"`");
        assert_eq!(criteria(Some(author), &kept), kept);
        assert_eq!(criteria(Some("- [ ] it works"), dropped), dropped);
    }
}
