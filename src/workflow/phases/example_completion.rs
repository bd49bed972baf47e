//! The story's examples that the model's tests lack, added by the tool (docs/design.md §21):
//! written whole where the story says all a test needs ([`examples_file::completed`]), and
//! where it says in words what the object holds first ("With scores `70` and `90` for "Ana"
//! and `80` for "Ben", `class_median()` returns `80`"), asked of the model alone: the setup
//! and nothing else, with the object's making and the example's assertion given. The 1.5B model
//! asked to write its whole test file again with such an example wrote the same file three
//! times, and the tool's own test on a bare object asserted a value no code could give (the
//! gradebook benchmark's `class-median` and `top-student`, 2026-12-06).

use std::path::Path;
use std::sync::Mutex;

use super::examples_file::{self, NotAdded, Unset, Unwritten};
use crate::agents::tools::{defined_name, source_of};
use crate::agents::transcript::Transcript;
use crate::agents::{CodeKind, DefinitionRequest};
use crate::board::Story;
use crate::workflow::context::Workflow;
use crate::workflow::definition_merge::parameter_names;
use crate::workflow::examples::{calls, line_holding, normalized, Example};
use crate::workflow::narrowed::answer_code;
use crate::workflow::python_imports::with_imports_on_top;
use crate::workflow::python_lines::statements;
use crate::workflow::story_ops;
use crate::workflow::subclass_criteria::subclass_examples;
use crate::workflow::tree_definitions::python_file_defining;
use crate::workflow::unknown_methods::methods_of;

/// The tests asked of the model alone in a phase, by their assertion, each with the function it
/// answered (`None`: nothing usable): each is asked once, and a file the model writes again
/// without it gets it back as it was.
pub type AskedAlone = Mutex<Vec<(String, Option<String>)>>;

/// What the tool adds a story's examples with.
pub struct Completion<'a> {
    pub wf: &'a Workflow,
    pub story: &'a Story,
    pub examples: examples_file::Story<'a>,
    pub transcript: &'a Transcript,
    pub asked: &'a AskedAlone,
}

