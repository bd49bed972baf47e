//! The functions a story asks for by name, checked before implement's tests run: a test suite
//! often cannot see a function nobody tests yet, and a small model often writes it into the
//! wrong file (the benchmark's `median` went into textkit.py when the story said stats.py, and
//! its own tests, importing it from there, passed).

use std::path::{Path, PathBuf};

use super::sentence_files::{
    files_before_another_name, files_earlier_in_sentence, files_in_sentence, sole_source_file,
};
use super::tree_definitions::{python_file_defining, python_files_defining, DEFINITION_SCAN};
use crate::agents::prompts::is_test_path;
use crate::python_builtins::{PYTHON_EXCEPTIONS, PYTHON_FUNCTIONS};

/// Files larger than this are not searched for definitions.
const DEFINITION_FILE_BYTES: u64 = 512 * 1024;

/// A function the story names as a call in backticks, and the files named after it in the
/// same sentence ("Add `median(values)` to stats.py").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFunction {
    pub name: String,
    /// Path-like words after the call, up to the end of its sentence; the first that is a file
    /// of the tree is where the function must be defined.
    pub files: Vec<String>,
}

/// A named function the tree does not define where the story asks for it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Missing {
    pub name: String,
    /// The file the story names for it, when that file exists; `None`: no file defines it.
    pub file: Option<String>,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(file) => write!(f, "`{}` in {file}", self.name),
            None => write!(f, "`{}`", self.name),
        }
    }
}

