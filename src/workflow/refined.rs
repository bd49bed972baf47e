//! What refine may replace (docs/design.md §21). Refine rewrites a story's Summary and
//! Acceptance Criteria, but a small model's rewrite of a story that was already precise loses
//! its rules: "replaces every run of characters that are not letters or digits with one hyphen,
//! and strips hyphens from both ends" came back as "replacing spaces with hyphens" (Qwen2.5-
//! Coder-1.5B, 2026-11-28), and every phase after worked from the weaker text. A rewrite keeps
//! the words and the examples it was given, or the given text stays.

use std::collections::BTreeSet;

use super::raise_conditions::says_nothing_raises;
use super::sentence_files::file_names;

/// The share of the existing summary's words a rewrite must keep to replace it. At 0.7 a
/// rewrite of inventory's `cart-remove` passed with 11 of 15: it had lost "whatever" from
/// "takes the item out of the cart, whatever its quantity", written "reducing its quantity"
/// instead, and implement's every `remove` then took one away (2026-12-05).
const KEPT_SHARE: f64 = 0.85;

/// A summary of fewer distinct words than this is a sketch for refine to write out, whatever
/// it keeps of it.
const PRECISE_WORDS: usize = 8;

/// Words shorter than this are too common to tell a rule from its paraphrase.
const WORD_LEN: usize = 4;

/// The summary to write: `refined`, unless `existing` (what the author, or the last refine,
/// wrote) was already precise and the rewrite drops more than a few of its words, or drops a
/// file it names: "Add `median(values)` to stats.py" came back as "a utility in the `textkit`
/// package" (Qwen2.5-Coder-1.5B, 2026-11-28), and no later phase knew where `median` goes.
/// Nor may the rewrite turn around a conversion `given` (the story as it stood) states
/// ([`directions`]), nor drop an example of the existing summary that `criteria` (the
/// criteria the story will hold) do not carry either: "`whisper(\"\")` returns `\"...\"`", a
/// list item of the summary, came back as a criterion with its value broken (`"...""`), which
/// [`criteria`] rightly left out, and the rewritten summary had no list (a drive, 2026-11-30).
/// Nor may it add a code name the story never used to a precise summary: refine's "The function
/// should also be able to handle different currencies by taking an additional argument
/// `currency`", added to "Add a function `receipt_line(name, cents)`…" (inventory's
/// `receipt-line`, 2026-12-05), had implement write `receipt_line(name, cents, currency)`, and
/// every sample after failed the story's own `receipt_line("Apple", 250)` ([`adds_a_name`]).
/// `None`: the story has no summary, and gets none.
pub fn summary<'t>(
    existing: Option<&'t str>,
    refined: &'t str,
    given: &str,
    criteria: &str,
) -> Option<&'t str> {
    if reverses_a_direction(refined, given) {
        return existing;
    }
    let drops_an_example = |existing: &str| {
        super::examples::examples(existing)
            .iter()
            .any(|example| !example.carried_by(refined) && !example.carried_by(criteria))
    };
    Some(match existing {
        Some(existing)
            if !keeps_words(existing, refined)
                || (is_precise(existing) && adds_a_name(refined, given))
                || drops_a_file(existing, refined)
                || drops_an_example(existing) =>
        {
            existing
        }
        _ => refined,
    })
}

/// The criteria to write: `refined`, unless it leaves out code the existing criteria quote
/// (`slugify("Hello, World!")`, `"hello-world"`) or a file they name ("a test in test_stats.py
/// covers it"): the story's literal examples and files are its word.
/// Each span must come back whole, as a span: `"The Quick..."` inside a longer `"The Quick...""`
/// (the 1.5B model's refine of textkit's `headline`) is an example broken, not kept.
///
/// Nor is refine's word an example: an item of the rewrite holding an example that `given`
/// (the story as it stood: title, summary, criteria) does not carry is left out. Acceptance
/// holds the code to every example as a test it may not change, and of the six a 1.5B model
/// wrote for "returning True when count is below threshold", `is_low_stock(10, 0)` returns
/// `True` was wrong (2026-11-29): no right code could pass, and no person had said it.
///
/// And the criteria kept must still carry every example of the existing ones: the 1.5B
/// model's refine added `parse_quantity("")` to "`parse_quantity("abc")`, `parse_quantity("2.5")`
/// and `parse_quantity("-1")` raise `ValueError`", the item went as an invented example, and
/// with it the story's three (inventory `parse-quantity`, 2026-12-05).
pub fn criteria(existing: Option<&str>, refined: &str, given: &str) -> String {
    let refined = &list_before_prose(refined);
    let spans = quoted(refined);
    let kept = without_invented_examples(refined, given);
    match existing {
        Some(existing)
            if quoted(existing).iter().any(|code| !spans.contains(code))
                || drops_a_file(existing, refined)
                || super::examples::examples(existing)
                    .iter()
                    .any(|example| !example.carried_by(&kept)) =>
        {
            existing.to_string()
        }
        _ => kept,
    }
}