impl Completion<'_> {
    /// Adds to the Python test file `path` a test of each of `missing`, and of each base the
    /// story gives a class in words that the file does not check; says what it did, and which
    /// example it could not add, and why.
    pub async fn complete(
        &self,
        path: &str,
        missing: &[Example],
    ) -> (Vec<String>, Option<NotAdded>) {
        let (mut notes, not_added) = self.complete_examples(path, missing).await;
        notes.extend(self.complete_bases(path));
        (notes, not_added)
    }

    /// Adds to `path` a test of each class's base the story gives in words
    /// ([`subclass_examples`]) that the file does not ask `issubclass` of already. The words are
    /// not the story's literal examples: one the tool cannot write is left out, not refused.
    fn complete_bases(&self, path: &str) -> Option<String> {
        let full = self.examples.dir.join(path);
        let current = std::fs::read_to_string(&full).ok()?;
        let checked = normalized(&current);
        let missing: Vec<Example> = subclass_examples(self.examples.text)
            .into_iter()
            .filter(|example| !checked.contains(&normalized(&example.call)))
            .collect();
        if missing.is_empty() {
            return None;
        }
        let completed = examples_file::completed(&self.examples, &current, &missing).ok()?;
        crate::atomic_file::write(&full, completed.as_bytes()).ok()?;
        let added: Vec<String> = missing.iter().map(Example::assertion).collect();
        Some(format!(
            "added `{}` to `{path}`: the story gives the base in words",
            added.join("`, `")
        ))
    }

    /// [`Completion::complete`] for the story's literal examples.
    async fn complete_examples(
        &self,
        path: &str,
        missing: &[Example],
    ) -> (Vec<String>, Option<NotAdded>) {
        let full = self.examples.dir.join(path);
        let mut notes = Vec::new();
        for _ in 0..=missing.len() {
            let Ok(current) = std::fs::read_to_string(&full) else {
                break;
            };
            let still: Vec<Example> = missing
                .iter()
                .filter(|example| !example.carried_by(&current))
                .cloned()
                .collect();
            if still.is_empty() {
                break;
            }
            let not_added = match examples_file::completed(&self.examples, &current, &still) {
                Ok(completed) => {
                    if crate::atomic_file::write(&full, completed.as_bytes()).is_ok() {
                        let added: Vec<String> = still.iter().map(Example::assertion).collect();
                        notes.push(format!(
                            "added the story's `{}` to `{path}` as tests of their own",
                            added.join("`, `")
                        ));
                    }
                    break;
                }
                Err(not_added) => not_added,
            };
            let Unwritten::SetUpInWords(unset) = &not_added.why else {
                return (notes, Some(not_added));
            };
            let Some(function) = self.asked_alone(&not_added.example, unset).await else {
                return (notes, Some(not_added));
            };
            let joined = joined(&current, &function, unset);
            if crate::atomic_file::write(&full, joined.as_bytes()).is_err() {
                return (notes, Some(not_added));
            }
            notes.push(format!(
                "added a test of the story's `{}` to `{path}` whose setup the model wrote alone, from the criterion's words",
                not_added.example.assertion()
            ));
        }
        (notes, None)
    }

    /// The test of `example` the model writes when asked for its setup alone, as
    /// [`accepted`] takes it; asked once a phase, the answer kept.
    async fn asked_alone(&self, example: &Example, unset: &Unset) -> Option<String> {
        let known = self
            .asked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .find(|(assertion, _)| *assertion == unset.assertion)
            .map(|(_, function)| function.clone());
        if let Some(function) = known {
            return function;
        }
        let dir = self.examples.dir;
        let methods: Vec<String> = methods_of(dir, &unset.class)
            .unwrap_or_default()
            .into_iter()
            .filter(|method| !method.starts_with("__"))
            .collect();
        let criterion = line_holding(self.examples.text, example).unwrap_or_default();
        let task = task(
            unset,
            criterion,
            &with_parameters(dir, &unset.class, &methods),
        );
        let request = DefinitionRequest {
            kind: CodeKind::ExampleTest,
            story: self.story,
            task: &task,
            name: &unset.test_name,
            work_dir: dir,
            transcript: self.transcript,
            variant: 0,
        };
        let (text, usage) = match self.wf.agents.write_definition(request).await {
            Ok(output) => (output.text, output.usage),
            Err(err) => (String::new(), err.usage),
        };
        let _ = story_ops::add_usage(self.wf, self.story.id(), usage);
        let function = accepted(&text, unset, &methods);
        self.transcript.record(
            "example_asked_alone",
            serde_json::json!({"example": unset.assertion, "written": function.is_some()}),
        );
        self.asked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push((unset.assertion.clone(), function.clone()));
        function
    }
}

/// The ask: the criterion, the test's name, how the object is made, the methods it may call,
/// and the line the test must end with.
fn task(unset: &Unset, criterion: &str, methods: &[String]) -> String {
    let criterion = criterion.trim().trim_start_matches("- [ ]").trim();
    let object = unset.made.split(" = ").next().unwrap_or_default();
    let methods: Vec<String> = methods
        .iter()
        .map(|m| match m.contains('(') {
            true => format!("`{object}.{m}`"),
            false => format!("`{object}.{m}(…)`"),
        })
        .collect();
    format!(
        "Write the test `{name}` of this criterion of the story:\n\n{criterion}\n\n\
         Its first line makes the object:\n    {made}\n\
         Then it calls what gives the object what the criterion says, in its order (it may call {methods}).\n\
         Its last line is exactly:\n    {assertion}\n\n\
         Answer with the function alone: `def {name}():` and its body.",
        name = unset.test_name,
        made = unset.made,
        methods = if methods.is_empty() {
            "the class's methods".to_string()
        } else {
            methods.join(", ")
        },
        assertion = unset.assertion,
    )
}

