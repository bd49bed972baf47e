//! What the acceptance check mends in a Python test file the model wrote before it judges the
//! file (docs/design.md §21): the small model's slips that no code could pass, or that test
//! something the story does not ask, taken out or set right, each said in a note.

use std::path::Path;

use crate::agents::prompts::backticked;

use super::{bare_methods, story_objects};
use crate::workflow::asserted_objects::{caught_records_mended, module_memberships_mended};
use crate::workflow::copied_code;
use crate::workflow::definition_merge::parameter_names;
use crate::workflow::example_setups::setups_completed;
use crate::workflow::examples::{
    add_missing_imports, file_names_dropped, unused_self_dropped, Example,
};
use crate::workflow::invented_expectations::without_invented_expectations;
use crate::workflow::loose_assertions::loose_assertions_gathered;
use crate::workflow::misplaced_imports::{
    definitions_imported_as_modules, python_names_unimported,
};
use crate::workflow::python_imports::{imports_from_homes, without_imports_of_itself};
use crate::workflow::python_lines::{definition_block, indent, kept_lines};
use crate::workflow::raising_setups::raised_calls_made_before;
use crate::workflow::unbound_names::standard_imports_added;
use crate::workflow::unknown_methods;

/// The story a test file is mended for.
pub struct Mends<'a> {
    /// The story's tree.
    pub dir: &'a Path,
    /// Its title, summary and criteria.
    pub story_text: &'a str,
    pub examples: &'a [Example],
    /// The names it mentions.
    pub story_names: &'a [String],
    /// The functions it names, each with its file.
    pub homes: &'a [(String, String)],
}

