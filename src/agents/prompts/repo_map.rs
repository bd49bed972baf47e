//! The repository map (docs/design.md §21): what a phase would otherwise wander the tree to learn,
//! built by the tool without the model, as aider's repo map and RepoGraph do. It holds the
//! files; each source file's top-level definitions and methods, with their signatures and first
//! doc lines; which tests import what; and the files and names the story mentions, with where
//! each name is defined. It is bounded: over its budget, the largest files' definitions are cut
//! first. Each file's part is cached by its content hash, so a run re-reads but never re-parses
//! an unchanged file.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use super::named_files::{mention, path_words, repository_files, SOURCE_EXTENSIONS};
use crate::agents::tools::defined_name;
use crate::python_builtins::{PYTHON_EXCEPTIONS, PYTHON_FUNCTIONS};

/// The most characters the map takes in a prompt.
pub const MAP_BUDGET: usize = 4_000;
/// Source files larger than this are listed, not parsed.
const PARSED_FILE_BYTES: u64 = 256 * 1024;
/// The longest signature shown.
const SIGNATURE_CHARS: usize = 120;
/// The longest doc line shown.
const DOC_CHARS: usize = 100;

/// Whether a path names a test file: in a `tests`/`test`/`spec`/`__tests__` folder, or named
/// like one (`test_x.py`, `x_test.go`, `x.test.ts`, `x.spec.js`, `XTest.java`).
pub fn is_test_path(path: &Path) -> bool {
    let in_test_folder = path.parent().is_some_and(|parent| {
        parent.components().any(|part| {
            matches!(
                part.as_os_str().to_str(),
                Some("tests" | "test" | "spec" | "__tests__")
            )
        })
    });
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default();
    in_test_folder
        || stem.starts_with("test_")
        || stem.ends_with("_test")
        || stem.ends_with("Test")
        || name.contains(".test.")
        || name.contains(".spec.")
}

/// What the map says of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct FileEntry {
    /// Definitions, each as `signature  # first doc line`, methods indented under their class.
    definitions: Vec<String>,
    /// The names defined, for the story's mentions.
    names: Vec<String>,
    /// For a test file, what it imports.
    imports: Vec<String>,
}

/// The map of the tree at `root` for a story whose text is `story_text`; empty for an empty
/// tree.
pub fn repository_map(root: &Path, board_dir: &Path, story_text: &str) -> String {
    let paths = repository_files(root, board_dir);
    if paths.is_empty() {
        return String::new();
    }
    let entries: Vec<(String, FileEntry)> = paths
        .iter()
        .map(|path| (path.clone(), entry_for(root, path)))
        .collect();
    let mentions = story_mentions(&paths, &entries, story_text);
    render(&paths, entries, &mentions, MAP_BUDGET)
}

/// `map` without the lines that show a definition of `name` (`  def remove(self, sku)  # …`):
/// for a definition asked for anew, the map would show the earlier answer, which failed. The
/// 1.5B model's first `remove` took `add`'s docstring, "Removes `quantity` of the item"; the
/// map showed that doc line to each further sample, and all four removed one item, not all
/// (2026-12-05, inventory `cart-remove`).
pub fn without_definition_of(map: &str, name: &str) -> String {
    let mut kept: String = map
        .lines()
        .filter(|line| defined_name(line).as_deref() != Some(name))
        .collect::<Vec<_>>()
        .join("\n");
    if map.ends_with('\n') {
        kept.push('\n');
    }
    kept
}

/// The files the story names, then the names it mentions with where each is defined.
fn story_mentions(
    paths: &[String],
    entries: &[(String, FileEntry)],
    story_text: &str,
) -> Vec<String> {
    let mut lines = Vec::new();
    for path in paths {
        let name = path.rsplit('/').next().unwrap_or(path);
        if mention(story_text, path).is_some() || mention(story_text, name).is_some() {
            lines.push(format!("- file {path} (exists)"));
        }
    }
    // A file the story names that the tree lacks is the new module it asks for: said, the 1.5B
    // model wrote it; left unsaid, it wrote out every file of the map it had never been shown,
    // for 300 seconds (orchard `pricing-module`, 2026-12-06).
    for word in path_words(story_text) {
        let word = word.trim_start_matches("./");
        let exists = paths
            .iter()
            .any(|path| path == word || path.ends_with(&format!("/{word}")));
        let line = format!("- file {word} (new: the story asks for it)");
        if !exists && !lines.contains(&line) {
            lines.push(line);
        }
    }
    for (span, _) in backtick_spans(story_text) {
        let Some(name) = called_name(&span) else {
            continue;
        };
        let homes: Vec<&str> = entries
            .iter()
            .filter(|(_, entry)| entry.names.iter().any(|n| n == name))
            .map(|(path, _)| path.as_str())
            .collect();
        // `str(err)` in a criterion calls Python's own `str`, which no story asks for.
        let builtin = PYTHON_FUNCTIONS.contains(&name) || PYTHON_EXCEPTIONS.contains(&name);
        let line = if homes.is_empty() && builtin {
            continue;
        } else if homes.is_empty() {
            format!("- `{name}`: not defined yet (the story asks for it)")
        } else {
            format!("- `{name}`: defined in {}", homes.join(", "))
        };
        if !lines.contains(&line) {
            lines.push(line);
        }
    }
    lines
}

