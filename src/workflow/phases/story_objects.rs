//! Tests that call a story's object by its module's name (docs/design.md §21). Told "after
//! `cart.add("apple", 3)` and `cart.add("pear", 2)`, `cart.total_items()` returns `5`", the
//! 1.5B model wrote the examples as they stand, and `cart`, never made, was taken for the
//! module cart.py: the file failed at collection on "module 'cart' has no attribute 'add'",
//! whatever the code (a drive, 2026-12-06). The story's `cart` is an object of its `Cart`, so
//! each test that uses `cart` unmade now makes one first. A test that takes `cart` as a
//! parameter no fixture gives has it unmade too: pytest errors on "fixture 'cart' not found"
//! whatever the code, and the acceptance check refuses such a test (held-out gradebook's
//! summary line, 2026-12-06).

use std::path::Path;

use super::bare_methods::binds;
use crate::workflow::python_imports::{
    bound_by_import, module_source, python_module, with_imports_on_top,
};
use crate::workflow::story_classes::{class_of, method_owner};
use crate::workflow::tree_definitions::python_file_defining;
use crate::workflow::unknown_methods::methods_of;

/// An object a test file used without making it, and the class the story makes it of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeObject {
    /// `cart`
    pub name: String,
    /// `Cart`
    pub class: String,
    /// How it is made: `Cart()`, or as the project's own tests make it (`Fleet("Riverside")`).
    pub made: String,
}

