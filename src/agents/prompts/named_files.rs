//! The files a story names, shown whole to the implement agent.
//!
//! A small model that must first read a file tends to guess its contents instead, and every
//! extra turn costs a full prompt on a slow server. As aider puts the files of a change into
//! the chat, implement's prompt carries the (small) files the story itself names, so the
//! model's first reply can already be the edit.

use std::path::Path;

/// Files shown at most.
const MAX_FILES: usize = 4;
/// The largest file shown.
const MAX_FILE_BYTES: u64 = 16 * 1024;
/// All files shown together at most.
const MAX_TOTAL_BYTES: usize = 24 * 1024;
/// Files looked at to find the ones named; a larger repository is not searched further.
const MAX_SCANNED: usize = 5_000;

/// Files shown whole in a prompt: the text to add, and their paths.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct NamedFiles {
    pub text: String,
    pub paths: Vec<String>,
}

/// The repository's text files that `story_text` names by path (or by file name, when only one
/// file has that name), in the order they are first named, each in a fence under its path.
/// Empty when the story names none.
pub fn named_files(root: &Path, board_dir: &Path, story_text: &str) -> NamedFiles {
    let mut candidates: Vec<(usize, String)> = Vec::new();
    let paths = repository_files(root, board_dir);
    for path in &paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        let unique_name = paths
            .iter()
            .filter(|other| other.rsplit('/').next() == Some(name))
            .count()
            == 1;
        let at = mention(story_text, path)
            .or_else(|| unique_name.then(|| mention(story_text, name)).flatten());
        if let Some(at) = at {
            candidates.push((at, path.clone()));
        }
    }
    candidates.sort();
    let mut out = String::new();
    let mut shown = Vec::new();
    let mut total = 0;
    for (_, path) in candidates.into_iter().take(MAX_FILES) {
        let full = root.join(&path);
        let Ok(meta) = std::fs::metadata(&full) else {
            continue;
        };
        if meta.len() > MAX_FILE_BYTES {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&full) else {
            continue;
        };
        if text.contains('\0') || total + text.len() > MAX_TOTAL_BYTES {
            continue;
        }
        total += text.len();
        shown.push(path.clone());
        let fence = if text.contains("```") { "~~~~" } else { "```" };
        out.push_str(&format!(
            "\n## {path}\n{fence}{}\n{}{}{fence}\n",
            language(&path),
            text,
            if text.ends_with('\n') { "" } else { "\n" }
        ));
    }
    if out.is_empty() {
        return NamedFiles::default();
    }
    NamedFiles {
        text: format!("# Files the story names, as they are now\n{out}"),
        paths: shown,
    }
}

/// Extensions of source files, whose definitions the repository map shows.
pub(super) const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "rs", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "rb", "java", "kt", "swift", "php",
    "sh", "c", "h", "cc", "cpp", "hpp", "cs", "scala", "lua",
];

/// Whether `text` names any file, existing or not, by a path or a name with a known extension
/// (`inventory/money.py`, `README.md`), not a method (`Cart.add`).
pub fn names_a_path(text: &str) -> bool {
    path_words(text).next().is_some()
}

/// The words of `text` that name a file by a path or a name with a known extension, as
/// written: `inventory/money.py`, `README.md`.
pub(super) fn path_words(text: &str) -> impl Iterator<Item = &str> {
    const OTHER: &[&str] = &[
        "md", "toml", "json", "yaml", "yml", "txt", "cfg", "ini", "html",
    ];
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, '`' | '(' | ')' | ',' | ';' | '"' | '\'' | '*')
    })
    .map(|word| word.trim_end_matches(['.', ':']))
    .filter(|word| {
        word.rsplit_once('.').is_some_and(|(stem, extension)| {
            !stem.is_empty()
                && (SOURCE_EXTENSIONS.contains(&extension) || OTHER.contains(&extension))
        })
    })
}

/// Whether `text` names the file `path`: by its path, or by its file name.
pub fn names_file(text: &str, path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    mention(text, path).is_some() || mention(text, name).is_some()
}

