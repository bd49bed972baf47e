//! Acceptance tests that make a call nobody asked for (docs/design.md §21). Asked to test
//! `Cart.remove(sku)`, the 1.5B model also tested a `cart.total_items()` that `Cart` does not
//! have and the story never names, and a `cart.remove("apple", 1)` with an argument the
//! story's signature does not take: tests that hold implement to code the story does not ask
//! for. Such a test function is taken out, as an invented expectation is.

use std::path::Path;

use super::call_text::{arguments, list_end, signature_parameters};
use super::python_lines::{definition_block, indent, kept_lines};
use super::tree_definitions::python_file_defining;

/// A test function taken out, with the call that took it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCall {
    pub test: String,
    pub call: String,
}

/// What a story says of the calls its tests may make: the names it mentions, and the
/// signatures it writes out (`remove(sku)`).
pub struct StoryCalls<'a> {
    pub names: &'a [String],
    pub story_text: &'a str,
}

/// `tests` (a Python test file) without its top-level test functions that call, on an object
/// made from a class of the tree at `dir` (`cart = Cart()`), a method that class does not
/// define and the story's names do not hold, or that call a function or method with more
/// arguments than every signature the story writes for it takes. A class with a base class or
/// a `__getattr__` is left alone: its methods are not all in its own body. `None` when there
/// is no such test.
pub fn without_unknown_calls(
    dir: &Path,
    tests: &str,
    story: &StoryCalls,
) -> Option<(String, Vec<UnknownCall>)> {
    let story_names = story.names;
    let signatures = signatures(story.story_text);
    let lines: Vec<&str> = tests.lines().collect();
    let mut gone = vec![false; lines.len()];
    let mut taken = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(test) = line
            .strip_prefix("def test")
            .map(|rest| format!("test{}", rest.split('(').next().unwrap_or("")))
        else {
            continue;
        };
        let block = definition_block(&lines, at);
        let body = &lines[block.clone()];
        let too_many = body
            .iter()
            .find_map(|line| call_with_too_many_arguments(line, &signatures));
        let unknown = too_many.or_else(|| {
            body.iter().find_map(|line| {
                objects_made(line).into_iter().find_map(|(object, class)| {
                    let methods = methods_of(dir, &class)?;
                    body.iter()
                        .flat_map(|line| methods_called(line, &object))
                        .find(|method| {
                            !method.starts_with("__")
                                && !methods.contains(method)
                                && !story_names.contains(method)
                        })
                        .map(|method| format!("{object}.{method}()"))
                })
            })
        });
        if let Some(call) = unknown {
            gone[block].iter_mut().for_each(|slot| *slot = true);
            taken.push(UnknownCall { test, call });
        }
    }
    if taken.is_empty() {
        return None;
    }
    let mut text = kept_lines(&lines, &gone);
    text.push('\n');
    Some((text, taken))
}

/// Takes those test functions out of the Python test file `path` of the tree at `dir` (see
/// [`without_unknown_calls`]); says what it took out, or `None` when nothing was.
pub fn take_out(dir: &Path, path: &str, story: &StoryCalls) -> Option<String> {
    let full = dir.join(path);
    let text = std::fs::read_to_string(&full).ok()?;
    let (kept, taken) = without_unknown_calls(dir, &text, story)?;
    crate::atomic_file::write(&full, kept.as_bytes()).ok()?;
    let each: Vec<String> = taken
        .iter()
        .map(|unknown| format!("`{}` (it calls `{}`)", unknown.test, unknown.call))
        .collect();
    Some(format!(
        "took {} out of `{path}`: a method its class does not have, or arguments the story's signature does not take",
        each.join(", ")
    ))
}

