//! What a story says exactly, for its acceptance tests to be held to (docs/design.md §21): the
//! literal examples it gives (`slugify('Hello, World!') == 'hello-world'`, "`mean([1, 2])`
//! returns `1.5`"), and the names it mentions. Pure functions of text.

use std::path::Path;

use super::call_text::callee;
use super::python_imports::{
    import_of, module_imports, python_module, standard_imports, with_imports_on_top,
};
use crate::agents::prompts::backtick_spans;

/// An example the story writes out: a call with literal arguments and, when the story gives it,
/// the value it must produce, or the exception it must raise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Example {
    pub call: String,
    /// The value, or for [`RAISES`] the exception's name.
    pub expected: String,
    /// How the two are compared: `==`, `is` (`is True`, `is None`) or [`RAISES`].
    pub comparison: &'static str,
}

/// The comparison of an example whose call must raise: "`cart.add("apple", 0)` raises
/// `ValueError`".
pub const RAISES: &str = "raises";

impl Example {
    /// Whether the call must raise [`Example::expected`].
    pub fn raises(&self) -> bool {
        self.comparison == RAISES
    }

    /// The example as one Python statement, the form the tests are asked to carry it in.
    pub fn assertion(&self) -> String {
        if self.raises() {
            return format!("with pytest.raises({}): {}", self.expected, self.call);
        }
        format!("assert {} {} {}", self.call, self.comparison, self.expected)
    }

    /// Whether `tests` hold the call and the value, as written (spacing and the kind of quote
    /// aside: `f("a")` and `f('a')` are the same example). A raising method call on a new
    /// object (`Cart().remove("kiwi")`) may be made on an object the test made before it
    /// (`cart.remove("kiwi")`).
    ///
    /// A value example's call and value must stand on one line: the 1.5B model's
    /// `assert units.to_fahrenheit(0) == 491.67` above `assert units.to_rankine(0) ==
    /// units.to_fahrenheit(0)` held both, on two lines, and no test asked `to_rankine(0)` for
    /// `491.67` (a drive, 2026-12-05). The one other form is the call kept in a name that a
    /// later line compares to the value alone ([`Example::asserted_after`]). A statement over
    /// several lines (an expected dict written one key a line) is read as one line
    /// ([`statements`](super::python_lines::statements)).
    pub fn carried_by(&self, tests: &str) -> bool {
        let call = normalized(&self.call);
        let expected = normalized(&self.expected);
        if !self.raises() {
            let statements = super::python_lines::statements(tests);
            let lines: Vec<&str> = statements.iter().map(String::as_str).collect();
            return lines.iter().enumerate().any(|(at, line)| {
                let normal = normalized(line);
                normal.contains(&call)
                    && (normal.contains(&expected) || self.asserted_after(line, &lines[at + 1..]))
            });
        }
        let tests = normalized(tests);
        let called = match call.rsplit_once(").") {
            Some((_, method)) => tests.contains(&format!(".{method}")),
            None => tests.contains(&call),
        };
        called && tests.contains(&expected)
    }