impl Mends<'_> {
    /// Mends the Python test file `path`; one note for each thing done.
    pub fn mend(&self, path: &str) -> Vec<String> {
        let mut notes = Vec::new();
        notes.extend(self.drop_file_names(path));
        notes.extend(self.drop_unused_self(path));
        notes.extend(self.drop_imports_of_itself(path));
        notes.extend(self.import_definitions_from_modules(path));
        notes.extend(self.import_nothing_of_pythons_own(path));
        notes.extend(self.drop_calls_of_tests(path));
        notes.extend(self.drop_unknown_parameters(path));
        notes.extend(self.drop_raises_as_values(path));
        notes.extend(self.mend_comparisons_with_exceptions(path));
        notes.extend(self.read_caught_records_as_exceptions(path));
        notes.extend(self.ask_modules_with_hasattr(path));
        notes.extend(self.gather_loose_assertions(path));
        notes.extend(self.drop_raised_calls_made_before(path));
        notes.extend(self.make_objects_from_classes(path));
        notes.extend(self.make_story_objects(path));
        notes.extend(self.call_methods_on_objects(path));
        notes.extend(self.complete_example_setups(path));
        if let Some(taken) = copied_code::take_out(self.dir, path, self.homes) {
            notes.push(taken.note(path));
        }
        notes.extend(self.import_from_homes(path));
        notes.extend(self.add_imports(path));
        notes.extend(self.import_unbound_standard_names(path));
        notes.extend(self.take_out_invented(path));
        let story = unknown_methods::StoryCalls {
            names: self.story_names,
            story_text: self.story_text,
        };
        notes.extend(unknown_methods::take_out(self.dir, path, &story));
        notes
    }

    /// Rewrites `path` with `mended` of its text, when that gives a new text.
    fn rewrite(&self, path: &str, mended: impl FnOnce(&str) -> Option<String>) -> Option<()> {
        let full = self.dir.join(path);
        let text = std::fs::read_to_string(&full).ok()?;
        let new = mended(&text)?;
        crate::atomic_file::write(&full, new.as_bytes()).ok()
    }

    /// Imports the standard names `path` uses and never binds ([`standard_imports_added`]).
    fn import_unbound_standard_names(&self, path: &str) -> Option<String> {
        let mut added = Vec::new();
        self.rewrite(path, |text| {
            let (mended, imports) = standard_imports_added(path, text)?;
            added = imports;
            Some(mended)
        })?;
        Some(format!(
            "added {} to `{path}`",
            backticked(added.iter().map(String::as_str))
        ))
    }

    /// Drops the lines that hold nothing but a file's name ([`file_names_dropped`]).
    fn drop_file_names(&self, path: &str) -> Option<String> {
        self.rewrite(path, file_names_dropped)?;
        Some(format!(
            "took the lines of `{path}` that held only a file's name out: Python reads them as code"
        ))
    }

    /// Takes a `self` no top-level test uses out of its parameters ([`unused_self_dropped`]):
    /// pytest asks for a fixture named `self`, and every such test errors whatever the code
    /// is (transit `fares-module`, 2026-12-06, the 1.5B model's four tests of `fare`).
    fn drop_unused_self(&self, path: &str) -> Option<String> {
        self.rewrite(path, unused_self_dropped)?;
        Some(format!(
            "took the unused `self` out of the tests of `{path}`: a test outside a class takes none"
        ))
    }

    /// Drops the file's imports of its own module ([`without_imports_of_itself`]): a 1.5B
    /// model began its test file `test_add_to_celsius.py` with `import test_add_to_celsius`
    /// (a drive, 2026-11-29).
    fn drop_imports_of_itself(&self, path: &str) -> Option<String> {
        // pytest imports `tests/test_x.py` as `test_x` too.
        let file_name = Path::new(path).file_name()?.to_string_lossy().into_owned();
        self.rewrite(path, |text| {
            let kept = without_imports_of_itself(text, path);
            let kept = without_imports_of_itself(&kept, &file_name);
            (kept != text).then_some(kept)
        })?;
        Some(format!("took `{path}`'s import of itself out"))
    }

    /// Imports a function or class imported as a module from its module
    /// ([`definitions_imported_as_modules`]).
    fn import_definitions_from_modules(&self, path: &str) -> Option<String> {
        self.rewrite(path, |text| definitions_imported_as_modules(self.dir, text))?;
        Some(format!(
            "imported the functions and classes that `{path}` imported as modules from their \
             modules: `import module.function` fails before any test runs"
        ))
    }

    /// Takes Python's own names out of imports from the project's modules
    /// ([`python_names_unimported`]).
    fn import_nothing_of_pythons_own(&self, path: &str) -> Option<String> {
        self.rewrite(path, |text| python_names_unimported(self.dir, text))?;
        Some(format!(
            "took Python's own names out of `{path}`'s imports from the project: they need no \
             import, and no module of the project gives them"
        ))
    }

    /// Drops the statements outside any function that call a test ([`without_calls_of_tests`]).
    fn drop_calls_of_tests(&self, path: &str) -> Option<String> {
        self.rewrite(path, without_calls_of_tests)?;
        Some(format!(
            "took the calls of tests out of the top of `{path}`: pytest calls the tests itself"
        ))
    }

    /// Drops the `parametrize` decorators that name arguments their test does not take
    /// ([`without_unknown_parameters`]).
    fn drop_unknown_parameters(&self, path: &str) -> Option<String> {
        self.rewrite(path, without_unknown_parameters)?;
        Some(format!(
            "took the `parametrize` decorators of `{path}` whose names their test does not take \
             out: pytest cannot collect such a test"
        ))
    }

    /// Drops the `parametrize` cases that give a `pytest.raises` as a value to compare
    /// ([`without_raises_as_values`]).
    fn drop_raises_as_values(&self, path: &str) -> Option<String> {
        self.rewrite(path, without_raises_as_values)?;
        Some(format!(
            "took the `parametrize` cases of `{path}` that gave `pytest.raises(…)` as a value out: \
             a call that raises returns nothing to compare, and a raise is a test of its own"
        ))
    }

    /// Turns each `assert f(x) == ValueError` into a `pytest.raises` block
    /// ([`exception_comparisons_mended`]).
    fn mend_comparisons_with_exceptions(&self, path: &str) -> Option<String> {
        self.rewrite(path, exception_comparisons_mended)?;
        Some(format!(
            "made the assertions of `{path}` that compared a call with an exception \
             `pytest.raises` blocks: a call that raises returns nothing to compare"
        ))
    }

    /// Reads `str(caught)` after `pytest.raises(…) as caught` as `str(caught.value)`
    /// ([`caught_records_mended`]).
    fn read_caught_records_as_exceptions(&self, path: &str) -> Option<String> {
        self.rewrite(path, |text| caught_records_mended(text, self.story_text))?;
        Some(format!(
            "read the caught exceptions of `{path}` through `.value` (`str(caught.value)`): \
             `pytest.raises(…) as caught` gives pytest's record of the exception, not the \
             exception (a message the story says contains a value is asked with `in`)"
        ))
    }

    /// Asks a module for a name with `hasattr` where a test used `in`
    /// ([`module_memberships_mended`]).
    fn ask_modules_with_hasattr(&self, path: &str) -> Option<String> {
        self.rewrite(path, |text| module_memberships_mended(self.dir, text))?;
        Some(format!(
            "asked the modules of `{path}` for their names with `hasattr(module, \"Name\")`: \
             `\"Name\" in module` raises `TypeError` whatever the module holds"
        ))
    }

    /// Gathers the assertions and `pytest.raises` blocks a Python test file holds outside any
    /// test function into tests (`loose_assertions_gathered`); says so.
    fn gather_loose_assertions(&self, path: &str) -> Option<String> {
        self.rewrite(path, |text| {
            loose_assertions_gathered(text, "story_examples")
        })?;
        Some(format!(
            "gathered the assertions of `{path}` that stood outside any test into \
             `test_story_examples` (each `pytest.raises` block, and each `try` that asserts, \
             into a test of its own)"
        ))
    }

    /// Takes out the calls a test makes before the `pytest.raises` block that expects the
    /// same call to raise ([`raised_calls_made_before`]).
    fn drop_raised_calls_made_before(&self, path: &str) -> Option<String> {
        let mut taken = Vec::new();
        self.rewrite(path, |text| {
            let (mended, calls) = raised_calls_made_before(text)?;
            taken = calls;
            Some(mended)
        })?;
        Some(format!(
            "took `{}` out of `{path}`: made before the `pytest.raises` block that expects the same call to raise, it raised first",
            taken.join("`, `")
        ))
    }

    /// Makes `cart = cart.Cart()` in a test `cart = Cart()` ([`story_objects::made_from_own_module`]).
    fn make_objects_from_classes(&self, path: &str) -> Option<String> {
        let mut imported = Vec::new();
        self.rewrite(path, |text| {
            let (text, imports) = story_objects::made_from_own_module(self.dir, text)?;
            imported = imports;
            Some(text)
        })?;
        Some(format!(
            "made the objects of `{path}` that were made from their own name from the class, with `{}`",
            imported.join("`, `")
        ))
    }

    /// Makes the story's objects that tests call methods on unmade ([`story_objects::objects_made`]).
    fn make_story_objects(&self, path: &str) -> Option<String> {
        let mut made = Vec::new();
        self.rewrite(path, |text| {
            let (text, objects) = story_objects::objects_made(self.dir, text, self.story_text)?;
            made = objects;
            Some(text)
        })?;
        let each: Vec<String> = made
            .iter()
            .map(|object| format!("`{} = {}`", object.name, object.made))
            .collect();
        Some(format!(
            "began the tests of `{path}` that use the story's objects unmade with {}",
            each.join(", ")
        ))
    }

    /// Makes each bare call of a method of the story's a call on a new object of its class
    /// ([`bare_methods::called_on_objects`]).
    fn call_methods_on_objects(&self, path: &str) -> Option<String> {
        let mut mended = Vec::new();
        self.rewrite(path, |text| {
            let (text, bare) = bare_methods::called_on_objects(self.dir, text, self.story_text)?;
            mended = bare;
            Some(text)
        })?;
        let each: Vec<String> = mended
            .iter()
            .map(|bare| format!("`{}` on a new `{}`", bare.name, bare.class))
            .collect();
        Some(format!(
            "called {} in `{path}`: the story makes them methods, not functions to import",
            each.join(", ")
        ))
    }

    /// Adds to each test asserting an example the calls the story makes before it that the test
    /// lacks ([`setups_completed`]).
    fn complete_example_setups(&self, path: &str) -> Option<String> {
        let mut added = Vec::new();
        self.rewrite(path, |text| {
            let (text, setups) = setups_completed(text, self.examples, self.story_text)?;
            added = setups;
            Some(text)
        })?;
        let each: Vec<String> = added
            .iter()
            .map(|setup| match &setup.replaced {
                None => format!("`{}` to `{}`", setup.call, setup.test),
                Some(own) => format!("`{}` for `{own}` to `{}`", setup.call, setup.test),
            })
            .collect();
        Some(format!(
            "added {} in `{path}`: the story makes those calls before the value it asserts",
            each.join(", ")
        ))
    }

    /// Takes the expectations the story does not give out of a Python test file where the story
    /// pins the function down with examples (docs/design.md §21); says what it took out.
    fn take_out_invented(&self, path: &str) -> Option<String> {
        let mut removed = Vec::new();
        self.rewrite(path, |text| {
            let pruned = without_invented_expectations(text, self.examples, self.story_text)?;
            removed = pruned.removed;
            Some(pruned.text)
        })?;
        Some(format!(
            "took `{}` out of `{path}`: the story's own examples and values are what it asks",
            removed.join("`, `")
        ))
    }

    /// Adds the imports a Python test file lacks for the story's functions (a small model
    /// calls `slugify` without importing it) and for the modules of the tree it calls through
    /// (`inventory.pricing.total_with_discount(…)` with no `import inventory.pricing`); says
    /// what it added.
    /// Imports each function the story names from its file where the tests take it from a
    /// module that does not define it ([`imports_from_homes`]).
    fn import_from_homes(&self, path: &str) -> Option<String> {
        let mut replaced = Vec::new();
        self.rewrite(path, |text| {
            let (mended, lines) = imports_from_homes(self.dir, text, self.homes)?;
            replaced = lines;
            Some(mended)
        })?;
        Some(format!(
            "`{}` in `{path}` now imports from the file the story names instead",
            replaced.join("`, `")
        ))
    }

    fn add_imports(&self, path: &str) -> Option<String> {
        let imports = add_missing_imports(self.dir, path, self.homes)?;
        Some(format!("added `{}` to `{path}`", imports.join("`, `")))
    }
}

