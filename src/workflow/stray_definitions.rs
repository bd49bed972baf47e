//! Top-level functions and methods the story does not ask for, put back as the story's base has
//! them when the tests do better without the model's change to them (docs/design.md §21). A
//! small model asked for one function writes its file whole, and rewrites the functions beside
//! it: Qwen2.5-Coder-1.5B, asked for `receipt_line` in `inventory/money.py`, gave the delivered
//! `format_price` the body it meant for `receipt_line` (a `NameError`), and the project's own
//! test of `format_price` failed every round after, with a right `receipt_line` merged in.
//!
//! This is [`super::stray_changes`] one level down: a file the story names may be the model's
//! to change, the functions in it the story never mentions are not. They are put back one file
//! at a time as a whole set, and the tests decide: the set stays put back when the tests then
//! pass, or fail only some of the tests that failed before; otherwise the files are written
//! back as the model left them.
//!
//! A method is the same one level further down: asked for `Cart.clear()` in cart.py, the 1.5B
//! model wrote a right `clear` and gave the delivered `quantity` the body `return 0`, and the
//! project's own test of `quantity` failed in all three runs (driving the tool, 2026-12-05).

use std::path::Path;

use super::definition_merge::merge_definition;
use super::fixed_tests::FixedTests;
use super::named_functions::NamedFunction;
use super::stray_changes::{keep_aside, Set};
use super::tests_run::TestRun;
use super::unasked_tests::failed_tests;
use super::unloaded_tests::unloaded_files;
use crate::agents::prompts::is_test_path;
use crate::agents::tools::source_of;
use crate::vcs;

/// A top-level function, or a method of a top-level class, that the story's base defines, that
/// the model changed or dropped, and the story does not ask for; or one the story names that
/// the model dropped (a story names a delivered function to use it: a rewrite of its file
/// without it fails every test that imports it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrayDefinition {
    pub path: String,
    /// The class the method belongs to; `None`: a top-level function.
    pub class: Option<String>,
    pub name: String,
    /// Its source at the story's base, dedented to column 0.
    pub at_base: String,
}

impl std::fmt::Display for StrayDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.class {
            Some(class) => write!(f, "{}::{class}.{}", self.path, self.name),
            None => write!(f, "{}::{}", self.path, self.name),
        }
    }
}

/// The top-level Python functions, and the methods of top-level classes, of the files changed
/// since commit `since` (the story's base; no tests) that it defines, that the model changed or
/// dropped and that are none of `asked`, or that the model dropped though `asked` names them.
/// A class the model dropped whole is not looked into.
pub fn stray_definitions(
    dir: &Path,
    since: &str,
    asked: &[NamedFunction],
    fixed: &FixedTests,
) -> Vec<StrayDefinition> {
    let Ok(changed) = vcs::worktree_changes(dir, since, &[]) else {
        return Vec::new();
    };
    let changed: Vec<String> = changed
        .into_iter()
        .filter(|path| path.ends_with(".py") && !is_test_path(Path::new(path)))
        .filter(|path| !fixed.paths().any(|fixed| fixed == path.as_str()))
        .collect();
    let Ok(at_base) = vcs::read_files(dir, since, &changed) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for path in &changed {
        let Some(base) = at_base
            .get(path)
            .and_then(|b| String::from_utf8(b.clone()).ok())
        else {
            continue;
        };
        let now = std::fs::read_to_string(dir.join(path)).unwrap_or_default();
        let mut scopes = vec![(None, base.clone(), now.clone())];
        for class in top_level_classes(&base) {
            if let (Some(before), Some(current)) =
                (class_body(&base, &class), class_body(&now, &class))
            {
                scopes.push((Some(class), before, current));
            }
        }
        for (class, base, now) in scopes {
            for name in top_level_functions(&base) {
                let Some(before) = top_level_source(&base, &name) else {
                    continue;
                };
                let current = top_level_source(&now, &name);
                let asked_for = asked.iter().any(|function| function.name == name);
                if asked_for && current.is_some() {
                    continue;
                }
                if current.as_deref() != Some(before.as_str()) {
                    found.push(StrayDefinition {
                        path: path.clone(),
                        class: class.clone(),
                        name,
                        at_base: before,
                    });
                }
            }
        }
    }
    found
}

/// Puts each of `strays` back in its file as the story's base has it; what it returns writes the model's
/// files back.
pub fn put_back(dir: &Path, strays: &[StrayDefinition]) -> Set {
    let mut paths: Vec<String> = strays.iter().map(|stray| stray.path.clone()).collect();
    paths.dedup();
    let set = keep_aside(dir, &paths);
    for path in &paths {
        let full = dir.join(path);
        let mut text = std::fs::read_to_string(&full).unwrap_or_default();
        for stray in strays.iter().filter(|stray| &stray.path == path) {
            if let Some(merged) =
                merge_definition(&text, stray.class.as_deref(), &stray.name, &stray.at_base)
            {
                text = merged;
            }
        }
        if crate::atomic_file::write(&full, text.as_bytes()).is_err() {
            tracing::warn!("cannot put the functions of {path} back as the story's base has them");
        }
    }
    set
}

