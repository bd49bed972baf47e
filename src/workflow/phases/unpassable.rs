//! Acceptance tests no code can pass, or that check nothing (docs/design.md §21): a file that
//! fails at its collection on something other than what the story adds, a file of no test, a
//! patch of what no module has, two tests that assert two values for the same steps.

use std::path::Path;

use crate::agents::prompts::{is_test_path, mentioned_names};
use crate::workflow::pytest_report::sections;
use crate::workflow::python_imports::{collection_error, defines, module_source};
use crate::workflow::python_lines::{def_line, definition_block};
use crate::workflow::story_classes::{class_of, method_owner};
use crate::workflow::unknown_methods::methods_of;

/// Why the tests of pytest's `output` (run in the tree at `dir`) can never pass, when a file of
/// them failed to collect on something the story's code cannot change, or a test calls a
/// method on the module where the story has an object of its class; `None` when neither.
pub fn never_passing(dir: &Path, output: &str, story_text: &str) -> Option<String> {
    if let Some((error, module, class)) = module_for_object(dir, output, story_text) {
        return Some(format!(
            "the tests fail with `{error}`: `{module}` there is the module, while the story's `{module}` is a `{class}` object; make it in each test (`{module} = {class}()`) before calling its methods"
        ));
    }
    if let Some(place) = unbound_in_tests(output) {
        return Some(format!(
            "the tests fail with `UnboundLocalError` at {place}: a test uses a name before it assigns it (`cart = cart.Cart()` makes `cart` local to the test), which no code can change; import the class and make the object with `cart = Cart()`"
        ));
    }
    if let Some(name) = missing_fixture(output) {
        return Some(format!(
            "the tests take a parameter `{name}` that no fixture gives, and pytest errors on \"fixture '{name}' not found\" whatever the code is: make what a test needs inside it (`{name} = …`), and give a test outside a class no parameters"
        ));
    }
    let error = collection_error(output)?;
    if error.is_what_the_story_adds(story_text) {
        return None;
    }
    Some(format!(
        "`{}` fails before any of its tests runs, with `{}`, and the story's code cannot change that: call the code only inside `def test_…` functions, with the arguments the story gives",
        error.file, error.error
    ))
}

/// Why the test files `tests` (relative to `dir`) check nothing, when a Python one holds no
/// `def test…`: its import fails before the code, yet it checks nothing once the code is
/// there. The tool's mends left only an import of a 1.5B model's one invented assertion (a
/// drive, 2026-11-29), and implement had nothing to pass.
pub fn holds_no_test(dir: &Path, tests: &[String]) -> Option<String> {
    let empty = tests.iter().find(|path| {
        path.ends_with(".py")
            && std::fs::read_to_string(dir.join(path)).is_ok_and(|text| {
                !text
                    .lines()
                    .any(|line| line.trim_start().starts_with("def test"))
            })
    })?;
    Some(format!(
        "`{empty}` holds no test: each criterion of the story must be a `def test_…` function that calls what the story asks for"
    ))
}

/// Why the Python tests `text` (of the tree at `dir`) can never pass, when one patches an
/// attribute of a module of the tree that the module does not define and the story does not
/// name: `patch` fails on a missing attribute before the test runs. A 1.5B model patched
/// `shelf.books.pages_per_hour`, a parameter the story gives `reading_minutes`, as if it were
/// a name of the module (a drive, 2026-12-07). A target outside the tree (`time.time`) is
/// Python's to judge.
pub fn patched_attributes_missing(dir: &Path, text: &str, story_text: &str) -> Option<String> {
    let story_names = mentioned_names(story_text);
    text.split("patch(")
        .skip(1)
        .find_map(|after| {
            let quote = after.trim_start().chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let target = after.trim_start()[1..].split(quote).next()?;
            let (module, attribute) = target.rsplit_once('.')?;
            let (file, source) = module_source(dir, module)?;
            let named = story_names.iter().any(|name| name == attribute)
                && !only_a_keyword_argument(story_text, attribute);
            let missing = !defines(&source, attribute) && !named;
            missing.then(|| (target.to_string(), file))
        })
        .map(|(target, file)| {
            format!(
                "the tests patch `{target}`, which `{file}` does not define and the story does not ask for, so `patch` fails before the test runs: call what the story names with the values it gives instead of patching"
            )
        })
}