/// `text` without the statements at its top level that call a test (`test_x(…)`, with the
/// lines a call's open brackets carry on); `None` when it has none. Recorded from the 1.5B
/// model (textkit `word-count`, 2026-12-05): `test_word_count_empty_string('assert
/// word_count("") == 0')` under an import of the file itself, four times. Its import of the
/// missing `word_count` failed first on the base, as a feature's test should; once the code
/// was there, the file failed on `NameError` in every round.
fn without_calls_of_tests(text: &str) -> Option<String> {
    let mut kept = Vec::new();
    let mut open_brackets = 0i32;
    let mut dropped = false;
    for line in text.lines() {
        let calls_a_test = line.starts_with("test")
            && line
                .split_once('(')
                .is_some_and(|(name, _)| name.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if open_brackets > 0 || calls_a_test {
            open_brackets += line.matches(['(', '[', '{']).count() as i32
                - line.matches([')', ']', '}']).count() as i32;
            open_brackets = open_brackets.max(0);
            dropped = true;
            continue;
        }
        kept.push(line);
    }
    dropped.then(|| {
        let mut out = kept.join("\n");
        out.push('\n');
        out
    })
}

/// `text` without the `@pytest.mark.parametrize(…)` decorators that name an argument the test
/// under them does not take; `None` when it has none. pytest fails the whole file's collection
/// on one ("function uses no argument 'celsius'"), so no code could make it pass.
fn without_unknown_parameters(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut gone = vec![false; lines.len()];
    for (start, decorator) in decorators(&lines) {
        let taken = parameter_names(&lines[start..].join("\n"));
        let names = parametrized_names(&lines[decorator.clone()].join("\n"));
        if names.is_some_and(|names| names.iter().any(|name| !taken.contains(name))) {
            gone[decorator].iter_mut().for_each(|flag| *flag = true);
        }
    }
    gone.contains(&true)
        .then(|| format!("{}\n", kept_lines(&lines, &gone).trim_end()))
}

/// `text` without the cases of a `parametrize` list that give a `pytest.raises(…)` as a value,
/// each on a line of its own, where the test never enters it with `with`; `None` when it has
/// none, and a list whose cases would all go stays. Recorded from the 1.5B model (orchard
/// `pricing-module`, 2026-12-06): `(1000, -5, pytest.raises(ValueError))` among the cases of
/// `assert load_value(grams, cents_per_kg) == expected`, which raises in the test whatever the
/// code is; the story's raising example is a test of its own beside it.
fn without_raises_as_values(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut gone = vec![false; lines.len()];
    for (start, decorator) in decorators(&lines) {
        let Some(names) = parametrized_names(&lines[decorator.clone()].join("\n")) else {
            continue;
        };
        let body = &lines[start..definition_block(&lines, start).end];
        let entered = body.iter().any(|line| {
            let line = line.trim_start();
            names.iter().any(|name| {
                line.strip_prefix("with ")
                    .is_some_and(|rest| rest.trim_start().starts_with(name.as_str()))
            })
        });
        let cases = decorator.start + 1..decorator.end;
        let raising: Vec<usize> = cases
            .clone()
            .filter(|&at| {
                let case = lines[at].trim_start();
                case.starts_with(['(', '[']) && case.contains("pytest.raises(")
            })
            .collect();
        let kept = cases
            .filter(|&at| lines[at].trim_start().starts_with(['(', '[']))
            .count()
            - raising.len();
        if !entered && kept > 0 {
            raising.into_iter().for_each(|at| gone[at] = true);
        }
    }
    gone.contains(&true)
        .then(|| format!("{}\n", kept_lines(&lines, &gone).trim_end()))
}

/// Each decorator of each function of `lines`, as the line of its `def` and the decorator's
/// lines (to the next line at its own depth).
fn decorators(lines: &[&str]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let definition = line.trim_start();
        if !(definition.starts_with("def ") || definition.starts_with("async def ")) {
            continue;
        }
        let mut decorator = crate::agents::tools::decorators_start(lines, start);
        while decorator < start {
            let depth = indent(lines[decorator]);
            let end = (decorator + 1..=start)
                .find(|&at| {
                    indent(lines[at]) == depth
                        && !lines[at].trim_start().starts_with([')', ']', '}'])
                })
                .unwrap_or(start);
            found.push((start, decorator..end));
            decorator = end;
        }
    }
    found
}