/// `criteria` up to the first line after its list that is prose, not an item: what the 1.5B
/// model wrote after the criteria is no criterion. It added "This summary and acceptance
/// criteria clearly define the behavior…", and, another time, the prompt's own "The story
/// mentions:" with its list of files and names (transit, 2026-12-06), which then stood in the
/// story's criteria. Text with no list stays whole, and so does a line followed by more
/// checkbox items.
fn list_before_prose(criteria: &str) -> String {
    let is_item = |line: &str| {
        let line = line.trim_start();
        line.starts_with("- ")
            || line.starts_with("* ")
            || line
                .split_once(". ")
                .is_some_and(|(number, _)| number.chars().all(|c| c.is_ascii_digit()))
    };
    let is_checkbox = |line: &str| line.trim_start().starts_with("- [");
    let lines: Vec<&str> = criteria.lines().collect();
    let mut in_list = false;
    let mut kept: Vec<&str> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        // A sentence, not the lazy continuation of an item ("returns `5`" under its line).
        let prose = line.starts_with(|c: char| c.is_uppercase()) && !is_item(line);
        if in_list && prose && !lines[at..].iter().any(|line| is_checkbox(line)) {
            break;
        }
        in_list |= is_item(line);
        kept.push(line);
    }
    while kept.last().is_some_and(|line| line.trim().is_empty()) {
        kept.pop();
    }
    let mut text = kept.join("\n");
    if criteria.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    text
}

/// `criteria` without its items that hold an example `given` does not carry. An item is a line
/// starting a list entry with the lines indented under it.
fn without_invented_examples(criteria: &str, given: &str) -> String {
    let mut items: Vec<String> = Vec::new();
    for line in criteria.lines() {
        let continues = line.starts_with([' ', '\t']) && !line.trim().is_empty();
        match items.last_mut() {
            Some(item) if continues => {
                item.push('\n');
                item.push_str(line);
            }
            _ => items.push(line.to_string()),
        }
    }
    items.retain(|item| {
        super::examples::examples(item)
            .iter()
            .all(|example| example.carried_by(given))
            && !reverses_a_direction(item, given)
            && !denies_a_raise(item, given)
    });
    let mut kept = items.join("\n");
    if criteria.ends_with('\n') && !kept.is_empty() {
        kept.push('\n');
    }
    kept
}

/// Whether `item` says nothing raises where `given` makes something raise: the 1.5B model's
/// refine added "The function should not raise any exceptions." to a story whose criteria held
/// "An empty author raises `ValueError`" (a drive, 2026-12-07), and implement was then told
/// both.
fn denies_a_raise(item: &str, given: &str) -> bool {
    let denies = |text: &str| {
        let lower = text.to_lowercase();
        says_nothing_raises(&lower) || lower.contains("no exception")
    };
    let raises = given
        .lines()
        .any(|line| line.to_lowercase().contains("raise") && !denies(line));
    denies(item) && raises
}

/// Whether `text` states a conversion the other way round from one `given` states, and `given`
/// does not state it both ways.
fn reverses_a_direction(text: &str, given: &str) -> bool {
    let given = directions(given);
    directions(text).into_iter().any(|(from, to)| {
        given.contains(&(to.clone(), from.clone())) && !given.contains(&(from, to))
    })
}

/// The conversions `text` states, each as the (from, to) pair of words, lower-cased:
/// `to_celsius(fahrenheit)` and `fahrenheit_to_celsius` give (fahrenheit, celsius), as does
/// "from degrees Fahrenheit to Celsius". Refine's criterion for "Add to_celsius(fahrenheit),
/// the inverse of to_fahrenheit" read "convert temperatures from Celsius to Fahrenheit"
/// (Qwen2.5-Coder-1.5B, a drive, 2026-11-29), and acceptance made tests of it.
fn directions(text: &str) -> Vec<(String, String)> {
    const FILLERS: [&str; 4] = ["degrees", "a", "an", "the"];
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect();
    let mut found = Vec::new();
    for (index, word) in words.iter().enumerate() {
        if let Some(to) = word.strip_prefix("to_") {
            // `to_celsius(fahrenheit)`: the first argument is what it converts from.
            let argument = lower
                .split(&format!("{word}("))
                .nth(1)
                .and_then(|rest| rest.split([',', ')']).next())
                .map(str::trim)
                .filter(|argument| {
                    !argument.is_empty()
                        && argument.chars().all(|c| c.is_alphanumeric() || c == '_')
                });
            if let Some(from) = argument {
                found.push((from.to_string(), to.to_string()));
            }
        } else if let Some((from, to)) = word.split_once("_to_") {
            found.push((from.to_string(), to.to_string()));
        } else if *word == "from" {
            let rest: Vec<&str> = words[index + 1..]
                .iter()
                .copied()
                .filter(|word| !FILLERS.contains(word))
                .take(3)
                .collect();
            if let [from, "to", to] = rest.as_slice() {
                found.push((from.to_string(), to.to_string()));
            }
        }
    }
    found
}