/// Each of `methods` of `class` (in the tree at `dir`) with its parameters, `self` left out:
/// `record_trip(plate, day, time)`; a method whose `def` line is not found stays a bare name.
/// Told only `account.record_trip(…)`, the 1.5B model recorded trips as
/// `record_trip("AB12CDE", "08:00", 750)`, which the project's code refuses, round after round
/// (tollbooth `charges-by-plate`, 2026-12-07).
fn with_parameters(dir: &Path, class: &str, methods: &[String]) -> Vec<String> {
    let source = python_file_defining(dir, class)
        .and_then(|file| std::fs::read_to_string(dir.join(file)).ok())
        .and_then(|source| source_of(&source, class))
        .unwrap_or_default();
    methods
        .iter()
        .map(|method| {
            let def_line = source.lines().map(str::trim_start).find(|line| {
                line.strip_prefix("def ")
                    .and_then(|rest| rest.strip_prefix(method.as_str()))
                    .is_some_and(|rest| rest.starts_with('('))
            });
            match def_line {
                Some(line) => {
                    let parameters: Vec<String> = parameter_names(line)
                        .into_iter()
                        .filter(|name| name != "self")
                        .collect();
                    format!("{method}({})", parameters.join(", "))
                }
                None => method.clone(),
            }
        })
        .collect()
}

/// The test function of the model's `reply`, named as asked, when it takes no parameter, holds
/// the assertion as asked, makes the object, and calls on it nothing but the class's `methods`
/// and the example's own method; `None` otherwise.
fn accepted(reply: &str, unset: &Unset, methods: &[String]) -> Option<String> {
    let code = answer_code(reply)?;
    let name = code.lines().find_map(|line| {
        let name = defined_name(line.trim_start())?;
        name.starts_with("test").then_some(name)
    })?;
    let function = dedented(&source_of(&code, &name)?);
    let mut lines: Vec<String> = statements(&function);
    if !lines.first()?.trim_end().ends_with("():") {
        return None;
    }
    lines[0] = format!("def {}():", unset.test_name);
    let wanted = normalized(&unset.assertion);
    if !lines.iter().any(|line| normalized(line) == wanted)
        && !value_asserted_as_asked(&mut lines, &unset.assertion)
    {
        return None;
    }
    let object = unset.made.split(" = ").next()?;
    let making = lines
        .iter()
        .position(|line| line.trim_start().starts_with(&format!("{object} =")));
    match making {
        // Made bare where the tool gave its arguments: `Account()` of an `Account` that
        // takes its holder fails whatever the code (tollbooth `charges-by-plate`, 2026-12-07).
        Some(at) if lines[at].trim_end().ends_with("()") && !unset.made.ends_with("()") => {
            lines[at] = format!("    {}", unset.made);
        }
        Some(_) => {}
        None => lines.insert(1, format!("    {}", unset.made)),
    }
    let asserted = unset
        .assertion
        .split_once(&format!("{object}."))?
        .1
        .split('(')
        .next()?
        .to_string();
    let called_on_object = lines.iter().flat_map(|line| {
        line.match_indices(&format!("{object}."))
            .filter_map(|(at, found)| {
                let rest = &line[at + found.len()..];
                let method: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                rest[method.len()..].starts_with('(').then_some(method)
            })
            .collect::<Vec<_>>()
    });
    let known = |method: &String| *method == asserted || methods.contains(method);
    let mut called: Vec<String> = called_on_object.collect();
    called.dedup();
    if !called.iter().all(known) || !lines.iter().any(|line| calls(line, &asserted)) {
        return None;
    }
    Some(lines.join("\n") + "\n")
}

