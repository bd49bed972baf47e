//! Criteria that say one function calls another ("`headline` calls `truncate` instead of
//! repeating its logic") as tests of the tool's own (docs/design.md §21): the called function is
//! replaced by a spy that records its calls and does what it did, and one of the story's
//! examples of the caller runs. The 1.5B model's tests carried the examples but never such a
//! criterion, and its `headline` repeated `truncate`'s slicing, passed every test it had, and
//! was merged against the story (textkit, 2026-12-05).

use std::path::Path;

use crate::agents::prompts::backtick_spans;
use crate::workflow::examples::Example;
use crate::workflow::python_imports::python_module;

/// A criterion that `caller`'s body calls `callee`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallCriterion {
    pub caller: String,
    pub callee: String,
}

/// The words between the two names of such a criterion.
const CALLS: [&str; 7] = [
    "calls",
    "uses",
    "reuses",
    "must call",
    "should call",
    "should use",
    "delegates to",
];

/// The criteria of `story_text` that read "`f` calls `g`" (or uses, reuses, must call, should
/// call, should use, delegates to: refine wrote "`to_rankine` should call `to_fahrenheit`"), each name a plain identifier, with or without `()`.
pub fn call_criteria(story_text: &str) -> Vec<CallCriterion> {
    let mut criteria: Vec<CallCriterion> = Vec::new();
    for line in story_text.lines() {
        let spans = backtick_spans(line);
        for pair in spans.windows(2) {
            let [(first, first_end), (second, _)] = pair else {
                continue;
            };
            let (Some(caller), Some(callee)) = (identifier(first), identifier(second)) else {
                continue;
            };
            let between = line[first_end + 1..]
                .split('`')
                .next()
                .unwrap_or_default()
                .trim();
            let criterion = CallCriterion {
                caller: caller.to_string(),
                callee: callee.to_string(),
            };
            if caller != callee && CALLS.contains(&between) && !criteria.contains(&criterion) {
                criteria.push(criterion);
            }
        }
    }
    criteria
}