/// Whether `refined` leaves out a file name `existing` holds (`stats.py`, `inventory/cart.py`).
fn drops_a_file(existing: &str, refined: &str) -> bool {
    let kept = file_names(refined);
    file_names(existing).iter().any(|name| !kept.contains(name))
}

/// Whether a summary says enough that a rewrite only restates it: not a sketch to write out.
fn is_precise(summary: &str) -> bool {
    words(summary).len() >= PRECISE_WORDS
}

/// Whether `refined` quotes as code a name (`currency`, `format_price`) that `given` (the story
/// as it stood) never uses, in code or in prose. String literals inside the code are values, not
/// names, and are not read.
fn adds_a_name(refined: &str, given: &str) -> bool {
    let known: BTreeSet<&str> = identifiers(given).collect();
    quoted(refined)
        .iter()
        .any(|code| identifiers(&without_string_literals(code)).any(|name| !known.contains(name)))
}

/// The words of `text` that could be Python names: letters, digits and `_`, not starting with
/// a digit.
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with(|c: char| c.is_alphabetic() || c == '_'))
}

/// `code` with what stands between string quotes left out.
fn without_string_literals(code: &str) -> String {
    let mut quote: Option<char> = None;
    code.chars()
        .filter(|&c| match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                false
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                false
            }
            None => true,
        })
        .collect()
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
        assert_eq!(summary(Some(AUTHOR), lossy, AUTHOR, ""), Some(AUTHOR));
        let fuller = format!("{AUTHOR} An empty text gives an empty slug.");
        assert_eq!(
            summary(Some(AUTHOR), &fuller, AUTHOR, ""),
            Some(fuller.as_str())
        );
        // A short or missing summary is the refine's to write.
        assert_eq!(summary(Some("Add slugify"), lossy, "", ""), Some(lossy));
        assert_eq!(summary(None, lossy, "", ""), Some(lossy));
    }

    #[test]
    fn a_rewrite_that_loses_the_qualifier_of_a_rule_leaves_the_summary_as_it_was() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-12-05, inventory `cart-remove`).
        let author = "Add a method `remove(sku)` to the `Cart` class in inventory/cart.py that takes the item out of the cart, whatever its quantity. Removing an item the cart does not hold raises `KeyError`.";
        let lossy = "The task is to add a method `remove(sku)` to the `Cart` class in inventory/cart.py. The method should remove an item from the cart, reducing its quantity, and raise `KeyError` if the item is not in the cart. Removing an item the cart does not hold should return `0`.";
        assert_eq!(summary(Some(author), lossy, author, ""), Some(author));
        let fuller = format!("{author} Its other items stay as they are.");
        assert_eq!(
            summary(Some(author), &fuller, author, ""),
            Some(fuller.as_str())
        );
    }

    #[test]
    fn a_summary_that_drops_an_example_the_criteria_do_not_carry_stays_as_it_was() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-11-30): the examples were list items of
        // the summary; the rewrite moved one to the criteria and broke the other.
        let author = "Add a function `whisper(text)` to greet.py that returns the text in lower case, followed by three dots.\n\n- `whisper(\"Hi\")` returns `\"hi...\"`\n- `whisper(\"\")` returns `\"...\"`";
        let rewrite = "Add a function `whisper(text)` to greet.py that returns the text in lower case, followed by three dots.";
        let given = format!("Add whisper(text) to greet.py\n{author}");
        let kept = criteria(None, "- [ ] `whisper(\"Hi\")` returns `\"hi...\"`\n- [ ] `whisper(\"\")` returns `\"...\"\"`", &given);
        assert_eq!(kept, "- [ ] `whisper(\"Hi\")` returns `\"hi...\"`");
        assert_eq!(summary(Some(author), rewrite, &given, &kept), Some(author));
        // Carried by the criteria, the example may leave the summary.
        let both = format!("{kept}\n- [ ] `whisper(\"\")` returns `\"...\"`");
        assert_eq!(summary(Some(author), rewrite, &given, &both), Some(rewrite));
    }

    #[test]
    fn prose_after_the_criteria_is_no_criterion() {
        let given = "- [ ] `minutes_between(\"07:05\", \"08:00\")` returns `55`";
        // Recorded (Qwen2.5-Coder-1.5B, transit, 2026-12-06): the prompt's block echoed.
        let echoed = format!("{given}\n- [ ] The same time twice gives `0`\n\nThe story mentions:\n- file transit/times.py (exists)\n- `minutes_between`: not defined yet (the story asks for it)\n");
        assert_eq!(
            criteria(Some(given), &echoed, given),
            format!("{given}\n- [ ] The same time twice gives `0`\n")
        );
        let closing =
            format!("{given}\n\nThis summary and acceptance criteria clearly define the behavior.");
        assert_eq!(criteria(Some(given), &closing, given), given);
        assert_eq!(
            criteria(None, "It works.", "It works."),
            "It works.",
            "no list"
        );
    }

    #[test]
    fn criteria_that_drop_an_example_leave_the_criteria_as_they_were() {
        let author = "- [ ] `slugify(\"Hello, World!\")` returns `\"hello-world\"`\n- [ ] `slugify(\"a  b\")` returns `\"a-b\"`";
        let dropped =
            "- [ ] `slugify(\"Hello, World!\")` returns `\"hello-world\"`\n- [ ] it handles spaces";
        assert_eq!(criteria(Some(author), dropped, author), author);
        let kept = format!("{author}\n- [ ] an empty text gives `\"\"`");
        assert_eq!(criteria(Some(author), &kept, author), kept);
        // Where the story gave no example, refine's are its own, and left out.
        assert_eq!(
            criteria(Some("- [ ] it works"), dropped, "- [ ] it works"),
            "- [ ] it handles spaces"
        );
        assert_eq!(
            criteria(Some("- [ ] it works"), dropped, author),
            dropped,
            "an example the story gives, refine may write out"
        );
        // Recorded (Qwen2.5-Coder-1.5B, inventory `parse-quantity`, 2026-12-05): one call
        // added to the story's list of raising calls.
        let author = "- [ ] `parse_quantity(\"12\")` returns `12`\n- [ ] `parse_quantity(\"abc\")`, `parse_quantity(\"2.5\")` and `parse_quantity(\"-1\")` raise `ValueError`";
        let added = "- [ ] `parse_quantity(\"12\")` returns `12`\n- [ ] `parse_quantity(\"abc\")`, `parse_quantity(\"2.5\")`, `parse_quantity(\"-1\")`, and `parse_quantity(\"\")` raise `ValueError`";
        assert_eq!(criteria(Some(author), added, author), author);
    }

    #[test]
    fn examples_refine_invents_are_left_out_with_their_items() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-29): a story of a title only, and six
        // examples, the last of them wrong.
        let title = "Add is_low_stock(count, threshold) to stock.py returning True when count is below threshold\n";
        let refined = "- [ ] `is_low_stock(3, 5)` should return `True` because 3 is below 5.\n- [ ] `is_low_stock(10, 0)` should return `True` because 10 is greater than 0.\n- [ ] The function returns `True` when `count` is less than `threshold`,\n  and `False` otherwise.\n- [ ] a test in test_stock.py covers it\n";
        assert_eq!(
            criteria(None, refined, title),
            "- [ ] The function returns `True` when `count` is less than `threshold`,\n  and `False` otherwise.\n- [ ] a test in test_stock.py covers it\n"
        );
        let given = format!("{title}- [ ] `is_low_stock(3, 5)` returns `True`");
        assert_eq!(
            criteria(None, refined, &given),
            "- [ ] `is_low_stock(3, 5)` should return `True` because 3 is below 5.\n- [ ] The function returns `True` when `count` is less than `threshold`,\n  and `False` otherwise.\n- [ ] a test in test_stock.py covers it\n"
        );
        assert_eq!(
            criteria(None, "- [ ] `is_low_stock(10, 0)` returns `True`", title),
            ""
        );
    }

    #[test]
    fn a_criterion_that_turns_the_story_s_conversion_around_is_left_out() {
        let title = "Add to_celsius(fahrenheit) to temperature.py, the inverse of to_fahrenheit; temperatures below absolute zero (-459.67 F) raise ValueError";
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-11-29).
        let refined = "- [ ] `to_celsius` should correctly convert temperatures from Celsius to Fahrenheit.\n- [ ] The `to_celsius` function should raise a `ValueError` if the input temperature is below absolute zero (-459.67°F).\n";
        assert_eq!(
            criteria(None, refined, title),
            "- [ ] The `to_celsius` function should raise a `ValueError` if the input temperature is below absolute zero (-459.67°F).\n"
        );
        let right = "- [ ] converts from degrees Fahrenheit to Celsius\n";
        assert_eq!(criteria(None, right, title), right);
        assert_eq!(
            directions("fahrenheit_to_celsius, and from the Celsius to Kelvin"),
            [
                ("fahrenheit".to_string(), "celsius".to_string()),
                ("celsius".to_string(), "kelvin".to_string())
            ]
        );
        let turned = "Converts a temperature from Celsius to Fahrenheit.";
        assert_eq!(summary(None, turned, title, ""), None);
        assert_eq!(summary(Some("Was"), turned, title, ""), Some("Was"));
        // A function named `to_…` without a call or an argument states no direction.
        assert!(directions("the inverse of to_fahrenheit").is_empty());
        assert!(directions("Add to_celsius() to temperature.py").is_empty());
    }

    #[test]
    fn a_criterion_that_says_nothing_raises_goes_where_the_story_makes_something_raise() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-07).
        let given = "Shelf marks\n- [ ] An empty author raises `ValueError`.";
        let refined = "- [ ] The shelf mark has the author's first three letters.\n- [ ] The function should not raise any exceptions.\n";
        assert_eq!(
            criteria(None, refined, given),
            "- [ ] The shelf mark has the author's first three letters.\n"
        );
        // Where the story makes nothing raise, the criterion is refine's to add.
        assert_eq!(criteria(None, refined, "Shelf marks"), refined);
    }

    #[test]
    fn a_rewrite_that_adds_a_code_name_to_a_precise_summary_leaves_it_as_it_was() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-12-05, inventory `receipt-line`).
        let author = "Add a function `receipt_line(name, cents)` to inventory/money.py that returns the item's name, a colon and a space, and its price as `format_price` writes it.";
        let given = format!("A receipt line\n{author}\n- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`");
        let invented = format!("{author} The function should also be able to handle different currencies by taking an additional argument `currency`.");
        assert_eq!(summary(Some(author), &invented, &given, ""), Some(author));
        // Values inside the code, and names the story uses anywhere, are no new names.
        let fuller = format!("{author} `receipt_line(\"Pear\", 5)` gives `\"Pear: $0.05\"` for a price below a dollar.");
        assert_eq!(
            summary(Some(author), &fuller, &given, ""),
            Some(fuller.as_str())
        );
        // A sketch is refine's to write out, names and all.
        let sketch = "Add receipt_line";
        let written =
            "Add `receipt_line(name, cents)` to inventory/money.py, calling `format_price`.";
        assert_eq!(summary(Some(sketch), written, sketch, ""), Some(written));
    }

    #[test]
    fn a_rewrite_that_loses_a_file_the_story_names_leaves_it_as_it_was() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, textkit `median`): most words kept, the file
        // gone, and the criteria's test file with it.
        let author = "Add a function `median(values)` to stats.py that returns the middle value of the sorted numbers; for an even count, the mean of the two middle values; for an empty list, 0.0.";
        let lossy = "The `median` function is a utility in the `textkit` package that calculates the middle value of a list of numbers. If the list has an even count, it returns the mean of the two middle values. If the list is empty, it returns 0.0.";
        assert_eq!(summary(Some(author), lossy, author, ""), Some(author));
        let kept = format!("{author} The values need not be sorted.");
        assert_eq!(
            summary(Some(author), &kept, author, ""),
            Some(kept.as_str())
        );
        let criteria_before =
            "- [ ] `median([])` returns `0.0`\n- [ ] a test in test_stats.py covers it";
        let criteria_lossy =
            "- [ ] `median([])` returns `0.0`\n- [ ] `median([1, 2])` returns `1.5`";
        assert_eq!(
            criteria(Some(criteria_before), criteria_lossy, criteria_before),
            criteria_before
        );
        // Recorded (textkit `headline`): the example's value with a quote too many.
        let headline = "- [ ] `headline(\"the quick brown fox\", 12)` returns `\"The Quick...\"`";
        let broken = "- [ ] `headline(\"the quick brown fox\", 12)` returns `\"The Quick...\"\"`";
        assert_eq!(criteria(Some(headline), broken, headline), headline);
        // Neither `0.0`, `e.g.` nor `str.title()` is a file.
        assert!(
            file_names("returns 0.0, e.g. `str.title()` of inventory/cart.py.")
                .into_iter()
                .eq(["inventory/cart.py".to_string()])
        );
    }
}