/// Whether `lines`, a test function that asserts the value of the example's `assertion` on
/// something else, now asserts it as asked: the test's last assertion of that value becomes
/// `assertion`, and a name that held the call for it alone (`charges = account.charges_by_plate()`
/// before `assert charges == {…}`) goes. The 1.5B model asked for that last line wrote it so,
/// and the tool dropped its whole test (tollbooth `charges-by-plate`, 2026-12-07).
fn value_asserted_as_asked(lines: &mut Vec<String>, assertion: &str) -> bool {
    let Some((_, value)) = assertion.split_once(" == ") else {
        return false;
    };
    // A comma before a closing bracket changes no list or dict.
    let value_of = |text: &str| normalized(text).replace(",}", "}").replace(",]", "]");
    let value = value_of(value);
    let asserted = lines.iter().rposition(|line| {
        line.trim_start()
            .strip_prefix("assert ")
            .and_then(|rest| rest.split_once(" == "))
            .is_some_and(|(_, expected)| value_of(expected) == value)
    });
    let Some(at) = asserted else {
        return false;
    };
    let held = lines[at].trim_start()["assert ".len()..]
        .split_once(" == ")
        .map(|(held, _)| held.trim().to_string())
        .unwrap_or_default();
    let indent = lines[at].len() - lines[at].trim_start().len();
    lines[at] = format!("{}{assertion}", &lines[at][..indent]);
    let is_name = !held.is_empty() && held.chars().all(|c| c.is_alphanumeric() || c == '_');
    if !is_name {
        return true;
    }
    let uses = |line: &String| {
        line.match_indices(held.as_str()).any(|(start, _)| {
            let before = line[..start].chars().next_back();
            let after = line[start + held.len()..].chars().next();
            let name_char = |c: char| c.is_alphanumeric() || c == '_';
            !before.is_some_and(name_char) && !after.is_some_and(name_char)
        })
    };
    let assigned = lines[..at].iter().rposition(|line| {
        line.trim_start()
            .strip_prefix(held.as_str())
            .is_some_and(|rest| rest.trim_start().starts_with("= "))
    });
    if let Some(assigned) = assigned {
        let used_elsewhere = lines
            .iter()
            .enumerate()
            .any(|(i, line)| i != assigned && i != at && uses(line));
        if !used_elsewhere {
            lines.remove(assigned);
        }
    }
    true
}