/// `text` with each `assert <call> == <Exception>` (or `is`) written as the `pytest.raises`
/// block it means; `None` when it has none. Recorded from the 1.5B model (inventory
/// `parse-quantity`, 2026-12-05): `assert parse_quantity("abc") == ValueError` for a story
/// whose criterion says the call raises `ValueError`. Such a line can never pass, and the tool
/// took the three out as expectations the story does not give.
fn exception_comparisons_mended(text: &str) -> Option<String> {
    let mut changed = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let indent = &line[..indent(line)];
            let mended = line
                .trim()
                .strip_prefix("assert ")
                .and_then(|rest| {
                    rest.rsplit_once(" == ")
                        .or_else(|| rest.rsplit_once(" is "))
                })
                .filter(|(call, exception)| {
                    let exception = exception.trim();
                    call.trim_end().ends_with(')')
                        && (exception.ends_with("Error") || exception.ends_with("Exception"))
                        && exception.rsplit('.').next().is_some_and(|class| {
                            class.starts_with(|c: char| c.is_ascii_uppercase())
                        })
                        && exception
                            .chars()
                            .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                });
            match mended {
                Some((call, exception)) => {
                    changed = true;
                    format!(
                        "{indent}with pytest.raises({}):\n{indent}    {}",
                        exception.trim(),
                        call.trim()
                    )
                }
                None => line.to_string(),
            }
        })
        .collect();
    changed.then(|| format!("{}\n", lines.join("\n")))
}