/// `tests` (a Python test file of the tree at `dir`) with `<name> = <Class>()` at the start of
/// each test function that calls methods on `<name>` without making it, where the story makes
/// `<name>` an object of `<Class>` ([`class_of`]) and every name called on it is a method of
/// the class, or one the story makes its method. A bare `import <name>` of the module of the
/// same name goes, when the module defines none of those names at its top level. Only a class
/// the tree defines is used, made with no arguments where it takes none and otherwise as the
/// project's own tests make it (the 1.5B model's tests of cyclehire `unknown-bike-error` called
/// `fleet.rent(…)` on a `fleet` they never made, 2026-12-07), and only when the file uses
/// `<name>` nowhere outside its test functions. A test taking `<name>` as a parameter loses it
/// and makes the object, unless a fixture of that name is defined in the file or a
/// `conftest.py` beside the tests. `None` when there is no such object.
pub fn objects_made(
    dir: &Path,
    tests: &str,
    story_text: &str,
) -> Option<(String, Vec<MadeObject>)> {
    let functions = test_functions(tests);
    let mut made: Vec<(MadeObject, String)> = Vec::new();
    for (name, called) in receivers(tests, &functions) {
        let Some(class) = class_of(story_text, &name) else {
            continue;
        };
        let Some((module, making)) = class_module(dir, &class) else {
            continue;
        };
        let fixture = fixture_defined(dir, tests, &name);
        if made_elsewhere(tests, &name, &functions, fixture) {
            continue;
        }
        let methods = methods_of(dir, &class).unwrap_or_default();
        let all_methods = called.iter().all(|method| {
            methods.contains(method)
                || method_owner(story_text, method).is_some_and(|(_, owner)| owner == class)
        });
        // `import cart` names a module that may define what is called (`cart.add` a function).
        let module_calls = module_source(dir, &name)
            .is_some_and(|(_, source)| called.iter().any(|method| defines_at_top(&source, method)));
        if all_methods && !module_calls {
            made.push((
                MadeObject {
                    name,
                    class,
                    made: making,
                },
                module,
            ));
        }
    }
    if made.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = Vec::new();
    for (at, line) in tests.lines().enumerate() {
        if made
            .iter()
            .any(|(object, _)| line.trim_end() == format!("import {}", object.name))
        {
            continue;
        }
        let Some(function) = functions.iter().find(|function| function.def_line == at) else {
            lines.push(line.to_string());
            continue;
        };
        let unmade = made.iter().map(|(object, _)| object.name.as_str());
        lines.push(unmade.fold(line.to_string(), |def, name| without_parameter(&def, name)));
        for (object, _) in &made {
            // A parameter taken away is made, whatever the test does with it.
            if function.uses(tests, &object.name) || defines_parameter(line, &object.name) {
                lines.push(format!(
                    "{}{} = {}",
                    function.body_indent(tests),
                    object.name,
                    object.made
                ));
            }
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let imports: Vec<String> = made
        .iter()
        .filter(|(object, _)| !binds(&text, &object.class))
        .map(|(object, module)| format!("from {module} import {}", object.class))
        .collect();
    let text = with_imports_on_top(&text, &imports, false);
    Some((text, made.into_iter().map(|(object, _)| object).collect()))
}

/// `tests` with each `cart = cart.Cart(…)` in a function, where `cart` is a module of the tree
/// at `dir` that defines `Cart`, made `cart = Cart(…)`, and `Cart` imported from it: the
/// assignment makes `cart` local to the function, so `cart.Cart` is read before it is assigned
/// and fails whatever the code (the 1.5B model wrote it in each test, a drive, 2026-12-06).
/// Returns the names imported; `None` when there is no such line.
pub fn made_from_own_module(dir: &Path, tests: &str) -> Option<(String, Vec<String>)> {
    let mut imports: Vec<String> = Vec::new();
    let mut lines: Vec<String> = Vec::new();
    for line in tests.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        let mended = line
            .trim_start()
            .split_once(" = ")
            .and_then(|(name, value)| {
                let plain =
                    !indent.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
                let made = value.strip_prefix(&format!("{name}."))?;
                let class: String = made
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let calls = made[class.len()..].starts_with('(');
                let (_, source) = module_source(dir, name).filter(|_| plain && calls)?;
                defines_at_top(&source, &class).then(|| {
                    let import = format!("from {name} import {class}");
                    if !imports.contains(&import) {
                        imports.push(import);
                    }
                    format!("{indent}{name} = {made}")
                })
            });
        lines.push(mended.unwrap_or_else(|| line.to_string()));
    }
    if imports.is_empty() {
        return None;
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let missing: Vec<String> = imports
        .iter()
        .filter(|import| !text.lines().any(|line| line == import.as_str()))
        .cloned()
        .collect();
    Some((with_imports_on_top(&text, &missing, false), imports))
}

/// The module to import `class` from (the file of the tree that defines it), and how a test
/// makes one: `Class()` when it takes no arguments, else as the project's own tests make it.
fn class_module(dir: &Path, class: &str) -> Option<(String, String)> {
    let file = python_file_defining(dir, class)?;
    let source = std::fs::read_to_string(dir.join(&file)).ok()?;
    let making = match super::examples_file::made_without_arguments(&source, class) {
        true => format!("{class}()"),
        false => super::examples_file::made_by_project_tests(dir, class)?,
    };
    Some((python_module(&file)?, making))
}

/// A test function at the top level of a file: its `def` line and the lines of its body.
struct TestFunction {
    def_line: usize,
    body: std::ops::Range<usize>,
}

impl TestFunction {
    fn lines<'a>(&self, tests: &'a str) -> impl Iterator<Item = &'a str> {
        tests.lines().skip(self.body.start).take(self.body.len())
    }

    fn uses(&self, tests: &str, name: &str) -> bool {
        self.lines(tests)
            .any(|line| !calls_on(line, name).is_empty())
    }

    fn body_indent(&self, tests: &str) -> String {
        self.lines(tests)
            .find(|line| !line.trim().is_empty())
            .map(|line| line[..line.len() - line.trim_start().len()].to_string())
            .unwrap_or_else(|| "    ".to_string())
    }
}

