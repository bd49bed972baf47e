//! The story's examples as a Python test file of the tool's own (docs/design.md §21): what the
//! acceptance phase falls back to when the model's tests are refused.

use std::path::Path;

use crate::workflow::examples::{calls_before, class_of, method_owner, Example};
use crate::workflow::named_functions::{file_names, mentions_word, python_file_defining};
use crate::workflow::python_builtins::PYTHON_EXCEPTIONS;
use crate::workflow::python_imports::python_module;

/// What the file is written from.
pub struct Story<'a> {
    /// The story's tree.
    pub dir: &'a Path,
    /// Its title, summary and criteria.
    pub text: &'a str,
    pub examples: &'a [Example],
    /// The functions the story names, each with its file.
    pub homes: &'a [(String, String)],
}

/// One test per example with the imports they need; `None` unless every example is a plain
/// call of a function whose file is known, a call on a class the tree defines made on the spot
/// (`Cart().remove("kiwi")`), or a method call on an object of a class the story names (the
/// object is made first, with the calls the example's criterion writes before it). A raising
/// example's exception is imported from where [`exception_home`] finds it.
pub fn write(story: &Story) -> Option<String> {
    let mut imports: Vec<String> = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    for (at, example) in story.examples.iter().enumerate() {
        let test = example_test(story, example, at + 1, "")?;
        for import in test.imports {
            add_import(&mut imports, import);
        }
        tests.push(test.function);
    }
    if tests.is_empty() {
        return None;
    }
    // No docstring of the tool's: the 1.5B model copied "The story's examples, as it writes
    // them (written by agentic-sdlc)." into every source file it rewrote, and gave it as its
    // answer. The story's section and the commit say who wrote the file.
    Some(format!(
        "{}\n\n\n{}",
        imports.join("\n"),
        tests.join("\n\n")
    ))
}

/// A test file's `text` with a test of each of `missing` (examples of the story it does not
/// carry) added at its end, and the imports they need at its top; `None` when one of them
/// cannot be written ([`write`] says which can). The 1.5B model, told which example was
/// missing from its tests, wrote them out again without it round after round (the held-out
/// ledger's `withdraw-overdraft`, by its summary line, 2026-11-29); the tool knows the
/// assertion exactly, and the model's tests, which pass the other checks, stay.
pub fn completed(story: &Story, text: &str, missing: &[Example]) -> Option<String> {
    let mut imports: Vec<String> = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    for example in missing {
        let number = story.examples.iter().position(|e| e == example)? + 1;
        let test = example_test(story, example, number, text)?;
        for import in test.imports {
            let name = import.rsplit(' ').next().unwrap_or_default();
            if !imports_name(text, name) {
                add_import(&mut imports, import);
            }
        }
        tests.push(test.function);
    }
    if tests.is_empty() {
        return None;
    }
    let body = format!("{}\n\n\n{}", text.trim_end(), tests.join("\n\n"));
    Some(crate::workflow::python_imports::with_imports_on_top(
        &body, &imports, true,
    ))
}

/// One example's test function and the imports it needs.
struct ExampleTest {
    imports: Vec<String>,
    function: String,
}

/// `import pytest` goes first, the rest in order, each once.
fn add_import(imports: &mut Vec<String>, import: String) {
    if imports.contains(&import) {
        return;
    }
    match import == "import pytest" {
        true => imports.insert(0, import),
        false => imports.push(import),
    }
}

/// The test of the story's `number`th example, for a file that holds `text` so far (a test of
/// that name there already gets another).
fn example_test(
    story: &Story,
    example: &Example,
    number: usize,
    text: &str,
) -> Option<ExampleTest> {
    let mut imports = Vec::new();
    let mut callee = example.call.split('(').next()?.trim();
    // A method of the story's written bare ("an empty cart's `total_items()` returns `0`") is
    // called on an object of its class, made as the story's other calls of it are.
    let on_object;
    let call = match method_owner(story.text, callee) {
        Some((object, _)) if python_file_defining(story.dir, callee).is_none() => {
            on_object = format!("{object}.{}", example.call.trim());
            callee = on_object.split('(').next()?;
            &on_object
        }
        _ => example.call.trim(),
    };
    let (name, file, setup) = match callee.split_once('.') {
        None => {
            let file = story
                .homes
                .iter()
                .find(|(name, _)| name == callee)
                .map(|(_, file)| file.clone())
                .or_else(|| python_file_defining(story.dir, callee))?;
            (callee.to_string(), file, Vec::new())
        }
        Some((object, _)) => {
            let class = class_of(story.text, object)?;
            let file = python_file_defining(story.dir, &class)?;
            let source = std::fs::read_to_string(story.dir.join(&file)).ok()?;
            let made = match made_without_arguments(&source, &class) {
                true => format!("{class}()"),
                false => made_in(text, &class)?,
            };
            let mut setup = vec![format!("{object} = {made}")];
            setup.extend(calls_before(story.text, example, object)?);
            (class, file, setup)
        }
    };
    if example.raises() {
        imports.push("import pytest".to_string());
    }
    imports.push(format!("from {} import {name}", python_module(&file)?));
    if example.raises() && !PYTHON_EXCEPTIONS.contains(&example.expected.as_str()) {
        if let Some(module) = exception_home(story, &example.expected, &file, text) {
            imports.push(format!("from {module} import {}", example.expected));
        }
    }
    let tested = callee.rsplit('.').next().unwrap_or(callee).to_lowercase();
    let mut test_name = format!("test_{tested}_example_{number}");
    if text.contains(&format!("def {test_name}(")) {
        test_name.push_str("_of_the_story");
    }
    let example = Example {
        call: call.to_string(),
        ..example.clone()
    };
    let mut body = String::new();
    for statement in setup.iter().chain([&example.assertion()]) {
        body.push_str(&format!("    {statement}\n"));
    }
    Some(ExampleTest {
        imports,
        function: format!("def {test_name}():\n{body}"),
    })
}