/// The most arguments each function or method the story writes a signature for takes
/// (`remove(sku)` → 1, `self` aside); `None` for one with `*args` or `**kwargs`. Literal calls
/// (`remove("apple")`) are examples, not signatures; classes and empty lists are left out.
fn signatures(story_text: &str) -> Vec<(String, Option<usize>)> {
    let mut found: Vec<(String, Option<usize>)> = Vec::new();
    for (span, _) in crate::agents::prompts::backtick_spans(story_text) {
        let span = span.trim();
        let Some(open) = span.find('(') else { continue };
        let name = span[..open].rsplit('.').next().unwrap_or("");
        let plain = |c: char| c.is_alphanumeric() || c == '_';
        // A class's arguments are its `__init__`'s, which a story writes loosely (`Cart()`).
        let is_class = name.starts_with(|c: char| c.is_ascii_uppercase());
        if name.is_empty() || !name.chars().all(plain) || !span.ends_with(')') || is_class {
            continue;
        }
        let Some(params) = signature_parameters(&span[open..]) else {
            continue;
        };
        // `word_count()` often only says "a function": no parameters written, none counted.
        if params.is_empty() {
            continue;
        }
        let most = (!params.iter().any(|p| p.starts_with('*')))
            .then(|| params.iter().filter(|p| p.as_str() != "self").count());
        match found.iter_mut().find(|(known, _)| known == name) {
            Some((_, known)) => *known = known.zip(most).map(|(a, b)| a.max(b)),
            None => found.push((name.to_string(), most)),
        }
    }
    found
}

/// The first call on `line` of a function or method in `signatures` with more arguments than
/// its signature takes, as written.
fn call_with_too_many_arguments(
    line: &str,
    signatures: &[(String, Option<usize>)],
) -> Option<String> {
    signatures.iter().find_map(|(name, most)| {
        let most = (*most)?;
        let call = format!("{name}(");
        line.match_indices(&call).find_map(|(at, _)| {
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                return None;
            }
            let rest = &line[at + name.len()..];
            let args = arguments(rest)?;
            let written = &rest[..list_end(rest)];
            (args.len() > most).then(|| format!("{name}{written}"))
        })
    })
}

/// `cart = Cart(…)` on a line: the object's name and its class (a name that starts upper-case).
fn objects_made(line: &str) -> Vec<(String, String)> {
    let Some((object, made)) = line.trim().split_once('=') else {
        return Vec::new();
    };
    let object = object.trim();
    let class: String = made
        .trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let is_name = !object.is_empty() && object.chars().all(|c| c.is_alphanumeric() || c == '_');
    let makes = made.trim()[class.len()..].starts_with('(');
    if is_name && makes && class.starts_with(|c: char| c.is_ascii_uppercase()) {
        vec![(object.to_string(), class)]
    } else {
        Vec::new()
    }
}