/// The test functions at the top level of `tests` (`def test_…(` at the left edge).
fn test_functions(tests: &str) -> Vec<TestFunction> {
    let lines: Vec<&str> = tests.lines().collect();
    let mut functions = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if !line.starts_with("def test") {
            continue;
        }
        let end = (at + 1..lines.len())
            .find(|&next| {
                let next = lines[next];
                !next.trim().is_empty() && !next.starts_with(char::is_whitespace)
            })
            .unwrap_or(lines.len());
        functions.push(TestFunction {
            def_line: at,
            body: at + 1..end,
        });
    }
    functions
}

/// Each plain lowercase name the test functions call methods on, with those methods, in the
/// order first seen.
fn receivers(tests: &str, functions: &[TestFunction]) -> Vec<(String, Vec<String>)> {
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    for line in functions.iter().flat_map(|function| function.lines(tests)) {
        for (name, method) in method_calls(line) {
            let at = match found.iter().position(|(known, _)| *known == name) {
                Some(at) => at,
                None => {
                    found.push((name, Vec::new()));
                    found.len() - 1
                }
            };
            if !found[at].1.contains(&method) {
                found[at].1.push(method);
            }
        }
    }
    found
}

/// The `name.method(` calls of `line` whose receiver is a plain name (not `a.b.c(`).
fn method_calls(line: &str) -> Vec<(String, String)> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut calls = Vec::new();
    for (dot, _) in line.match_indices('.') {
        let before = &line[..dot];
        let name: String = before
            .chars()
            .rev()
            .take_while(|c| is_word(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let preceded = before[..before.len() - name.len()].chars().next_back();
        let plain = !name.is_empty()
            && name.starts_with(|c: char| c.is_ascii_lowercase())
            && !preceded.is_some_and(|c| is_word(c) || c == '.' || c == '"' || c == '\'');
        let after = &line[dot + 1..];
        let method: String = after.chars().take_while(|c| is_word(*c)).collect();
        if plain && !method.is_empty() && after[method.len()..].starts_with('(') {
            calls.push((name, method));
        }
    }
    calls
}

/// The methods `line` calls on `name`.
fn calls_on(line: &str, name: &str) -> Vec<String> {
    method_calls(line)
        .into_iter()
        .filter(|(receiver, _)| receiver == name)
        .map(|(_, method)| method)
        .collect()
}

/// Whether `tests` binds `name` other than by a bare `import <name>` or a test's parameter no
/// fixture gives (`fixture` says whether one does), or uses it outside its test functions: then
/// the tests' `name` is not left unmade.
fn made_elsewhere(tests: &str, name: &str, functions: &[TestFunction], fixture: bool) -> bool {
    let inside = |at: usize| functions.iter().any(|function| function.body.contains(&at));
    tests.lines().enumerate().any(|(at, line)| {
        let trimmed = line.trim_start();
        if trimmed == format!("import {name}") {
            return false;
        }
        let binds = bound_by_import(trimmed).contains(&name)
            || trimmed.starts_with(&format!("{name} ="))
            || trimmed.starts_with(&format!("{name}="))
            || trimmed.starts_with(&format!("{name}:"))
            || trimmed.starts_with(&format!("for {name} "))
            || trimmed.contains(&format!(" as {name}:"))
            || (trimmed.starts_with("def ")
                && defines_parameter(trimmed, name)
                && (fixture || !line.starts_with("def test")));
        let used_outside = !line.starts_with(char::is_whitespace)
            && !line.starts_with("def ")
            && !inside(at)
            && !calls_on(line, name).is_empty();
        binds || used_outside
    })
}

/// Whether Python `source` defines or assigns `name` at its top level (a method is not).
fn defines_at_top(source: &str, name: &str) -> bool {
    source
        .lines()
        .filter(|line| !line.starts_with(char::is_whitespace))
        .any(|line| {
            crate::agents::tools::defined_name(line).as_deref() == Some(name)
                || line
                    .split_once('=')
                    .is_some_and(|(target, _)| target.trim() == name)
        })
}

/// Whether a fixture `name` may be given to the tests: a function of that name in `tests`, or
/// in a `conftest.py` at the root of the tree at `dir` or in its `tests` folder.
fn fixture_defined(dir: &Path, tests: &str, name: &str) -> bool {
    let defines = |source: &str| {
        source
            .lines()
            .any(|line| line.trim_start().starts_with(&format!("def {name}(")))
    };
    defines(tests)
        || ["conftest.py", "tests/conftest.py"].iter().any(|path| {
            std::fs::read_to_string(dir.join(path)).is_ok_and(|source| defines(&source))
        })
}

/// The `def` line without its parameter `name`, as it is when it takes none.
fn without_parameter(def_line: &str, name: &str) -> String {
    let Some((head, rest)) = def_line.split_once('(') else {
        return def_line.to_string();
    };
    let Some((params, tail)) = rest.rsplit_once(')') else {
        return def_line.to_string();
    };
    let kept: Vec<&str> = params
        .split(',')
        .map(str::trim)
        .filter(|param| !param.is_empty())
        .filter(|param| param.split([':', '=']).next().unwrap_or("").trim() != name)
        .collect();
    if kept.len() == params.split(',').filter(|p| !p.trim().is_empty()).count() {
        return def_line.to_string();
    }
    format!("{head}({}){tail}", kept.join(", "))
}

/// Whether the `def` line takes a parameter `name`.
fn defines_parameter(def_line: &str, name: &str) -> bool {
    def_line
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .is_some_and(|(params, _)| {
            params
                .split(',')
                .any(|param| param.split([':', '=']).next().unwrap_or("").trim() == name)
        })
}

#[cfg(test)]
mod tests {
    use super::super::bare_methods::tests::{tree, CART, STORY};
    use super::*;

    #[test]
    fn a_story_object_used_unmade_is_made_in_each_test_that_uses_it() {
        // The drive's file (2026-12-06), after the tool gathered its loose lines into a test.
        let dir = tree(CART);
        let tests = "import cart\n# Test that total_items correctly counts items\n\n\ndef test_story_examples():\n    assert cart.total_items() == 0\n    cart.add(\"apple\", 3)\n    cart.add(\"pear\", 2)\n    assert cart.total_items() == 5\n\n\ndef test_other():\n    assert 1 == 1\n";
        let (mended, made) = objects_made(dir.path(), tests, STORY).expect("mended");
        assert_eq!(
            made,
            [MadeObject {
                name: "cart".into(),
                class: "Cart".into(),
                made: "Cart()".into()
            }]
        );
        assert_eq!(
            mended,
            "from cart import Cart\n# Test that total_items correctly counts items\n\n\ndef test_story_examples():\n    cart = Cart()\n    assert cart.total_items() == 0\n    cart.add(\"apple\", 3)\n    cart.add(\"pear\", 2)\n    assert cart.total_items() == 5\n\n\ndef test_other():\n    assert 1 == 1\n"
        );
    }

    #[test]
    fn an_object_made_or_a_module_function_called_is_left_alone() {
        let dir = tree(CART);
        let made = "from cart import Cart\n\ndef test_it():\n    cart = Cart()\n    assert cart.total_items() == 0\n";
        assert_eq!(objects_made(dir.path(), made, STORY), None);
        let fixture = "import pytest\n\n@pytest.fixture\ndef cart():\n    return None\n\n\
            def test_it(cart):\n    assert cart.total_items() == 0\n";
        assert_eq!(objects_made(dir.path(), fixture, STORY), None);
        let global = "cart = None\n\ndef test_it():\n    assert cart.total_items() == 0\n";
        assert_eq!(objects_made(dir.path(), global, STORY), None);
        // cart.py defines a function `add`: `cart.add(…)` may call it.
        let dir = tree(&format!("{CART}\n\ndef add(sku):\n    pass\n"));
        let module = "import cart\n\ndef test_it():\n    cart.add(\"x\")\n";
        assert_eq!(objects_made(dir.path(), module, STORY), None);
        // A name the class does not have, nor the story gives it, is not its method.
        let dir = tree(CART);
        let unknown = "def test_it():\n    cart.checkout()\n";
        assert_eq!(objects_made(dir.path(), unknown, STORY), None);
        // A class that needs arguments to make is not made, unless the project's tests make one.
        let dir = tree("class Cart:\n    def __init__(self, owner):\n        pass\n\n    def add(self):\n        pass\n");
        let needs = "def test_it():\n    cart.add()\n";
        assert_eq!(objects_made(dir.path(), needs, STORY), None);
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_cart.py"),
            "from cart import Cart\n\n\ndef test_owner():\n    cart = Cart(\"Ana\")\n    cart.add()\n",
        )
        .unwrap();
        let (mended, made) = objects_made(dir.path(), needs, STORY).expect("made");
        assert_eq!(made[0].made, "Cart(\"Ana\")");
        assert_eq!(
            mended,
            "from cart import Cart\ndef test_it():\n    cart = Cart(\"Ana\")\n    cart.add()\n"
        );
    }

    #[test]
    fn an_object_made_from_its_own_name_is_made_from_the_class_imported() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-06), after the tool's fence reading.
        let dir = tree(CART);
        let tests = "def test_clear_leaves_cart_empty():\n  cart = cart.Cart()\n  cart.add(\"apple\", 3)\n  cart.clear()\n  assert cart.quantity(\"apple\") == 0\n\ndef test_clear_leaves_pear_quantity_zero():\n  cart = cart.Cart()\n  assert cart.quantity(\"pear\") == 0\n";
        let (mended, imports) = made_from_own_module(dir.path(), tests).expect("mended");
        assert_eq!(imports, ["from cart import Cart"]);
        assert_eq!(
            mended,
            "from cart import Cart\ndef test_clear_leaves_cart_empty():\n  cart = Cart()\n  cart.add(\"apple\", 3)\n  cart.clear()\n  assert cart.quantity(\"apple\") == 0\n\ndef test_clear_leaves_pear_quantity_zero():\n  cart = Cart()\n  assert cart.quantity(\"pear\") == 0\n"
        );
        // Another name, a name the module lacks, or the top level: left alone.
        let other = "def test_it():\n    basket = cart.Cart()\n";
        assert_eq!(made_from_own_module(dir.path(), other), None);
        let lacks = "def test_it():\n    cart = cart.Basket()\n";
        assert_eq!(made_from_own_module(dir.path(), lacks), None);
        assert_eq!(
            made_from_own_module(dir.path(), "cart = cart.Cart()\n"),
            None
        );
    }

    #[test]
    fn a_story_object_taken_as_a_parameter_no_fixture_gives_is_made_in_the_test() {
        let dir = tree(CART);
        let tests =
            "from cart import Cart\n\ndef test_total(cart):\n    cart.add(\"apple\", 3)\n    \
            assert cart.total_items() == 3\n\ndef test_other(tmp_path, cart):\n    \
            assert cart.total_items() == 0\n";
        let (mended, made) = objects_made(dir.path(), tests, STORY).expect("mended");
        assert_eq!(made.len(), 1);
        assert_eq!(
            mended,
            "from cart import Cart\n\ndef test_total():\n    cart = Cart()\n    \
            cart.add(\"apple\", 3)\n    assert cart.total_items() == 3\n\n\
            def test_other(tmp_path):\n    cart = Cart()\n    assert cart.total_items() == 0\n"
        );
        // A fixture in a conftest.py beside the tests gives it.
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/conftest.py"),
            "import pytest\n\n@pytest.fixture\ndef cart():\n    return None\n",
        )
        .unwrap();
        assert_eq!(objects_made(dir.path(), tests, STORY), None);
    }
}
