//! A story's example that calls one of Python's own functions on the story's classes
//! ("`issubclass(UnknownAccount, KeyError)` is `True`"), as a test of the tool's own
//! (docs/design.md §21): the call is the test; what it needs are the classes it names.

use super::examples_file::{exception_home, imports_name, ExampleTest, Story, Unwritten};
use crate::python_builtins::{PYTHON_EXCEPTIONS, PYTHON_FUNCTIONS};
use crate::workflow::examples::Example;

/// The test of `example`, the story's `number`th, when its call is one of Python's own
/// functions, for a file that holds `text` so far: each class its arguments name imported from
/// where the tree or the story puts it. `None` when the call is not Python's own. A name in
/// the arguments that is not a class (`len(cart)`: an object the story makes in words) is
/// refused, for the tool cannot make it.
pub(super) fn builtin_call_test(
    story: &Story,
    example: &Example,
    number: usize,
    text: &str,
) -> Option<Result<ExampleTest, Unwritten>> {
    let call = example.call.trim();
    let (callee, rest) = call.split_once('(')?;
    let callee = callee.trim();
    if !PYTHON_FUNCTIONS.contains(&callee) {
        return None;
    }
    let arguments = rest.strip_suffix(')').unwrap_or(rest);
    let mut imports = Vec::new();
    if example.raises() {
        imports.push("import pytest".to_string());
    }
    for name in names_outside_strings(arguments) {
        let python_own = PYTHON_FUNCTIONS.contains(&name.as_str())
            || PYTHON_EXCEPTIONS.contains(&name.as_str())
            || ["True", "False", "None"].contains(&name.as_str());
        if python_own || imports_name(text, &name) {
            continue;
        }
        if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Some(Err(Unwritten::UnknownObject { object: name }));
        }
        // A class the story places nowhere goes beside the first function it names.
        let beside = story.homes.first().map_or("", |(_, file)| file.as_str());
        let Some(module) = exception_home(story, &name, beside, text) else {
            return Some(Err(Unwritten::NoHome { name }));
        };
        let import = format!("from {module} import {name}");
        if !imports.contains(&import) {
            imports.push(import);
        }
    }
    let mut test_name = format!("test_{callee}_example_{number}");
    if text.contains(&format!("def {test_name}(")) {
        test_name.push_str("_of_the_story");
    }
    Some(Ok(ExampleTest {
        imports,
        function: format!("def {test_name}():\n    {}\n", example.assertion()),
    }))
}

/// The Python names in `code` outside its string literals, each once, in order: the
/// attribute after a dot (`errors.Unknown` → `errors`) is not one of them.
fn names_outside_strings(code: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut quote: Option<char> = None;
    let mut word = String::new();
    let mut after_dot = false;
    fn flush(word: &mut String, after_dot: bool, names: &mut Vec<String>) {
        let starts_well = word.starts_with(|c: char| c.is_alphabetic() || c == '_');
        if starts_well && !after_dot && !names.contains(word) {
            names.push(word.clone());
        }
        word.clear();
    }
    let mut previous = ' ';
    for c in code.chars() {
        match quote {
            Some(open) => {
                if c == open && previous != '\\' {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                flush(&mut word, after_dot, &mut names);
                quote = Some(c);
            }
            None if c.is_alphanumeric() || c == '_' => {
                if word.is_empty() {
                    after_dot = previous == '.';
                }
                word.push(c);
            }
            None => flush(&mut word, after_dot, &mut names),
        }
        previous = c;
    }
    flush(&mut word, after_dot, &mut names);
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::examples::examples;

    #[test]
    fn a_call_of_pythons_own_function_imports_the_classes_it_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ledger")).unwrap();
        std::fs::write(dir.path().join("ledger/book.py"), "class Book:\n    pass\n").unwrap();
        let text = "Add `UnknownAccount` to ledger/errors.py.\n- [ ] `issubclass(UnknownAccount, KeyError)` is `True`\n- [ ] `isinstance(Book(), object)` is `True`\n- [ ] `len(book) == 0`\n";
        let found = examples(text);
        let story = Story {
            dir: dir.path(),
            text,
            examples: &found,
            homes: &[],
        };
        let test = builtin_call_test(&story, &found[0], 1, "")
            .unwrap()
            .unwrap();
        assert_eq!(test.imports, ["from ledger.errors import UnknownAccount"]);
        assert_eq!(
            test.function,
            "def test_issubclass_example_1():\n    assert issubclass(UnknownAccount, KeyError) == True\n"
        );
        let made = builtin_call_test(&story, &found[1], 2, "")
            .unwrap()
            .unwrap();
        assert_eq!(made.imports, ["from ledger.book import Book"]);
        assert_eq!(
            builtin_call_test(&story, &found[2], 3, "").unwrap().err(),
            Some(Unwritten::UnknownObject {
                object: "book".into()
            })
        );
    }

    #[test]
    fn names_in_strings_and_after_dots_are_not_the_calls() {
        assert_eq!(
            names_outside_strings(r#"errors.Unknown("it's \"x\"", Cart), 3"#),
            ["errors", "Cart"]
        );
    }
}