    /// Whether `line` keeps the example's call in a name (`top = book.top_student()`) that
    /// one of the `later` lines of the same test then compares to the example's value, alone
    /// (`assert top == "Ana"`): the same check as the one-line form, and a form small models
    /// write often. Gradebook's summary lines (2026-12-06) showed value examples refused as
    /// missing from tests that called them; this form is one way that happens. A name made
    /// again before the comparison, or a test that ends first, is not the example.
    fn asserted_after(&self, line: &str, later: &[&str]) -> bool {
        let Some((target, value)) = line.trim().split_once('=') else {
            return false;
        };
        let target = target.trim();
        let plain = !target.is_empty()
            && !target.starts_with(|c: char| c.is_ascii_digit())
            && target.chars().all(|c| c.is_alphanumeric() || c == '_');
        if !plain || value.starts_with('=') {
            return false;
        }
        let indent = line.len() - line.trim_start().len();
        let wanted = normalized(&format!(
            "assert {target} {} {}",
            self.comparison, self.expected
        ));
        let reversed = normalized(&format!("assert {} == {target}", self.expected));
        // `True`, `False` and `None` are compared with `is` as often as with `==`.
        let singleton = matches!(self.expected.as_str(), "True" | "False" | "None")
            .then(|| normalized(&format!("assert {target} is {}", self.expected)));
        for later in later {
            let here = later.len() - later.trim_start().len();
            if !later.trim().is_empty() && here < indent {
                return false;
            }
            let normal = normalized(later);
            // A message after the comparison (`assert top == "Ana", f"got {top}"`) is still
            // the comparison: drive 29 (2026-12-06) asked the model again for one.
            let compares = |assertion: &str| {
                normal
                    .strip_prefix(assertion)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(','))
            };
            if compares(&wanted)
                || (self.comparison == "==" && compares(&reversed))
                || singleton.as_deref().is_some_and(compares)
            {
                return true;
            }
            // Named again: the assertion below is about another value.
            if normal.starts_with(&format!("{target}="))
                && !normal.starts_with(&format!("{target}=="))
            {
                return false;
            }
        }
        false
    }
}

/// Words between an example's call and its value: "`f(x)` returns `y`".
const RETURNS: [&str; 11] = [
    "returns",
    "return",
    "give",
    "are",
    "should return",
    "must return",
    "gives",
    "is",
    "equals",
    "->",
    "→",
];

/// Words between an example's call and the exception it raises: "`f(0)` raises `ValueError`",
/// each also with an article after it ("should raise a `ValueError`").
const RAISE_VERBS: [&str; 9] = [
    "raises",
    "raise",
    "throw",
    "should raise",
    "must raise",
    "will raise",
    "throws",
    "should throw",
    "must throw",
];

/// The words between calls a story lists before one verb: "`f(1)`, `f(2)` and `f(3)` raise".
const LIST_SEPARATORS: [&str; 5] = [",", "and", ", and", "or", ", or"];

/// `between` without an article at its end: "raises a" → "raises".
fn without_article(between: &str) -> &str {
    let lower = between.to_ascii_lowercase();
    [" an", " a"]
        .iter()
        .find(|article| lower.ends_with(*article))
        .map_or(between, |article| {
            between[..between.len() - article.len()].trim_end()
        })
}

/// A class name as an exception is written: `ValueError`, `ledger.UnknownAccount`.
fn is_exception_name(text: &str) -> bool {
    let last = text.trim().rsplit('.').next().unwrap_or("");
    last.starts_with(|c: char| c.is_ascii_uppercase())
        && text
            .trim()
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
}

/// The examples in `text` (a story's summary and criteria), in order, without repeats.
pub fn examples(text: &str) -> Vec<Example> {
    let spans = backtick_spans(text);
    let mut found: Vec<Example> = Vec::new();
    // Where span `index` starts in `text`.
    let start_of = |index: usize| spans.get(index).map(|(span, end)| end - span.len() - 1);
    // The words between span `index` and the next.
    let between_spans = |index: usize| -> Option<&str> {
        Some(
            text.get(spans.get(index)?.1 + 1..start_of(index + 1)?)?
                .trim(),
        )
    };
    for (index, (span, _)) in spans.iter().enumerate() {
        let example = split_comparison(span).or_else(|| {
            // "`f(1)` returns `2`": a literal call, a verb, the next span. Calls of one function
            // listed ("`f(\"abc\")`, `f(\"2.5\")` and `f(\"-1\")` raise `ValueError`") share
            // the verb and the span after the last of them; calls of others ("after
            // `cart.add(…)` and `cart.remove(…)`, `cart.quantity(…)` returns `0`") do not.
            let mut last = index;
            while between_spans(last).is_some_and(|words| LIST_SEPARATORS.contains(&words))
                && spans
                    .get(last + 1)
                    .is_some_and(|(next, _)| is_literal_call(next) && callee(next) == callee(span))
            {
                last += 1;
            }
            let next = &spans.get(last + 1)?.0;
            let between = between_spans(last)?;
            let between = between.trim_end_matches(':').trim();
            let is_verb = |verbs: &[&str], between: &str| {
                verbs.iter().any(|v| between.eq_ignore_ascii_case(v))
            };
            let comparison = if is_verb(&RETURNS, between) {
                "=="
            } else if is_verb(&RAISE_VERBS, without_article(between)) && is_exception_name(next) {
                RAISES
            } else {
                return None;
            };
            (is_literal_call(span) || calls_python_on_classes(span)).then(|| Example {
                call: span.trim().to_string(),
                expected: next.trim().to_string(),
                comparison,
            })
        });
        if let Some(example) = example {
            if !found.contains(&example) {
                found.push(example);
            }
        }
    }
    found
}