/// Whether `after` is a better run than `before`: it passes, or it fails some of the tests
/// `before` failed and no other, or it names failing tests where `before` erred before naming
/// any (an `ImportError` while collecting hides every test of the file), or it fails no other
/// tests while fewer of the files `before` could not load fail to load (a runner that goes on
/// past such a file). A run that errs before naming any test is no better than one that names
/// them.
pub fn does_better(after: &TestRun, before: &TestRun) -> bool {
    if after.passed() {
        return true;
    }
    let now = failed_tests(&after.output);
    let then = failed_tests(&before.output);
    if now.is_empty() {
        return false;
    }
    let files = |run: &TestRun| -> Vec<String> {
        unloaded_files(&run.output)
            .into_iter()
            .map(|unloaded| unloaded.file)
            .collect()
    };
    let (unloaded_now, unloaded_then) = (files(after), files(before));
    let fewer_unloaded = unloaded_now.len() < unloaded_then.len()
        && unloaded_now.iter().all(|file| unloaded_then.contains(file));
    then.is_empty()
        || (now.iter().all(|test| then.contains(test))
            && (now.len() < then.len() || fewer_unloaded))
}

/// The functions a Python file defines at its top level.
fn top_level_functions(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("def ") || line.starts_with("async def "))
        .filter_map(crate::agents::tools::defined_name)
        .collect()
}

/// The classes a Python file defines at its top level.
fn top_level_classes(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("class "))
        .filter_map(crate::agents::tools::defined_name)
        .collect()
}

/// The body of the top-level class `class` in `text`, dedented so that its methods stand at the
/// top level; `None` when `text` defines no such class.
fn class_body(text: &str, class: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|line| {
        line.starts_with("class ")
            && crate::agents::tools::defined_name(line).as_deref() == Some(class)
    })?;
    let body: Vec<&str> = lines[start + 1..]
        .iter()
        .take_while(|line| line.trim().is_empty() || line.starts_with([' ', '\t']))
        .copied()
        .collect();
    let depth = |line: &str| line.len() - line.trim_start().len();
    let indent = body
        .iter()
        .find(|line| !line.trim().is_empty())
        .map_or(0, |line| depth(line));
    let dedented: Vec<&str> = body
        .iter()
        .map(|line| match line.get(..indent) {
            Some(prefix) if prefix.trim().is_empty() => &line[indent..],
            _ => line.trim_start(),
        })
        .collect();
    Some(dedented.join("\n"))
}