/// `span` as a plain Python name (`truncate`, `truncate()`), or `None`.
fn identifier(span: &str) -> Option<&str> {
    let name = span.strip_suffix("()").unwrap_or(span);
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_');
    (starts_well && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

/// What the tests are written from.
pub struct Calls<'a> {
    pub criteria: Vec<CallCriterion>,
    pub examples: &'a [Example],
    /// The functions the story names, each with its file.
    pub homes: &'a [(String, String)],
}

impl<'a> Calls<'a> {
    pub fn of(story_text: &str, examples: &'a [Example], homes: &'a [(String, String)]) -> Self {
        Calls {
            criteria: call_criteria(story_text),
            examples,
            homes,
        }
    }
}

/// `text` (a Python test file) with a test of each criterion it does not test yet (a file that
/// replaces the called function with `monkeypatch` is taken to), and the criteria added. A
/// criterion is written only when both functions' files are known and the story has examples
/// that call the caller plainly and do not raise; the test runs them all. `None` when none is added.
pub fn completed(calls: &Calls, text: &str) -> Option<(String, Vec<CallCriterion>)> {
    if text.contains("monkeypatch.setattr") {
        return None;
    }
    let mut tests = Vec::new();
    let mut added = Vec::new();
    for criterion in &calls.criteria {
        let Some(test) = spy_test(calls, criterion) else {
            continue;
        };
        if text.contains(&format!("def {}(", test.name)) {
            continue;
        }
        tests.push(test.function);
        added.push(criterion.clone());
    }
    if tests.is_empty() {
        return None;
    }
    // pytest's `monkeypatch` fixture needs no import.
    let body = format!("{}\n\n\n{}", text.trim_end(), tests.join("\n\n"));
    Some((body, added))
}

/// Adds the tests [`completed`] writes to the test file `path` of the tree at `dir`; says what
/// it added.
pub fn complete_file(dir: &Path, path: &str, calls: &Calls) -> Option<String> {
    let full = dir.join(path);
    let current = std::fs::read_to_string(&full).ok()?;
    let (written, added) = completed(calls, &current)?;
    crate::atomic_file::write(&full, written.as_bytes()).ok()?;
    let said: Vec<String> = added
        .iter()
        .map(|c| format!("`{}` calls `{}`", c.caller, c.callee))
        .collect();
    Some(format!(
        "added a test that {} to `{path}`, as the story asks",
        said.join(", and one that ")
    ))
}

/// Whether the test function `name` of an acceptance test file, with the source `body`, is one
/// [`completed`] wrote: it carries a criterion of the story, as a test of an example does.
pub fn tests_a_criterion(name: &str, body: &str) -> bool {
    name.contains("_calls_") && body.contains("monkeypatch.setattr(callee_home")
}

/// A test function and its name.
struct SpyTest {
    name: String,
    function: String,
}

fn spy_test(calls: &Calls, criterion: &CallCriterion) -> Option<SpyTest> {
    let module_of = |name: &str| {
        calls
            .homes
            .iter()
            .find(|(known, _)| known == name)
            .and_then(|(_, file)| python_module(file))
    };
    let caller_module = module_of(&criterion.caller)?;
    let callee_module = module_of(&criterion.callee)?;
    // Every example, not one: a caller may call it only on some paths (`truncate` only for a
    // long text), and the criterion holds if any of the story's own calls reaches it.
    let examples: Vec<&Example> = calls
        .examples
        .iter()
        .filter(|example| {
            !example.raises()
                && example
                    .call
                    .strip_prefix(criterion.caller.as_str())
                    .is_some_and(|rest| rest.starts_with('('))
        })
        .collect();
    if examples.is_empty() {
        return None;
    }
    let (caller, callee) = (&criterion.caller, &criterion.callee);
    let name = format!("test_{caller}_calls_{callee}");
    // Both where the callee lives and where the caller looks it up: a caller that imported it
    // by name (`from money import format_price`) reads its own module's attribute.
    let mut lines = vec![
        format!("def {name}(monkeypatch):"),
        format!("    import {callee_module} as callee_home"),
        format!("    import {caller_module} as caller_home"),
        "    called = []".to_string(),
        format!("    real = callee_home.{callee}"),
        String::new(),
        "    def spy(*args, **kwargs):".to_string(),
        "        called.append(args)".to_string(),
        "        return real(*args, **kwargs)".to_string(),
        String::new(),
        format!("    monkeypatch.setattr(callee_home, \"{callee}\", spy)"),
    ];
    if caller_module != callee_module {
        lines.push(format!(
            "    monkeypatch.setattr(caller_home, \"{callee}\", spy, raising=False)"
        ));
    }
    lines.extend(
        examples
            .iter()
            .map(|example| format!("    caller_home.{}", example.call)),
    );
    lines.push(format!(
        "    assert called, \"`{caller}` must call `{callee}`, as the story asks\""
    ));
    Some(SpyTest {
        name,
        function: lines.join("\n") + "\n",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(call: &str, expected: &str) -> Example {
        Example {
            call: call.into(),
            expected: expected.into(),
            comparison: "==",
        }
    }

    #[test]
    fn a_criterion_that_one_function_calls_another_is_read() {
        let story = "## Acceptance Criteria\n\
            - [ ] `headline(\"  the quick fox \", 20)` returns `\"The Quick Fox\"`\n\
            - [ ] `headline` calls `truncate` instead of repeating its logic\n\
            - [ ] `receipt_line()` uses `format_price()`\n\
            - [ ] `to_rankine` should call `to_fahrenheit` to perform the conversion.\n\
            - [ ] `mean` returns `0.0` for an empty list\n";
        assert_eq!(
            call_criteria(story),
            vec![
                CallCriterion {
                    caller: "headline".into(),
                    callee: "truncate".into()
                },
                CallCriterion {
                    caller: "receipt_line".into(),
                    callee: "format_price".into()
                },
                CallCriterion {
                    caller: "to_rankine".into(),
                    callee: "to_fahrenheit".into()
                },
            ]
        );
    }

    #[test]
    fn a_spy_test_is_added_with_an_example_of_the_caller() {
        let criteria = [CallCriterion {
            caller: "headline".into(),
            callee: "truncate".into(),
        }];
        let examples = [
            example("truncate(\"abc\", 2)", "\"ab\""),
            example("headline(\"  the quick fox \", 20)", "\"The Quick Fox\""),
            example("headline(\"the quick brown fox\", 12)", "\"The Quick...\""),
        ];
        let homes = [
            ("headline".to_string(), "textkit.py".to_string()),
            ("truncate".to_string(), "textkit.py".to_string()),
        ];
        let calls = Calls {
            criteria: criteria.to_vec(),
            examples: &examples,
            homes: &homes,
        };
        let text = "from textkit import headline\n\n\ndef test_a():\n    assert headline(\"a\", 9) == \"A\"\n";
        let (written, added) = completed(&calls, text).unwrap();
        assert_eq!(added, criteria.to_vec());
        assert!(written.starts_with(text), "{written}");
        assert!(written.contains(
            "def test_headline_calls_truncate(monkeypatch):\n    import textkit as callee_home\n    import textkit as caller_home\n"
        ), "{written}");
        // Every example of the caller: one may take a path that does not call it.
        assert!(written.contains("    monkeypatch.setattr(callee_home, \"truncate\", spy)\n    caller_home.headline(\"  the quick fox \", 20)\n    caller_home.headline(\"the quick brown fox\", 12)\n    assert called,"), "{written}");
        assert!(tests_a_criterion("test_headline_calls_truncate", &written));
        assert!(!written.contains("raising=False"), "{written}");
        // Written once: the file that has it is complete.
        assert_eq!(completed(&calls, &written), None);
    }

    #[test]
    fn a_caller_in_another_module_has_the_name_it_imported_replaced_too() {
        let criteria = [CallCriterion {
            caller: "receipt_line".into(),
            callee: "format_price".into(),
        }];
        let examples = [example("receipt_line(\"TV\", 129900)", "\"TV: $1,299.00\"")];
        let homes = [
            ("receipt_line".to_string(), "inventory/cart.py".to_string()),
            ("format_price".to_string(), "inventory/money.py".to_string()),
        ];
        let calls = Calls {
            criteria: criteria.to_vec(),
            examples: &examples,
            homes: &homes,
        };
        let (written, _) = completed(&calls, "def test_x():\n    pass\n").unwrap();
        assert!(
            written.contains(
                "import inventory.money as callee_home\n    import inventory.cart as caller_home\n"
            ),
            "{written}"
        );
        assert!(written
            .contains("monkeypatch.setattr(caller_home, \"format_price\", spy, raising=False)"));
    }

    #[test]
    fn no_test_is_written_without_an_example_or_a_known_file() {
        let criteria = [CallCriterion {
            caller: "headline".into(),
            callee: "truncate".into(),
        }];
        let homes = [("headline".to_string(), "textkit.py".to_string())];
        let examples = [example("headline(\"a\", 3)", "\"A\"")];
        let unknown_callee = Calls {
            criteria: criteria.to_vec(),
            examples: &examples,
            homes: &homes,
        };
        assert_eq!(
            completed(&unknown_callee, "def test_x():\n    pass\n"),
            None
        );
        let both = [
            ("headline".to_string(), "textkit.py".to_string()),
            ("truncate".to_string(), "textkit.py".to_string()),
        ];
        let no_example = Calls {
            criteria: criteria.to_vec(),
            examples: &[],
            homes: &both,
        };
        assert_eq!(completed(&no_example, "def test_x():\n    pass\n"), None);
    }
}