/// The calls on `object` the story's line holding `example` writes before it: "After
/// `cart.add("apple", 3)` and `cart.remove("apple")`, `cart.quantity("apple")` returns `0`"
/// gives the two calls a test of the example makes first. The line holds the example's call
/// and its value, or else its call: a summary that names the call holds no example. `None`
/// when no line holds it.
pub fn calls_before(text: &str, example: &Example, object: &str) -> Option<Vec<String>> {
    let on_object = format!("{object}.");
    Some(
        calls_written_before(text, example)?
            .into_iter()
            .filter(|span| span.starts_with(&on_object))
            .collect(),
    )
}

/// Every call the story's line holding `example` writes before it, on an object or bare
/// ("After `add_score("Ana", 90)`, `top_student()` returns `"Ana"`"), as [`calls_before`]
/// finds the line.
pub fn calls_written_before(text: &str, example: &Example) -> Option<Vec<String>> {
    let call = normalized(&example.call);
    Some(
        backtick_spans(line_holding(text, example)?)
            .into_iter()
            .map(|(span, _)| span.trim().to_string())
            .take_while(|span| !normalized(span).contains(&call))
            .filter(|span| is_call(span))
            .collect(),
    )
}

/// The words of the story's line holding `example` before the span that holds it, code
/// spans left out: "with Ana at 90 and Bo at 70, " for "with Ana at 90 and Bo at 70,
/// `class_median()` returns `80`". `None` when no line holds it.
pub fn words_before(text: &str, example: &Example) -> Option<String> {
    let line = line_holding(text, example)?;
    let call = normalized(&example.call);
    let mut words = String::new();
    let mut from = 0;
    for (span, close) in backtick_spans(line) {
        let open = close - span.len() - 1;
        words.push_str(&line[from..open]);
        if normalized(&span).contains(&call) {
            return Some(words);
        }
        from = close + 1;
    }
    Some(words)
}

/// The story's line that holds `example`'s call (itself, not the end of a longer one:
/// `total_items()` is not in `cart.total_items()`), one with its value too if there is one.
pub fn line_holding<'t>(text: &'t str, example: &Example) -> Option<&'t str> {
    let call = normalized(&example.call);
    let expected = normalized(&example.expected);
    let holds = |line: &&str| {
        let line = normalized(line);
        line.match_indices(&call).any(|(at, _)| {
            line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
        })
    };
    text.lines()
        .filter(holds)
        .find(|line| normalized(line).contains(&expected))
        .or_else(|| text.lines().find(holds))
}

/// `f(x) == y` or `f(x) is True` in one span.
fn split_comparison(span: &str) -> Option<Example> {
    let (call, expected, comparison) = if let Some((call, expected)) = span.split_once("==") {
        (call, expected, "==")
    } else {
        let (call, expected) = span.split_once(" is ")?;
        let expected = expected.trim();
        if !matches!(
            expected,
            "True" | "False" | "None" | "true" | "false" | "null"
        ) {
            return None;
        }
        (call, expected, "is")
    };
    let (call, expected) = (call.trim(), expected.trim());
    (is_call(call) && !expected.is_empty()).then(|| Example {
        call: call.to_string(),
        expected: expected.to_string(),
        comparison,
    })
}

/// `name(…)` or `obj.name(…)`, ending with its closing parenthesis.
fn is_call(text: &str) -> bool {
    let Some(open) = text.find('(') else {
        return false;
    };
    let name = &text[..open];
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
        && text.ends_with(')')
}