/// How the test file `text` makes an object of `class` that takes arguments, on a line of its
/// own (`book = Book("Ana")` gives `Book("Ana")`): a test the tool adds makes it the same way,
/// where `Book()` would fail whatever the code did. `None` when no line does.
fn made_in(text: &str, class: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (target, value) = line.trim().split_once('=')?;
        let value = value.trim();
        let simple = target
            .trim()
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_');
        let call = value
            .strip_prefix(class)
            .is_some_and(|args| args.starts_with('(') && args.ends_with(')'));
        (simple && call && !target.trim().is_empty()).then(|| value.to_string())
    })
}

/// Whether an import line of the Python source `text` names `name`.
fn imports_name(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
        let line = line.trim_start();
        (line.starts_with("from ") || line.starts_with("import "))
            && line
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|word| word == name)
    })
}

/// Whether `source`'s class `class` can be made as `class()`: its `__init__`, if it has one,
/// takes nothing but `self` without a default. A test that makes a `Book("ann")` as `Book()`
/// would fail whatever the code did.
pub(super) fn made_without_arguments(source: &str, class: &str) -> bool {
    let mut in_class = false;
    for line in source.lines() {
        if !line.starts_with(char::is_whitespace) && !line.trim().is_empty() {
            in_class = line.starts_with(&format!("class {class}("))
                || line.starts_with(&format!("class {class}:"));
            continue;
        }
        let Some(params) = line.trim_start().strip_prefix("def __init__(") else {
            continue;
        };
        if !in_class {
            continue;
        }
        // Parameters over several lines are not read: not known to be none.
        let Some((params, _)) = params.split_once(')') else {
            return false;
        };
        return params
            .split(',')
            .map(str::trim)
            .skip(1)
            .all(|param| param.is_empty() || param.contains('=') || param.starts_with('*'));
    }
    true
}

