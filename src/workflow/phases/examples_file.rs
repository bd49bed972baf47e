//! The story's examples as a Python test file of the tool's own (docs/design.md §21): what the
//! acceptance phase falls back to when the model's tests are refused.

use std::path::Path;

use crate::agents::prompts::{backtick_spans, is_test_path};
use crate::python_builtins::PYTHON_EXCEPTIONS;
use crate::workflow::call_text::list_end;
use crate::workflow::examples::{calls_written_before, is_literal_call, normalized, Example};
use crate::workflow::named_functions::mentions_word;
use crate::workflow::python_imports::python_module;
use crate::workflow::sentence_files::file_names;
use crate::workflow::story_classes::{class_of, method_owner, snake_case};
use crate::workflow::tree_definitions::{python_file_defining, tree_files};
use crate::workflow::unknown_methods::methods_of;

use super::builtin_calls::{builtin_call, BuiltinCall};
use super::setup_in_words::{method_in_words, set_up_in_words};

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
        let test = example_test(story, example, at + 1, "").ok()?;
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
/// carry) added at its end, and the imports they need at its top; the first example that
/// cannot be written, and why, when one cannot ([`write`] says which can). The 1.5B model, told
/// which example was missing from its tests, wrote them out again without it round after round
/// (the held-out ledger's `withdraw-overdraft`, by its summary line, 2026-11-29); the tool
/// knows the assertion exactly, and the model's tests, which pass the other checks, stay.
pub fn completed(story: &Story, text: &str, missing: &[Example]) -> Result<String, NotAdded> {
    let mut imports: Vec<String> = Vec::new();
    let mut tests: Vec<String> = Vec::new();
    for (at, example) in missing.iter().enumerate() {
        let number = story
            .examples
            .iter()
            .position(|e| e == example)
            .map_or(at + 1, |found| found + 1);
        let test = example_test(story, example, number, text).map_err(|why| NotAdded {
            example: example.clone(),
            why,
        })?;
        for import in test.imports {
            let name = import.rsplit(' ').next().unwrap_or_default();
            if !imports_name(text, name) {
                add_import(&mut imports, import);
            }
        }
        tests.push(test.function);
    }
    if tests.is_empty() {
        return Ok(text.to_string());
    }
    let body = format!("{}\n\n\n{}", text.trim_end(), tests.join("\n\n"));
    Ok(crate::workflow::python_imports::with_imports_on_top(
        &body, &imports, true,
    ))
}

/// An example of the story's that the tool could not add to the tests, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAdded {
    pub example: Example,
    pub why: Unwritten,
}

impl std::fmt::Display for NotAdded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the tool could not add `{}` itself: {}",
            self.example.assertion(),
            self.why
        )
    }
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

/// Why the tool could not write one of the story's examples as a test of its own: said in the
/// refusal, so that a person reading the story's failure knows what the story left open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unwritten {
    /// A plain call of a function that no file defines and the story gives no file for.
    NoHome { name: String },
    /// A method call on an object whose class the story does not name.
    UnknownObject { object: String },
    /// No file of the tree defines the class.
    ClassNotInTree { class: String },
    /// The class takes arguments, and no test makes one to copy.
    UnknownArguments { class: String },
    /// No line of the story holds the example (it came from a code block).
    NotOnALine,
    /// The story says in words what the object holds before the example ("with Ana at 90
    /// and Bo at 70, `class_median()` returns `80`"): an object made without those would
    /// assert a value no code could give it. What the tool knows of the test is kept, for the
    /// model to be asked for its setup alone.
    SetUpInWords(Box<Unset>),
    /// The file is not importable as a Python module.
    NotAModule { file: String },
}

impl std::fmt::Display for Unwritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unwritten::NoHome { name } => write!(
                f,
                "no file defines `{name}`, and the story does not say which file will"
            ),
            Unwritten::UnknownObject { object } => {
                write!(f, "the story does not name the class of `{object}`")
            }
            Unwritten::ClassNotInTree { class } => write!(f, "no file defines `{class}`"),
            Unwritten::UnknownArguments { class } => {
                write!(f, "`{class}` takes arguments, and no test makes one")
            }
            Unwritten::NotOnALine => write!(f, "no line of the story holds it"),
            Unwritten::SetUpInWords(_) => write!(
                f,
                "the story says in words what comes before it, so a test must make that first"
            ),
            Unwritten::NotAModule { file } => write!(f, "`{file}` is not a Python module"),
        }
    }
}