/// A call whose arguments hold a literal (a number, a string, a list): an example, not a
/// signature like `median(values)`.
pub(super) fn is_literal_call(text: &str) -> bool {
    let text = text.trim();
    if !is_call(text) {
        return false;
    }
    let args = &text[text.find('(').unwrap_or(0) + 1..text.len() - 1];
    args.trim().is_empty()
        || args
            .chars()
            .any(|c| c.is_ascii_digit() || matches!(c, '\'' | '"' | '[' | '{'))
}

/// A call of one of Python's own functions on a class (`issubclass(UnknownAccount, KeyError)`,
/// `isinstance(Cart(), object)`): an example, though it holds no literal, where
/// `median(values)` is a signature.
fn calls_python_on_classes(text: &str) -> bool {
    let text = text.trim();
    let Some((callee, arguments)) = text.split_once('(') else {
        return false;
    };
    is_call(text)
        && crate::python_builtins::PYTHON_FUNCTIONS.contains(&callee)
        && arguments
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word.starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Whether `line` calls `name` (`name(` not preceded by more of a name: `test_remove(` does not
/// call `remove`).
pub fn calls(line: &str, name: &str) -> bool {
    let call = format!("{name}(");
    line.match_indices(&call).any(|(at, _)| calls_at(line, at))
}

/// Whether the name at byte `at` of `line` starts there rather than ends a longer one.
pub(super) fn calls_at(line: &str, at: usize) -> bool {
    line[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
}

/// Without spaces, with one kind of quote.
pub(super) fn normalized(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| if c == '"' { '\'' } else { c })
        .collect()
}

/// `from <module> import <name>` lines a Python test needs for the story's functions it calls
/// without importing or defining them: the module is the file the story names for the function
/// (`Add \`slugify(text)\` to textkit.py` → `from textkit import slugify`).
pub fn missing_imports(tests: &str, named: &[(String, String)]) -> Vec<String> {
    let mut lines = Vec::new();
    // The test framework itself: `pytest.raises` without `import pytest` (measured: the 1.5B
    // model's test of a ValueError).
    // Only a module-level `import pytest` binds the name for every test: `from pytest import
    // raises` and an import inside one test function do not.
    let imports_pytest = tests.lines().any(|line| {
        line.strip_prefix("import ").is_some_and(|modules| {
            modules
                .split(',')
                .any(|module| module.split('#').next().unwrap_or("").trim() == "pytest")
        })
    });
    if tests.contains("pytest.") && !imports_pytest {
        lines.push("import pytest".to_string());
    }
    for (name, file) in named {
        let Some(module) = python_module(file) else {
            continue;
        };
        // `Decimal` is the standard library's, whatever the story says of it.
        if import_of(name).is_some() {
            continue;
        }
        // A plain call: `cart.remove(…)` is a method, no name to import. A class is used
        // without a call too: `pytest.raises(UnknownAccountError)`.
        let called = tests.lines().any(|line| {
            (calls(line, name) && !line.contains(&format!(".{name}(")))
                || (name.starts_with(|c: char| c.is_ascii_uppercase()) && names_class(line, name))
        });
        // Only the top level binds the name for every test: one imported inside a test
        // function is still imported on top, for the others (sawmill `overlength-pieces`).
        let known = tests.lines().any(|line| {
            let words = || line.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            ((line.starts_with("from ") || line.starts_with("import "))
                && words().any(|word| word == name))
                || crate::agents::tools::defined_name(line).as_deref() == Some(name.as_str())
        });
        if called && !known {
            lines.push(format!("from {module} import {name}"));
        }
    }
    lines
}

/// Whether the Python `line` reads the class `name` as code: the whole word, neither an
/// attribute (`errors.UnknownAccountError`) nor inside a string, on a line that imports
/// nothing (an import line binds the name rather than reading it).
fn names_class(line: &str, name: &str) -> bool {
    let trimmed = line.trim_start();
    if trimmed.starts_with("from ") || trimmed.starts_with("import ") || trimmed.starts_with('#') {
        return false;
    }
    line.match_indices(name).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + name.len()..].chars().next();
        let quotes_before = line[..at].matches(['"', '\'']).count();
        before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'))
            && after.is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
            && quotes_before.is_multiple_of(2)
    })
}