/// The module to import the exception `name` from, `None` when `text` (the test file the
/// example joins) imports it already: the tree's file that defines it; else a Python file the
/// story names on a line that mentions it ("`Overdrawn`, a new exception in bank/errors.py");
/// else `callee_file`, the file of what raises it, where Python code keeps its exceptions
/// most often. The story adds such an exception; its test needs a home for it, and the
/// implementer's narrowed task asks for it in the file the test imports it from.
fn exception_home(story: &Story, name: &str, callee_file: &str, text: &str) -> Option<String> {
    if imports_name(text, name) {
        return None;
    }
    if let Some(file) = python_file_defining(story.dir, name) {
        return python_module(&file);
    }
    let named_beside = story
        .text
        .lines()
        .filter(|line| mentions_word(line, name))
        .flat_map(file_names)
        .find(|file| {
            file.ends_with(".py") && !crate::agents::prompts::is_test_path(Path::new(file))
        })
        .and_then(|file| python_module(&file));
    named_beside.or_else(|| python_module(callee_file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::examples::examples;

    fn written(text: &str, files: &[(&str, &str)]) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        let found = examples(text);
        let homes = vec![("withdraw".to_string(), "bank/book.py".to_string())];
        write(&Story {
            dir: dir.path(),
            text,
            examples: &found,
            homes: &homes,
        })
    }

    #[test]
    fn an_exception_comes_from_the_tree_the_file_the_story_names_or_the_file_that_raises_it() {
        let text = "- [ ] `withdraw(5)` returns `0`\n- [ ] `withdraw(-1)` raises `ValueError`\n- [ ] `withdraw(99)` raises `Overdrawn`";
        let tree = [("bank/book.py", "class Overdrawn(Exception):\n    pass\n")];
        assert_eq!(
            written(text, &tree).unwrap(),
            "import pytest\nfrom bank.book import withdraw\nfrom bank.book import Overdrawn\n\n\ndef test_withdraw_example_1():\n    assert withdraw(5) == 0\n\n\ndef test_withdraw_example_2():\n    with pytest.raises(ValueError): withdraw(-1)\n\n\ndef test_withdraw_example_3():\n    with pytest.raises(Overdrawn): withdraw(99)\n"
        );
        let elsewhere = [
            ("bank/book.py", ""),
            ("bank/errors.py", "class Overdrawn(Exception):\n    pass\n"),
        ];
        let file = written(text, &elsewhere).unwrap();
        assert!(
            file.contains("\nfrom bank.errors import Overdrawn\n"),
            "{file}"
        );
        // Not in the tree yet: the story adds it, where it says, else beside what raises it.
        let named = format!("{text}, a new exception in bank/errors.py");
        let file = written(&named, &[("bank/book.py", "")]).unwrap();
        assert!(
            file.contains("\nfrom bank.errors import Overdrawn\n"),
            "{file}"
        );
        let file = written(text, &[("bank/book.py", "")]).unwrap();
        assert!(
            file.contains("\nfrom bank.book import Overdrawn\n"),
            "{file}"
        );
        assert!(
            file.ends_with("    with pytest.raises(Overdrawn): withdraw(99)\n"),
            "{file}"
        );
    }

    #[test]
    fn an_object_is_made_only_of_a_class_that_takes_no_arguments() {
        let text = "- [ ] after `book.deposit(\"ann\", 500)`, `book.withdraw(\"ann\", 800)` raises `ValueError` (class `Book`)";
        let plain = "class Book:\n    def __init__(self, rate=0):\n        self.rate = rate\n";
        let file = written(text, &[("bank/ledger.py", plain)]).unwrap();
        assert!(
            file.ends_with("    book = Book()\n    book.deposit(\"ann\", 500)\n    with pytest.raises(ValueError): book.withdraw(\"ann\", 800)\n"),
            "{file}"
        );
        let owned = "class Book:\n    def __init__(self, owner):\n        self.owner = owner\n";
        assert_eq!(written(text, &[("bank/ledger.py", owned)]), None);
        // Made with arguments as the model's own tests make it.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bank")).unwrap();
        std::fs::write(dir.path().join("bank/ledger.py"), owned).unwrap();
        let found = examples(text);
        let story = Story {
            dir: dir.path(),
            text,
            examples: &found,
            homes: &[],
        };
        let model =
            "from bank.ledger import Book\n\ndef test_it():\n    b = Book(\"ann\")\n    assert b\n";
        let added = completed(&story, model, &found).unwrap();
        assert!(
            added.ends_with("    book = Book(\"ann\")\n    book.deposit(\"ann\", 500)\n    with pytest.raises(ValueError): book.withdraw(\"ann\", 800)\n"),
            "{added}"
        );
        let long = "class Book:\n    def __init__(\n        self, owner\n    ):\n        pass\n";
        assert_eq!(written(text, &[("bank/ledger.py", long)]), None);
    }

    #[test]
    fn a_method_the_story_writes_bare_is_called_on_an_object_of_its_class() {
        // Recorded (a drive, 2026-12-06): the tool's file imported `total_items` from cart.py.
        let text = "Count the items in the cart\n\
            Add a method `total_items()` to the `Cart` class in cart.py that returns how many items the cart holds in all.\n\
            - [ ] after `cart.add(\"apple\", 3)` and `cart.add(\"pear\", 2)`, `cart.total_items()` returns `5`\n\
            - [ ] an empty cart's `total_items()` returns `0`";
        let cart = "class Cart:\n    def __init__(self):\n        self.items = {}\n";
        assert_eq!(
            written(text, &[("cart.py", cart)]).unwrap(),
            "from cart import Cart\n\n\ndef test_total_items_example_1():\n    cart = Cart()\n    cart.add(\"apple\", 3)\n    cart.add(\"pear\", 2)\n    assert cart.total_items() == 5\n\n\ndef test_total_items_example_2():\n    cart = Cart()\n    assert cart.total_items() == 0\n"
        );
        // Only a method: a function of the tree by that name is called as one.
        let function = format!("{cart}\n\ndef total_items():\n    return 0\n");
        let file = written(text, &[("cart.py", &function)]).unwrap();
        assert!(file.contains("\nfrom cart import total_items\n"), "{file}");
        assert!(file.ends_with("    assert total_items() == 0\n"), "{file}");
    }

    #[test]
    fn a_test_file_gets_the_examples_it_lacks_and_keeps_its_own() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bank")).unwrap();
        std::fs::write(dir.path().join("bank/book.py"), "").unwrap();
        let text = "- [ ] `withdraw(5)` returns `0`\n- [ ] `withdraw(99)` raises `Overdrawn`";
        let found = examples(text);
        let homes = vec![("withdraw".to_string(), "bank/book.py".to_string())];
        let story = Story {
            dir: dir.path(),
            text,
            examples: &found,
            homes: &homes,
        };
        let model = "from bank.book import withdraw, Overdrawn\n\n\ndef test_withdraw_example_2():\n    assert withdraw(5) == 0\n";

        let added = completed(&story, model, &found[1..]).unwrap();

        assert_eq!(
            added,
            "import pytest\nfrom bank.book import withdraw, Overdrawn\n\n\ndef test_withdraw_example_2():\n    assert withdraw(5) == 0\n\n\ndef test_withdraw_example_2_of_the_story():\n    with pytest.raises(Overdrawn): withdraw(99)\n"
        );
        assert_eq!(completed(&story, model, &[]), None);
    }
}
