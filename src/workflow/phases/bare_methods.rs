//! Tests that call a method of the story's as a function (docs/design.md §21): told "Add a
//! method `total_items()` to the `Cart` class" with the example "an empty cart's
//! `total_items()` returns `0`", a test imports `total_items` from cart.py and calls it bare.
//! No code the story asks for defines such a function, and the acceptance check let it
//! through, since the import fails on the name the story adds (a drive, 2026-12-06). Each
//! bare call becomes a call on a new object of the method's class, which the file imports.

use std::path::Path;

use crate::workflow::examples::calls_at;
use crate::workflow::python_imports::{bound_by_import, python_module, with_imports_on_top};
use crate::workflow::story_classes::method_owner;
use crate::workflow::tree_definitions::python_file_defining;

/// A method of the story's that a test file imported and called as a function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BareMethod {
    pub name: String,
    pub class: String,
}

/// `tests` (a Python test file of the tree at `dir`) with each name it imports from a module
/// that the story makes a method (`examples::method_owner`) and no file of the tree defines
/// as a function taken out of its import, each bare call of it made on a new object of its
/// class (`total_items()` → `Cart().total_items()`), and the class imported from the file that
/// defines it. Only a class the tree defines is used, and one that takes arguments to make
/// only when no call of the name is bare. `None` when there is no such name.
pub fn called_on_objects(
    dir: &Path,
    tests: &str,
    story_text: &str,
) -> Option<(String, Vec<BareMethod>)> {
    let mut found: Vec<(BareMethod, String)> = Vec::new();
    for line in tests.lines() {
        for name in imported_names(line) {
            if found.iter().any(|(known, _)| known.name == name) {
                continue;
            }
            let Some((_, class)) = method_owner(story_text, &name) else {
                continue;
            };
            if python_file_defining(dir, &name).is_some() {
                continue;
            }
            let Some(file) = python_file_defining(dir, &class) else {
                continue;
            };
            // Only a bare call needs an object made on the spot; an import of a name the tests
            // call only on their own objects just goes (`from transit.timetable import
            // next_departure` above `timetable.next_departure(…)`, transit, 2026-12-06).
            let called_bare = tests
                .lines()
                .any(|line| called_on_object(line, &name, &class) != line);
            let made_bare = std::fs::read_to_string(dir.join(&file))
                .is_ok_and(|source| super::examples_file::made_without_arguments(&source, &class));
            let Some(module) = python_module(&file).filter(|_| made_bare || !called_bare) else {
                continue;
            };
            found.push((BareMethod { name, class }, module));
        }
    }
    if found.is_empty() {
        return None;
    }
    let names: Vec<&str> = found.iter().map(|(bare, _)| bare.name.as_str()).collect();
    let mut lines: Vec<String> = Vec::new();
    for line in tests.lines() {
        if !imported_names(line).is_empty() {
            match without_names(line, &names) {
                Some(kept) => lines.push(kept),
                None => continue,
            }
            continue;
        }
        let mut line = line.to_string();
        for (bare, _) in &found {
            line = called_on_object(&line, &bare.name, &bare.class);
        }
        lines.push(line);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let imports: Vec<String> = found
        .iter()
        .filter(|(bare, _)| !binds(&text, &bare.class))
        .map(|(bare, module)| format!("from {module} import {}", bare.class))
        .collect();
    let text = with_imports_on_top(&text, &imports, false);
    Some((text, found.into_iter().map(|(bare, _)| bare).collect()))
}

/// The names a top-level `from <module> import a, b` line imports, `as` names aside; none for
/// any other line, or a relative import.
fn imported_names(line: &str) -> Vec<String> {
    let Some(rest) = line.strip_prefix("from ") else {
        return Vec::new();
    };
    let Some((module, names)) = rest.split_once(" import ") else {
        return Vec::new();
    };
    if module.trim().starts_with('.') {
        return Vec::new();
    }
    names
        .trim()
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .filter_map(|name| {
            let name = name.split(" as ").next().unwrap_or("").trim();
            let plain = !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
            plain.then(|| name.to_string())
        })
        .collect()
}

/// The import `line` without `names`; `None` when it imports nothing else.
fn without_names(line: &str, names: &[&str]) -> Option<String> {
    let (head, imported) = line.split_once(" import ")?;
    let kept: Vec<&str> = imported
        .trim()
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|name| {
            let bound = name.split(" as ").next().unwrap_or("").trim();
            !name.is_empty() && !names.contains(&bound)
        })
        .collect();
    if kept.len() == imported_names(line).len() {
        return Some(line.to_string());
    }
    (!kept.is_empty()).then(|| format!("{head} import {}", kept.join(", ")))
}