/// A story's Summary and Acceptance Criteria, one after the other: where it names what it adds.
pub fn summary_and_criteria(story: &crate::board::Story) -> String {
    ["Summary", "Acceptance Criteria"]
        .iter()
        .filter_map(|name| story.section(name))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The functions a story's Summary and Acceptance Criteria name as calls in backticks
/// (`word_count(text)`, `median([])`), each once: what a feature asks to exist. Method calls
/// on other objects (`str.title()`) are not the story's to define.
pub fn named_functions(story: &crate::board::Story) -> Vec<NamedFunction> {
    let text = summary_and_criteria(story);
    let mut named: Vec<NamedFunction> = Vec::new();
    let spans = text.split('`').collect::<Vec<_>>();
    for (at, span) in spans.iter().enumerate().skip(1).step_by(2) {
        let Some((callee, _)) = span.split_once('(') else {
            continue;
        };
        let callee = callee.trim();
        let plain = !callee.is_empty()
            && callee.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !callee.starts_with(|c: char| c.is_ascii_digit());
        if !plain || PYTHON_FUNCTIONS.contains(&callee) {
            continue;
        }
        let after = spans[at + 1..].join("`");
        let mut files = files_in_sentence(&after);
        if files.is_empty() {
            // "Add a new module inventory/money.py with a function `format_price(cents)`": the
            // file comes first in the sentence.
            files = files_earlier_in_sentence(&spans[..at].join("`"));
        }
        match named.iter_mut().find(|known| known.name == callee) {
            Some(known) => known.files.extend(files),
            None => named.push(NamedFunction {
                name: callee.to_string(),
                files,
            }),
        }
    }
    // "`Cart.add` in inventory/cart.py accepts a quantity of 0 …": a method named with its
    // class and the file its sentence gives (a bug of a method, whose criteria call it on an
    // object, `cart.add("apple", 0)`, which names no definition of the story's; the inventory
    // benchmark's `add-positive` so never had `add` asked for alone). Without a file it may be
    // any library's (`Path.exists`).
    for (at, span) in spans.iter().enumerate().skip(1).step_by(2) {
        let Some(method) = class_method(span) else {
            continue;
        };
        let files = files_in_sentence(&spans[at + 1..].join("`"));
        if !files.is_empty() && !named.iter().any(|known| known.name == method) {
            named.push(NamedFunction {
                name: method.to_string(),
                files,
            });
        }
    }
    // "The feature `receipt_line` in `inventory/money.py` should return …": a function named
    // bare, with no call, whose file its sentence gives (refine wrote the 1.5B model's summary
    // so, and the criteria called it with no file).
    for function in named.iter_mut().filter(|f| f.files.is_empty()) {
        for (at, span) in spans.iter().enumerate().skip(1).step_by(2) {
            if span.trim() == function.name {
                function
                    .files
                    .extend(files_before_another_name(&spans[at + 1..].join("`")));
            }
        }
    }
    named
}

/// [`named_functions`], and each method the story names with a class of the tree at `dir` and
/// no file (`HarvestLog.total`), in the file that defines the class: "`HarvestLog.total`
/// quietly answers 0 for a variety it has never seen" names a method of the project's own
/// class, which a story of a new exception must change. Left out, the 1.5B model's `total`
/// failed its acceptance tests round after round without ever being asked for alone (orchard
/// `unknown-tree-error`, 2026-12-06). A class the tree does not define may be any library's.
pub fn named_in_tree(dir: &Path, story: &crate::board::Story) -> Vec<NamedFunction> {
    let mut named = named_functions(story);
    let text = summary_and_criteria(story);
    for (span, _) in crate::agents::prompts::backtick_spans(&text) {
        let Some(method) = class_method(&span) else {
            continue;
        };
        if named.iter().any(|known| known.name == method) {
            continue;
        }
        let class = span.split('.').next().unwrap_or("").trim();
        if let Some(file) = python_file_defining(dir, class) {
            named.push(NamedFunction {
                name: method.to_string(),
                files: vec![file],
            });
        }
    }
    named.extend(placed_exceptions(&text, &named));
    named
}

/// The exception classes `text` places in a Python file ("Add an exception class
/// `UnknownVehicleClassError` to `tollbooth/rates.py`"), with that file, of those not in
/// `named` yet: checked like a function the story names, so that one the model leaves out is
/// said missing after its first round and asked for alone after the second. Left to the tests'
/// import error, it was never asked for: the 1.5B model wrote `rates.py` back unchanged three
/// times (tollbooth `unknown-vehicle-class`, 2026-12-07). Other classes a sentence places may be
/// a library's (`a \`Decimal\` from money.py`), so only an exception's name counts.
fn placed_exceptions(text: &str, named: &[NamedFunction]) -> Vec<NamedFunction> {
    let exceptions: Vec<String> = crate::agents::prompts::mentioned_names(text)
        .into_iter()
        .filter(|name| name.ends_with("Error") || name.ends_with("Exception"))
        .filter(|name| !named.iter().any(|known| known.name == *name))
        .collect();
    placed_classes(text, &exceptions, &[], None)
        .into_iter()
        .map(|(name, file)| NamedFunction {
            name,
            files: vec![file],
        })
        .collect()
}

/// The method of a span that names one with its class: `add` of `Cart.add` or
/// `Cart.add(sku, quantity)`; a class is capitalised, and a dunder is no method a story asks for.
fn class_method(span: &str) -> Option<&str> {
    let name = span.split('(').next()?.trim();
    let (class, method) = name.split_once('.')?;
    let identifier = |word: &str| {
        !word.is_empty()
            && word.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !word.starts_with(|c: char| c.is_ascii_digit())
    };
    let is_class = identifier(class) && class.starts_with(|c: char| c.is_ascii_uppercase());
    (is_class && identifier(method) && !method.starts_with("__")).then_some(method)
}

/// Which of `named` the text files under `dir` do not define (what .gitignore ignores, `.git`
/// and the folders in `skip` left out): a function whose sentence names a file must be defined
/// in that file (a new one when the tree lacks it), any other anywhere.
pub fn undefined(dir: &Path, named: &[NamedFunction], skip: &[PathBuf]) -> Vec<Missing> {
    if named.is_empty() {
        return Vec::new();
    }
    let skip = skip.to_vec();
    let files: Vec<PathBuf> = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .filter_entry(move |entry| {
            entry.file_name() != ".git"
                && !skip.iter().any(|folder| entry.path().starts_with(folder))
        })
        .build()
        .flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter(|entry| {
            entry
                .metadata()
                .is_ok_and(|m| m.len() <= DEFINITION_FILE_BYTES)
        })
        .take(DEFINITION_SCAN)
        .map(|entry| entry.into_path())
        .collect();
    let relative = |file: &PathBuf| {
        file.strip_prefix(dir)
            .unwrap_or(file)
            .to_string_lossy()
            .into_owned()
    };
    // The file each function must be in: the first named file the tree has, by its path or,
    // when only one file has that name, by its name.
    let homes: Vec<Option<&PathBuf>> = named
        .iter()
        .map(|function| {
            function.files.iter().find_map(|wanted| {
                let by_path = files.iter().find(|file| relative(file) == *wanted);
                // `src/stats.py` for the tree's `stats.py`: a path that is a little off still
                // names the one file of that name.
                let wanted_name = wanted.rsplit('/').next().unwrap_or(wanted);
                let by_name = || {
                    let mut same = files
                        .iter()
                        .filter(|file| file.file_name().is_some_and(|name| name == wanted_name));
                    let first = same.next();
                    first.filter(|_| same.next().is_none())
                };
                by_path.or_else(by_name)
            })
        })
        .collect();
    // A file its sentence names that the tree lacks is a new one, and the function goes there:
    // "Add a new module inventory/parse.py with a function `parse_quantity(text)`" is not done
    // by a `parse_quantity` the 1.5B model put in `inventory/cart.py`, whose tests then failed
    // on the missing module three rounds while no narrowed task asked for it (inventory
    // `parse-quantity`, 2026-12-05).
    let new_homes: Vec<Option<&String>> = named
        .iter()
        .zip(&homes)
        .map(|(function, home)| match home {
            Some(_) => None,
            None => function
                .files
                .iter()
                .find(|file| !is_test_path(Path::new(file.as_str()))),
        })
        .collect();
    let mut left: Vec<usize> = (0..named.len()).collect();
    for file in &files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let defined = crate::agents::tools::defined_names(&text);
        left.retain(|&at| {
            let here = match homes[at] {
                Some(home) => home == file,
                None => new_homes[at].is_none(),
            };
            !(here && defined.contains(&named[at].name))
        });
        if left.is_empty() {
            break;
        }
    }
    left.into_iter()
        .map(|at| Missing {
            name: named[at].name.clone(),
            file: homes[at].map(relative).or_else(|| new_homes[at].cloned()),
        })
        .collect()
}