/// The name a backtick span calls (`median(values)` → `median`, `cart.remove(1)` → `remove`).
pub(super) fn called_name(span: &str) -> Option<&str> {
    let open = span.find('(')?;
    let callee = span[..open].trim();
    let name = callee.rsplit('.').next()?;
    let is_identifier = !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    is_identifier.then_some(name)
}

/// The identifiers inside the story's backtick spans: the names the story mentions.
pub fn mentioned_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (span, _) in backtick_spans(text) {
        for word in span.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            let starts_well = word
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_');
            if starts_well && !names.iter().any(|known| known == word) {
                names.push(word.to_string());
            }
        }
    }
    names
}

/// Each single-backtick span of `text` with the byte offset of its closing backtick.
pub fn backtick_spans(text: &str) -> Vec<(String, usize)> {
    let mut spans = Vec::new();
    let mut open: Option<usize> = None;
    for (at, c) in text.char_indices() {
        if c != '`' {
            continue;
        }
        match open {
            None => open = Some(at),
            Some(start) => {
                let inner = &text[start + 1..at];
                if !inner.contains('\n') && !inner.is_empty() {
                    spans.push((inner.to_string(), at));
                }
                open = None;
            }
        }
    }
    spans
}

/// The map's text within `budget`: the largest files' definitions are cut first, then the
/// file list is shortened.
fn render(
    paths: &[String],
    mut entries: Vec<(String, FileEntry)>,
    mentions: &[String],
    budget: usize,
) -> String {
    loop {
        let text = compose(paths, &entries, mentions);
        if text.len() <= budget {
            return text;
        }
        let largest = entries
            .iter_mut()
            .filter(|(_, entry)| !entry.definitions.is_empty() || !entry.imports.is_empty())
            .max_by_key(|(_, entry)| entry_len(entry));
        match largest {
            Some((_, entry)) => {
                let cut = entry.definitions.len();
                entry.definitions = if cut > 0 {
                    vec![format!("({cut} definitions not shown)")]
                } else {
                    Vec::new()
                };
                entry.imports.clear();
                if cut > 0 && entry_len(entry) >= text.len() {
                    entry.definitions.clear();
                }
                // A file cut to its note is cut no further.
                if cut == 1 {
                    entry.definitions.clear();
                }
            }
            None => return crate::exec::head_tail(&text, budget),
        }
    }
}

fn entry_len(entry: &FileEntry) -> usize {
    entry.definitions.iter().map(|d| d.len() + 3).sum::<usize>()
        + entry.imports.iter().map(|i| i.len() + 2).sum::<usize>()
}