/// Adds to the Python test file `path` of the tree at `dir` the imports it lacks: the test
/// framework, the story's functions (`homes`: each with the file the story names for it), and
/// the tree's modules it calls through. Returns the lines added; `None` when none was needed
/// or the file cannot be read or written.
pub fn add_missing_imports(
    dir: &Path,
    path: &str,
    homes: &[(String, String)],
) -> Option<Vec<String>> {
    let full = dir.join(path);
    let text = std::fs::read_to_string(&full).ok()?;
    let mut imports: Vec<String> = Vec::new();
    // A module of the tree may be named as the framework is (`pytest.py`): each import once.
    for import in missing_imports(&text, homes)
        .into_iter()
        .chain(module_imports(dir, &text))
        .chain(standard_imports(&text))
    {
        if !imports.contains(&import) {
            imports.push(import);
        }
    }
    // A test file that calls through its own module's name (`test_textkit.slugify(…)`) does
    // not import itself: the 1.5B model's test file got `import test_textkit` so (the textkit
    // benchmark, 2026-11-29), which pytest then imported twice.
    let stem = Path::new(path)
        .file_stem()
        .map(|stem| stem.to_string_lossy());
    let own = [python_module(path), stem.map(|stem| stem.into_owned())];
    imports.retain(|import| {
        !own.iter()
            .flatten()
            .any(|module| *import == format!("import {module}"))
    });
    if imports.is_empty() {
        return None;
    }
    let updated = with_imports_on_top(&text, &imports, false);
    crate::atomic_file::write(&full, updated.as_bytes()).ok()?;
    Some(imports)
}

/// A Python test file without the lines at its top level that hold nothing but a file's name
/// (`test_temperature.py`): the 1.5B model copied its own test file's name under its imports
/// (a drive, 2026-11-29), which Python reads as an attribute of a module, and the file failed
/// at its collection whatever the code did. `None` when there is no such line.
pub fn file_names_dropped(text: &str) -> Option<String> {
    let is_file_name = |line: &str| {
        let line = line.trim_end();
        !line.starts_with(char::is_whitespace)
            && line.rsplit_once('.').is_some_and(|(stem, extension)| {
                !stem.is_empty()
                    && stem
                        .chars()
                        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'))
                    && matches!(extension, "py" | "md" | "txt" | "toml" | "cfg" | "ini")
            })
    };
    if !text.lines().any(is_file_name) {
        return None;
    }
    let kept: Vec<&str> = text.lines().filter(|line| !is_file_name(line)).collect();
    let ending = if text.ends_with('\n') { "\n" } else { "" };
    Some(format!("{}{ending}", kept.join("\n")))
}