/// The methods a failing run says a class of the tree lacks, where the story names both the
/// class and the method: pytest's "AttributeError: 'Cart' object has no attribute 'remove'".
/// A story asks for a method by calling it on an object (`cart.remove("apple")`), which
/// [`named_functions`] leaves alone as it leaves `str.title()`; the run tells the two apart.
/// Each comes with the file that defines its class. Without them the 1.5B model's tests of
/// `remove` failed three rounds while the tool asked for `Cart` itself, and merged the whole
/// class into its own body (inventory `cart-remove`, 2026-11-28).
pub fn methods_missing(dir: &Path, output: &str, story_text: &str) -> Vec<NamedFunction> {
    let mut found: Vec<NamedFunction> = Vec::new();
    for (class, method) in output.lines().filter_map(missing_attribute) {
        let named = mentions_word(story_text, class) && mentions_word(story_text, method);
        if !named || found.iter().any(|known| known.name == method) {
            continue;
        }
        if let Some(file) = python_file_defining(dir, class) {
            found.push(NamedFunction {
                name: method.to_string(),
                files: vec![file],
            });
        }
    }
    found
}

/// The names a failing run could not import from a module of the tree, where the story
/// mentions them: pytest's "ImportError: cannot import name 'UnknownAccount' from
/// 'ledger.book' (…)". A story asks for a class, or a function it never writes as a call, which
/// [`named_functions`] does not see; the tests' import says the module that must define it.
/// Each comes with that module's file. Without them the held-out ledger's `statement` and
/// `unknown-account` ended three rounds on such an import, by their summary lines
/// (2026-11-29), with no definition ever asked for alone.
pub fn names_not_importable(dir: &Path, output: &str, story_text: &str) -> Vec<NamedFunction> {
    let mut found: Vec<NamedFunction> = Vec::new();
    let lacking = output.lines().filter_map(|line| {
        let imported = unimportable_name(line).map(|(name, module)| (name, module, false));
        imported.or_else(|| module_lacking(line).map(|(name, module)| (name, module, true)))
    });
    for (name, module, through_module) in lacking {
        if !mentions_word(story_text, name) || found.iter().any(|known| known.name == name) {
            continue;
        }
        let path = module.replace('.', "/");
        let file = [format!("{path}.py"), format!("{path}/__init__.py")]
            .into_iter()
            .find(|file| dir.join(file).is_file());
        // A name another module of the tree defines is imported from the wrong place: what it
        // wants is an import, and a second definition written where the tests look would be
        // another class or function than the one the code uses.
        let defined_elsewhere = python_file_defining(dir, name).is_some();
        // Through the module, a method of one of its classes is a module taken for an object
        // (`cart.add(…)` on the module `cart`): no function is missing.
        let a_method = |file: &String| {
            through_module
                && std::fs::read_to_string(dir.join(file)).is_ok_and(|text| {
                    text.lines().any(|line| {
                        line.starts_with(char::is_whitespace)
                            && crate::agents::tools::defined_name(line).as_deref() == Some(name)
                    })
                })
        };
        if let Some(file) = file.filter(|file| !defined_elsewhere && !a_method(file)) {
            found.push(NamedFunction {
                name: name.to_string(),
                files: vec![file],
            });
        }
    }
    found
}

/// The definitions a failing run says the tree lacks, of those the story mentions: methods of
/// its classes ([`methods_missing`]) and names its modules do not have
/// ([`names_not_importable`]).
pub fn found_missing(dir: &Path, output: &str, story_text: &str) -> Vec<NamedFunction> {
    let mut found = methods_missing(dir, output, story_text);
    for name in names_not_importable(dir, output, story_text) {
        if !found.iter().any(|known| known.name == name.name) {
            found.push(name);
        }
    }
    found
}

