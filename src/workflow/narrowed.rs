//! The narrowed task (docs/design.md §21): after two test rounds in which a definition the story
//! names is still missing, the model is asked for that definition alone, with its signature, its
//! class, the file it goes in and the acceptance tests that call it, and the tool merges the
//! answer in, a method into its class. A small model that rewrote `cart.py` nine times without
//! `remove` writes one method when that is all it is asked for.

use std::path::Path;

use super::call_text::signature_parameters;
use super::context::Workflow;
use super::definition_merge::{definition_named, merge_definition};
use super::examples::calls;
use super::fixed_tests::FixedTests;
use super::named_functions::{mentions_word, Missing};
use super::python_imports::{bound_by_import, without_imports_of_itself};
use super::story_classes::method_owner;
use super::story_ops;
use crate::agents::prompts::backtick_spans;
use crate::agents::tools::{defined_name, source_of};
use crate::agents::transcript::Transcript;
use crate::agents::{CodeKind, DefinitionRequest};
use crate::board::Story;
use crate::exec::head_tail;

/// Test rounds in which a named definition was missing before it is asked for alone.
pub const ROUNDS_BEFORE_NARROWING: u32 = 2;
/// Lines of the acceptance tests that call the definition shown at most.
const CALLS_SHOWN: usize = 8;
/// The most of the code around the definition shown.
const AROUND_CHARS: usize = 3_000;
/// The most of the story's text shown.
const STORY_CHARS: usize = 1_500;
/// The most of a failing test run shown with a definition asked for again.
const FAILURE_CHARS: usize = 1_500;

/// One definition to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NarrowedTask {
    pub name: String,
    /// As the story writes it: `remove(sku)`.
    pub signature: String,
    /// The class it belongs to, when the story puts it in one the file defines.
    pub class: Option<String>,
    /// Where it goes, relative to the tree.
    pub file: String,
    /// The acceptance tests that call it: the test functions whole, or their calling lines.
    pub calls: Vec<String>,
    /// The code it joins: its class as it is now, or the file when it is small.
    pub around: Option<String>,
    /// What the story says (its summary and criteria), which the tests may not spell out:
    /// "Removing an item the cart does not hold raises `KeyError`" (measured: without it, the
    /// 1.5B model's `remove` twice answered a missing item with `pop(sku, None)`).
    pub story: String,
    /// Set when the definition is there but keeps failing its acceptance tests: it is asked
    /// for again, whole.
    pub failing: Option<Failing>,
}

/// A definition that fails its acceptance tests: as it is, and what the tests say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failing {
    pub current: String,
    pub output: String,
    /// The definition as the story's base has it, shown to a further sample in place of the
    /// failing code: a story that adds a guard to `toll` changes a body the model, asked
    /// without it, wrote anew from nothing (tollbooth `unknown-vehicle-class`, 2026-12-07).
    pub before: Option<String>,
}

impl NarrowedTask {
    /// The task as the model reads it.
    pub fn ask(&self) -> String {
        let again = if self.failing.is_some() {
            " again, whole,"
        } else {
            ""
        };
        let mut out = match &self.class {
            // An exception the story raises (`UnknownAccount`), which the tests import.
            None if names_a_class(&self.name) => format!(
                "Write the class `{}` in {}{again} and nothing else: only the class, starting with its `class` line.",
                self.name, self.file
            ),
            Some(class) => format!(
                "Write the method `{}` of the class `{class}` in {}{again} and nothing else: only the method, starting with its `def` line, without the class around it.",
                self.signature, self.file
            ),
            None => format!(
                "Write the function `{}` in {}{again} and nothing else: only the function, starting with its definition line.",
                self.signature, self.file
            ),
        };
        if !self.story.is_empty() {
            out.push_str(&format!("\nWhat the story says:\n{}", self.story));
        }
        if let Some(around) = &self.around {
            let what = match &self.class {
                Some(class) => format!("The class `{class}` as it is now"),
                None => format!("{} as it is now", self.file),
            };
            out.push_str(&format!("\n{what}:\n```\n{around}\n```"));
        }
        if !self.calls.is_empty() {
            out.push_str("\nThe acceptance tests that call it, which must pass:\n```\n");
            out.push_str(&self.calls.join("\n\n"));
            out.push_str("\n```");
        }
        match &self.failing {
            Some(Failing {
                current,
                output,
                before: Some(before),
            }) if current.is_empty() => out.push_str(&format!(
                "\nIt is written, but it fails those tests. Before the story it was:\n```\n{before}\n```\nWhat the tests say:\n```\n{output}\n```\nWrite it anew: keep what it did there and change it as the story says, so that it returns what the tests expect."
            )),
            Some(failing) if failing.current.is_empty() => out.push_str(&format!(
                "\nIt is written, but it fails those tests. What the tests say:\n```\n{}\n```\nWrite it anew from what the story says, so that it returns what the tests expect.",
                failing.output
            )),
            Some(failing) => out.push_str(&format!(
                "\nIt is written, but it fails those tests. As it is now:\n```\n{}\n```\nWhat the tests say:\n```\n{}\n```\nMake it return what the tests expect.",
                failing.current, failing.output
            )),
            None => {}
        }
        out.push_str("\nAnswer with the code in one code block.");
        out
    }
}