/// The argument names a `@pytest.mark.parametrize("a, b", …)` decorator gives (its first
/// argument, a string); `None` for any other decorator, or one whose names are not a plain
/// string.
fn parametrized_names(decorator: &str) -> Option<Vec<String>> {
    let arguments = decorator
        .trim_start()
        .strip_prefix("@pytest.mark.parametrize(")?
        .trim_start();
    let quote = arguments
        .chars()
        .next()
        .filter(|c| *c == '"' || *c == '\'')?;
    let names = arguments[1..].split(quote).next()?;
    Some(
        names
            .split(',')
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::{
        exception_comparisons_mended, without_calls_of_tests, without_raises_as_values,
        without_unknown_parameters,
    };

    #[test]
    fn a_call_compared_with_an_exception_becomes_a_raises_block() {
        let recorded = "assert parse_quantity(\" 3 \") == 3\nassert parse_quantity(\"abc\") == ValueError\n\ndef test_x():\n    assert ledger.post(-1) is ledger.LedgerError\n    assert kind == ValueError\n";
        assert_eq!(
            exception_comparisons_mended(recorded).unwrap(),
            "assert parse_quantity(\" 3 \") == 3\nwith pytest.raises(ValueError):\n    parse_quantity(\"abc\")\n\ndef test_x():\n    with pytest.raises(ledger.LedgerError):\n        ledger.post(-1)\n    assert kind == ValueError\n"
        );
        assert_eq!(
            exception_comparisons_mended("assert f(1) == 'Error'\n"),
            None
        );
    }

    #[test]
    fn a_parametrize_naming_arguments_the_test_does_not_take_is_taken_out() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-05), shortened.
        let recorded = "import pytest\n\n@pytest.mark.parametrize(\"celsius, expected\", [\n    (0, 491.67),\n])\n@pytest.mark.slow\ndef test_example():\n    assert to_rankine(0) == 491.67\n\n\n@pytest.mark.parametrize('celsius,expected', [(0, 491.67)])\ndef test_to_rankine(celsius, expected: float):\n    assert to_rankine(celsius) == expected\n";
        assert_eq!(
            without_unknown_parameters(recorded).unwrap(),
            "import pytest\n\n@pytest.mark.slow\ndef test_example():\n    assert to_rankine(0) == 491.67\n\n\n@pytest.mark.parametrize('celsius,expected', [(0, 491.67)])\ndef test_to_rankine(celsius, expected: float):\n    assert to_rankine(celsius) == expected\n"
        );
        let taken = "@pytest.mark.parametrize(\"x\", [1])\ndef test_x(\n    x,\n):\n    assert x\n";
        assert_eq!(without_unknown_parameters(taken), None);
    }

    #[test]
    fn a_parametrize_case_giving_a_raise_as_a_value_is_taken_out() {
        // Recorded (Qwen2.5-Coder-1.5B, orchard `pricing-module`, 2026-12-06).
        let recorded = "import pytest\nfrom orchard.pricing import load_value\n\n@pytest.mark.parametrize(\"grams,cents_per_kg,expected\", [\n    (2500, 180, 450),\n    (333, 100, 33),\n    (1000, -5, pytest.raises(ValueError))\n])\ndef test_load_value(grams, cents_per_kg, expected):\n    assert load_value(grams, cents_per_kg) == expected\n\n\ndef test_load_value_example_5():\n    with pytest.raises(ValueError): load_value(1000, -5)\n";
        assert_eq!(
            without_raises_as_values(recorded).unwrap(),
            recorded.replace("    (1000, -5, pytest.raises(ValueError))\n", "")
        );
        // A test that enters the case's value, or a list of nothing else, stays as it is.
        let entered = recorded.replace(
            "    assert load_value(grams, cents_per_kg) == expected",
            "    with expected:\n        load_value(grams, cents_per_kg)",
        );
        assert_eq!(without_raises_as_values(&entered), None);
        let only = "@pytest.mark.parametrize(\"x,e\", [\n    (-1, pytest.raises(ValueError)),\n])\ndef test_x(x, e):\n    assert f(x) == e\n";
        assert_eq!(without_raises_as_values(only), None);
    }

    #[test]
    fn calls_of_tests_at_the_top_of_the_file_are_taken_out() {
        let recorded = "from textkit import word_count\ntest_word_count_empty_string('assert word_count(\"\") == 0')\n\ntest_word_count_multiple_words(\n    'assert word_count(\"  a   b \") == 2')\n\ndef test_story_examples():\n    assert word_count(\"hello big world\") == 3\n    test_helper = 1\n";
        assert_eq!(
            without_calls_of_tests(recorded).unwrap(),
            "from textkit import word_count\n\n\ndef test_story_examples():\n    assert word_count(\"hello big world\") == 3\n    test_helper = 1\n"
        );
        assert_eq!(
            without_calls_of_tests("def test_a():\n    test_b()\ntesting = (1)\n"),
            None
        );
    }
}