/// Whether each use of the word `name` in `text` is a keyword argument of a call
/// (`reading_minutes(45, pages_per_hour=60)`): a parameter, not a name of a module.
fn only_a_keyword_argument(text: &str, name: &str) -> bool {
    let uses: Vec<usize> = text
        .match_indices(name)
        .map(|(at, _)| at)
        .filter(|&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + name.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .collect();
    !uses.is_empty()
        && uses.iter().all(|&at| {
            let before = text[..at].trim_end().chars().next_back();
            let after = text[at + name.len()..].trim_start();
            matches!(before, Some('(' | ',')) && after.starts_with('=') && !after.starts_with("==")
        })
}

/// Why the Python tests `text` can never all pass, when two of its tests make the same steps
/// and then assert that the same expression equals two different values: the 1.5B model wrote
/// `assert delivery_charge(Order(customer)) == 3500` in one test and `== 4500` in the next,
/// for two orders the story describes in words, and implement spent its rounds on them
/// (sawmill `delivery-charge`, 2026-12-07). `None` when no two tests disagree so.
pub fn contradictory_assertions(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    // (the steps before the assertion, the expression) → its first expected value.
    let mut asserted: Vec<((String, String), String)> = Vec::new();
    for start in (0..lines.len()).filter(|&at| lines[at].starts_with("def test")) {
        let block = definition_block(&lines, start);
        let mut steps: Vec<&str> = Vec::new();
        for line in &lines[start + 1..block.end] {
            let statement = line.trim();
            if statement.is_empty() || statement.starts_with('#') {
                continue;
            }
            let compared = statement
                .strip_prefix("assert ")
                .and_then(|rest| rest.split_once(" == "))
                .filter(|(_, value)| !value.contains(" == "));
            if let Some((expression, value)) = compared {
                let key = (steps.join("\n"), expression.trim().to_string());
                // Without the assertion's message (`, "The cut list should …"`).
                let value = [", \"", ", '", ", f\""]
                    .iter()
                    .filter_map(|message| value.find(message))
                    .min()
                    .map_or(value, |at| &value[..at]);
                let value = value.trim().to_string();
                match asserted.iter().find(|(seen, _)| *seen == key) {
                    Some((_, first)) if *first != value => {
                        return Some(format!(
                            "two tests make the same steps, then assert `{}` is `{first}` in one and `{value}` in the other: no code can give both; make in each test what its criterion describes (the objects and values it speaks of) before asserting",
                            key.1
                        ));
                    }
                    Some(_) => {}
                    None => asserted.push((key, value)),
                }
            }
            steps.push(statement);
        }
    }
    None
}

/// The name of the first fixture pytest's `output` says it did not find: a test's parameter
/// that nothing gives (`def test_fare_one_zone(self):`, the 1.5B model's, transit 2026-12-06).
fn missing_fixture(output: &str) -> Option<&str> {
    output.lines().find_map(|line| {
        let (_, after) = line.split_once("fixture '")?;
        let (name, rest) = after.split_once('\'')?;
        rest.starts_with(" not found").then_some(name)
    })
}

/// The place (`tests/test_x.py:2`) of the first `UnboundLocalError` pytest's `output` reports
/// raised in a test file: a name the test assigns, used before it does. The 1.5B model wrote
/// `cart = cart.Cart()` in each test, and the check took the error for a test failing for want
/// of the story's code (a drive, 2026-12-06).
fn unbound_in_tests(output: &str) -> Option<&str> {
    output.lines().find_map(|line| {
        let place = line.strip_suffix(": UnboundLocalError")?;
        let (file, _) = place.rsplit_once(':')?;
        is_test_path(Path::new(file)).then_some(place)
    })
}

/// The first error of pytest's `output` like `module 'cart' has no attribute 'add'` where the
/// story makes `cart` an object of its `Cart` and `add` is a method of `Cart` (in the tree at
/// `dir`, or by the story's word), with the module and the class: no code the story asks for
/// gives the module that attribute, though the story names it. The acceptance check took such
/// a file for one that fails for want of the story's code (a drive, 2026-12-06). A function
/// the story adds to the module (`cart.merge(a, b)`) is no method, and its absence is what the
/// story adds.
fn module_for_object(
    dir: &Path,
    output: &str,
    story_text: &str,
) -> Option<(String, String, String)> {
    output.lines().find_map(|line| {
        // The `E   ` line of a traceback, or a summary line's `- AttributeError: …`.
        let error = line[line.find("AttributeError: module '")?..].trim_end();
        let (module, rest) = error
            .strip_prefix("AttributeError: module '")?
            .split_once('\'')?;
        let attribute = rest
            .strip_prefix(" has no attribute '")?
            .split('\'')
            .next()?;
        let class = class_of(story_text, module.rsplit('.').next()?)?;
        let method = methods_of(dir, &class)
            .is_some_and(|methods| methods.iter().any(|m| m == attribute))
            || method_owner(story_text, attribute).is_some_and(|(_, owner)| owner == class);
        if !method {
            return None;
        }
        Some((error.to_string(), module.to_string(), class))
    })
}

/// Why a test of a feature fails before it reaches anything the story adds: on the base, the
/// line it stopped on calls nothing the story names, the project's own code raised there (not
/// the test, and with an exception the story does not name), and the test goes on to call a
/// name of the story's below. No code of the story can pass it, for the project's code works
/// as it did. Recorded (Qwen2.5-Coder-1.5B, orchard `variety-totals`, 2026-12-06): the test
/// recorded picks as `log.record("R1-T1", "2000")`, which the project's `parse_weight` refuses
/// without a unit, before it asked `log.totals_by_variety()`; implement spent 5 minutes on it.
/// A story that changes what the existing call does names the call, and a bug's test may fail
/// anywhere: the caller checks features only.
pub fn stops_before_the_story(dir: &Path, output: &str, story_text: &str) -> Option<String> {
    let named = mentioned_names(story_text);
    let is_named = |name: &str| named.iter().any(|known| known == name);
    sections(output).into_iter().find_map(|section| {
        let test = section.test()?;
        let stopped = section.stopped_on()?;
        let raised_in = section.raised_in()?;
        let raised = section.raised()?;
        let project_code = !raised_in.starts_with('/')
            && !is_test_path(Path::new(raised_in))
            && dir.join(raised_in).is_file();
        if !project_code || is_named(raised) || called_names(stopped).iter().any(|n| is_named(n)) {
            return None;
        }
        let source = std::fs::read_to_string(dir.join(&test.file)).ok()?;
        let lines: Vec<&str> = source.lines().collect();
        let start = def_line(&lines, &test.name)?;
        let body = &lines[start..definition_block(&lines, start).end];
        let at = body.iter().position(|line| line.trim() == stopped)?;
        let story_call = body[at + 1..]
            .iter()
            .flat_map(|line| called_names(line))
            .find(|name| is_named(name))?;
        Some(format!(
            "`{}` stops at `{stopped}` before it calls `{story_call}`: the project's `{raised_in}` raises `{}` there, as it does now and will after the story, so no code of the story can pass it; call the existing code as it works now (its signature and docstring are in the map), with the values the story gives",
            test.name,
            section.error().unwrap_or(raised)
        ))
    })
}

/// The names `line` calls: `record` and `HarvestLog` of `HarvestLog().record("a", 1)`.
fn called_names(line: &str) -> Vec<&str> {
    line.match_indices('(')
        .filter_map(|(at, _)| {
            let before = &line[..at];
            let start = before
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |i| i + 1);
            let name = &before[start..];
            (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::bare_methods::tests::{tree, CART};
    use super::*;

    #[test]
    fn the_same_steps_asserting_two_values_can_never_pass() {
        // Recorded (Qwen2.5-Coder-1.5B, sawmill `delivery-charge`, 2026-12-07), shortened.
        let tests = "from sawmill.delivery import delivery_charge\nfrom sawmill.orders import Order\n\n\ndef test_story_examples_1():\n    assert delivery_charge(Order(customer)) == 3500\n\n\ndef test_story_examples_2():\n    assert delivery_charge(Order(customer)) == 4500\n";
        let why = contradictory_assertions(tests).unwrap();
        assert!(
            why.contains("`delivery_charge(Order(customer))` is `3500` in one and `4500`"),
            "{why}"
        );
        // Other steps before it, or the same value again, are no contradiction.
        let set_up = "def test_one():\n    order = Order(\"a\")\n    assert total(order) == 1\n\n\ndef test_two():\n    order = Order(\"a\")\n    order.add(\"x\")\n    assert total(order) == 2\n\n\ndef test_again():\n    order = Order(\"a\")\n    assert total(order) == 1\n";
        assert_eq!(contradictory_assertions(set_up), None);
        let messages = "def test_a():\n    assert f(1, 2) == [3, 4], \"one\"\n\n\ndef test_b():\n    assert f(1, 2) == [3, 4], \"two\"\n\n\ndef test_c():\n    assert f(1, 2) == [4, 3]\n";
        assert!(contradictory_assertions(messages)
            .unwrap()
            .contains("`f(1, 2)` is `[3, 4]` in one and `[4, 3]`"));
    }

    const STORY: &str = "Count the items in the cart\n\
        - [ ] after `cart.add(\"apple\", 3)`, `cart.total_items()` on the `Cart` returns `3`\n";

    // Recorded (pytest 8, a drive's acceptance run, 2026-12-06), shortened.
    const OUTPUT: &str = "\n==================================== ERRORS ====================================\n__________ ERROR collecting tests/test_count_the_items_in_the_cart.py __________\ntests/test_count_the_items_in_the_cart.py:5: in <module>\n    cart.add(\"apple\", 3)\n    ^^^^^^^^\nE   AttributeError: module 'cart' has no attribute 'add'\n=========================== short test summary info ============================\nERROR tests/test_count_the_items_in_the_cart.py - AttributeError: module 'car...\n!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n1 error in 0.07s\n";

    #[test]
    fn a_module_called_where_the_story_has_an_object_of_its_class_is_refused() {
        let dir = tree(CART);
        let why = never_passing(dir.path(), OUTPUT, STORY).expect("refused");
        assert!(
            why.contains("with `AttributeError: module 'cart' has no attribute 'add'`"),
            "{why}"
        );
        assert!(why.contains("`cart = Cart()`"), "{why}");
        // In a test, not at the collection, it is the same.
        let in_test = "FAILED tests/test_c.py::test_story_examples - AttributeError: module 'cart' has no attribute 'total_items'\nE       AttributeError: module 'cart' has no attribute 'total_items'\n1 failed in 0.02s\n";
        let why = never_passing(dir.path(), in_test, STORY).expect("refused");
        assert!(why.contains("'total_items'`"), "{why}");
        // Without a `Cart` in the story, `add` is what the story names, and it may add it.
        let story = "Add `add` to cart.py: `cart.add(\"apple\", 3)` returns `3`\n";
        assert_eq!(never_passing(dir.path(), OUTPUT, story), None);
        // A function the story adds to the module is no method of the class.
        let story = "Add a function `merge(a, b)` to cart.py that returns a new `Cart`\n";
        let merging = OUTPUT.replace("attribute 'add'", "attribute 'merge'");
        assert_eq!(never_passing(dir.path(), &merging, story), None);
    }

    #[test]
    fn a_feature_test_stopped_by_the_project_code_before_the_story_is_refused() {
        // Recorded (Qwen2.5-Coder-1.5B and pytest 8, orchard `variety-totals`, 2026-12-06),
        // shortened.
        let test = "from orchard.harvest import HarvestLog\n\ndef test_harvest_totals_per_variety():\n    log = HarvestLog(\"R1\")\n    log.plant(\"R1-T1\", \"Gala\")\n    log.record(\"R1-T1\", \"2000\")\n    assert log.totals_by_variety() == {\"Gala\": 2000}\n";
        let output = "_______________________ test_harvest_totals_per_variety ________________________\n\n    def test_harvest_totals_per_variety():\n        log = HarvestLog(\"R1\")\n        log.plant(\"R1-T1\", \"Gala\")\n>       log.record(\"R1-T1\", \"2000\")\n\ntests/test_harvest_totals_per_variety.py:6: \n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \norchard/harvest.py:34: in record\n    grams = parse_weight(weight) if isinstance(weight, str) else weight\n_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n\n>       raise ValueError(f\"unknown weight unit in {text!r}\")\nE       ValueError: unknown weight unit in \'2000\'\n\norchard/units.py:26: ValueError\n=========================== short test summary info ============================\nFAILED tests/test_harvest_totals_per_variety.py::test_harvest_totals_per_variety\n1 failed, 14 passed in 0.04s\n";
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("orchard")).unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("orchard/units.py"),
            "def parse_weight(text):\n    pass\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("orchard/harvest.py"),
            "class HarvestLog:\n    pass\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tests/test_harvest_totals_per_variety.py"),
            test,
        )
        .unwrap();
        let story = "Add a method `totals_by_variety()` to the `HarvestLog` class in `orchard/harvest.py`.\n- [ ] A log with no trees planted returns `{}`\n";
        let why = stops_before_the_story(dir.path(), output, story).expect("refused");
        assert!(
            why.contains(
                "stops at `log.record(\"R1-T1\", \"2000\")` before it calls `totals_by_variety`"
            ),
            "{why}"
        );
        assert!(
            why.contains("`orchard/units.py` raises `ValueError: unknown weight unit in '2000'`"),
            "{why}"
        );
        // A story that names the call changes what it does; one that names the exception
        // expects it; a test that calls nothing of the story's after it is about other work.
        let names_record = format!("{story}- [ ] `log.record(\"R1-T1\", \"2000\")` takes grams\n");
        assert_eq!(
            stops_before_the_story(dir.path(), output, &names_record),
            None
        );
        let names_error = format!("{story}- [ ] a bad weight raises `ValueError`\n");
        assert_eq!(
            stops_before_the_story(dir.path(), output, &names_error),
            None
        );
        let other = test.replace("log.totals_by_variety()", "log.total(\"R1-T1\")");
        std::fs::write(
            dir.path().join("tests/test_harvest_totals_per_variety.py"),
            other,
        )
        .unwrap();
        assert_eq!(stops_before_the_story(dir.path(), output, story), None);
        // Raised in the test itself, it is not the project's code.
        std::fs::write(
            dir.path().join("tests/test_harvest_totals_per_variety.py"),
            test,
        )
        .unwrap();
        let in_test = output.replace(
            "orchard/units.py:26: ValueError",
            "tests/test_harvest_totals_per_variety.py:6: ValueError",
        );
        assert_eq!(stops_before_the_story(dir.path(), &in_test, story), None);
    }

    #[test]
    fn a_test_taking_a_parameter_no_fixture_gives_is_refused() {
        // Recorded (pytest 8, transit, 2026-12-06), shortened.
        let output = "_____________ ERROR at setup of test_fare_one_zone _____________\nfile /tmp/r/tests/test_ticket_fare_calculator.py, line 3\n  def test_fare_one_zone(cart):\nE       fixture 'cart' not found\n>       available fixtures: cache, capfd, tmp_path\n";
        let why = never_passing(tree(CART).path(), output, STORY).expect("refused");
        assert!(why.contains("parameter `cart`"), "{why}");
        assert!(why.contains("fixture 'cart' not found"), "{why}");
    }

    #[test]
    fn a_test_that_uses_its_own_name_before_assigning_it_is_refused() {
        // Recorded (pytest 8, a drive's acceptance run, 2026-12-06), shortened.
        let output = "    def test_clear_leaves_cart_empty():\n>     cart = cart.Cart()\n             ^^^^\nE     UnboundLocalError: cannot access local variable 'cart' where it is not associated with a value\n\ntests/test_empty_the_cart.py:2: UnboundLocalError\n2 failed, 3 passed in 0.02s\n";
        let dir = tree(CART);
        let why = never_passing(dir.path(), output, STORY).expect("refused");
        assert!(why.contains("at tests/test_empty_the_cart.py:2"), "{why}");
        // Raised in the code, it is the code's to fix.
        let in_code = output.replace("tests/test_empty_the_cart.py:2", "cart.py:9");
        assert_eq!(never_passing(dir.path(), &in_code, STORY), None);
    }

    #[test]
    fn a_file_that_fails_on_a_name_the_story_does_not_add_is_refused() {
        let output = OUTPUT.replace(
            "module 'cart' has no attribute 'add'",
            "TypeError: f() takes 0 positional arguments but 1 was given",
        );
        let dir = tree(CART);
        let why = never_passing(dir.path(), &output, STORY).expect("refused");
        assert!(
            why.contains("call the code only inside `def test_…` functions"),
            "{why}"
        );
        assert_eq!(
            never_passing(dir.path(), "1 passed in 0.01s\n", STORY),
            None
        );
    }

    #[test]
    fn patching_what_the_module_lacks_and_the_story_calls_a_parameter_is_refused() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-07), shortened.
        let story = "Add `reading_minutes(pages, pages_per_hour=30)` to `shelf/books.py`.\n- `reading_minutes(45, pages_per_hour=60)` returns `45`\n";
        let tests = "from unittest.mock import patch\n\n@patch('shelf.books.pages_per_hour', 30)\ndef test_thirty():\n    assert reading_minutes(30) == 60\n";
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("shelf")).unwrap();
        std::fs::write(
            dir.path().join("shelf/books.py"),
            "def title_case(t):\n    return t\n",
        )
        .unwrap();
        let why = patched_attributes_missing(dir.path(), tests, story).expect("refused");
        assert!(
            why.starts_with("the tests patch `shelf.books.pages_per_hour`, which `shelf/books.py` does not define"),
            "{why}"
        );
        // What the module defines, what the story names as a name of its own, and what lies
        // outside the tree may be patched.
        let defined = tests.replace("pages_per_hour'", "title_case'");
        assert_eq!(
            patched_attributes_missing(dir.path(), &defined, story),
            None
        );
        let constant = format!("{story}Set `pages_per_hour = 30` in the module.\n");
        assert_eq!(
            patched_attributes_missing(dir.path(), tests, &constant),
            None
        );
        let outside = tests.replace("shelf.books.pages_per_hour", "time.time");
        assert_eq!(
            patched_attributes_missing(dir.path(), &outside, story),
            None
        );
    }
}