/// The task for a missing definition, when the tool knows where it goes: the file the story
/// names for it, or failing that the one file of the story's that exists.
pub fn narrowed_task(
    dir: &Path,
    story_text: &str,
    missing: &Missing,
    fixed: &FixedTests,
    failure: Option<&str>,
) -> Option<NarrowedTask> {
    let file = missing.file.clone()?;
    let source = std::fs::read_to_string(dir.join(&file)).unwrap_or_default();
    let signature = signature(story_text, &missing.name);
    // The class the definition goes in; a class asked for is in none. The class the story
    // makes it a method of comes first: "Add a method `trips_in_month(month)` to the `Account`
    // class …, that returns the `Trip`s" went into `Trip`, the file's first class the story
    // mentions, and its `-> list[Trip]` failed the module's import (tollbooth
    // `trips-in-month`, 2026-12-07).
    let in_file = classes(&source);
    let owner = method_owner(story_text, &missing.name)
        .map(|(_, class)| class)
        .filter(|class| in_file.contains(class));
    // A class named as the function itself is the model's mistake, no home: the 1.5B model
    // wrote `class format_volume:` for "Add `format_volume(cubic_mm)`", and each of nine
    // answers written for the function alone went into it as a method (sawmill
    // `format-volume`, 2026-12-07). The function's answer takes the class's place.
    // A name the acceptance tests import from its module, or that the file defines at its top,
    // is a function, whatever class the story mentions beside it: "each `Job`" in a story of
    // `weight_by_alloy(jobs)` made it a method of `Job`, and every answer merged there left the
    // tests' `from foundry.jobs import weight_by_alloy` failing to import (foundry, 2026-12-08).
    let test_texts: Vec<String> = fixed
        .paths()
        .filter_map(|path| std::fs::read_to_string(dir.join(path)).ok())
        .collect();
    let a_function = imported_by(&test_texts, &missing.name)
        || source
            .lines()
            .filter(|line| !line.starts_with([' ', '\t']))
            .any(|line| defined_name(line).as_deref() == Some(missing.name.as_str()));
    let class = owner.or_else(|| {
        in_file
            .into_iter()
            .filter(|class| *class != missing.name && !a_function)
            .find(|class| mentions_word(story_text, class))
    });
    let class = class.filter(|_| !names_a_class(&missing.name));
    let calls = test_texts
        .iter()
        .flat_map(|text| calling_tests(text, &missing.name))
        .take(CALLS_SHOWN)
        .collect();
    // A method is shown its class (the attributes it works on). A function is not shown its
    // neighbours: the 1.5B model asked for `truncate` beside `shout` copied `shout`'s body and
    // docstring in 8 answers of 8 (2026-11-28); without the file, 3 of 4 samples were right.
    let around = class
        .as_deref()
        .and_then(|class| source_of(&source, class))
        .filter(|code| code.len() <= AROUND_CHARS);
    let failing = match failure {
        Some(output) => {
            let scope = match &class {
                Some(class) => source_of(&source, class)?,
                None => source.clone(),
            };
            Some(Failing {
                current: definition_named(&scope, &missing.name)?,
                output: head_tail(output.trim(), FAILURE_CHARS),
                before: None,
            })
        }
        None => None,
    };
    Some(NarrowedTask {
        name: missing.name.clone(),
        story: head_tail(story_text.trim(), STORY_CHARS),
        signature,
        // A function's file holds the definition asked for again: it is shown once, alone.
        around: around.filter(|_| failing.is_none() || class.is_some()),
        class,
        file,
        calls,
        failing,
    })
}

/// Whether a `from … import` line of one of `tests` binds `name`.
fn imported_by(tests: &[String], name: &str) -> bool {
    tests.iter().any(|text| {
        text.lines()
            .map(str::trim)
            .filter(|line| line.starts_with("from "))
            .any(|line| bound_by_import(line).contains(&name))
    })
}