/// `code` moved left so that its first line starts at the margin.
fn dedented(code: &str) -> String {
    let first = code.lines().next().unwrap_or_default();
    let margin = first.len() - first.trim_start().len();
    code.lines()
        .map(|line| line.get(margin..).unwrap_or(line.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with `function` at its end and the import of the object's class at its top, unless
/// it has one.
fn joined(text: &str, function: &str, unset: &Unset) -> String {
    let body = format!("{}\n\n\n{}", text.trim_end(), function);
    let imported = text.lines().any(|line| line.trim_end() == unset.import);
    let imports = match imported || examples_file::imports_name(text, &unset.class) {
        true => Vec::new(),
        false => vec![unset.import.clone()],
    };
    with_imports_on_top(&body, &imports, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unset() -> Unset {
        Unset {
            made: "grade_book = GradeBook(\"Math\")".into(),
            class: "GradeBook".into(),
            import: "from gradebook.book import GradeBook".into(),
            test_name: "test_class_median_example_1".into(),
            assertion: "assert grade_book.class_median() == 80".into(),
        }
    }

    fn methods() -> Vec<String> {
        vec!["add_score".into(), "scores".into()]
    }

    #[test]
    fn a_test_holding_the_assertion_and_calling_the_class_s_methods_is_taken_and_renamed() {
        let reply = "```python\ndef test_median():\n    grade_book = GradeBook(\"Math\")\n    grade_book.add_score(\"Ana\", 70)\n    grade_book.add_score(\"Ana\", 90)\n    grade_book.add_score(\"Ben\", 80)\n    assert grade_book.class_median() == 80\n```";
        assert_eq!(
            accepted(reply, &unset(), &methods()).unwrap(),
            "def test_class_median_example_1():\n    grade_book = GradeBook(\"Math\")\n    grade_book.add_score(\"Ana\", 70)\n    grade_book.add_score(\"Ana\", 90)\n    grade_book.add_score(\"Ben\", 80)\n    assert grade_book.class_median() == 80\n"
        );
        // The object made for it when the answer leaves that out.
        let unmade = "def test_median():\n    grade_book.add_score(\"Ana\", 80)\n    assert grade_book.class_median() == 80\n";
        assert!(accepted(unmade, &unset(), &methods()).unwrap().starts_with(
            "def test_class_median_example_1():\n    grade_book = GradeBook(\"Math\")\n"
        ));
    }

    #[test]
    fn a_test_that_changes_the_assertion_calls_what_the_class_lacks_or_takes_fixtures_is_not() {
        for reply in [
            "def test_m():\n    grade_book = GradeBook(\"Math\")\n    assert grade_book.class_median() == 85\n",
            "def test_m():\n    grade_book = GradeBook(\"Math\")\n    grade_book.add_scores({\"Ana\": [80]})\n    assert grade_book.class_median() == 80\n",
            "def test_m(grade_book):\n    grade_book.add_score(\"Ana\", 80)\n    assert grade_book.class_median() == 80\n",
            "Sure, here it is.",
        ] {
            assert_eq!(accepted(reply, &unset(), &methods()), None, "{reply}");
        }
    }

    #[test]
    fn the_test_joins_the_file_with_the_import_of_its_class() {
        let function =
            "def test_class_median_example_1():\n    assert grade_book.class_median() == 80\n";
        let joined_text = joined("def test_a():\n    pass\n", function, &unset());
        assert!(
            joined_text.starts_with("from gradebook.book import GradeBook\n"),
            "{joined_text}"
        );
        assert!(joined_text.ends_with(function), "{joined_text}");
        let imported = "from gradebook.book import GradeBook\n\ndef test_a():\n    pass\n";
        assert_eq!(
            joined(imported, function, &unset())
                .matches("import GradeBook")
                .count(),
            1
        );
        let asked = task(
            &unset(),
            "- [ ] With scores `70` and `90` for \"Ana\", `class_median()` returns `80`",
            &methods(),
        );
        assert!(asked.contains("With scores `70` and `90`"), "{asked}");
        assert!(asked.contains("`grade_book.add_score(…)`"), "{asked}");
        assert!(
            asked.contains("    assert grade_book.class_median() == 80"),
            "{asked}"
        );
    }

    #[test]
    fn a_value_asserted_on_a_name_holding_the_call_is_asserted_as_asked_on_an_object_made_as_given()
    {
        let unset = Unset {
            made: "account = Account(\"Ann Lee\")".into(),
            class: "Account".into(),
            import: "from tollbooth.trips import Account".into(),
            test_name: "test_charges_by_plate_example_1".into(),
            assertion: "assert account.charges_by_plate() == {\"AB12CDE\": 750, \"MC01ABC\": 0}"
                .into(),
        };
        let methods = vec!["register".to_string(), "record_trip".to_string()];
        // The 1.5B model's answer (tollbooth `charges-by-plate`, 2026-12-07), shortened.
        let reply = "```python\ndef test_charges_by_plate_example_1():\n    # Create the account\n    account = Account()\n    account.register(\"AB12CDE\", \"car\")\n    account.register(\"MC01ABC\", \"motorcycle\")\n    account.record_trip(\"AB12CDE\", \"2023-10-01\", \"08:00\")\n\n    charges_by_plate = account.charges_by_plate()\n\n    assert charges_by_plate == {\n        \"AB12CDE\": 750,\n        \"MC01ABC\": 0,\n    }\n```";
        let test = accepted(reply, &unset, &methods).expect("accepted");
        assert!(
            test.contains("    account = Account(\"Ann Lee\")\n"),
            "{test}"
        );
        assert!(!test.contains("charges_by_plate = "), "{test}");
        assert!(
            test.ends_with(
                "    assert account.charges_by_plate() == {\"AB12CDE\": 750, \"MC01ABC\": 0}\n"
            ),
            "{test}"
        );
    }

    #[test]
    fn the_task_shows_each_method_with_its_parameters() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tollbooth")).unwrap();
        let trips = "class Account:\n    def __init__(self, holder):\n        pass\n\n    def record_trip(self, plate, day, time):\n        pass\n";
        std::fs::write(dir.path().join("tollbooth/trips.py"), trips).unwrap();
        let methods = vec!["record_trip".to_string(), "gone".to_string()];
        let shown = with_parameters(dir.path(), "Account", &methods);
        assert_eq!(shown, ["record_trip(plate, day, time)", "gone"]);
        let asked = task(&unset(), "- [ ] With trips …", &shown);
        assert!(
            asked.contains("`grade_book.record_trip(plate, day, time)`"),
            "{asked}"
        );
        assert!(asked.contains("`grade_book.gone(…)`"), "{asked}");
    }
}