/// The source of the top-level function `name` in `text`, with the decorators above it.
fn top_level_source(text: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|line| {
        (line.starts_with("def ") || line.starts_with("async def "))
            && crate::agents::tools::defined_name(line).as_deref() == Some(name)
    })?;
    let first = crate::agents::tools::decorators_start(&lines, start);
    let body = source_of(&lines[start..].join("\n"), name)?;
    let decorators = lines[first..start].iter().map(|line| format!("{line}\n"));
    Some(decorators.collect::<String>() + &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::{sh, unborn_repo, write};
    use crate::workflow::tests_run::TestOutcome;

    const MONEY: &str = "def format_price(cents):\n    dollars, cents = divmod(cents, 100)\n    return f\"${dollars:,}.{cents:02d}\"\n\n\ndef cents_of(text):\n    return int(text)\n";

    #[test]
    fn functions_the_story_does_not_ask_for_that_the_model_changed_go_back_as_the_base_has_them() {
        let repo = unborn_repo();
        let dir = repo.path();
        write(dir, "inventory/money.py", MONEY);
        write(dir, "tests/test_money.py", "def test_x():\n    pass\n");
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "base"]);
        let base = sh(dir, &["rev-parse", "HEAD"]).trim().to_string();
        // Recorded (Qwen2.5-Coder-1.5B, inventory `receipt-line`, 2026-11-28), shortened: the
        // delivered `format_price` given the body meant for `receipt_line`, `cents_of` dropped.
        let rewritten = "def format_price(cents):\n    dollars, cents = divmod(cents, 100)\n    formatted_price = f\"${dollars:,}.{cents:02d}\"\n    return f\"{name}: {formatted_price}\"\n\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\"\n";
        write(dir, "inventory/money.py", rewritten);
        // A failed implement commits its partial work on the story's branch: the next run
        // starts from it, and still sees the rewrite as the story's.
        sh(dir, &["commit", "-q", "-am", "partial implementation"]);
        write(dir, "tests/test_money.py", "def test_x():\n    assert 1\n");
        let asked = [NamedFunction {
            name: "receipt_line".into(),
            files: vec!["inventory/money.py".into()],
        }];

        let strays = stray_definitions(dir, &base, &asked, &FixedTests::default());
        let names: Vec<String> = strays.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "inventory/money.py::format_price",
                "inventory/money.py::cents_of"
            ]
        );

        let set = put_back(dir, &strays);
        assert_eq!(
            std::fs::read_to_string(dir.join("inventory/money.py")).unwrap(),
            "def format_price(cents):\n    dollars, cents = divmod(cents, 100)\n    return f\"${dollars:,}.{cents:02d}\"\n\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\"\n\n\ndef cents_of(text):\n    return int(text)\n"
        );
        set.restore(dir);
        assert_eq!(
            std::fs::read_to_string(dir.join("inventory/money.py")).unwrap(),
            rewritten
        );
        assert!(
            stray_definitions(dir, &base, &[], &FixedTests::default())
                .iter()
                .all(|stray| stray.name != "receipt_line"),
            "a function the base lacks is the model's"
        );

        // A story that names the delivered functions to use them: changed, they are the
        // model's to change; dropped, they go back (held-out ledger, by its summary line: the
        // tests could not import a delivered function from the file the model rewrote).
        let uses = |name: &str| NamedFunction {
            name: name.into(),
            files: vec!["inventory/money.py".into()],
        };
        let asked = [uses("receipt_line"), uses("format_price"), uses("cents_of")];
        let strays = stray_definitions(dir, &base, &asked, &FixedTests::default());
        let names: Vec<String> = strays.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["inventory/money.py::cents_of"]);
    }

    #[test]
    fn methods_the_story_does_not_ask_for_that_the_model_changed_go_back_into_their_class() {
        let repo = unborn_repo();
        let dir = repo.path();
        let cart = "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    @property\n    def size(self):\n        return len(self.items)\n\n    def quantity(self, sku):\n        return self.items.get(sku, 0)\n\n\ndef empty():\n    return Cart()\n";
        write(dir, "cart.py", cart);
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "base"]);
        let base = sh(dir, &["rev-parse", "HEAD"]).trim().to_string();
        // Recorded (Qwen2.5-Coder-1.5B asked for `Cart.clear()`, driving the tool,
        // 2026-12-05), with an `__init__` the story may need and `size` dropped.
        let rewritten = "class Cart:\n    def __init__(self):\n        self.items = {}\n        self.cleared = False\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def quantity(self, sku):\n        return 0\n\n    def clear(self):\n        self.items = {}\n\n\ndef empty():\n    return Cart()\n";
        write(dir, "cart.py", rewritten);
        let asked = [NamedFunction {
            name: "clear".into(),
            files: vec!["cart.py".into()],
        }];

        let strays = stray_definitions(dir, &base, &asked, &FixedTests::default());
        let names: Vec<String> = strays.iter().map(ToString::to_string).collect();
        assert_eq!(
            names,
            [
                "cart.py::Cart.__init__",
                "cart.py::Cart.size",
                "cart.py::Cart.quantity"
            ]
        );
        assert_eq!(
            strays[1].at_base,
            "@property\ndef size(self):\n    return len(self.items)"
        );

        let set = put_back(dir, &strays[1..]);
        assert_eq!(
            std::fs::read_to_string(dir.join("cart.py")).unwrap(),
            "class Cart:\n    def __init__(self):\n        self.items = {}\n        self.cleared = False\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def quantity(self, sku):\n        return self.items.get(sku, 0)\n\n    def clear(self):\n        self.items = {}\n\n    @property\n    def size(self):\n        return len(self.items)\n\n\ndef empty():\n    return Cart()\n"
        );
        set.restore(dir);
        assert_eq!(
            std::fs::read_to_string(dir.join("cart.py")).unwrap(),
            rewritten
        );

        write(dir, "cart.py", "cart = {}\n");
        assert!(
            stray_definitions(dir, &base, &asked, &FixedTests::default())
                .iter()
                .all(|stray| stray.class.is_none()),
            "a class dropped whole is not looked into"
        );
    }

    #[test]
    fn a_run_does_better_when_it_passes_or_fails_fewer_of_the_same_tests() {
        let run = |failed: &[&str]| TestRun {
            command: "pytest".into(),
            outcome: if failed.is_empty() {
                TestOutcome::Passed
            } else {
                TestOutcome::Failed { exit_code: Some(1) }
            },
            output: failed
                .iter()
                .map(|test| format!("FAILED tests/test_money.py::{test} - NameError\n"))
                .collect(),
        };
        let before = run(&["test_format_price", "test_receipt_line"]);

        assert!(does_better(&run(&[]), &before));
        assert!(does_better(&run(&["test_receipt_line"]), &before));
        assert!(!does_better(&run(&["test_other"]), &before));
        assert!(!does_better(&before.clone(), &before));
        let erred = TestRun {
            output: "ERROR collecting tests/test_money.py\n".into(),
            ..run(&["x"])
        };
        assert!(!does_better(&erred, &before));
        assert!(does_better(&before, &erred), "past the collection at last");
        assert!(!does_better(&erred, &erred));
        // A runner that goes on past a file it cannot load: the same failures without it.
        let unloaded = TestRun {
            output: format!("ERROR tests/test_mine.py - SyntaxError\n{}", before.output),
            ..before.clone()
        };
        assert!(does_better(&before, &unloaded));
        assert!(!does_better(&unloaded, &before));
    }
}