fn compose(paths: &[String], entries: &[(String, FileEntry)], mentions: &[String]) -> String {
    let mut out = String::from("# Repository map\n");
    out.push_str(&format!("Files: {}\n", paths.join(", ")));
    for (path, entry) in entries {
        if entry.definitions.is_empty() && entry.imports.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{path}\n"));
        for definition in &entry.definitions {
            out.push_str(&format!("  {definition}\n"));
        }
        if !entry.imports.is_empty() {
            out.push_str(&format!("  imports: {}\n", entry.imports.join(", ")));
        }
    }
    if !mentions.is_empty() {
        out.push_str("\nThe story mentions:\n");
        for line in mentions {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// One file's entry, from the cache when its content was seen before.
fn entry_for(root: &Path, path: &str) -> FileEntry {
    let ext = path.rsplit('.').next().unwrap_or("");
    if !SOURCE_EXTENSIONS.contains(&ext) {
        return FileEntry::default();
    }
    let full = root.join(path);
    let small = std::fs::metadata(&full).is_ok_and(|m| m.len() <= PARSED_FILE_BYTES);
    let Some(text) = small.then(|| std::fs::read_to_string(&full).ok()).flatten() else {
        return FileEntry::default();
    };
    let is_test = is_test_path(Path::new(path));
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (is_test, &text).hash(&mut hasher);
    let key = hasher.finish();
    static CACHE: OnceLock<Mutex<HashMap<u64, FileEntry>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(entry) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return entry;
    }
    let entry = parse(&text, is_test);
    if let Ok(mut cache) = cache.lock() {
        cache.insert(key, entry.clone());
    }
    entry
}

/// The definitions of a source text: top-level ones, and those one level inside a class,
/// impl, trait or interface; a test file's imports instead of its (many) test functions.
fn parse(text: &str, is_test: bool) -> FileEntry {
    let lines: Vec<&str> = text.lines().collect();
    let mut entry = FileEntry::default();
    let mut container = false;
    for (at, line) in lines.iter().enumerate() {
        let indent = line.len() - line.trim_start().len();
        if indent == 0 && !line.trim().is_empty() {
            let head = line
                .trim_start_matches("export ")
                .trim_start_matches("pub ");
            container = [
                "class ",
                "impl",
                "trait ",
                "interface ",
                "object ",
                "module ",
            ]
            .iter()
            .any(|word| head.starts_with(word));
        }
        if is_test {
            entry.imports.extend(imported(line));
            continue;
        }
        let Some(name) = defined_name(line) else {
            continue;
        };
        if indent > 0 && !(container && indent <= 4) {
            continue;
        }
        entry.names.push(name);
        let mut shown = signature(line);
        if let Some(doc) = doc_line(&lines, at) {
            shown.push_str(&format!("  # {doc}"));
        }
        entry.definitions.push(shown);
    }
    entry.imports.dedup();
    entry
}

/// The definition's line as a signature: its indentation (a method's) kept, the opening brace
/// or colon dropped, bounded.
fn signature(line: &str) -> String {
    let indent = if line.starts_with(char::is_whitespace) {
        "  "
    } else {
        ""
    };
    let trimmed = line
        .trim()
        .trim_end_matches('{')
        .trim_end()
        .trim_end_matches(':')
        .trim_end();
    let mut text: String = trimmed.chars().take(SIGNATURE_CHARS).collect();
    if trimmed.chars().count() > SIGNATURE_CHARS {
        text.push('…');
    }
    format!("{indent}{text}")
}

/// The first doc line of the definition at `at`: a Python docstring below it, or a comment
/// right above it.
fn doc_line(lines: &[&str], at: usize) -> Option<String> {
    let below = lines[at + 1..]
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty());
    let docstring = below.and_then(|line| {
        ["\"\"\"", "'''"].iter().find_map(|quote| {
            let inner = line.strip_prefix(quote)?;
            let inner = inner.split(quote).next().unwrap_or(inner).trim();
            (!inner.is_empty()).then(|| inner.to_string())
        })
    });
    let comment = || {
        let above = lines[..at].last()?.trim();
        let text = ["///", "//", "#", "/**", "*"]
            .iter()
            .find_map(|marker| above.strip_prefix(marker))?;
        let text = text.trim().trim_end_matches("*/").trim();
        let directive = above.starts_with("#!") || above.starts_with("#[");
        (!text.is_empty() && !directive).then(|| text.to_string())
    };
    docstring
        .or_else(comment)
        .map(|doc| doc.chars().take(DOC_CHARS).collect())
}

/// What one line of a test file imports: `stats.mean`, `stats`, `./cart`.
fn imported(line: &str) -> Vec<String> {
    let line = line.trim();
    if let Some(rest) = line.strip_prefix("from ") {
        if let Some((module, names)) = rest.split_once(" import ") {
            return names
                .trim_matches(|c| c == '(' || c == ')')
                .split(',')
                .map(|name| name.split(" as ").next().unwrap_or("").trim())
                .filter(|name| !name.is_empty())
                .map(|name| format!("{}.{name}", module.trim()))
                .collect();
        }
    }
    if let Some(rest) = line.strip_prefix("import ") {
        if let Some((_, from)) = rest.rsplit_once(" from ") {
            return vec![from
                .trim_matches(|c| matches!(c, '\'' | '"' | ';' | ' '))
                .to_string()];
        }
        return rest
            .split(',')
            .map(|module| module.split(" as ").next().unwrap_or("").trim().to_string())
            .filter(|module| !module.is_empty() && !module.contains(' '))
            .collect();
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inventory project of the benchmark's second suite, as a story about it sees it.
    fn inventory() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let full = root.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, text).unwrap();
        };
        write(
            "inventory/cart.py",
            "\"\"\"A shopping cart.\"\"\"\n\nfrom inventory.pricing import apply_discount\n\n\nclass Cart:\n    \"\"\"Items by SKU with their quantities.\"\"\"\n\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        \"\"\"Add `quantity` of `sku`.\"\"\"\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def total(self, prices):\n        return sum(prices[s] * q for s, q in self.items.items())\n",
        );
        write(
            "inventory/pricing.py",
            "# Prices are in cents.\ndef apply_discount(cents, percent):\n    return cents - cents * percent // 100\n",
        );
        write("inventory/__init__.py", "");
        write(
            "tests/test_cart.py",
            "import pytest\nfrom inventory.cart import Cart\n\n\ndef test_add():\n    cart = Cart()\n    cart.add('a')\n    assert cart.items == {'a': 1}\n",
        );
        write("README.md", "# Inventory\n");
        root
    }

    #[test]
    fn the_map_shows_definitions_methods_test_imports_and_the_storys_names() {
        let root = inventory();
        let board = root.path().join(".agentic-sdlc");
        let map = repository_map(
            root.path(),
            &board,
            "Add a method `remove(sku)` to the Cart class in inventory/cart.py; `Cart.add(sku)` stays.",
        );
        insta::assert_snapshot!(map, @r#"
        # Repository map
        Files: README.md, inventory/__init__.py, inventory/cart.py, inventory/pricing.py, tests/test_cart.py

        inventory/cart.py
          class Cart  # Items by SKU with their quantities.
            def __init__(self)
            def add(self, sku, quantity=1)  # Add `quantity` of `sku`.
            def total(self, prices)

        inventory/pricing.py
          def apply_discount(cents, percent)  # Prices are in cents.

        tests/test_cart.py
          imports: pytest, inventory.cart.Cart

        The story mentions:
        - file inventory/cart.py (exists)
        - `remove`: not defined yet (the story asks for it)
        - `add`: defined in inventory/cart.py
        "#);
    }

    #[test]
    fn a_python_builtin_the_story_calls_is_not_asked_for() {
        let root = inventory();
        let board = root.path().join(".agentic-sdlc");
        let map = repository_map(
            root.path(),
            &board,
            "`Cart.remove(\"kiwi\")` raises `UnknownItem`, and `str(err)` and `len(cart)` name it; `KeyError` stays.",
        );
        assert!(
            map.contains("- `remove`: not defined yet (the story asks for it)"),
            "{map}"
        );
        for builtin in ["str", "len", "KeyError"] {
            assert!(!map.contains(&format!("`{builtin}`")), "{map}");
        }
    }

    #[test]
    fn a_file_the_story_names_and_the_tree_lacks_is_mentioned_as_new() {
        let root = inventory();
        let board = root.path().join(".agentic-sdlc");
        let map = repository_map(
            root.path(),
            &board,
            "Create a new module `inventory/money.py` with `format_price(cents)`; see cart.py and README.md.",
        );
        assert!(
            map.contains("- file inventory/money.py (new: the story asks for it)\n"),
            "{map}"
        );
        // Files the tree has, by path or by name, are no new ones.
        assert!(map.contains("- file inventory/cart.py (exists)"), "{map}");
        assert!(!map.contains("cart.py (new"), "{map}");
        assert!(!map.contains("README.md (new"), "{map}");
    }

    #[test]
    fn a_definition_asked_for_anew_is_left_out_of_the_map() {
        let root = inventory();
        let board = root.path().join(".agentic-sdlc");
        let map = repository_map(root.path(), &board, "`Cart.add(sku)` stays.");
        let without = without_definition_of(&map, "add");
        assert!(map.contains("def add(self, sku, quantity=1)"));
        assert!(!without.contains("def add("), "{without}");
        // The rest stays, the mention of the name too.
        assert_eq!(
            without.lines().count() + 1,
            map.lines().count(),
            "{without}"
        );
        assert!(without.contains("- `add`: defined in inventory/cart.py"));
        assert!(without.contains("def total(self, prices)"));
        assert!(without.ends_with('\n'));
    }

    #[test]
    fn over_its_budget_the_largest_files_are_cut_first() {
        let root = inventory();
        let board = root.path().join(".agentic-sdlc");
        let paths = repository_files(root.path(), &board);
        let entries: Vec<(String, FileEntry)> = paths
            .iter()
            .map(|path| (path.clone(), entry_for(root.path(), path)))
            .collect();
        let whole = render(&paths, entries.clone(), &[], usize::MAX);
        let cut = render(&paths, entries, &[], whole.len() - 10);
        assert!(cut.len() <= whole.len() - 10, "{cut}");
        assert!(cut.contains("(4 definitions not shown)"), "{cut}");
        assert!(
            cut.contains("def apply_discount(cents, percent)"),
            "the smaller file keeps its definitions: {cut}"
        );
    }

    #[test]
    fn test_paths_are_told_from_code() {
        for path in [
            "tests/test_stats.py",
            "test_stats.py",
            "pkg/tests/helpers.py",
            "calc_test.go",
            "src/cart.test.ts",
            "web/app.spec.js",
            "src/test/java/CartTest.java",
        ] {
            assert!(is_test_path(Path::new(path)), "{path}");
        }
        for path in [
            "stats.py",
            "src/testing_utils.py",
            "contest.py",
            "latest.rs",
        ] {
            assert!(!is_test_path(Path::new(path)), "{path}");
        }
    }
}