/// Whether `name` is a class's: capitalised, as Python names classes.
fn names_a_class(name: &str) -> bool {
    name.starts_with(|c: char| c.is_uppercase())
}

/// How the story writes the call of `name` with parameters (`remove(sku)`), else `name(…)`:
/// an example call such as `cart.remove("apple")` gives arguments, not the signature, and a
/// bare `remove` gives neither.
fn signature(story_text: &str, name: &str) -> String {
    // A call with values (`is_low_stock(3, 5)`, `f(None)`) is an example, not the signature.
    backtick_spans(story_text)
        .into_iter()
        .find_map(|(span, _)| {
            let (callee, rest) = span.split_once('(')?;
            let args = rest.strip_suffix(')')?;
            let named_so = callee.trim().rsplit('.').next() == Some(name);
            (named_so && signature_parameters(&format!("({args})")).is_some())
                .then(|| format!("{name}({args})"))
        })
        .unwrap_or_else(|| format!("{name}(…)"))
}

/// The test functions of `text` that call `name`, whole; lines calling it outside any. A
/// class is used without a call too (`pytest.raises(UnknownAccount)`), but not by an import.
fn calling_tests(text: &str, name: &str) -> Vec<String> {
    let uses = |line: &str| match names_a_class(name) {
        true => {
            mentions_word(line, name)
                && !["from ", "import "]
                    .iter()
                    .any(|w| line.trim_start().starts_with(w))
        }
        false => calls(line, name),
    };
    let mut found: Vec<String> = Vec::new();
    for line in text.lines().filter(|line| uses(line)) {
        let owner = text
            .lines()
            .take_while(|other| !std::ptr::eq(*other, line))
            .filter_map(defined_name)
            .last();
        let shown = owner
            .and_then(|name| source_of(text, &name))
            .filter(|source| source.lines().any(uses))
            .unwrap_or_else(|| line.trim().to_string());
        if !found.contains(&shown) {
            found.push(shown);
        }
    }
    found
}

/// Whether `code` stands for code it leaves out with a comment or an ellipsis: `# The rest of the
/// toll function logic here`. Asked again for `toll` with a guard in front, the 1.5B model
/// answered so, the merge replaced the charging logic with the comment, and the project's own
/// tests of `toll` failed after it (tollbooth `unknown-vehicle-class`, 2026-12-07).
fn elides_code(code: &str) -> bool {
    const PLACEHOLDERS: [&str; 6] = [
        "rest of",
        "existing code",
        "existing logic",
        "remaining",
        "unchanged",
        "as before",
    ];
    code.lines().map(str::trim).any(|line| {
        let comment = line
            .strip_prefix('#')
            .map(|comment| comment.to_ascii_lowercase());
        line == "..."
            || comment.is_some_and(|comment| {
                comment.trim() == "..." || PLACEHOLDERS.iter().any(|words| comment.contains(words))
            })
    })
}

/// The definition `task` asks for as commit `base` of the tree at `dir` has it (in its class,
/// for a method); `None` when the commit does not hold it.
fn definition_at(dir: &Path, base: &str, task: &NarrowedTask) -> Option<String> {
    let files = crate::vcs::read_files(dir, base, std::slice::from_ref(&task.file)).ok()?;
    let source = String::from_utf8(files.get(&task.file)?.clone()).ok()?;
    let scope = match &task.class {
        Some(class) => source_of(&source, class)?,
        None => source,
    };
    definition_named(&scope, &task.name)
}

/// Answers asked for, one after another, when a narrowed definition still fails its tests.
pub const SAMPLES: u32 = 4;