/// A test of an example whose setup the story writes in words, all but that setup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unset {
    /// The line that makes the object: `grade_book = GradeBook("Math")`.
    pub made: String,
    pub class: String,
    /// The import of the class: `from gradebook.book import GradeBook`.
    pub import: String,
    pub test_name: String,
    /// The test's last line, the example on the object: `assert grade_book.top_student() ==
    /// "Ana"`.
    pub assertion: String,
}

/// The class of the tree that `callee`, a call the story writes bare, is a method of, as
/// `(object, class)`: a class the story names and the tree defines, when its body defines
/// `callee` or one of the calls the example's line writes bare before it ("After
/// `add_score("Ana", 90)`, `top_student()` returns `"Ana"`", where `Gradebook` defines
/// `add_score`), a line of the story names both and no function ("Add `class_median()` to the
/// Gradebook"), or the tests so far, `text`, call `callee` on an object. `None` when a file
/// defines `callee` as a function, the story names a file for it other than the class's, or
/// no such class is found.
fn tree_class_owner(
    story: &Story,
    example: &Example,
    callee: &str,
    text: &str,
) -> Option<(String, String)> {
    if callee.contains('.') || python_file_defining(story.dir, callee).is_some() {
        return None;
    }
    let beside: Vec<String> = calls_written_before(story.text, example)
        .unwrap_or_default()
        .iter()
        .filter(|span| !span.contains('.'))
        .filter_map(|span| span.split('(').next().map(str::to_string))
        .collect();
    let called_on_an_object = text.contains(&format!(".{callee}("));
    let mut named: Vec<&str> = story
        .text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect();
    named.dedup();
    named.into_iter().find_map(|class| {
        let methods = methods_of(story.dir, class)?;
        let home = story.homes.iter().find(|(name, _)| name == callee);
        if home
            .is_some_and(|(_, file)| python_file_defining(story.dir, class).as_ref() != Some(file))
        {
            return None;
        }
        let owns = methods
            .iter()
            .any(|method| method == callee || beside.contains(method))
            || called_on_an_object
            || named_together(story.text, callee, class);
        owns.then(|| (snake_case(class), class.to_string()))
    })
}

/// Whether a line of the story names `callee` in backticks and `class` as a word, and calls
/// nothing a function: "Add `top_student()` and `class_median()` to the Gradebook".
fn named_together(text: &str, callee: &str, class: &str) -> bool {
    text.lines().any(|line| {
        let names_callee = backtick_spans(line).iter().any(|(span, _)| {
            let span = span.trim();
            span == callee || span.starts_with(&format!("{callee}("))
        });
        names_callee && mentions_word(line, class) && !line.to_lowercase().contains("function")
    })
}