/// Where `needle` is named in `text` as a whole word (not inside a longer path or name).
pub(super) fn mention(text: &str, needle: &str) -> Option<usize> {
    let is_part = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.');
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        let end = at + needle.len();
        let before = text[..at].chars().next_back();
        let after = text[end..].chars().next();
        // A sentence's full stop after a file name still ends the name.
        let after_ok = match after {
            Some('.') => text[end + 1..].chars().next().is_none_or(|c| !is_part(c)),
            Some(c) => !is_part(c),
            None => true,
        };
        if before.is_none_or(|c| !is_part(c)) && after_ok {
            return Some(at);
        }
        from = at + needle.len().max(1);
    }
    None
}

/// The repository's files that `story_text` does not name: for implement, those whose tests a
/// whole file written out keeps as they are (the project's tests of other work), and those a
/// refused write to does not keep the rest of a reply from its check.
pub fn files_not_named(root: &Path, board_dir: &Path, story_text: &str) -> Vec<String> {
    repository_files(root, board_dir)
        .into_iter()
        .filter(|path| !names_file(story_text, path))
        .collect()
}

/// The repository's files as `/`-separated relative paths, without what .gitignore ignores,
/// the .git folder and the board.
pub(super) fn repository_files(root: &Path, board_dir: &Path) -> Vec<String> {
    let board = board_dir.to_path_buf();
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| entry.file_name() != ".git" && !entry.path().starts_with(&board))
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .take(MAX_SCANNED)
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(root)
                .ok()
                .map(|relative| relative.to_string_lossy().replace('\\', "/"))
        })
        .collect()
}

fn language(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "py" => "python",
        "rs" => "rust",
        "js" | "mjs" | "cjs" => "javascript",
        "ts" => "typescript",
        "go" => "go",
        "rb" => "ruby",
        "java" => "java",
        "sh" => "sh",
        "toml" => "toml",
        "json" => "json",
        "md" => "markdown",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_told_from_a_method() {
        assert!(names_a_path("Add `format_price` to inventory/money.py."));
        assert!(names_a_path("See README.md: it says so"));
        assert!(!names_a_path(
            "`Cart.add(sku)` refuses 0, e.g. for a person."
        ));
        assert!(!names_a_path("no file at all"));
    }

    #[test]
    fn files_the_story_names_are_shown_in_the_order_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let write = |path: &str, text: &str| {
            let full = root.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write("stats.py", "def mean(values):\n    return 0\n");
        write("test_stats.py", "from stats import mean\n");
        write("pkg/util.py", "X = 1\n");
        write("other/util.py", "Y = 2\n");
        write("big.py", &"x = 1\n".repeat(5_000));
        write(".agentic-sdlc/backlog/s.md", "stats.py\n");
        let story = "Fix mean in stats.py. Add a test to test_stats.py. Not util.py, nor big.py, \
                     and mystats.py is no file.";

        let named = named_files(root, &root.join(".agentic-sdlc"), story);
        assert_eq!(named.paths, ["stats.py", "test_stats.py"]);
        let shown = named.text;

        assert!(
            shown.starts_with("# Files the story names, as they are now\n"),
            "{shown}"
        );
        let stats = shown
            .find("## stats.py\n```python\ndef mean(values):\n    return 0\n```")
            .unwrap();
        let test = shown.find("## test_stats.py\n").unwrap();
        assert!(stats < test, "{shown}");
        assert!(
            !shown.contains("util.py\n"),
            "an ambiguous name is not guessed: {shown}"
        );
        assert!(!shown.contains("## big.py"), "too large to show: {shown}");
        assert_eq!(
            named_files(root, &root.join(".agentic-sdlc"), "nothing named"),
            NamedFiles::default()
        );
        assert!(
            named_files(root, &root.join(".agentic-sdlc"), "see pkg/util.py")
                .text
                .contains("X = 1")
        );
    }
}