/// The methods `line` calls on `object`: `cart.add(` gives `add`.
fn methods_called(line: &str, object: &str) -> Vec<String> {
    let prefix = format!("{object}.");
    line.match_indices(&prefix)
        .filter(|(at, _)| {
            line[..*at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
        })
        .filter_map(|(at, _)| {
            let rest = &line[at + prefix.len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty() && rest[name.len()..].starts_with('(')).then_some(name)
        })
        .collect()
}

/// The methods the class `class` defines in its own body, in the Python source file of the
/// tree at `dir` that defines it; `None` when no file does, or the class has a base class or a
/// `__getattr__` (its methods may come from elsewhere).
pub(crate) fn methods_of(dir: &Path, class: &str) -> Option<Vec<String>> {
    let file = python_file_defining(dir, class)?;
    let source = std::fs::read_to_string(dir.join(file)).ok()?;
    let lines: Vec<&str> = source.lines().collect();
    let start = lines.iter().position(|line| {
        line.starts_with(&format!("class {class}:"))
            || line.starts_with(&format!("class {class}():"))
            || line.starts_with(&format!("class {class}(object):"))
    })?;
    let block = definition_block(&lines, start);
    let mut methods = Vec::new();
    let mut level = None;
    for line in &lines[block.start + 1..block.end] {
        let trimmed = line.trim_start();
        let is_def = trimmed.starts_with("def ") || trimmed.starts_with("async def ");
        if !is_def {
            continue;
        }
        // One level inside the class: its methods, not functions nested in them.
        let here = indent(line);
        if *level.get_or_insert(here) != here {
            continue;
        }
        if let Some(name) = crate::agents::tools::defined_name(trimmed) {
            methods.push(name);
        }
    }
    if methods.iter().any(|m| m == "__getattr__") {
        return None;
    }
    Some(methods)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CART: &str = "class Cart:\n    \"\"\"Items by SKU.\"\"\"\n\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        def helper():\n            pass\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def quantity(self, sku):\n        return self.items.get(sku, 0)\n";

    /// Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, inventory `cart-remove`), shortened.
    const TESTS: &str = "import pytest\nfrom inventory.cart import Cart\n\ndef test_remove_no_item_raises_keyerror():\n    cart = Cart()\n    with pytest.raises(KeyError):\n        cart.remove(\"kiwi\")\n\ndef test_remove_all_items_removes_cart():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    cart.remove(\"apple\")\n    assert cart.total_items() == 0\n\ndef test_quantity_initially_zero():\n    cart = Cart()\n    assert cart.quantity(\"apple\") == 0\n";

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inventory")).unwrap();
        std::fs::write(dir.path().join("inventory/cart.py"), CART).unwrap();
        dir
    }

    fn story<'a>(names: &'a [String], story_text: &'a str) -> StoryCalls<'a> {
        StoryCalls { names, story_text }
    }

    #[test]
    fn a_test_calling_a_method_neither_the_class_nor_the_story_has_goes() {
        let dir = tree();
        let names = vec!["remove".to_string(), "Cart".to_string()];

        let (kept, taken) = without_unknown_calls(dir.path(), TESTS, &story(&names, "")).unwrap();

        assert_eq!(
            taken,
            vec![UnknownCall {
                test: "test_remove_all_items_removes_cart".into(),
                call: "cart.total_items()".into()
            }]
        );
        assert_eq!(
            kept,
            "import pytest\nfrom inventory.cart import Cart\n\ndef test_remove_no_item_raises_keyerror():\n    cart = Cart()\n    with pytest.raises(KeyError):\n        cart.remove(\"kiwi\")\n\ndef test_quantity_initially_zero():\n    cart = Cart()\n    assert cart.quantity(\"apple\") == 0\n"
        );
    }

    #[test]
    fn methods_the_story_names_the_class_has_or_may_inherit_stay() {
        let dir = tree();
        let names = vec!["remove".to_string(), "total_items".to_string()];
        assert_eq!(
            without_unknown_calls(dir.path(), TESTS, &story(&names, "")),
            None
        );
        // A helper nested in a method is no method.
        let nested = "def test_h():\n    cart = Cart()\n    cart.helper()\n";
        assert!(without_unknown_calls(dir.path(), nested, &story(&[], "")).is_some());
        // A class with a base may have the method from it; one the tree lacks is unknown.
        std::fs::write(
            dir.path().join("inventory/cart.py"),
            format!(
                "class Base:\n    pass\n\n{}",
                CART.replace("class Cart:", "class Cart(Base):")
            ),
        )
        .unwrap();
        assert_eq!(
            without_unknown_calls(dir.path(), TESTS, &story(&[], "")),
            None
        );
        let elsewhere = "def test_x():\n    thing = Widget()\n    thing.spin()\n";
        assert_eq!(
            without_unknown_calls(dir.path(), elsewhere, &story(&[], "")),
            None
        );
    }

    #[test]
    fn a_call_with_more_arguments_than_the_story_signature_takes_goes() {
        let dir = tree();
        let names = vec!["remove".to_string(), "sku".to_string()];
        let text = "Add a method `remove(sku)` to the `Cart` class; `cart.remove(\"kiwi\")` raises `KeyError`.";
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, inventory `cart-remove`), shortened.
        let tests = "def test_remove_one():\n    cart = Cart()\n    cart.remove(\"apple, pear\")\n\ndef test_remove_multiple_items_decreases_quantity():\n    cart = Cart()\n    cart.add(\"apple\", 2)\n    cart.remove(\"apple\", 1)\n";

        let (kept, taken) = without_unknown_calls(dir.path(), tests, &story(&names, text)).unwrap();

        assert_eq!(
            taken,
            vec![UnknownCall {
                test: "test_remove_multiple_items_decreases_quantity".into(),
                call: "remove(\"apple\", 1)".into()
            }]
        );
        assert_eq!(
            kept,
            "def test_remove_one():\n    cart = Cart()\n    cart.remove(\"apple, pear\")\n\n"
        );
        // Defaults, `*args` and a second signature with more parameters take more.
        for signature in [
            "`remove(self, sku, count=1)`",
            "`remove(*skus)`",
            "`remove(sku)` or `remove(sku, count)`",
        ] {
            assert_eq!(
                without_unknown_calls(dir.path(), tests, &story(&names, signature)),
                None,
                "{signature}"
            );
        }
    }
}