/// The test of the story's `number`th example, for a file that holds `text` so far (a test of
/// that name there already gets another).
fn example_test(
    story: &Story,
    example: &Example,
    number: usize,
    text: &str,
) -> Result<ExampleTest, Unwritten> {
    if let Some(call) = builtin_call(example, number, text) {
        let call = call.map_err(|object| Unwritten::UnknownObject { object })?;
        return builtin_test(story, call, text);
    }
    let mut imports = Vec::new();
    let mut callee = example.call.split('(').next().unwrap_or_default().trim();
    // A method of the story's written bare ("an empty cart's `total_items()` returns `0`") is
    // called on an object of its class, made as the story's other calls of it are.
    let owner = match method_owner(story.text, callee) {
        Some(owner) if python_file_defining(story.dir, callee).is_none() => Some(owner),
        _ => tree_class_owner(story, example, callee, text),
    };
    let on_object;
    let call = match &owner {
        Some((object, _)) => {
            on_object = format!("{object}.{}", example.call.trim());
            callee = on_object.split('(').next().unwrap_or_default();
            &on_object
        }
        None => example.call.trim(),
    };
    let (name, file, setup, in_words) = match callee.split_once('.') {
        None => {
            let file = story
                .homes
                .iter()
                .find(|(name, _)| name == callee)
                .map(|(_, file)| file.clone())
                .or_else(|| python_file_defining(story.dir, callee))
                .ok_or_else(|| Unwritten::NoHome {
                    name: callee.to_string(),
                })?;
            (callee.to_string(), file, Vec::new(), false)
        }
        Some((object, _)) => {
            let class = match &owner {
                Some((_, class)) => Some(class.clone()),
                None => class_of(story.text, object),
            }
            .ok_or_else(|| Unwritten::UnknownObject {
                object: object.to_string(),
            })?;
            let not_in_tree = || Unwritten::ClassNotInTree {
                class: class.clone(),
            };
            let file = python_file_defining(story.dir, &class).ok_or_else(not_in_tree)?;
            let source =
                std::fs::read_to_string(story.dir.join(&file)).map_err(|_| not_in_tree())?;
            let made = match made_without_arguments(&source, &class) {
                true => format!("{class}()"),
                false => made_in(text, &class, example)
                    .or_else(|| made_in_project_tests(story.dir, &class, example))
                    .ok_or_else(|| Unwritten::UnknownArguments {
                        class: class.clone(),
                    })?,
            };
            let calls = setup_calls(story, example, object, &class)?;
            // However the object is made: the model's `GradeBook("History 103")` held no
            // scores either, and the tool's tests of "With scores `90` and `80` for "Ana" …,
            // `top_student()` returns `"Ana"`" failed whatever the code (gradebook, 2026-12-06).
            let in_words = (calls.is_empty() && set_up_in_words(story.text, example))
                || method_in_words(story.text, story.dir, example, &class, &calls);
            let mut setup = vec![format!("{object} = {made}")];
            setup.extend(calls);
            (class, file, setup, in_words)
        }
    };
    if example.raises() {
        imports.push("import pytest".to_string());
    }
    let module =
        python_module(&file).ok_or_else(|| Unwritten::NotAModule { file: file.clone() })?;
    imports.push(format!("from {module} import {name}"));
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
    if in_words {
        return Err(Unwritten::SetUpInWords(Box::new(Unset {
            made: setup[0].clone(),
            class: name,
            import: imports.pop().unwrap_or_default(),
            test_name,
            assertion: example.assertion(),
        })));
    }
    let mut body = String::new();
    for statement in setup.iter().chain([&example.assertion()]) {
        body.push_str(&format!("    {statement}\n"));
    }
    Ok(ExampleTest {
        imports,
        function: format!("def {test_name}():\n{body}"),
    })
}

/// The test of an example calling Python's own function, each class it names imported from
/// where an exception would be ([`exception_home`]), else beside the story's first function.
fn builtin_test(story: &Story, call: BuiltinCall, text: &str) -> Result<ExampleTest, Unwritten> {
    let beside = story.homes.first().map_or("", |(_, file)| file.as_str());
    let mut imports = Vec::new();
    if call.raises {
        add_import(&mut imports, "import pytest".to_string());
    }
    for name in call.classes.into_iter().filter(|c| !imports_name(text, c)) {
        let module = exception_home(story, &name, beside, text);
        let module = module.ok_or_else(|| Unwritten::NoHome { name: name.clone() })?;
        add_import(&mut imports, format!("from {module} import {name}"));
    }
    let function = call.function;
    Ok(ExampleTest { imports, function })
}

