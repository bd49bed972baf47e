//! Which files a sentence of a story names (docs/design.md §21): where a function, a method
//! or an exception the story asks for goes. A story places a definition in words ("Add
//! `median(values)` to stats.py", "a new module inventory/money.py with a function
//! `format_price(cents)`"), and the tool reads the file from the definition's own sentence.

use std::path::Path;

use crate::agents::prompts::is_test_path;

/// Extensions of the files a story may name.
const FILE_EXTENSIONS: &[&str] = &[
    "py", "rs", "js", "mjs", "ts", "tsx", "jsx", "go", "rb", "java", "kt", "c", "h", "cpp", "cs",
    "php", "swift", "sh", "md", "json", "toml", "yaml", "yml", "txt", "html", "css", "ini", "cfg",
];

/// The file names `text` holds (`stats.py`, `inventory/cart.py`), in order, each once; a word
/// ending a sentence ("of cart.py.") and one in quotes or backticks count.
pub fn file_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let words = text
        .split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',' | ';' | '(' | ')'))
        .map(|word| word.trim_end_matches([':', '.', '!', '?']));
    for word in words {
        let is_file = word.rsplit_once('.').is_some_and(|(stem, extension)| {
            stem.chars().count() >= 2
                && stem
                    .chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
                && FILE_EXTENSIONS.contains(&extension)
        });
        if is_file && !names.iter().any(|name| name == word) {
            names.push(word.to_string());
        }
    }
    names
}

/// The path-like words of `text` up to the end of its first sentence, line, or the next call.
pub fn files_in_sentence(text: &str) -> Vec<String> {
    let mut files = Vec::new();
    for word in text.lines().next().unwrap_or("").split_whitespace() {
        if word.starts_with('`') && word.contains('(') {
            break; // the next function's own sentence part
        }
        let ends_sentence = word.ends_with(['.', ';', '!', '?']) && !path_like(word);
        // A full stop after a quoted path (`textkit.py`.) ends the sentence, not the path.
        let token = word.trim_matches(|c: char| "`*\"'(),;:!?.".contains(c));
        if path_like(token) && !word.contains('(') {
            files.push(token.to_string());
        }
        if ends_sentence {
            break;
        }
    }
    files
}

/// [`files_in_sentence`] up to the next name in backticks that is a function or a method
/// (`register`, `Account.register`): a file after it is that one's. "Raise it from `toll` and
/// from `Account.register` (in `tollbooth/trips.py`)" placed `toll`, which `tollbooth/rates.py`
/// defines, in `trips.py`; implement was told `toll` was missing there, and the narrowed task
/// asked for a method `toll` of `Account` (tollbooth `unknown-vehicle-class`, 2026-12-07).
/// A class's name (`the \`Cart\` class in cart.py`) does not end the part.
pub fn files_before_another_name(text: &str) -> Vec<String> {
    let first_line = text.lines().next().unwrap_or("");
    let mut own = String::new();
    for word in first_line.split_whitespace() {
        let token = word.trim_matches(|c: char| "`*\"'(),;:!?.".contains(c));
        let another = word.starts_with('`')
            && !path_like(token)
            && !token.is_empty()
            && token
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
            && (token.contains('.') || token.starts_with(|c: char| c.is_lowercase()));
        if another {
            break;
        }
        own.push_str(word);
        own.push(' ');
    }
    files_in_sentence(&own)
}

/// The path-like words of the sentence that `text` ends in, in order.
pub fn files_earlier_in_sentence(text: &str) -> Vec<String> {
    let mut files = Vec::new();
    for word in text.lines().last().unwrap_or("").split_whitespace().rev() {
        let ends_sentence = word.ends_with(['.', ';', '!', '?']) && !path_like(word);
        if ends_sentence || (word.starts_with('`') && word.contains('(')) {
            break; // the sentence before, or another function's part of this one
        }
        let token = word.trim_matches(|c: char| "`*\"'(),;:!?.".contains(c));
        if path_like(token) {
            files.insert(0, token.to_string());
        }
    }
    files
}

/// A relative path with a file extension: `stats.py`, `src/lib.rs`; a known one without a
/// folder, as `HarvestLog.total` is a method (orchard, 2026-12-06: `record` was sought there).
pub fn path_like(token: &str) -> bool {
    let Some((stem, extension)) = token.rsplit_once('.') else {
        return false;
    };
    (stem.contains('/') || FILE_EXTENSIONS.contains(&extension))
        && !stem.is_empty()
        && (1..=6).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && extension.chars().any(|c| c.is_ascii_alphabetic())
        && stem
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !token.split('/').any(|part| part == "..")
}

/// The one file `story_text` names that is not a test, when it names exactly one: where a
/// function goes that its own sentence places nowhere. Refine wrote the 1.5B model's summary
/// as "…a function `receipt_line(name, cents)` that returns … The function should be added to
/// the `inventory/money.py` file and a test in `tests/test_money.py` …" (the inventory
/// benchmark, 2026-12-05): the file came a sentence later, and with no home for
/// `receipt_line` the tool could not add the examples the model's tests left out.
pub fn sole_source_file(story_text: &str) -> Option<String> {
    let mut sources = file_names(story_text)
        .into_iter()
        .filter(|file| !is_test_path(Path::new(file)));
    let first = sources.next()?;
    sources.next().is_none().then_some(first)
}