/// Asks for the missing definition alone and merges the answer into its file. Returns the
/// answer's code once the file has it; the tokens count for the story, and the transcript says
/// what happened. `variant` 0 samples as the phase does, each further one hotter and seeded;
/// an answer among `tried` is not written again.
#[allow(clippy::too_many_arguments)]
pub async fn narrow(
    wf: &Workflow,
    story: &Story,
    dir: &Path,
    transcript: &Transcript,
    missing: &Missing,
    fixed: &FixedTests,
    failure: Option<&str>,
    variant: u32,
    tried: &[String],
    base: &str,
) -> Option<String> {
    let story_text = super::named_functions::summary_and_criteria(story);
    // A file the story names that does not exist yet (a new module) is still where it goes.
    let named_file = || {
        super::named_functions::named_functions(story)
            .into_iter()
            .find(|f| f.name == missing.name)
            .and_then(|f| f.files.into_iter().next())
            .or_else(|| super::sentence_files::sole_source_file(&story_text))
    };
    let missing = Missing {
        name: missing.name.clone(),
        file: missing.file.clone().or_else(named_file),
    };
    // A further sample is not shown the failing code it would copy: only what the tests said
    // of it (without the traceback's quote of the code), and the story's words.
    // Only the failures of tests that call it, when others fail too (failure_digest).
    let own =
        failure.and_then(|output| super::failure_digest::failures_that_call(output, &missing.name));
    let failure = own.as_deref().or(failure);
    let failure = match variant {
        0 => failure.map(str::to_string),
        _ => failure.map(super::failure_digest::without_code_frames),
    };
    let mut task = narrowed_task(dir, &story_text, &missing, fixed, failure.as_deref())?;
    if variant > 0 {
        let before = definition_at(dir, base, &task);
        if let Some(failing) = task.failing.as_mut() {
            failing.current.clear();
            failing.before = before;
            let name = task.name.clone();
            task.around = task.around.map(|class| without_definition(&class, &name));
        }
    }
    let ask = task.ask();
    let request = DefinitionRequest {
        kind: CodeKind::Definition,
        story,
        task: &ask,
        name: &task.name,
        work_dir: dir,
        transcript,
        variant,
    };
    let answer = wf.agents.write_definition(request).await;
    let (text, usage) = match answer {
        Ok(output) => (output.text, output.usage),
        Err(err) => (String::new(), err.usage),
    };
    let _ = story_ops::add_usage(wf, story.id(), usage);
    let path = dir.join(&task.file);
    let source = std::fs::read_to_string(&path).unwrap_or_default();
    let replaces = definition_named(&source, &task.name).is_some();
    let code = answer_code(&text)
        .map(|code| without_imports_of_itself(&code, &task.file))
        .filter(|code| !tried.contains(code));
    // An answer that stands for the code it replaces with a comment would delete that code.
    let elided = replaces && code.as_deref().is_some_and(elides_code);
    let code = code.filter(|_| !elided);
    let merged = code
        .as_deref()
        .and_then(|code| merge_definition(&source, task.class.as_deref(), &task.name, code));
    // An answer that would leave the file unparseable is not merged, as a write of it would be
    // refused: a 1.5B model's second sample for `slugify` was the repository map's signature
    // line, `def slugify(text)`, and every test round after failed on the file, not the story.
    let unparseable = merged.as_deref().and_then(|merged| {
        crate::agents::tools::unparseable_python(&task.file, Some(&source), merged)
    });
    let written = unparseable.is_none()
        && merged.is_some_and(|merged| crate::atomic_file::write(&path, merged.as_bytes()).is_ok());
    transcript.record(
        "narrowed_task",
        serde_json::json!({"name": task.name, "file": task.file, "class": task.class,
                           "again": task.failing.is_some(), "merged": written,
                           "sample": variant, "unparseable": unparseable.is_some(),
                           "elided": elided}),
    );
    code.filter(|_| written)
}

/// The classes a source file defines at its top level.
fn classes(source: &str) -> Vec<String> {
    source
        .lines()
        .filter(|line| line.starts_with("class ") || line.starts_with("export class "))
        .filter(|line| !is_exception_class(line))
        .filter_map(defined_name)
        .collect()
}

/// Whether a class line defines an exception (`class StockError(Exception):`): no home for the
/// functions a story asks for. Refine wrote "raise a `StockError`" into a story asking for
/// `is_low_stock(count, threshold)`, and the 1.5B model's function was merged into
/// `StockError` as a method, where the tests' `from stock import is_low_stock` never found it.
fn is_exception_class(line: &str) -> bool {
    let head = line.split(':').next().unwrap_or(line);
    let exceptional = |word: &str| word.ends_with("Error") || word.ends_with("Exception");
    head.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(exceptional)
}

/// The code of the model's answer: its first fenced block, else the answer from its first
/// definition line on.
pub fn answer_code(reply: &str) -> Option<String> {
    let mut lines = reply.lines();
    let mut block = Vec::new();
    let mut inside = false;
    for line in lines.by_ref() {
        let fence = line.trim_start().starts_with("```");
        match (inside, fence) {
            (false, true) => inside = true,
            (true, true) => break,
            (true, false) => block.push(line),
            (false, false) => {}
        }
    }
    if !block.is_empty() {
        return Some(block.join("\n"));
    }
    let start = reply
        .lines()
        .position(|line| defined_name(line).is_some())?;
    Some(reply.lines().skip(start).collect::<Vec<_>>().join("\n"))
}