/// The calls the story's line makes on `object` before `example`: those it writes on the
/// object, and those it writes bare of a method of `class` (the story's own methods, or the
/// tree's), put on the object. A call that is itself one of the story's examples is none:
/// "`add_score("Ana", 101)` and `add_score("Ana", -5)` raise `InvalidScoreError`" gives two
/// examples, and the tool's test of the second once made the first, raising, before it
/// (gradebook, 2026-12-06).
fn setup_calls(
    story: &Story,
    example: &Example,
    object: &str,
    class: &str,
) -> Result<Vec<String>, Unwritten> {
    let spans = calls_written_before(story.text, example).ok_or(Unwritten::NotOnALine)?;
    let methods = methods_of(story.dir, class).unwrap_or_default();
    let on_object = format!("{object}.");
    let an_example = |span: &String| {
        story
            .examples
            .iter()
            .any(|other| normalized(&other.call) == normalized(span))
    };
    Ok(spans
        .into_iter()
        .filter(|span| !an_example(span))
        .filter_map(|span| {
            if span.starts_with(&on_object) {
                return Some(span);
            }
            let name = span.split('(').next()?;
            let a_method = !name.contains('.')
                && (methods.iter().any(|method| method == name)
                    || method_owner(story.text, name).is_some_and(|(_, owner)| owner == class));
            (a_method && is_literal_call(&span)).then(|| format!("{object}.{span}"))
        })
        .collect())
}

/// How the test file `text` makes an object of `class` that takes arguments, as a test of
/// `example` would: the first `Class(…)` of a test (or fixture) that calls the example's method
/// and holds its value, else of one that calls the method, else of any; its arguments as
/// written, over several lines (joined into one) or inside a longer expression
/// (`GradeBook({"Ana": [90]}).class_median()`). A test the tool adds makes it the same way,
/// where `Book()` would fail whatever the code did. `None` when nothing makes one. Only a line
/// of its own was read once, and the held-out gradebook's `class-median` was refused for it
/// (its summary line, 2026-12-06). A `Class()` with no arguments is passed over: the model's
/// `Account().charge_by_plate(…)` was copied into the tool's own test of an `Account` that
/// takes its holder, which no code could pass (tollbooth `charges-by-plate`, 2026-12-07).
fn made_in(text: &str, class: &str, example: &Example) -> Option<String> {
    let method = example
        .call
        .split('(')
        .next()
        .and_then(|callee| callee.rsplit('.').next())
        .unwrap_or_default();
    let blocks = top_level_blocks(text);
    let calls_method = |block: &&String| block.contains(&format!(".{method}("));
    let holds_value = |block: &&String| normalized(block).contains(&normalized(&example.expected));
    let ranked = blocks
        .iter()
        .filter(|block| calls_method(block) && holds_value(block))
        .chain(blocks.iter().filter(calls_method))
        .chain(blocks.iter());
    ranked
        .filter_map(|block| construction(block, class))
        .find(|made| !made.ends_with(&format!("{class}()")))
}

/// How the project's own tests make an object of `class` ([`made_in`] of each test file of the
/// tree at `dir`, by path), when the model's tests make none. The 1.5B model's tests used a
/// `fleet` they never made, and the tool could not add the story's examples for want of the
/// `Fleet("Riverside")` that the project's `make_fleet()` holds (cyclehire
/// `unknown-bike-error`, 2026-12-07).
fn made_in_project_tests(dir: &Path, class: &str, example: &Example) -> Option<String> {
    python_test_files(dir).find_map(|text| made_in(&text, class, example))
}

/// The first making of an object of `class` (`Fleet("Riverside")`) in the Python test files of
/// the tree at `dir`, by path, for a test that needs one and says nothing of how.
pub(super) fn made_by_project_tests(dir: &Path, class: &str) -> Option<String> {
    python_test_files(dir).find_map(|text| {
        top_level_blocks(&text)
            .iter()
            .find_map(|block| construction(block, class))
    })
}

/// The text of each Python test file of the tree at `dir`, by path.
fn python_test_files(dir: &Path) -> impl Iterator<Item = String> + '_ {
    tree_files(dir)
        .into_iter()
        .filter(|path| is_test_path(path) && path.extension().is_some_and(|ext| ext == "py"))
        .filter_map(move |path| std::fs::read_to_string(dir.join(path)).ok())
}

/// The blocks of `text` that start at its top level: a test with its body, a fixture, an
/// import.
fn top_level_blocks(text: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in text.lines() {
        let starts = !line.starts_with(char::is_whitespace) && !line.trim().is_empty();
        match blocks.last_mut() {
            Some(block) if !starts => {
                block.push('\n');
                block.push_str(line);
            }
            _ => blocks.push(line.to_string()),
        }
    }
    blocks
}

