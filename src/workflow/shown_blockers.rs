//! A blocker against work whose acceptance tests pass is run, not believed (docs/design.md §10).
//!
//! The acceptance tests are the story's criteria made executable and checked before the code
//! existed; when they pass, a reviewer's blocker claims something they missed. A 1.5B reviewer
//! wrote "`total_with_discount` does not return the correct sum of prices after applying the
//! discount" of a function whose tests, the story's own examples, all passed, and the story
//! went back to work that was right until its budget ran out.
//!
//! So the perspective that raised the blocker is asked to show it: Python test code ending in an
//! assertion that fails on the work. The tool runs it with the project's tests. A blocker
//! shown by a failing example stands, and the example goes into its description, where the
//! rework reads it; one whose example passes, does not run, or that is withdrawn is recorded as
//! a major issue that says so. The rule that any blocker rejects stands: what the tool weighs is
//! whether the blocker is one.
//!
//! A critical issue is weighed the same way: two of them reject as one blocker does. Of a
//! `format_price` whose acceptance tests passed, the 1.5B code reviewer wrote that it "returns
//! `$1,234.55`" and the security reviewer that it invites SQL injection, and the right work
//! went back to research (the inventory benchmark, 2026-12-05).

use std::path::{Path, PathBuf};

use super::context::Workflow;
use super::examples::add_missing_imports;
use super::named_functions;
use super::tests_run::{self, TestRun};
use crate::agents::transcript::Transcript;
use crate::agents::verdict::PerspectiveVerdict;
use crate::agents::{BlockerRequest, Perspective};
use crate::board::records::{IssueSeverity, Usage};
use crate::board::Story;

/// Blockers shown or withdrawn in one review at most: each costs a model call and a test run.
const BLOCKERS_CHECKED: usize = 3;

/// What running a perspective's example found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// The example fails on the work: the blocker stands, with this failing line.
    Fails(String),
    /// The example passes: the work does what it asserts.
    Holds,
    /// The example never ran as a test of the work (it does not parse, or calls what does not
    /// exist): why.
    Broken(String),
    /// The run cannot tell whether the example ran (the test command's output counts no tests):
    /// the blocker stands as written.
    Unknown,
}

/// What the tree needs for a review's blockers to be put to the test: Python acceptance tests,
/// and the run of the project's tests that just passed on the work.
pub struct Evidence<'a> {
    pub wf: &'a Workflow,
    pub story: &'a Story,
    pub dir: &'a Path,
    pub diff: &'a str,
    pub transcript: &'a Transcript,
    /// The project's tests on the work, before any example is added.
    pub passing: &'a TestRun,
}

impl Evidence<'_> {
    /// Asks each perspective to show its blockers and criticals (the first few of the review),
    /// runs the examples, and turns each one not shown into a major issue. Returns what the asks
    /// spent.
    pub async fn weigh(&self, verdicts: &mut [(Perspective, PerspectiveVerdict)]) -> Usage {
        let mut usage = Usage::default();
        let Some(tests) = self.acceptance_tests() else {
            return usage;
        };
        let mut checked = 0;
        for (perspective, verdict) in verdicts.iter_mut() {
            for issue in verdict.issues.iter_mut() {
                let rejects = matches!(
                    issue.severity,
                    IssueSeverity::Blocker | IssueSeverity::Critical
                );
                if !rejects || checked == BLOCKERS_CHECKED {
                    continue;
                }
                checked += 1;
                let request = BlockerRequest {
                    story: self.story,
                    perspective: *perspective,
                    blocker: &issue.description,
                    acceptance_tests: &tests,
                    diff: self.diff,
                    work_dir: self.dir,
                    transcript: self.transcript,
                };
                let answer = match self.wf.agents.show_blocker(request).await {
                    Ok(answer) => answer,
                    Err(err) => {
                        usage.add(&err.usage);
                        continue;
                    }
                };
                usage.add(&answer.usage);
                let shown = match example_code(&answer.text) {
                    Some(code) => self.run(&code).await,
                    None => Shown::Broken("it gave no example".into()),
                };
                self.transcript.record(
                    "blocker_shown",
                    serde_json::json!({"perspective": perspective.role(),
                                       "blocker": issue.description,
                                       "shown": format!("{shown:?}")}),
                );
                match shown {
                    Shown::Fails(line) => {
                        issue.description = format!(
                            "{} (shown by an example that fails: {line})",
                            issue.description
                        );
                    }
                    Shown::Holds => not_shown(issue, "its example passes on the work"),
                    Shown::Broken(why) => not_shown(issue, &why),
                    Shown::Unknown => {}
                }
            }
        }
        usage
    }

    /// The acceptance tests, each under its path; `None` unless the story has some and all are
    /// Python, the only language whose examples the tool writes into a test.
    fn acceptance_tests(&self) -> Option<String> {
        let paths = &self.story.meta.acceptance_tests;
        if paths.is_empty() || !paths.iter().all(|path| path.ends_with(".py")) {
            return None;
        }
        let mut text = String::new();
        for path in paths {
            let content = std::fs::read_to_string(self.dir.join(path)).ok()?;
            text.push_str(&format!(
                "## {path}\n```python\n{}\n```\n",
                content.trim_end()
            ));
        }
        Some(text)
    }

    /// Runs `code` as one more test beside the acceptance tests, and takes it out again.
    async fn run(&self, code: &str) -> Shown {
        let Some(written) = ExampleFile::write(self.dir, &self.story.meta.acceptance_tests, code)
        else {
            return Shown::Unknown;
        };
        let homes = named_functions::homes(self.dir, self.story);
        add_missing_imports(self.dir, &written.relative, &homes);
        let run = tests_run::run(self.wf, self.story.id(), self.dir, self.transcript).await;
        drop(written);
        match run {
            Some(run) => judged(self.passing, &run),
            None => Shown::Unknown,
        }
    }
}