/// `line` with each bare call of `name` made on a new `class` object; a method call
/// (`cart.total_items()`) and the definition of a test named so stay.
fn called_on_object(line: &str, name: &str, class: &str) -> String {
    let call = format!("{name}(");
    let mut out = String::new();
    let mut from = 0;
    for (at, _) in line.match_indices(&call) {
        let before = line[..at].trim_end();
        let bare = calls_at(line, at) && !line[..at].ends_with('.') && !before.ends_with("def");
        if bare {
            out.push_str(&line[from..at]);
            out.push_str(&format!("{class}()."));
            from = at;
        }
    }
    out.push_str(&line[from..]);
    out
}

/// Whether a top-level import of `text` binds `name` (`from cart import Cart as C` binds `C`).
pub(super) fn binds(text: &str, name: &str) -> bool {
    text.lines()
        .any(|line| bound_by_import(line).contains(&name))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A drive's story (2026-12-06) that makes `total_items` a method of `Cart`.
    pub(in crate::workflow::phases) const STORY: &str = "Count the items in the cart\n\
        Add a method `total_items()` to the `Cart` class in cart.py that returns how many items the cart holds in all.\n\
        - [ ] after `cart.add(\"apple\", 3)` and `cart.add(\"pear\", 2)`, `cart.total_items()` returns `5`\n\
        - [ ] an empty cart's `total_items()` returns `0`\n";

    /// A tree of one file, cart.py, holding `cart`.
    pub(in crate::workflow::phases) fn tree(cart: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cart.py"), cart).unwrap();
        dir
    }

    pub(in crate::workflow::phases) const CART: &str = "class Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n";

    #[test]
    fn a_method_imported_as_a_function_is_called_on_a_new_object() {
        let dir = tree(CART);
        let tests = "from cart import Cart\nfrom cart import total_items\n\n\ndef test_total_items_example_1():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    assert cart.total_items() == 3\n\n\ndef test_total_items_example_2():\n    assert total_items() == 0\n";
        let (mended, bare) = called_on_objects(dir.path(), tests, STORY).expect("mended");
        assert_eq!(
            bare,
            [BareMethod {
                name: "total_items".into(),
                class: "Cart".into()
            }]
        );
        assert_eq!(
            mended,
            "from cart import Cart\n\n\ndef test_total_items_example_1():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    assert cart.total_items() == 3\n\n\ndef test_total_items_example_2():\n    assert Cart().total_items() == 0\n"
        );
    }

    #[test]
    fn the_class_is_imported_and_other_names_of_the_import_stay() {
        let dir = tree(CART);
        let tests = "from cart import total_items, Cart as C\n\ndef test_empty():\n    assert total_items() == 0\n";
        let (mended, _) = called_on_objects(dir.path(), tests, STORY).expect("mended");
        assert_eq!(
            mended,
            "from cart import Cart\nfrom cart import Cart as C\n\ndef test_empty():\n    assert Cart().total_items() == 0\n"
        );
        let only =
            "from cart import total_items\n\ndef test_empty():\n    assert total_items() == 0\n";
        let (mended, _) = called_on_objects(dir.path(), only, STORY).expect("mended");
        assert_eq!(
            mended,
            "from cart import Cart\n\ndef test_empty():\n    assert Cart().total_items() == 0\n"
        );
    }

    #[test]
    fn a_function_the_tree_defines_a_class_made_with_arguments_or_no_method_stay() {
        let defined = tree(&format!("{CART}\n\ndef total_items(cart):\n    return 0\n"));
        let tests =
            "from cart import total_items\n\ndef test_empty():\n    assert total_items() == 0\n";
        assert_eq!(called_on_objects(defined.path(), tests, STORY), None);
        let with_arguments =
            tree("class Cart:\n    def __init__(self, owner):\n        self.owner = owner\n");
        assert_eq!(called_on_objects(with_arguments.path(), tests, STORY), None);
        // Called only on the tests' own objects, its import just goes (transit, 2026-12-06).
        let on_objects = "from cart import total_items\nfrom cart import Cart\n\ndef test_empty():\n    cart = Cart('ann')\n    assert cart.total_items() == 0\n";
        let (mended, _) = called_on_objects(with_arguments.path(), on_objects, STORY).unwrap();
        assert_eq!(
            mended,
            on_objects.replace("from cart import total_items\n", "")
        );
        let plain = "Add `total_items()` to cart.py\n- [ ] `total_items()` returns `0`\n";
        assert_eq!(called_on_objects(tree(CART).path(), tests, plain), None);
    }
}
