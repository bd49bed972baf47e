//! A story's example that calls one of Python's own functions on the story's classes
//! ("`issubclass(UnknownAccount, KeyError)` is `True`"), as a test of the tool's own
//! (docs/design.md §21): the call is the test; what it needs are the classes it names.

use crate::python_builtins::{PYTHON_EXCEPTIONS, PYTHON_FUNCTIONS};
use crate::workflow::examples::Example;

/// The test of an example that calls one of Python's own functions, but for its imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct BuiltinCall {
    /// The classes its arguments name, to be imported from where the story puts them.
    pub classes: Vec<String>,
    /// The test function: `def test_issubclass_example_1():` and the example's assertion.
    pub function: String,
    /// Whether the test needs `import pytest`: the example raises.
    pub raises: bool,
}

/// The test of `example`, the story's `number`th, when its call is one of Python's own
/// functions, for a file that holds `text` so far; `None` when the call is not Python's own.
/// A name in the arguments that is not a class (`len(cart)`: an object the story makes in
/// words) is the error, for the tool cannot make it.
pub(super) fn builtin_call(
    example: &Example,
    number: usize,
    text: &str,
) -> Option<Result<BuiltinCall, String>> {
    let call = example.call.trim();
    let (callee, rest) = call.split_once('(')?;
    let callee = callee.trim();
    if !PYTHON_FUNCTIONS.contains(&callee) {
        return None;
    }
    let arguments = rest.strip_suffix(')').unwrap_or(rest);
    let mut classes = Vec::new();
    let mut names = names_outside_strings(arguments);
    if example.raises() {
        names.push(example.expected.trim().to_string());
    }
    for name in names {
        let python_own = PYTHON_FUNCTIONS.contains(&name.as_str())
            || PYTHON_EXCEPTIONS.contains(&name.as_str())
            || ["True", "False", "None"].contains(&name.as_str());
        if python_own {
            continue;
        }
        if !name.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Some(Err(name));
        }
        if !classes.contains(&name) {
            classes.push(name);
        }
    }
    let mut test_name = format!("test_{callee}_example_{number}");
    if text.contains(&format!("def {test_name}(")) {
        test_name.push_str("_of_the_story");
    }
    Some(Ok(BuiltinCall {
        classes,
        function: format!("def {test_name}():\n    {}\n", example.assertion()),
        raises: example.raises(),
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
    fn a_call_of_pythons_own_function_is_its_test_and_names_the_classes_to_import() {
        let text = "- [ ] `issubclass(UnknownAccount, KeyError)` is `True`\n- [ ] `isinstance(Book(), object)` is `True`\n- [ ] `len(book) == 0`\n- [ ] `total([1])` returns `1`\n";
        let found = examples(text);
        assert_eq!(
            builtin_call(&found[0], 1, "").unwrap(),
            Ok(BuiltinCall {
                classes: vec!["UnknownAccount".into()],
                function: "def test_issubclass_example_1():\n    assert issubclass(UnknownAccount, KeyError) == True\n".into(),
                raises: false,
            })
        );
        let made = builtin_call(&found[1], 2, "def test_isinstance_example_2():\n").unwrap();
        assert_eq!(made.as_ref().unwrap().classes, ["Book"]);
        assert!(made
            .unwrap()
            .function
            .starts_with("def test_isinstance_example_2_of_the_story():"));
        assert_eq!(builtin_call(&found[2], 3, ""), Some(Err("book".into())));
        assert_eq!(builtin_call(&found[3], 4, ""), None);
        let raising = examples("- [ ] `len(Shelf())` raises `EmptyShelf`");
        let call = builtin_call(&raising[0], 1, "").unwrap().unwrap();
        assert_eq!(call.classes, ["Shelf", "EmptyShelf"]);
        assert!(call.raises);
        assert!(call
            .function
            .ends_with("    with pytest.raises(EmptyShelf): len(Shelf())\n"));
    }

    #[test]
    fn names_in_strings_and_after_dots_are_not_the_calls() {
        assert_eq!(
            names_outside_strings(r#"errors.Unknown("it's \"x\"", Cart), 3"#),
            ["errors", "Cart"]
        );
    }
}