/// `code` without the definition `name` (a method left out of its class).
fn without_definition(code: &str, name: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|line| defined_name(line).as_deref() == Some(name))
    else {
        return code.to_string();
    };
    let block = super::python_lines::definition_block(&lines, start);
    let kept: Vec<&str> = lines[..block.start]
        .iter()
        .chain(&lines[block.end..])
        .copied()
        .collect();
    kept.join("\n").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CART: &str = "\"\"\"A shopping cart.\"\"\"\n\n\nclass Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n\ndef empty_cart():\n    return Cart()\n";

    /// Qwen2.5-Coder-1.5B-Instruct's answer (Q4_K_M, llama.cpp, temperature 0.2) to this
    /// module's narrowed task for `remove(sku)` of `Cart`, as recorded on 2026-11-27.
    const RECORDED_REPLY: &str =
        "```python\ndef remove(self, sku):\n    if sku in self.items:\n        del self.items[sku]\n```";

    const MERGED: &str = "\"\"\"A shopping cart.\"\"\"\n\n\nclass Cart:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, sku, quantity=1):\n        self.items[sku] = self.items.get(sku, 0) + quantity\n\n    def remove(self, sku):\n        if sku in self.items:\n            del self.items[sku]\n\n\ndef empty_cart():\n    return Cart()\n";

    #[test]
    fn a_recorded_method_is_merged_into_its_class() {
        let code = answer_code(RECORDED_REPLY).unwrap();
        let merged = merge_definition(CART, Some("Cart"), "remove", &code).unwrap();
        assert_eq!(merged, MERGED);
        // The same method wrapped in its class, as models also answer: the class is dropped.
        let wrapped = "class Cart:\n    def remove(self, sku):\n        if sku in self.items:\n            del self.items[sku]\n";
        assert_eq!(
            merge_definition(CART, Some("Cart"), "remove", wrapped).unwrap(),
            MERGED
        );
    }

    #[test]
    fn a_function_goes_at_the_end_and_code_without_it_is_refused() {
        let merged = merge_definition(
            "def mean(v):\n    return sum(v) / len(v)\n",
            None,
            "median",
            "def median(v):\n    return sorted(v)[len(v) // 2]\n",
        )
        .unwrap();
        assert_eq!(
            merged,
            "def mean(v):\n    return sum(v) / len(v)\n\n\ndef median(v):\n    return sorted(v)[len(v) // 2]\n"
        );
        assert_eq!(
            merge_definition(CART, None, "median", "def mode(v):\n    pass\n"),
            None
        );
        assert_eq!(
            merge_definition(
                CART,
                Some("Basket"),
                "remove",
                "def remove(self):\n    pass\n"
            ),
            None
        );
    }

    #[test]
    fn the_signature_is_a_call_with_parameters_not_an_example() {
        // As refine wrote inventory `cart-remove` (2026-11-28).
        let story = "Add a method `remove` to the `Cart` class. After `cart.remove(\"apple\")`, `cart.quantity(\"apple\")` returns `0`.";
        assert_eq!(signature(story, "remove"), "remove(…)");
        let story = "`Cart().remove(\"kiwi\")` raises; add `remove(self, sku, count=1)`.";
        assert_eq!(signature(story, "remove"), "remove(self, sku, count=1)");
        assert_eq!(signature("`remove(*skus)`", "remove"), "remove(*skus)");
        assert_eq!(signature("`stats.mean()`", "mean"), "mean()");
        // As refine wrote the drive's `is_low_stock` (2026-11-29): numbers and constants are
        // values of an example.
        let story = "`is_low_stock(3, 5)` should return `True`; `is_low_stock(count, threshold)`.";
        assert_eq!(
            signature(story, "is_low_stock"),
            "is_low_stock(count, threshold)"
        );
        assert_eq!(signature("`f(None)` and `f(x1)`", "f"), "f(x1)");
    }

    #[test]
    fn a_function_is_no_method_of_an_exception_the_story_raises() {
        // The drive of 2026-11-29: refine's "raise a `StockError`" beside `is_low_stock`.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("stock.py"),
            "class StockError(Exception):\n    pass\n\n\nclass Shelf:\n    pass\n",
        )
        .unwrap();
        let missing = Missing {
            name: "is_low_stock".into(),
            file: Some("stock.py".into()),
        };
        let story = "Add `is_low_stock(count, threshold)`; raise a `StockError` on bad input.";
        let task =
            narrowed_task(dir.path(), story, &missing, &FixedTests::default(), None).unwrap();
        assert_eq!(task.class, None);
        let story = "Add a method `is_low_stock(count, threshold)` to `Shelf`.";
        let task =
            narrowed_task(dir.path(), story, &missing, &FixedTests::default(), None).unwrap();
        assert_eq!(task.class.as_deref(), Some("Shelf"));
    }

    #[test]
    fn a_function_the_tests_import_is_no_method_of_a_class_the_story_mentions() {
        // foundry (2026-12-08): "each `Job`" beside `weight_by_alloy(jobs)`.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("jobs.py"),
            "class Job:\n    def __init__(self, alloy, kilograms):\n        self.alloy = alloy\n        self.kilograms = kilograms\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tests/test_alloys.py"),
            "from jobs import Job, weight_by_alloy\n\n\ndef test_one():\n    assert weight_by_alloy([Job('tin', 2)]) == {'tin': 2}\n",
        )
        .unwrap();
        let missing = Missing {
            name: "weight_by_alloy".into(),
            file: Some("jobs.py".into()),
        };
        let story = "Add `weight_by_alloy(jobs)` to jobs.py: the kilograms of each alloy over the `Job`s given.";
        let fixed = FixedTests::take(dir.path(), &["tests/test_alloys.py".to_string()]);
        let task = narrowed_task(dir.path(), story, &missing, &fixed, None).unwrap();
        assert_eq!(task.class, None);
        // Without the import, the class the story mentions stays its best guess.
        let task =
            narrowed_task(dir.path(), story, &missing, &FixedTests::default(), None).unwrap();
        assert_eq!(task.class.as_deref(), Some("Job"));
        // And a function the file already has at its top is a function, failing or not.
        std::fs::write(
            dir.path().join("jobs.py"),
            "class Job:\n    pass\n\n\ndef weight_by_alloy(jobs):\n    return {}\n",
        )
        .unwrap();
        let task =
            narrowed_task(dir.path(), story, &missing, &FixedTests::default(), None).unwrap();
        assert_eq!(task.class, None);
    }

    #[test]
    fn a_function_written_as_a_class_of_its_name_is_replaced_by_the_answer() {
        // Recorded (Qwen2.5-Coder-1.5B, sawmill `format-volume`, 2026-12-07), shortened.
        let dir = tempfile::tempdir().unwrap();
        let written = "CUBIC_MM_PER_CUBIC_METRE = 1000 ** 3\n\n\nclass format_volume:\n    def __init__(self, cubic_mm):\n        self.cubic_mm = cubic_mm\n\n    def __str__(self):\n        return f\"{self.cubic_mm} m³\"\n";
        std::fs::write(dir.path().join("timber.py"), written).unwrap();
        let missing = Missing {
            name: "format_volume".into(),
            file: Some("timber.py".into()),
        };
        let story = "Add `format_volume(cubic_mm)` to `timber.py`: `format_volume(11280000)` returns `\"0.011 m³\"`.";
        let task =
            narrowed_task(dir.path(), story, &missing, &FixedTests::default(), None).unwrap();
        assert_eq!(task.class, None);
        let answer = "def format_volume(cubic_mm):\n    return f\"{cubic_mm / CUBIC_MM_PER_CUBIC_METRE:.3f} m³\"\n";
        let merged = merge_definition(written, task.class.as_deref(), &task.name, answer).unwrap();
        assert_eq!(
            merged,
            format!("CUBIC_MM_PER_CUBIC_METRE = 1000 ** 3\n\n\n{answer}")
        );
    }

    #[test]
    fn a_class_asked_for_is_not_a_method_of_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inventory")).unwrap();
        std::fs::write(dir.path().join("inventory/cart.py"), CART).unwrap();
        let missing = Missing {
            name: "Cart".into(),
            file: Some("inventory/cart.py".into()),
        };
        let story = "`Cart().remove(\"kiwi\")` raises `KeyError`.";
        let task =
            narrowed_task(dir.path(), story, &missing, &FixedTests::default(), None).unwrap();
        assert_eq!(task.class, None);

        // An exception the story raises, which the tests import from the class's file: a
        // class of its own, not a method of the class the story names beside it.
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_stock.py"),
            "import pytest\nfrom inventory.cart import Cart, OutOfStock\n\n\ndef test_out_of_stock():\n    with pytest.raises(OutOfStock):\n        Cart().take(\"kiwi\")\n",
        )
        .unwrap();
        let fixed = FixedTests::take(dir.path(), &["tests/test_stock.py".to_string()]);
        let missing = Missing {
            name: "OutOfStock".into(),
            file: Some("inventory/cart.py".into()),
        };
        let story = "`Cart().take(sku)` raises `OutOfStock` for an item the cart lacks.";
        let task = narrowed_task(dir.path(), story, &missing, &fixed, None).unwrap();
        assert_eq!(task.class, None);
        assert_eq!(
            task.calls,
            ["def test_out_of_stock():\n    with pytest.raises(OutOfStock):\n        Cart().take(\"kiwi\")"]
        );
        let ask = task.ask();
        assert!(
            ask.starts_with("Write the class `OutOfStock` in inventory/cart.py and nothing else"),
            "{ask}"
        );
        let merged = merge_definition(
            CART,
            task.class.as_deref(),
            "OutOfStock",
            "class OutOfStock(KeyError):\n    pass\n",
        )
        .unwrap();
        assert!(
            merged.ends_with("    return Cart()\n\n\nclass OutOfStock(KeyError):\n    pass\n"),
            "{merged}"
        );
    }

    #[test]
    fn the_task_names_the_signature_the_class_and_the_tests_that_call_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("inventory")).unwrap();
        std::fs::write(dir.path().join("inventory/cart.py"), CART).unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_remove.py"),
            "from inventory.cart import Cart\n\ndef test_remove():\n    cart = Cart()\n    cart.add('a')\n    cart.remove('a')\n    assert cart.items == {}\n",
        )
        .unwrap();
        let fixed = FixedTests::take(dir.path(), &["tests/test_remove.py".to_string()]);
        let missing = Missing {
            name: "remove".into(),
            file: Some("inventory/cart.py".into()),
        };
        let story = "Add a method `remove(sku)` to the Cart class in inventory/cart.py.";
        let task = narrowed_task(dir.path(), story, &missing, &fixed, None).unwrap();
        assert_eq!(task.signature, "remove(sku)");
        assert_eq!(task.class.as_deref(), Some("Cart"));
        assert_eq!(
            task.calls,
            vec!["def test_remove():\n    cart = Cart()\n    cart.add('a')\n    cart.remove('a')\n    assert cart.items == {}".to_string()]
        );
        assert!(task
            .around
            .as_deref()
            .unwrap()
            .starts_with("class Cart:\n    def __init__(self):"));
        let ask = task.ask();
        assert!(
            ask.starts_with(
                "Write the method `remove(sku)` of the class `Cart` in inventory/cart.py"
            ),
            "{ask}"
        );
        assert!(ask.contains("cart.remove('a')"), "{ask}");
    }

    #[test]
    fn a_method_goes_in_the_class_the_story_makes_it_a_method_of_not_the_first_it_mentions() {
        // tollbooth `trips-in-month` (2026-12-07): `Trip` comes first in the file.
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tollbooth")).unwrap();
        let trips = "class Trip:\n    day: str\n\n\nclass Account:\n    def trips(self):\n        return []\n";
        std::fs::write(dir.path().join("tollbooth/trips.py"), trips).unwrap();
        let fixed = FixedTests::take(dir.path(), &[]);
        let missing = Missing {
            name: "trips_in_month".into(),
            file: Some("tollbooth/trips.py".into()),
        };
        let story = "Add a method `trips_in_month(month)` to the `Account` class in `tollbooth/trips.py`, where `month` is written `\"YYYY-MM\"`, that returns the `Trip`s whose day falls in that month.";
        let task = narrowed_task(dir.path(), story, &missing, &fixed, None).unwrap();
        assert_eq!(task.class.as_deref(), Some("Account"));
    }

    #[test]
    fn a_definition_asked_for_again_replaces_its_namesake_with_the_imports_it_needs() {
        let textkit = "\"\"\"Small text helpers.\"\"\"\n\n\ndef shout(text):\n    return text.upper() + \"!\"\n\n\ndef truncate(text, width):\n    return text.upper() + \"!\"\n\n\ndef tail():\n    pass\n";
        let answer = "```python\nimport textwrap\n\ndef truncate(text, width):\n    if len(text) <= width:\n        return text\n    return textwrap.shorten(text, width)\n```";
        let merged =
            merge_definition(textkit, None, "truncate", &answer_code(answer).unwrap()).unwrap();
        assert_eq!(
            merged,
            "\"\"\"Small text helpers.\"\"\"\n\nimport textwrap\n\n\ndef shout(text):\n    return text.upper() + \"!\"\n\n\ndef truncate(text, width):\n    if len(text) <= width:\n        return text\n    return textwrap.shorten(text, width)\n\n\ndef tail():\n    pass\n"
        );
        let method = "def add(self, sku, quantity=1):\n    if quantity < 1:\n        raise ValueError(quantity)\n    self.items[sku] = self.items.get(sku, 0) + quantity\n";
        let merged = merge_definition(CART, Some("Cart"), "add", method).unwrap();
        assert_eq!(
            merged,
            CART.replace(
                "    def add(self, sku, quantity=1):\n        self.items",
                "    def add(self, sku, quantity=1):\n        if quantity < 1:\n            raise ValueError(quantity)\n        self.items"
            )
        );
    }

    #[test]
    fn a_failing_definition_is_asked_for_again_with_what_the_tests_say() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("textkit.py"),
            "def shout(text):\n    return text.upper()\n\n\ndef truncate(text, width):\n    return text.upper()\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("test_truncate.py"),
            "from textkit import truncate\n\ndef test_truncate():\n    assert truncate('hello', 10) == 'hello'\n",
        )
        .unwrap();
        let fixed = FixedTests::take(dir.path(), &["test_truncate.py".to_string()]);
        let missing = Missing {
            name: "truncate".into(),
            file: Some("textkit.py".into()),
        };
        let output = "F\n>       assert truncate('hello', 10) == 'hello'\nE       AssertionError: assert 'HELLO' == 'hello'\n1 failed";
        let story = "Add `truncate(text, width)` to textkit.py.";
        let task = narrowed_task(dir.path(), story, &missing, &fixed, Some(output)).unwrap();
        assert_eq!(task.around, None);
        let ask = task.ask();
        assert!(
            ask.starts_with("Write the function `truncate(text, width)` in textkit.py again, whole, and nothing else"),
            "{ask}"
        );
        assert!(
            ask.contains(
                "As it is now:\n```\ndef truncate(text, width):\n    return text.upper()\n```"
            ),
            "{ask}"
        );
        assert!(
            ask.contains("AssertionError: assert 'HELLO' == 'hello'"),
            "{ask}"
        );
        assert!(
            ask.contains("What the story says:\nAdd `truncate(text, width)` to textkit.py."),
            "{ask}"
        );
        assert!(
            ask.contains("assert truncate('hello', 10) == 'hello'"),
            "{ask}"
        );
    }

    #[test]
    fn a_definition_asked_for_again_is_shown_as_the_base_had_it() {
        use crate::vcs::test_support::{sh, unborn_repo, write};
        let repo = unborn_repo();
        let rates = "BASE = {'car': 250}\n\n\ndef toll(vehicle_class, minute):\n    return BASE[vehicle_class]\n";
        write(repo.path(), "tollbooth/rates.py", rates);
        sh(repo.path(), &["add", "-A"]);
        sh(repo.path(), &["commit", "-q", "-m", "base"]);
        let base = sh(repo.path(), &["rev-parse", "HEAD"]);
        // The story's work since: a guard, and the charge lost.
        write(
            repo.path(),
            "tollbooth/rates.py",
            "def toll(vehicle_class, minute):\n    raise KeyError(vehicle_class)\n",
        );
        let mut task = NarrowedTask {
            name: "toll".into(),
            signature: "toll(vehicle_class, minute)".into(),
            class: None,
            file: "tollbooth/rates.py".into(),
            calls: Vec::new(),
            around: None,
            story: String::new(),
            failing: Some(Failing {
                current: String::new(),
                output: "E   assert 250 == 500".into(),
                before: None,
            }),
        };
        let before = definition_at(repo.path(), base.trim(), &task);
        assert_eq!(
            before.as_deref(),
            Some("def toll(vehicle_class, minute):\n    return BASE[vehicle_class]")
        );
        task.failing.as_mut().unwrap().before = before;
        let ask = task.ask();
        assert!(
            ask.contains("Before the story it was:\n```\ndef toll(vehicle_class, minute):\n    return BASE[vehicle_class]\n```"),
            "{ask}"
        );
        assert!(ask.contains("E   assert 250 == 500"), "{ask}");
        assert!(!ask.contains("raise KeyError"), "{ask}");
        // A definition the base did not hold is asked for from the story alone.
        task.name = "surcharge".into();
        assert_eq!(definition_at(repo.path(), base.trim(), &task), None);
    }

    #[test]
    fn an_answer_standing_for_code_with_a_comment_elides_it() {
        // The 1.5B model's `toll` (tollbooth `unknown-vehicle-class`, 2026-12-07).
        let recorded = "def toll(vehicle_class, minute):\n    if vehicle_class not in BASE_CHARGES:\n        raise UnknownVehicleClassError(vehicle_class)\n    # The rest of the toll function logic here\n";
        assert!(elides_code(recorded));
        assert!(elides_code("def f():\n    ...\n"));
        let whole = "def toll(vehicle_class, minute):\n    # a pass in a peak costs half again\n    return BASE_CHARGES[vehicle_class]\n";
        assert!(!elides_code(whole));
    }
}