/// The first call `Class(…)` in `block` that is neither its definition nor an import, with its
/// argument lines joined into one.
fn construction(block: &str, class: &str) -> Option<String> {
    let call = format!("{class}(");
    block.match_indices(&call).find_map(|(at, _)| {
        let before = block[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            return None;
        }
        let line_start = block[..at].rfind('\n').map_or(0, |newline| newline + 1);
        let head = block[line_start..at].trim_start();
        if head.starts_with("class ") || head.starts_with("def ") || head.starts_with("from ") {
            return None;
        }
        let args = &block[at + class.len()..];
        let end = list_end(args);
        (end <= args.len()).then(|| format!("{class}{}", one_line(&args[..end])))
    })
}

/// Python text over several lines as one: each line trimmed, joined by a space, with none left
/// just inside a bracket (`(\n    1,\n)` gives `(1,)`).
fn one_line(text: &str) -> String {
    let mut joined = String::new();
    for line in text.lines().map(str::trim).filter(|line| !line.is_empty()) {
        let tight = joined.ends_with(['(', '[', '{'])
            || line.starts_with([')', ']', '}'])
            || joined.is_empty();
        if !tight {
            joined.push(' ');
        }
        joined.push_str(line);
    }
    joined
}

/// Whether an import line at the top level of the Python source `text` names `name`. One
/// inside a test function binds it for that test alone: the 1.5B model imported `Order` and
/// `piece_price` inside each of its tests, and the tool's tests of the story's examples, at the
/// top level beside them, failed on `NameError` every round (sawmill `overlength-pieces`,
/// 2026-12-07).
pub(super) fn imports_name(text: &str, name: &str) -> bool {
    text.lines().any(|line| {
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

    /// A tree of `files`, each `(path, content)`.
    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        dir
    }

    fn written(text: &str, files: &[(&str, &str)]) -> Option<String> {
        let dir = tree(files);
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
    fn a_call_of_pythons_own_function_imports_the_classes_it_names_from_their_homes() {
        let text = "Add `Overdrawn` to bank/errors.py.\n- [ ] `issubclass(Overdrawn, ValueError)` is `True`\n- [ ] `isinstance(Ledger(), object)` is `True`";
        assert_eq!(
            written(text, &[("bank/book.py", "class Ledger:\n    pass\n")]).unwrap(),
            "from bank.errors import Overdrawn\nfrom bank.book import Ledger\n\n\ndef test_issubclass_example_1():\n    assert issubclass(Overdrawn, ValueError) == True\n\n\ndef test_isinstance_example_2():\n    assert isinstance(Ledger(), object) == True\n"
        );
        // An object the story makes in words is no class to import.
        assert_eq!(written("- [ ] `len(ledger) == 0`", &[]), None);
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
        let fixture = "import pytest\nfrom bank.ledger import Book\n\n@pytest.fixture\ndef book():\n    return Book(\"bo\")\n";
        let added = completed(&story, fixture, &found).unwrap();
        assert!(added.contains("    book = Book(\"bo\")\n"), "{added}");
        // Over several lines, inside a longer expression, and from the test of the example's
        // own method first.
        let spread = "from bank.ledger import Book\n\ndef test_other():\n    assert Book(\"zed\").owner == \"zed\"\n\ndef test_withdraw():\n    book = Book(\n        \"ann\",\n    )\n    book.withdraw(\"ann\", 800)\n";
        let added = completed(&story, spread, &found).unwrap();
        assert!(added.contains("    book = Book(\"ann\",)\n"), "{added}");
        let inline = "from bank.ledger import Book\n\ndef test_it():\n    assert Book([1, 2]).pages() == 3\n";
        let added = completed(&story, inline, &found).unwrap();
        assert!(added.contains("    book = Book([1, 2])\n"), "{added}");
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

    const GRADEBOOK: &str = "class Gradebook:\n    def __init__(self):\n        self.scores = {}\n\n    def add_score(self, name, score):\n        self.scores.setdefault(name, []).append(score)\n";

    #[test]
    fn calls_written_bare_are_made_on_an_object_of_the_class_that_defines_them() {
        // Neither word "method" nor the class in backticks: the tree says whose methods
        // `add_score` and `top_student` are.
        let text = "Find the best student\n\
            Add `top_student()` to the Gradebook in gradebook/book.py.\n\
            - [ ] after `add_score(\"Ana\", 90)` and `add_score(\"Bo\", 80)`, `top_student()` returns `\"Ana\"`\n\
            - [ ] `add_score(\"Ana\", 101)` raises `ValueError`";
        let book = [("gradebook/book.py", GRADEBOOK)];
        assert_eq!(
            written(text, &book).unwrap(),
            "import pytest\nfrom gradebook.book import Gradebook\n\n\ndef test_top_student_example_1():\n    gradebook = Gradebook()\n    gradebook.add_score(\"Ana\", 90)\n    gradebook.add_score(\"Bo\", 80)\n    assert gradebook.top_student() == \"Ana\"\n\n\ndef test_add_score_example_2():\n    gradebook = Gradebook()\n    with pytest.raises(ValueError): gradebook.add_score(\"Ana\", 101)\n"
        );
        // A story's method named bare beside its class gets its bare calls on the object too.
        let named = "Add a method `top_student()` to the `Gradebook` class.\n\
            - [ ] after `add_score(\"Ana\", 90)`, `top_student()` returns `\"Ana\"`";
        let file = written(named, &book).unwrap();
        assert!(
            file.ends_with("    gradebook = Gradebook()\n    gradebook.add_score(\"Ana\", 90)\n    assert gradebook.top_student() == \"Ana\"\n"),
            "{file}"
        );
        // An example beside another is no setup of it.
        let both = "Add `top_student()` to the Gradebook.\n\
            - [ ] `add_score(\"Ana\", 101)` and `add_score(\"Ana\", -5)` raise `ValueError`";
        let file = written(both, &book).unwrap();
        assert!(
            file.ends_with("def test_add_score_example_2():\n    gradebook = Gradebook()\n    with pytest.raises(ValueError): gradebook.add_score(\"Ana\", -5)\n"),
            "{file}"
        );
        // A function the story puts in another file stays a function.
        let elsewhere = "Add `top_student()` to gradebook/report.py for the Gradebook.\n\
            - [ ] after `add_score(\"Ana\", 90)`, `top_student()` returns `\"Ana\"`";
        let dir = tree(&book);
        let found = examples(elsewhere);
        let homes = vec![("top_student".to_string(), "gradebook/report.py".to_string())];
        let story = Story {
            dir: dir.path(),
            text: elsewhere,
            examples: &found,
            homes: &homes,
        };
        let file = write(&story).unwrap();
        assert!(
            file.contains("from gradebook.report import top_student"),
            "{file}"
        );
    }

    #[test]
    fn what_the_object_holds_said_in_words_cannot_be_made_on_a_new_one() {
        let worded = "Add a method `class_median()` to the `Gradebook` class.\n\
            - [ ] with Ana at 90 and Bo at 70, `class_median()` returns `80`\n\
            - [ ] an empty gradebook's `class_median()` returns `None`";
        let dir = tree(&[("gradebook/book.py", GRADEBOOK)]);
        let found = examples(worded);
        assert_eq!(found.len(), 2, "{found:?}");
        let story = Story {
            dir: dir.path(),
            text: worded,
            examples: &found,
            homes: &[],
        };
        let Unwritten::SetUpInWords(unset) = completed(&story, "", &found[..1]).unwrap_err().why
        else {
            panic!("set up in words");
        };
        assert_eq!(
            *unset,
            Unset {
                made: "gradebook = Gradebook()".into(),
                class: "Gradebook".into(),
                import: "from gradebook.book import Gradebook".into(),
                test_name: "test_class_median_example_1".into(),
                assertion: "assert gradebook.class_median() == 80".into(),
            }
        );
        // However the object is made.
        let with_course =
            "class Gradebook:\n    def __init__(self, course):\n        self.course = course\n";
        std::fs::write(dir.path().join("gradebook/book.py"), with_course).unwrap();
        let model = "def test_x():\n    book = Gradebook(\"Math\")\n";
        assert!(matches!(
            completed(&story, model, &found[..1]).unwrap_err().why,
            Unwritten::SetUpInWords(_)
        ));
        std::fs::write(dir.path().join("gradebook/book.py"), GRADEBOOK).unwrap();
        let added = completed(&story, "", &found[1..]).unwrap();
        assert!(
            added.ends_with(
                "    gradebook = Gradebook()\n    assert gradebook.class_median() == None\n"
            ),
            "{added}"
        );
    }

    #[test]
    fn an_example_the_tool_cannot_write_says_why() {
        let dir = tree(&[(
            "book.py",
            "class Book:\n    def __init__(self, owner):\n        self.owner = owner\n",
        )]);
        let text = "- [ ] `tally(3)` returns `3`\n- [ ] `shelf.count()` returns `0`\n- [ ] `book.pages()` returns `0` (a `Book`)";
        let found = examples(text);
        assert_eq!(found.len(), 3, "{found:?}");
        let story = Story {
            dir: dir.path(),
            text,
            examples: &found,
            homes: &[],
        };
        let why = |at: usize| completed(&story, "def test_x():\n    pass\n", &found[at..=at]);
        assert_eq!(
            why(0).unwrap_err().why,
            Unwritten::NoHome {
                name: "tally".into()
            }
        );
        assert_eq!(
            why(1).unwrap_err().why,
            Unwritten::UnknownObject {
                object: "shelf".into()
            }
        );
        let not_added = why(2).unwrap_err();
        assert_eq!(
            not_added.to_string(),
            "the tool could not add `assert book.pages() == 0` itself: `Book` takes arguments, and no test makes one"
        );
    }

    #[test]
    fn a_method_the_criterion_names_in_words_before_its_calls_is_asked_for() {
        let fleet = "class Fleet:\n    def __init__(self):\n        self.kinds = {}\n\n    def add_bike(self, bike, kind):\n        pass\n\n    def rent(self, bike, customer):\n        pass\n\n    def return_bike(self, bike):\n        pass\n";
        let dir = tree(&[("fleet.py", fleet)]);
        let in_words = "- [ ] Renting and returning a bike that was added still works: `fleet.rent(\"B1\", \"ann\")` then `fleet.return_bike(\"B1\")` returns `\"ann\"` (a `Fleet`)";
        // Renting and returning are the calls the line writes: nothing is left to words.
        let in_calls = "- [ ] Renting and returning still works: `fleet.rent(\"B1\", \"ann\")` then `fleet.return_bike(\"B1\")` returns `\"ann\"` (a `Fleet`)";
        for (text, asked) in [(in_words, true), (in_calls, false)] {
            let found = examples(text);
            let story = Story {
                dir: dir.path(),
                text,
                examples: &found,
                homes: &[],
            };
            let written = completed(&story, "def test_x():\n    pass\n", &found);
            let why = written.as_ref().err().map(|not_added| &not_added.why);
            assert_eq!(
                matches!(why, Some(Unwritten::SetUpInWords(_))),
                asked,
                "{text}: {written:?}"
            );
        }
    }

    #[test]
    fn an_object_is_made_as_the_projects_own_tests_make_it() {
        let dir = tree(&[
            (
                "shelf/book.py",
                "class Book:\n    def __init__(self, owner):\n        self.owner = owner\n",
            ),
            (
                "tests/test_book.py",
                "from shelf.book import Book\n\n\ndef make_book():\n    book = Book(\"Ana\")\n    book.lend(\"Bo\")\n    return book\n",
            ),
        ]);
        let text = "- [ ] `book.pages()` returns `0` (a `Book`)";
        let found = examples(text);
        let story = Story {
            dir: dir.path(),
            text,
            examples: &found,
            homes: &[],
        };
        let added = completed(&story, "def test_x():\n    pass\n", &found).unwrap();
        // The making is copied, not the setup around it.
        assert!(
            added.ends_with("    book = Book(\"Ana\")\n    assert book.pages() == 0\n"),
            "{added}"
        );
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
        assert_eq!(completed(&story, model, &[]).as_deref(), Ok(model));
    }
}