/// The blocker is kept as a major issue that says why it is not one.
fn not_shown(issue: &mut crate::board::records::ReviewIssue, why: &str) {
    issue.severity = IssueSeverity::Major;
    issue.description = format!(
        "{} (not shown: {why}, and the acceptance tests pass)",
        issue.description
    );
}

/// What the run with the example says of it, against the run without it.
pub fn judged(before: &TestRun, after: &TestRun) -> Shown {
    if after.passed() {
        return match (passed_count(&before.output), passed_count(&after.output)) {
            (Some(without), Some(with)) if with > without => Shown::Holds,
            _ => Shown::Unknown,
        };
    }
    let output = &after.output;
    let broken = [
        "SyntaxError",
        "IndentationError",
        "NameError",
        "ImportError",
        "ModuleNotFoundError",
        "ERROR collecting",
    ]
    .into_iter()
    .find_map(|marker| output.lines().find(|line| line.contains(marker)));
    match broken {
        Some(line) => Shown::Broken(format!("its example does not run ({})", line.trim())),
        None => Shown::Fails(after.first_failing_line()),
    }
}

/// How many tests a run says passed: pytest's "7 passed", unittest's "Ran 7 tests".
fn passed_count(output: &str) -> Option<u32> {
    output.lines().rev().find_map(|line| {
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        words.windows(2).find_map(|pair| match pair {
            [count, "passed"] => count.parse().ok(),
            ["Ran", count] => count.parse().ok(),
            _ => None,
        })
    })
}