/// A Python test file whose top-level test functions take a `self` they never use, with it
/// dropped: pytest takes it for a fixture and errors at the test's setup ("fixture 'self' not
/// found"). The 1.5B model wrote `def test_truncate_longer_than_width(self):` outside any
/// class beside a right `truncate`, and wrote it again in every round. `None` when there is
/// no such test.
pub fn unused_self_dropped(text: &str) -> Option<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let view: Vec<&str> = text.lines().collect();
    let mut dropped = false;
    for (at, line) in view.iter().enumerate() {
        let takes_self =
            line.starts_with("def test") && (line.contains("(self)") || line.contains("(self, "));
        if !takes_self {
            continue;
        }
        let body = super::python_lines::definition_block(&view, at);
        let uses_self = view[at + 1..body.end].iter().any(|line| {
            line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == "self")
        });
        if uses_self {
            continue;
        }
        lines[at] = line.replacen("(self, ", "(", 1).replacen("(self)", "()", 1);
        dropped = true;
    }
    let ending = if text.ends_with('\n') { "\n" } else { "" };
    dropped.then(|| format!("{}{ending}", lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_file_calling_through_its_own_name_does_not_import_itself() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("textkit.py"),
            "def title(s):\n    return s\n",
        )
        .unwrap();
        let tests = "def test_slug():\n    assert slugify('A B') == 'a-b'\n    assert test_textkit.test_slug\n";
        std::fs::write(dir.path().join("test_textkit.py"), tests).unwrap();
        let homes = [("slugify".to_string(), "textkit.py".to_string())];

        let added = add_missing_imports(dir.path(), "test_textkit.py", &homes);

        assert_eq!(added, Some(vec!["from textkit import slugify".to_string()]));
    }

    #[test]
    fn a_class_the_story_places_is_imported_where_a_test_only_names_it() {
        let tests = "import pytest\nfrom shop.bank import withdraw\n\n\ndef test_unknown():\n    with pytest.raises(UnknownAccountError):\n        withdraw('zed', 5)\n";
        let homes = [
            ("withdraw".to_string(), "shop/bank.py".to_string()),
            (
                "UnknownAccountError".to_string(),
                "shop/bank.py".to_string(),
            ),
        ];
        assert_eq!(
            missing_imports(tests, &homes),
            vec!["from shop.bank import UnknownAccountError".to_string()]
        );
        // Named in a string, as an attribute, or imported already: nothing to add.
        for named in [
            "def test_a():\n    assert 'UnknownAccountError' in str(e)\n",
            "import shop.bank\ndef test_a():\n    raise shop.bank.UnknownAccountError()\n",
            "from shop.bank import UnknownAccountError\ndef test_a():\n    assert UnknownAccountError\n",
            "def test_a():\n    assert MyUnknownAccountErrors\n",
        ] {
            assert_eq!(missing_imports(named, &homes[1..]), Vec::<String>::new(), "{named}");
        }
    }

    #[test]
    fn a_file_s_name_alone_on_a_line_of_a_test_file_is_dropped() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-29, a drive).
        let recorded = "import temperature\ntest_add_to_celsius.py\n\n\ndef test_story_examples():\n    assert temperature.to_celsius(32) == 0\n";
        assert_eq!(
            file_names_dropped(recorded).unwrap(),
            "import temperature\n\n\ndef test_story_examples():\n    assert temperature.to_celsius(32) == 0\n"
        );
        // Code that merely ends like a name is kept: a call, an attribute read in a test.
        let code =
            "import inventory.cart\nx = inventory.cart\n\n\ndef test_a():\n    inventory.cart.py\n";
        assert_eq!(file_names_dropped(code), None);
    }

    #[test]
    fn a_self_a_top_level_test_never_uses_is_dropped() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, textkit).
        let tests = "from textkit import truncate\n\ndef test_truncate_longer_than_width(self):\n    assert truncate(\"hello world\", 8) == \"hello...\"\n\ndef test_two(self, tmp_path):\n    assert truncate(\"a\", 1) == \"a\"\n\ndef test_uses(self):\n    self.assertEqual(1, 1)\n\nclass TestT:\n    def test_in_class(self):\n        assert True\n";
        assert_eq!(
            unused_self_dropped(tests).unwrap(),
            "from textkit import truncate\n\ndef test_truncate_longer_than_width():\n    assert truncate(\"hello world\", 8) == \"hello...\"\n\ndef test_two(tmp_path):\n    assert truncate(\"a\", 1) == \"a\"\n\ndef test_uses(self):\n    self.assertEqual(1, 1)\n\nclass TestT:\n    def test_in_class(self):\n        assert True\n"
        );
        assert_eq!(unused_self_dropped("def test_a():\n    assert 1\n"), None);
    }

    #[test]
    fn examples_are_found_in_the_forms_stories_write_them() {
        let story = "- [ ] `slugify('Hello, World!') == 'hello-world'`\n\
                     - [ ] `mean([1, 2])` returns `1.5`\n\
                     - [ ] `is_palindrome('A man, a plan, a canal: Panama') is True`\n\
                     - [ ] Add `median(values)` to stats.py; `median([])` raises `ValueError`\n\
                     - [ ] `format_price(123456)` → `'$1,234.56'`\n\
                     - [ ] `to_celsius(-500)` should raise a `ValueError`";
        let found = examples(story);
        let calls: Vec<(&str, &str, &str)> = found
            .iter()
            .map(|e| (e.call.as_str(), e.comparison, e.expected.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("slugify('Hello, World!')", "==", "'hello-world'"),
                ("mean([1, 2])", "==", "1.5"),
                (
                    "is_palindrome('A man, a plan, a canal: Panama')",
                    "is",
                    "True"
                ),
                ("median([])", "raises", "ValueError"),
                ("format_price(123456)", "==", "'$1,234.56'"),
                ("to_celsius(-500)", "raises", "ValueError"),
            ]
        );
        assert_eq!(
            found[0].assertion(),
            "assert slugify('Hello, World!') == 'hello-world'"
        );
        assert_eq!(
            found[3].assertion(),
            "with pytest.raises(ValueError): median([])"
        );
        // Listed calls of one function share the verb after the last of them.
        let listed = examples(
            "- [ ] `parse_quantity(\"abc\")`, `parse_quantity(\"2.5\")` and `parse_quantity(\"-1\")` raise `ValueError`\n- [ ] `f(1)` or `f(2)` return `3`; `g(1)`, `g(2)`\n- [ ] after `cart.add(\"a\", 3)` and `cart.remove(\"a\")`, `cart.quantity(\"a\")` returns `0`"
        );
        let listed: Vec<(&str, &str, &str)> = listed
            .iter()
            .map(|e| (e.call.as_str(), e.comparison, e.expected.as_str()))
            .collect();
        assert_eq!(
            listed,
            [
                ("parse_quantity(\"abc\")", "raises", "ValueError"),
                ("parse_quantity(\"2.5\")", "raises", "ValueError"),
                ("parse_quantity(\"-1\")", "raises", "ValueError"),
                ("f(1)", "==", "3"),
                ("f(2)", "==", "3"),
                ("cart.quantity(\"a\")", "==", "0"),
            ]
        );
        // A signature, a prose error and a lower-case word are no raising examples.
        assert!(examples(
            "`median(values)` raises `ValueError`; `f(1)` raises an error; `g(2)` raises `oops`"
        )
        .is_empty());
    }

    #[test]
    fn a_raising_example_is_carried_by_its_call_and_its_exception() {
        let found = examples(
            "- [ ] `cart.add(\"apple\", 0)` raises `ValueError`\n- [ ] `Cart().remove(\"kiwi\")` raises `KeyError`",
        );
        assert_eq!(found.len(), 2, "{found:?}");
        let tests = "def test_zero():\n    cart = Cart()\n    with pytest.raises(ValueError):\n        cart.add('apple', 0)\n\ndef test_kiwi():\n    cart = Cart()\n    with raises(KeyError):\n        cart.remove('kiwi')\n";
        assert!(found[0].carried_by(tests));
        assert!(found[1].carried_by(tests), "on an object made before");
        let compared = "def test_story_examples():\n    assert Cart.add(\"apple\", 0) == pytest.raises(TypeError)\n";
        assert!(!found[0].carried_by(compared));
        assert!(!found[1].carried_by(compared));
    }

    #[test]
    fn an_example_is_carried_over_only_as_written() {
        let example =
            &examples("`word_count('The cat, the hat.') == {'the': 2, 'cat': 1, 'hat': 1}`")[0];
        let written = "def test_counts():\n    assert word_count(\"The cat, the hat.\") == {\"the\": 2, \"cat\": 1, \"hat\": 1}\n";
        assert!(example.carried_by(written));
        let changed = "def test_counts():\n    assert word_count('the cat the hat') == {'the': 2, 'cat': 1, 'hat': 1}\n";
        assert!(!example.carried_by(changed));
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-05): the call and the value, apart.
        let rankine = &examples("- [ ] `to_rankine(0)` returns `491.67`")[0];
        let apart = "def test_story_examples():\n    assert units.to_fahrenheit(0) == 491.67\n    assert units.to_rankine(0) == units.to_fahrenheit(0)\n";
        assert!(!rankine.carried_by(apart));
        assert!(rankine.carried_by("    assert units.to_rankine(0) == 491.67\n"));
    }

    #[test]
    fn a_value_kept_in_a_name_then_compared_alone_carries_the_example() {
        let example = &examples("- [ ] `top_student()` returns `\"Ana\"`")[0];
        let kept = "def test_top():\n    book = Book()\n    top = book.top_student()\n\n    assert top == 'Ana'\n";
        assert!(example.carried_by(kept));
        let reversed = kept.replace("top == 'Ana'", "'Ana' == top");
        assert!(example.carried_by(&reversed));
        // Another value, the name made again, or another test's name: not the example.
        assert!(!example.carried_by(&kept.replace("'Ana'", "'Bo'")));
        let again = "def test_top():\n    top = book.top_student()\n    top = 'Ana'\n    assert top == 'Ana'\n";
        assert!(!example.carried_by(again));
        let other = "def test_top():\n    top = book.top_student()\n\ndef test_other():\n    top = 'Ana'\n    assert top == 'Ana'\n";
        assert!(!example.carried_by(other));
        let compared = "def test_top():\n    top = book.top_student()\n    assert top == 'Ana' or top == 'Bo'\n";
        assert!(!example.carried_by(compared));
        // A message after the comparison keeps it the comparison; a longer value does not.
        assert!(example.carried_by(&kept.replace("'Ana'\n", "'Ana', f'got {top}'\n")));
        assert!(!example.carried_by(&kept.replace("'Ana'\n", "'Ana' + 'x'\n")));
        let number = &examples("- [ ] `total()` returns `5`")[0];
        let fifty = "def test_total():\n    t = cart.total()\n    assert t == 50, 'total'\n";
        assert!(!number.carried_by(fifty));
        assert!(number.carried_by(&fifty.replace("50", "5")));
        let is = &examples("- [ ] `is_empty()` is `True`")[0];
        assert!(
            is.carried_by("def test_it():\n    empty = b.is_empty()\n    assert empty is True\n")
        );
    }

    #[test]
    fn a_call_without_an_import_gets_the_import_of_the_file_the_story_names() {
        let named = vec![
            ("slugify".to_string(), "textkit.py".to_string()),
            ("remove".to_string(), "src/inventory/cart.py".to_string()),
            ("median".to_string(), "stats.py".to_string()),
        ];
        // Recorded: Qwen2.5-Coder-1.5B's acceptance test for `slugify`, with no import.
        let tests = "def test_turn_a_title_into_a_url_slug():\n    assert slugify(\"Hello, World!\") == \"hello-world\"\n    cart.remove('a')\n";
        assert_eq!(
            missing_imports(tests, &named),
            vec!["from textkit import slugify".to_string()]
        );
        let imported = format!("from textkit import slugify\n{tests}");
        assert!(missing_imports(&imported, &named).is_empty());
        // Recorded: the model's test of a ValueError, with no `import pytest`.
        let raises = "from inventory.cart import Cart\n\ndef test_refuse():\n    with pytest.raises(ValueError):\n        Cart().add('a', 0)\n";
        assert_eq!(
            missing_imports(raises, &named),
            vec!["import pytest".to_string()]
        );
        assert!(missing_imports(&format!("import pytest\n{raises}"), &named).is_empty());
        assert!(missing_imports(&format!("import os, pytest\n{raises}"), &named).is_empty());
        // Neither binds `pytest` for the test that calls `pytest.raises`.
        for not_binding in [
            "from pytest import raises\n",
            "def helper():\n    import pytest\n",
        ] {
            assert_eq!(
                missing_imports(&format!("{not_binding}{raises}"), &named),
                vec!["import pytest".to_string()],
                "{not_binding}"
            );
        }
        assert_eq!(
            python_module("inventory/__init__.py").as_deref(),
            Some("inventory")
        );
        assert_eq!(python_module("my-file.py"), None);
    }
}
