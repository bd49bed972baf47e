//! What a criterion says in words before its example (docs/design.md §21): when it says what
//! the object holds first, a test the tool writes from the calls alone would assert a value no
//! code could give, so the example is asked of the model alone instead.

use std::path::Path;

use crate::workflow::examples::{words_before, Example};
use crate::workflow::unknown_methods::methods_of;

/// Whether the words before a value `example` on its line of the story's `text` say what the
/// object holds first: a number or a quoted value, or a word that sets a scene ("with",
/// "after", "once"). "An empty cart's `total_items()` returns `0`" says nothing a new object
/// lacks.
pub(super) fn set_up_in_words(text: &str, example: &Example) -> bool {
    const SCENE: [&str; 9] = [
        "with", "after", "when", "once", "given", "has", "have", "holding", "where",
    ];
    if example.raises() {
        return false;
    }
    let Some(words) = words_before(text, example) else {
        return false;
    };
    let words = words.to_lowercase();
    // A `'` is as often an apostrophe ("an empty cart's") as a quote.
    words.contains(|c: char| c.is_ascii_digit() || c == '"')
        || words
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| SCENE.contains(&word))
}

/// Whether the words before `example` on its line of `text` name, by its verb, a method of
/// `class` (in the tree at `dir`) that neither `calls` nor the example makes: "Renting and
/// returning a bike that was added still works: `fleet.rent("B1", "ann")` then
/// `fleet.return_bike("B1")` returns `"ann"`" adds the bike with `add_bike` first, in words. The
/// tool's test rented `B1` on an empty fleet, which the story's own code must refuse (cyclehire
/// `unknown-bike-error`, 2026-12-07).
pub(super) fn method_in_words(
    text: &str,
    dir: &Path,
    example: &Example,
    class: &str,
    calls: &[String],
) -> bool {
    let Some(words) = words_before(text, example).filter(|_| !example.raises()) else {
        return false;
    };
    let method_of = |call: &str| {
        let callee = call.split('(').next().unwrap_or_default();
        callee.rsplit('.').next().unwrap_or_default().to_string()
    };
    let made: Vec<String> = calls
        .iter()
        .map(String::as_str)
        .chain([example.call.as_str()])
        .map(method_of)
        .collect();
    let unmade: Vec<String> = methods_of(dir, class)
        .unwrap_or_default()
        .into_iter()
        .filter(|method| !method.starts_with('_') && !made.contains(method))
        .collect();
    let words = words.to_lowercase();
    words.split(|c: char| !c.is_alphanumeric()).any(|word| {
        unmade.iter().any(|method| {
            let verb = method.split('_').next().unwrap_or_default();
            verb.len() >= 3
                && word
                    .strip_prefix(verb)
                    .is_some_and(|ending| ["", "s", "d", "ed", "ing"].contains(&ending))
        })
    })
}