/// The name and the module of a line saying `cannot import name 'statement' from
/// 'ledger.display' (…)`. A circular import ("from partially initialized module") is no
/// missing name.
fn unimportable_name(line: &str) -> Option<(&str, &str)> {
    let (_, after) = line.split_once("cannot import name '")?;
    let (name, rest) = after.split_once('\'')?;
    let module = rest.strip_prefix(" from '")?.split('\'').next()?;
    (is_identifier(name) && module.split('.').all(is_identifier)).then_some((name, module))
}

/// The name and the module of a line saying `module 'transit.times' has no attribute
/// 'InvalidTimeError'`: tests that import the module and use the name through it
/// (`transit.times.InvalidTimeError`) miss it so, not at their import (transit, 2026-12-06).
fn module_lacking(line: &str) -> Option<(&str, &str)> {
    let (_, after) = line.split_once("module '")?;
    let (module, rest) = after.split_once('\'')?;
    let name = rest
        .strip_prefix(" has no attribute '")?
        .split('\'')
        .next()?;
    (is_identifier(name) && module.split('.').all(is_identifier)).then_some((name, module))
}

/// The class and the attribute of a line saying `'Cart' object has no attribute 'remove'`
/// (an instance) or `type object 'Cart' has no attribute 'remove'` (the class).
fn missing_attribute(line: &str) -> Option<(&str, &str)> {
    let (before, after) = line.split_once(" has no attribute '")?;
    let attribute = after.split('\'').next()?;
    let class = before
        .strip_suffix("' object")
        .or_else(|| before.strip_suffix('\''))?
        .rsplit('\'')
        .next()?;
    (is_identifier(class) && is_identifier(attribute)).then_some((class, attribute))
}

fn is_identifier(word: &str) -> bool {
    word.chars().all(|c| c.is_alphanumeric() || c == '_')
        && word.starts_with(|c: char| c.is_alphabetic() || c == '_')
}

/// Whether `word` stands as a whole word in `text`.
pub fn mentions_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|part| part == word)
}

/// The story text its names, examples and files are read from: title, summary and criteria.
pub fn story_text(story: &crate::board::Story) -> String {
    let mut text = format!("{}\n", story.meta.title);
    for section in ["Summary", "Acceptance Criteria"] {
        if let Some(content) = story.section(section) {
            text.push_str(content);
            text.push('\n');
        }
    }
    text
}

/// Each function the story names, with the file it belongs in: the one the story names for
/// it, else the one of the tree at `dir` that defines it already (a bug in `mean`, whose story
/// need not say where `mean` is). Then each other name the story quotes that the tree defines:
/// "returns its price as `format_price` writes it" names no call, and the 1.5B model's test of
/// `receipt_line` called `format_price` without importing it (the inventory benchmark,
/// 2026-11-29), a `NameError` in a test implement could not change. What a test's missing
/// imports are read from.
///
/// A function that neither its sentence places nor the tree defines goes in the one source
/// file the story names, if it names one ([`sole_source_file`]).
pub fn homes(dir: &Path, story: &crate::board::Story) -> Vec<(String, String)> {
    let text = story_text(story);
    let sole = sole_source_file(&text);
    let mut homes: Vec<(String, String)> = named_functions(story)
        .into_iter()
        .filter_map(|f| {
            let home = f
                .files
                .into_iter()
                .next()
                .or_else(|| python_file_defining(dir, &f.name))
                .or_else(|| sole.clone())?;
            Some((f.name, home))
        })
        .collect();
    let quoted = crate::agents::prompts::mentioned_names(&text);
    let unplaced: Vec<String> = quoted
        .into_iter()
        .filter(|name| !homes.iter().any(|(known, _)| known == name))
        .collect();
    if !unplaced.is_empty() {
        homes.extend(python_files_defining(dir, &unplaced));
    }
    homes.extend(placed_classes(&text, &unplaced, &homes, sole.as_ref()));
    homes
}