/// The Python code of an answer: its first fenced block, else its lines from the first import
/// or assertion on; `None` when it holds no assertion (a withdrawal, or prose).
pub fn example_code(answer: &str) -> Option<String> {
    let fenced = answer.split("```").nth(1).map(|block| {
        let first = block.lines().next().unwrap_or("");
        // The info string (`python`, `py`) is no code.
        if first.trim().chars().all(|c| c.is_ascii_alphanumeric()) {
            block.lines().skip(1).collect::<Vec<_>>().join("\n")
        } else {
            block.to_string()
        }
    });
    let code = fenced.unwrap_or_else(|| {
        answer
            .lines()
            .skip_while(|line| {
                let line = line.trim_start();
                !(line.starts_with("import ")
                    || line.starts_with("from ")
                    || line.starts_with("assert "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    });
    code.lines()
        .any(|line| line.trim_start().starts_with("assert "))
        .then(|| code.trim_end().to_string())
}

/// The example as a test file: its imports at the top, the rest in one test function, unless it
/// has test functions of its own.
pub fn as_test(code: &str) -> String {
    if code.lines().any(|line| line.starts_with("def test_")) {
        return format!("{code}\n");
    }
    let (imports, body): (Vec<&str>, Vec<&str>) = code
        .lines()
        .filter(|line| !line.trim().is_empty())
        .partition(|line| line.starts_with("import ") || line.starts_with("from "));
    let mut text = imports.join("\n");
    text.push_str("\n\n\ndef test_review_example():\n");
    for line in body {
        text.push_str(&format!("    {line}\n"));
    }
    text
}

/// The example's test file beside the first acceptance test, removed when dropped.
struct ExampleFile {
    relative: String,
    full: PathBuf,
}

impl ExampleFile {
    fn write(dir: &Path, acceptance: &[String], code: &str) -> Option<ExampleFile> {
        let folder = Path::new(acceptance.first()?).parent()?;
        let (relative, full) = (0..10).find_map(|n| {
            let name = match n {
                0 => "test_review_example.py".to_string(),
                _ => format!("test_review_example_{n}.py"),
            };
            let relative = folder.join(name).to_string_lossy().into_owned();
            let full = dir.join(&relative);
            (!full.exists()).then_some((relative, full))
        })?;
        crate::atomic_file::write(&full, as_test(code).as_bytes()).ok()?;
        Some(ExampleFile { relative, full })
    }
}

impl Drop for ExampleFile {
    fn drop(&mut self) {
        if let Err(err) = std::fs::remove_file(&self.full) {
            tracing::warn!("cannot remove {}: {err}", self.full.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::tests_run::TestOutcome;

    fn run(outcome: TestOutcome, output: &str) -> TestRun {
        TestRun {
            command: "pytest -q".into(),
            outcome,
            output: output.into(),
        }
    }

    #[test]
    fn the_example_is_the_fenced_code_or_the_lines_from_the_first_import_and_needs_an_assert() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28): prose, then the fence.
        let fenced = "Here is an example:\n```python\nfrom inventory.pricing import total_with_discount\n\nassert total_with_discount([100, 200], 10) == 270\n```\nThis fails.";
        assert_eq!(
            example_code(fenced).unwrap(),
            "from inventory.pricing import total_with_discount\n\nassert total_with_discount([100, 200], 10) == 270"
        );
        let bare = "The sum is wrong.\nfrom a import f\nassert f(1) == 2";
        assert_eq!(
            example_code(bare).unwrap(),
            "from a import f\nassert f(1) == 2"
        );
        assert_eq!(example_code("WITHDRAWN"), None);
        assert_eq!(example_code("```python\nprint(f(1))\n```"), None);
    }

    #[test]
    fn the_example_becomes_one_test_with_its_imports_on_top_unless_it_has_tests() {
        let code = "from a import f\nx = f(1)\nassert x == 2";
        assert_eq!(
            as_test(code),
            "from a import f\n\n\ndef test_review_example():\n    x = f(1)\n    assert x == 2\n"
        );
        let own = "from a import f\n\ndef test_f():\n    assert f(1) == 2";
        assert_eq!(as_test(own), format!("{own}\n"));
    }

    #[test]
    fn an_example_holds_only_when_the_run_counts_it_and_fails_only_as_a_test() {
        let before = run(TestOutcome::Passed, "....... [100%]\n7 passed in 0.02s");
        let counted = run(TestOutcome::Passed, "........ [100%]\n8 passed in 0.02s");
        assert_eq!(judged(&before, &counted), Shown::Holds);
        // Not collected: the same count says nothing about the example.
        assert_eq!(judged(&before, &before), Shown::Unknown);
        let silent = run(TestOutcome::Passed, "");
        assert_eq!(judged(&silent, &silent), Shown::Unknown);
        let unittest = run(TestOutcome::Passed, "Ran 3 tests in 0.001s\n\nOK");
        let more = run(TestOutcome::Passed, "Ran 4 tests in 0.001s\n\nOK");
        assert_eq!(judged(&unittest, &more), Shown::Holds);

        let failed = TestOutcome::Failed { exit_code: Some(1) };
        let fails = run(
            failed.clone(),
            "FAILED tests/test_review_example.py::test_review_example - AssertionError: assert 'Hello, !' == 'Hello, stranger!'\n1 failed, 7 passed",
        );
        assert!(
            matches!(judged(&before, &fails), Shown::Fails(line) if line.contains("AssertionError"))
        );
        let broken = run(
            failed,
            "FAILED tests/test_review_example.py::test_review_example - NameError: name 'greeting' is not defined\n1 failed, 7 passed",
        );
        assert!(
            matches!(judged(&before, &broken), Shown::Broken(why) if why.contains("NameError"))
        );
    }
}
