//! The story's examples as a Python test file of the tool's own (docs/design.md §21): what the
//! acceptance phase falls back to when the model's tests are refused.

use std::path::Path;

use crate::workflow::examples::{calls_before, class_of, python_module, Example};
use crate::workflow::named_functions::python_file_defining;

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

/// Python's own exceptions: a raising example needs no import for them.
const BUILTIN_EXCEPTIONS: [&str; 18] = [
    "Exception",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "FileNotFoundError",
    "IndexError",
    "KeyError",
    "LookupError",
    "NotImplementedError",
    "OSError",
    "OverflowError",
    "PermissionError",
    "RuntimeError",
    "StopIteration",
    "TypeError",
    "UnicodeDecodeError",
    "ValueError",
    "ZeroDivisionError",
];

/// One test per example with the imports they need; `None` unless every example is a plain
/// call of a function whose file is known, a call on a class the tree defines made on the spot
/// (`Cart().remove("kiwi")`), or a method call on an object of a class the story names (the
/// object is made first, with the calls the example's criterion writes before it). A raising
/// example whose exception is neither Python's nor defined in the tree (a class the story
/// adds) is left to the model's tests: the tool cannot know where it will live.
pub fn write(story: &Story) -> Option<String> {
    let mut imports: Vec<String> = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    let mut add_import = |import: String, first: bool| {
        if !imports.contains(&import) {
            match first {
                true => imports.insert(0, import),
                false => imports.push(import),
            }
        }
    };
    for (at, example) in story.examples.iter().enumerate() {
        if example.raises() && !BUILTIN_EXCEPTIONS.contains(&example.expected.as_str()) {
            let home = python_file_defining(story.dir, &example.expected);
            let Some(module) = home.as_deref().and_then(python_module) else {
                continue;
            };
            add_import(format!("from {module} import {}", example.expected), false);
        }
        let callee = example.call.split('(').next()?.trim();
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
                let mut setup = vec![format!("{object} = {class}()")];
                setup.extend(calls_before(story.text, example, object)?);
                (class, file, setup)
            }
        };
        add_import(
            format!("from {} import {name}", python_module(&file)?),
            false,
        );
        if example.raises() {
            add_import("import pytest".to_string(), true);
        }
        let tested = callee.rsplit('.').next().unwrap_or(callee).to_lowercase();
        let mut body = String::new();
        for statement in setup.iter().chain([&example.assertion()]) {
            body.push_str(&format!("    {statement}\n"));
        }
        tests.push(format!("def test_{tested}_example_{}():\n{body}", at + 1));
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
    fn an_exception_of_the_tree_is_imported_and_a_new_one_is_left_to_the_model() {
        let text = "- [ ] `withdraw(5)` returns `0`\n- [ ] `withdraw(-1)` raises `ValueError`\n- [ ] `withdraw(99)` raises `Overdrawn`";
        let tree = [("bank/book.py", "class Overdrawn(Exception):\n    pass\n")];
        assert_eq!(
            written(text, &tree).unwrap(),
            "import pytest\nfrom bank.book import withdraw\nfrom bank.book import Overdrawn\n\n\ndef test_withdraw_example_1():\n    assert withdraw(5) == 0\n\n\ndef test_withdraw_example_2():\n    with pytest.raises(ValueError): withdraw(-1)\n\n\ndef test_withdraw_example_3():\n    with pytest.raises(Overdrawn): withdraw(99)\n"
        );
        // Not in the tree yet: the story adds it, and only the other examples are written.
        let file = written(text, &[("bank/book.py", "")]).unwrap();
        assert!(!file.contains("Overdrawn"), "{file}");
        assert!(file.contains("def test_withdraw_example_2():"), "{file}");
        assert_eq!(
            written("- [ ] `withdraw(99)` raises `Overdrawn`", &[]),
            None
        );
    }
}