/// Each class of `names` not in `homes` yet, with the file its own sentence puts it in ("Define
/// an `InvalidScoreError` exception … in `gradebook/book.py`"; gradebook, 2026-12-06). An
/// exception its sentence places nowhere goes in the story's `sole` source file, as a function
/// does: "raise `UnknownAccountError`" is a class the story adds, and a test that names it needs
/// its import. Other capitalised words a story quotes (`"Ana"`, `True`) are no classes to import.
fn placed_classes(
    text: &str,
    names: &[String],
    homes: &[(String, String)],
    sole: Option<&String>,
) -> Vec<(String, String)> {
    let spans: Vec<&str> = text.split('`').collect();
    let unplaced_class = |name: &&String| {
        name.starts_with(|c: char| c.is_ascii_uppercase())
            && !PYTHON_EXCEPTIONS.contains(&name.as_str())
            && !homes.iter().any(|(known, _)| known == *name)
    };
    let source = |file: &String| file.ends_with(".py") && !is_test_path(Path::new(file));
    let placed = |name: &String| {
        // The quoted spans are the odd pieces, each followed by its sentence.
        let mut files = (1..spans.len())
            .step_by(2)
            .filter(|&at| spans[at].trim() == name.as_str())
            .flat_map(|at| files_in_sentence(&spans[at + 1..].join("`")));
        let is_exception = name.ends_with("Error") || name.ends_with("Exception");
        let home = files
            .find(source)
            .or_else(|| sole.filter(|_| is_exception).cloned())?;
        Some((name.clone(), home))
    };
    let unplaced = names.iter().filter(unplaced_class);
    unplaced.filter_map(placed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn story(summary: &str, criteria: &str) -> crate::board::Story {
        let text = format!(
            "---\nid: s\ntitle: t\n---\n# t\n\n## Summary\n{summary}\n\n## Acceptance Criteria\n{criteria}\n"
        );
        crate::board::Story::parse(
            &text,
            PathBuf::from("/b/ready/t.md"),
            crate::board::Column::Ready,
        )
        .unwrap()
    }

    fn names(named: &[NamedFunction]) -> Vec<&str> {
        named
            .iter()
            .map(|function| function.name.as_str())
            .collect()
    }

    #[test]
    fn a_quoted_name_the_tree_defines_has_a_home_too() {
        // Recorded summaries (the inventory benchmark, `receipt-line`, refined by the 1.5B
        // model): the second gives the file a sentence after the call, where a function
        // placed nowhere goes in the one source file the story names.
        let summaries = [
            "Add a function `receipt_line(name, cents)` to inventory/money.py that returns the item's name, a colon and a space, and its price as `format_price` writes it.",
            "The task is to implement a function `receipt_line(name, cents)` that returns the item's name, a colon and a space, and its price as formatted according to the `format_price` function. The function should be added to the `inventory/money.py` file and a test in `tests/test_money.py` should be created to cover it.",
        ];
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("inventory")).unwrap();
        std::fs::create_dir_all(tree.path().join("tests")).unwrap();
        let money = "def format_price(cents):\n    name = 1\n    return f\"${cents / 100:,.2f}\"\n";
        std::fs::write(tree.path().join("inventory/money.py"), money).unwrap();
        let test = "from inventory.money import format_price\ndef cents():\n    pass\n";
        std::fs::write(tree.path().join("tests/test_money.py"), test).unwrap();

        for summary in summaries {
            let receipt = story(
                summary,
                "- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`\n- [ ] `receipt_line` calls `format_price`",
            );

            let homes = homes(tree.path(), &receipt);

            // `name` is only an argument and a local, and a test's definitions are no home.
            let money = "inventory/money.py".to_string();
            assert_eq!(
                homes,
                [
                    ("receipt_line".to_string(), money.clone()),
                    ("format_price".to_string(), money)
                ],
                "{summary}"
            );
        }
    }

    #[test]
    fn a_class_the_story_defines_in_a_file_has_that_file_for_its_home() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("gradebook")).unwrap();
        std::fs::write(
            tree.path().join("gradebook/book.py"),
            "class GradeBook:\n    pass\n",
        )
        .unwrap();
        let invalid = story(
            "Define an `InvalidScoreError` exception (subclass of `ValueError`) in `gradebook/book.py` and raise it from `GradeBook.add_score(student, score)` whenever `score` is outside the range 0 to 100.",
            "- [ ] `InvalidScoreError` is importable from `gradebook.book`",
        );

        let homes = homes(tree.path(), &invalid);

        assert!(
            homes.contains(&(
                "InvalidScoreError".to_string(),
                "gradebook/book.py".to_string()
            )),
            "{homes:?}"
        );
        assert!(
            !homes.iter().any(|(name, _)| name == "ValueError"),
            "{homes:?}"
        );
    }

    #[test]
    fn an_exception_placed_nowhere_goes_in_the_story_s_one_source_file() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("shop")).unwrap();
        std::fs::write(
            tree.path().join("shop/bank.py"),
            "def balance(n):\n    return 0\n",
        )
        .unwrap();
        let unknown = story(
            "`withdraw(name, cents)` in shop/bank.py takes money out of an account. For a name with no account it raises `UnknownAccountError`.",
            "- [ ] `withdraw(\"Zed\", 5)` raises `UnknownAccountError`\n- [ ] `balance(\"Ana\")` returns `True`",
        );

        let homes = homes(tree.path(), &unknown);

        assert!(
            homes.contains(&(
                "UnknownAccountError".to_string(),
                "shop/bank.py".to_string()
            )),
            "{homes:?}"
        );
        // Quoted words that are no exception get no home by that fallback.
        for word in ["Zed", "Ana", "True"] {
            assert!(!homes.iter().any(|(name, _)| name == word), "{homes:?}");
        }
    }

    #[test]
    fn a_method_named_with_a_class_of_the_tree_is_named_in_the_class_s_file() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("orchard")).unwrap();
        std::fs::write(
            tree.path().join("orchard/log.py"),
            "class HarvestLog:\n    def total(self, variety):\n        return 0\n",
        )
        .unwrap();
        let unknown = story(
            "Add an `UnknownTreeError`. `HarvestLog.total` quietly answers 0 for a variety it has never seen; it should raise instead. `Path.exists` is not touched.",
            "- [ ] `log.total(\"Fuji\")` raises `UnknownTreeError`",
        );

        let named = named_in_tree(tree.path(), &unknown);

        assert!(
            named.contains(&NamedFunction {
                name: "total".into(),
                files: vec!["orchard/log.py".into()]
            }),
            "{named:?}"
        );
        assert!(!named.iter().any(|f| f.name == "exists"), "{named:?}");
    }

    #[test]
    fn the_sole_source_file_is_the_one_non_test_file_a_story_names() {
        // Two source files named: which one is not known.
        let two = "Add `f(x)`. Put it in app.py or cli.py; test it in tests/test_app.py.";
        assert_eq!(sole_source_file(two), None);
        assert_eq!(
            sole_source_file("Add `f(x)`. It goes in app.py."),
            Some("app.py".into())
        );
    }

    #[test]
    fn the_functions_a_story_names_are_its_backticked_calls_with_the_files_of_their_sentence() {
        let headline = story(
            "Add `headline(text, width)` to textkit.py; it uses `str.title()` and the existing `truncate` function. See e.g. notes.",
            "- [ ] `headline(\"a\", 2)` returns `\"A\"`\n- [ ] `median([])` in stats.py returns `0.0`",
        );
        let named = named_functions(&headline);
        assert_eq!(names(&named), ["headline", "median"]);
        assert_eq!(named[0].files, ["textkit.py"]);
        assert_eq!(named[1].files, ["stats.py"]);
        // As the 1.5B model's refinement wrote it: the file quoted, a full stop after it.
        let refined = story(
            "Add a function `slugify(text)` to `textkit.py`. This function converts a given text into a URL slug.",
            "- [ ] `slugify(\"Hello, World!\")` returns `\"hello-world\"`",
        );
        assert_eq!(named_functions(&refined)[0].files, ["textkit.py"]);
        let builtins = story(
            "Add an exception class `UnknownAccount` to ledger/book.py.",
            "- [ ] `issubclass(UnknownAccount, KeyError)` is `True`\n- [ ] `len(book)` returns `0`",
        );
        assert!(named_functions(&builtins).is_empty());
        // As the refinement of the inventory suite's story wrote it: the new module first.
        let module_first = story(
            "Keep prices in cents. Add a new module inventory/money.py with a function `format_price(cents)` that returns dollars.",
            "- [ ] In stats.py nothing changes. `receipt_line(name, cents)` joins them",
        );
        let named = named_functions(&module_first);
        assert_eq!(named[0].files, ["inventory/money.py"]);
        assert!(named[1].files.is_empty(), "{named:?}");
        // Recorded (Qwen2.5-Coder-1.5B's refinement, 2026-11-28, inventory): the function
        // named bare in the sentence that gives its file, called only in the criteria.
        let bare = story(
            "The feature `receipt_line` in `inventory/money.py` should return the item's name, a colon and a space, and its price as `format_price` writes it.",
            "- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`\n- [ ] `receipt_line` calls `format_price`",
        );
        let named = named_functions(&bare);
        assert_eq!(names(&named), ["receipt_line"]);
        assert_eq!(named[0].files, ["inventory/money.py"]);
        // The inventory suite's `add-positive`: a method named with its class and file; a
        // class's method with no file, a lowercase object's and a dunder are not the story's.
        let method = story(
            "`Cart.add` in inventory/cart.py accepts a quantity of 0 or below. `Path.exists()` is not it, nor `cart.total_items()`, nor `Cart.__init__` in inventory/cart.py.",
            "- [ ] `cart.add(\"apple\", 0)` raises `ValueError`",
        );
        let named = named_functions(&method);
        assert_eq!(names(&named), ["add"]);
        assert_eq!(named[0].files, ["inventory/cart.py"]);
        // The orchard suite's `unknown-tree-error`: a class's method and a dotted module are
        // no files.
        let dotted = story(
            "Right now `HarvestLog.record` fails with a bare `KeyError`, and `HarvestLog.total` quietly answers 0. Define `UnknownTreeError` in `orchard/harvest.py`.",
            "- [ ] `UnknownTreeError` is importable from `orchard.harvest`",
        );
        let named = named_functions(&dotted);
        assert!(
            named
                .iter()
                .all(|f| f.files.iter().all(|file| file.ends_with(".py"))),
            "{named:?}"
        );
    }

    #[test]
    fn a_method_the_run_says_a_named_class_lacks_is_missing_in_the_file_of_its_class() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inventory")).unwrap();
        std::fs::write(
            dir.path().join("inventory/cart.py"),
            "class Cart:\n    def add(self, sku):\n        pass\n",
        )
        .unwrap();
        // Recorded (Qwen2.5-Coder-1.5B's implement, inventory `cart-remove`, 2026-11-28),
        // shortened.
        let output = "..FF\n    def test_quantity_example_1():\n        cart = Cart()\n>       cart.remove(\"apple\")\nE       AttributeError: 'Cart' object has no attribute 'remove'\n\ntests/test_remove_an_item_from_the_cart.py:8: AttributeError\n>       with pytest.raises(KeyError): Cart().remove(\"kiwi\")\nE       AttributeError: 'Cart' object has no attribute 'remove'\nFAILED tests/test_remove_an_item_from_the_cart.py::test_quantity_example_1 - ...\nE   AttributeError: type object 'Cart' has no attribute 'empty'\nE   AttributeError: 'str' object has no attribute 'title_case'\n2 failed, 2 passed in 0.03s\n";
        let story = "Remove an item\nAdd a method `remove` to the `Cart` class in `inventory/cart.py`. `Cart.empty()` makes one. `\"a\".title_case()` is not asked.";

        let found = methods_missing(dir.path(), output, story);

        assert_eq!(
            found,
            vec![
                NamedFunction {
                    name: "remove".into(),
                    files: vec!["inventory/cart.py".into()]
                },
                NamedFunction {
                    name: "empty".into(),
                    files: vec!["inventory/cart.py".into()]
                }
            ]
        );
        assert!(methods_missing(dir.path(), output, "Add `remove` to the basket.").is_empty());
    }

    #[test]
    fn a_name_the_tests_cannot_import_from_a_module_of_the_tree_is_missing_in_its_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inventory/money")).unwrap();
        std::fs::write(
            dir.path().join("inventory/cart.py"),
            "class Cart:\n    pass\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("inventory/money/__init__.py"), "").unwrap();
        // As pytest writes a collection error; the ledger's own lines are not read (held out).
        let output = "_ ERROR collecting tests/test_stock.py _\nImportError while importing test module '/tmp/x/tests/test_stock.py'.\nE   ImportError: cannot import name 'OutOfStock' from 'inventory.cart' (/tmp/x/inventory/cart.py)\nE   ImportError: cannot import name 'format_price' from 'inventory.money' (/tmp/x/inventory/money/__init__.py)\nE   ImportError: cannot import name 'Cart' from partially initialized module 'inventory.cart' (most likely due to a circular import)\nE   ImportError: cannot import name 'parse' from 'inventory.parse' (/tmp/x/inventory/parse.py)\nE   ImportError: cannot import name 'helper' from 'inventory.cart' (/tmp/x/inventory/cart.py)\n";
        let story = "Out of stock\n`Cart().take(sku)` raises `OutOfStock`; `format_price` shows it, `parse` reads it.";

        let found = names_not_importable(dir.path(), output, story);

        let at = |name: &str, file: &str| NamedFunction {
            name: name.into(),
            files: vec![file.into()],
        };
        assert_eq!(
            found,
            [
                at("OutOfStock", "inventory/cart.py"),
                at("format_price", "inventory/money/__init__.py")
            ],
            "a circular import, a module the tree lacks and a name the story never mentions are none"
        );
        // Used through its module (transit, 2026-12-06); a method of its class is no function
        // it lacks.
        std::fs::write(
            dir.path().join("inventory/cart.py"),
            "class Cart:\n    def take(self, sku):\n        pass\n",
        )
        .unwrap();
        let through_module = "E       AttributeError: module 'inventory.cart' has no attribute 'OutOfStock'\nE       AttributeError: module 'inventory.cart' has no attribute 'take'\n";
        assert_eq!(
            names_not_importable(dir.path(), through_module, story),
            [at("OutOfStock", "inventory/cart.py")]
        );
        // `Cart` lives in cart.py: asked for from money, it wants an import, not a second class.
        let elsewhere = "E   ImportError: cannot import name 'Cart' from 'inventory.money' (/x)\n";
        assert!(
            names_not_importable(dir.path(), elsewhere, "`Cart` shows `format_price`").is_empty()
        );
        let both = "E   AttributeError: 'Cart' object has no attribute 'take'\nE   ImportError: cannot import name 'OutOfStock' from 'inventory.cart' (/x)\n";
        assert_eq!(
            found_missing(dir.path(), both, story),
            [
                at("take", "inventory/cart.py"),
                at("OutOfStock", "inventory/cart.py")
            ]
        );
    }

    #[test]
    fn a_function_must_be_in_the_file_its_sentence_names_even_a_new_one() {
        let named = named_functions(&story(
            "Add `median(values)` to stats.py and `word_count(text)` to words.py.",
            "- [ ] `mode([1])` returns `1`",
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("stats.py"), "def mean(v):\n    pass\n").unwrap();
        std::fs::write(
            dir.path().join("textkit.py"),
            "def median(v):\n    pass\n\ndef word_count(t):\n    pass\n",
        )
        .unwrap();
        let missing = undefined(dir.path(), &named, &[]);
        // words.py does not exist yet: word_count goes there, a new file. mode is nowhere.
        assert_eq!(
            missing,
            [
                Missing {
                    name: "median".into(),
                    file: Some("stats.py".into())
                },
                Missing {
                    name: "word_count".into(),
                    file: Some("words.py".into())
                },
                Missing {
                    name: "mode".into(),
                    file: None
                }
            ]
        );
        assert_eq!(missing[0].to_string(), "`median` in stats.py");
        std::fs::write(dir.path().join("stats.py"), "def median(v):\n    pass\n").unwrap();
        std::fs::write(
            dir.path().join("words.py"),
            "def word_count(t):\n    pass\n",
        )
        .unwrap();
        assert_eq!(undefined(dir.path(), &named, &[]).len(), 1);
        // A path the tree has under another folder is that file, when it is the only one.
        let elsewhere = named_functions(&story("Add `median(values)` to src/stats.py.", ""));
        assert!(undefined(dir.path(), &elsewhere, &[]).is_empty());
    }

    #[test]
    fn skipped_folders_are_not_searched_but_a_tree_inside_one_is() {
        let named = named_functions(&story("Add `headline(t, w)`.", "- [ ] works"));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("board")).unwrap();
        std::fs::write(dir.path().join("board/s.md"), "def headline(t, w):\n").unwrap();
        let board = [dir.path().join("board")];
        assert_eq!(undefined(dir.path(), &named, &board).len(), 1);
        // A tree inside a skipped folder of another (an attempt's worktree) is still searched.
        let attempt = dir.path().join(".agentic-sdlc-worktrees/attempt-1");
        std::fs::create_dir_all(&attempt).unwrap();
        std::fs::write(attempt.join("textkit.py"), "def headline(t, w):\n").unwrap();
        let skip = [
            attempt.join("board"),
            attempt.join(".agentic-sdlc-worktrees"),
        ];
        assert!(undefined(&attempt, &named, &skip).is_empty());
    }

    #[test]
    fn a_file_after_another_method_is_that_method_s_and_a_placed_exception_is_checked() {
        // tollbooth `unknown-vehicle-class` (2026-12-07): `toll` is `rates.py`'s, and the file
        // in brackets is `Account.register`'s.
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("tollbooth")).unwrap();
        let rates = "BASE_CHARGES = {}\n\ndef toll(vehicle_class, minute):\n    return 1\n";
        std::fs::write(tree.path().join("tollbooth/rates.py"), rates).unwrap();
        let trips = "from .rates import toll\n\nclass Account:\n    def register(self, plate, vehicle_class):\n        pass\n";
        std::fs::write(tree.path().join("tollbooth/trips.py"), trips).unwrap();
        let refuse = story(
            "Add an exception class `UnknownVehicleClassError` to `tollbooth/rates.py`, a subclass of `ValueError`, and raise it from `toll` and from `Account.register` (in `tollbooth/trips.py`) when the vehicle class is not one in `BASE_CHARGES`.",
            "- [ ] `toll(\"tractor\", 600)` raises `UnknownVehicleClassError`",
        );

        let homes = homes(tree.path(), &refuse);
        let named = named_in_tree(tree.path(), &refuse);
        let missing = undefined(tree.path(), &named, &[]);

        assert!(
            homes.contains(&("toll".to_string(), "tollbooth/rates.py".to_string())),
            "{homes:?}"
        );
        assert_eq!(
            missing,
            [Missing {
                name: "UnknownVehicleClassError".into(),
                file: Some("tollbooth/rates.py".into()),
            }]
        );
        let written = format!("{rates}\nclass UnknownVehicleClassError(ValueError):\n    pass\n");
        std::fs::write(tree.path().join("tollbooth/rates.py"), written).unwrap();
        assert_eq!(undefined(tree.path(), &named, &[]), []);
    }
}
