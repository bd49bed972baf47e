//! Running the project's tests (`review.testCommand`) on a story's tree, in the run's box, and
//! what their result says: to the review, to delivery, and to the
//! implement agent while it can still fix its work.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;

use super::context::Workflow;
use super::fixed_tests::FixedTests;
use super::named_functions::{named_functions, undefined, Missing, NamedFunction};
use super::unasked_tests::{failed_tests, unasked_failures};
use crate::agents::transcript::Transcript;
use crate::agents::WorkCheck;
use crate::board::StoryId;
use crate::config::EditFormat;
use crate::exec::{head_tail, BoxedCommand, ExecError};

/// Bytes of a failing test run that go into a blocker or back to the model.
pub const TEST_OUTPUT_TAIL: usize = 4_000;

/// One run of the test command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    pub command: String,
    pub outcome: TestOutcome,
    /// Its output, cut to head and tail.
    pub output: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestOutcome {
    Passed,
    /// The story names functions to add (`word_count(text)`) that no file defines: checked
    /// before the tests, which often cannot see a function nobody tests yet.
    NotDefined {
        missing: Vec<Missing>,
    },
    Failed {
        exit_code: Option<i32>,
    },
    TimedOut {
        seconds: u64,
    },
    CouldNotRun {
        error: String,
    },
    /// The box refused the command, or it changed what no command may change (put back). Not
    /// the work's failure but the action's: nobody fixes it by editing code.
    Refused {
        why: String,
    },
}

impl TestRun {
    pub fn passed(&self) -> bool {
        self.outcome == TestOutcome::Passed
    }

    /// Why the action must fail rather than the work go back, when the box refused the run.
    pub fn refusal(&self) -> Option<String> {
        match &self.outcome {
            TestOutcome::Refused { why } => Some(format!("test command `{}`: {why}", self.command)),
            _ => None,
        }
    }

    /// What went wrong, with the output's head and tail; `None` when the tests passed.
    pub fn failure(&self) -> Option<String> {
        let command = &self.command;
        match &self.outcome {
            TestOutcome::Passed => None,
            TestOutcome::TimedOut { seconds } => Some(format!(
                "Test command `{command}` timed out after {seconds}s\n{}",
                self.output
            )),
            TestOutcome::Failed { exit_code } => Some(format!(
                "Test command `{command}` failed (exit {})\n{}",
                exit_code.map_or("signal".to_string(), |c| c.to_string()),
                self.output
            )),
            TestOutcome::CouldNotRun { error } => {
                Some(format!("Test command `{command}` could not run: {error}"))
            }
            TestOutcome::Refused { .. } => self.refusal(),
            TestOutcome::NotDefined { missing } => Some(format!(
                "The story asks for {}, and {} yet.",
                listed(missing),
                match missing.as_slice() {
                    [one] if one.file.is_some() => "that file does not define it",
                    [_] => "no file of the repository defines it",
                    _ => "the repository does not define them there",
                }
            )),
        }
    }

    /// The line of the output that says best what failed: a test runner's FAILED or error
    /// line, an assertion, a traceback's last line; else the last line with words.
    pub fn first_failing_line(&self) -> String {
        match &self.outcome {
            TestOutcome::CouldNotRun { error } | TestOutcome::Refused { why: error } => {
                return error.clone()
            }
            TestOutcome::NotDefined { missing } => {
                return format!("not defined: {}", listed(missing))
            }
            _ => {}
        }
        let lines: Vec<&str> = self
            .output
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with("[..."))
            .collect();
        // A runner's own summary of a failure first (pytest's `FAILED …`, rustc's `error[…]`),
        // then anything that reads as a failure, then the last line.
        let summary = |line: &&str| {
            line.starts_with("FAILED") || line.starts_with("error[") || line.starts_with("error:")
        };
        let marked = |line: &&str| {
            let lower = line.to_ascii_lowercase();
            line.starts_with("ERROR")
                || line.starts_with("E ")
                || lower.contains("assertionerror")
                || lower.contains("panicked at")
                || lower.contains("error:")
                || lower.contains("failed")
                || lower.ends_with("error")
        };
        let found = lines
            .iter()
            .copied()
            .find(summary)
            .or_else(|| lines.iter().copied().find(marked))
            .or_else(|| lines.last().copied());
        match found {
            Some(line) => crate::exec::head_tail(line, 300),
            None => self
                .failure()
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
        }
    }
}

/// Runs `review.testCommand` in the box on `dir`, when one is set, and records it in the
/// transcript. The review runs it on the story's branch, delivery on the integrated tree, and
/// implement's work check on the tree the agent works in.
pub async fn run(
    wf: &Workflow,
    story_id: &StoryId,
    dir: &Path,
    transcript: &Transcript,
) -> Option<TestRun> {
    let command = wf.config.review.test_command.as_ref()?;
    let seconds = wf.config.review.test_timeout_seconds;
    let env = [("AGENTIC_SDLC_STORY_ID".to_string(), story_id.to_string())];
    let result = wf
        .sandbox
        .run(BoxedCommand {
            command,
            tree: dir,
            limit: Duration::from_secs(seconds),
            env: &env,
        })
        .await;
    // JSON a program can read, not a Rust debug string.
    let recorded = match &result {
        Ok(out) => serde_json::json!({"exit_code": out.exit_code, "timed_out": out.timed_out,
                                      "output": head_tail(&out.output, TEST_OUTPUT_TAIL)}),
        Err(err) => serde_json::json!({"error": err.to_string()}),
    };
    transcript.record(
        "test_command",
        serde_json::json!({ "command": command, "result": recorded }),
    );
    let (outcome, output) = match result {
        Ok(out) if out.timed_out => (TestOutcome::TimedOut { seconds }, out.output),
        Ok(out) if out.exit_code == Some(0) => (TestOutcome::Passed, out.output),
        Ok(out) => (
            TestOutcome::Failed {
                exit_code: out.exit_code,
            },
            out.output,
        ),
        Err(err @ (ExecError::Spawn(_) | ExecError::Wait(_))) => (
            TestOutcome::CouldNotRun {
                error: err.to_string(),
            },
            String::new(),
        ),
        Err(err) => (
            TestOutcome::Refused {
                why: err.to_string(),
            },
            String::new(),
        ),
    };
    Some(TestRun {
        command: command.clone(),
        outcome,
        output: head_tail(&output, TEST_OUTPUT_TAIL),
    })
}

/// The tests as implement's work check: run when the model says it is done, up to
/// `implement.testRounds` times in all; each failure but the last goes back to the model. The
/// last run is kept for the Implementation Notes.
pub struct TestRounds<'a> {
    wf: &'a Workflow,
    story: &'a crate::board::Story,
    story_id: &'a StoryId,
    dir: PathBuf,
    transcript: Transcript,
    rounds: u32,
    /// Functions the story asks for by name; each must be defined before the tests run.
    named: Vec<NamedFunction>,
    /// The story's acceptance criteria, to settle a failing test of what the story adds.
    criteria: Option<String>,
    /// The story's acceptance tests, put back before each run if the agent changed them.
    fixed: FixedTests,
    /// Test rounds in which each named definition was missing, for the narrowed task.
    missing_rounds: Mutex<std::collections::HashMap<String, u32>>,
    /// Test rounds in which acceptance tests calling each named definition failed, for the
    /// narrowed task that asks for it again.
    failing_rounds: Mutex<std::collections::HashMap<String, u32>>,
    runs: Mutex<Vec<TestRun>>,
}

impl<'a> TestRounds<'a> {
    /// What the model is told about the acceptance tests: that they are fixed, and which it
    /// changed were put back.
    fn fixed_note(&self, restored: &[String]) -> Option<String> {
        let paths: Vec<&str> = self.fixed.paths().collect();
        if paths.is_empty() {
            return None;
        }
        let mut note = format!(
            "The story's acceptance tests ({}) are fixed: make the code pass them.",
            paths
                .iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        if !restored.is_empty() {
            note.push_str(&format!(
                " Your change to {} was put back.",
                restored
                    .iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Some(note)
    }

    /// `None` when no test command is set, or `implement.testRounds` is 0.
    pub fn new(
        wf: &'a Workflow,
        story: &'a crate::board::Story,
        dir: &Path,
        transcript: &Transcript,
    ) -> Option<TestRounds<'a>> {
        let story_id = story.id();
        wf.config.review.test_command.as_ref()?;
        if wf.config.implement.test_rounds == 0 {
            return None;
        }
        Some(TestRounds {
            wf,
            story,
            story_id,
            dir: dir.to_path_buf(),
            transcript: transcript.clone(),
            rounds: wf.config.implement.test_rounds,
            named: named_functions(story),
            criteria: story
                .section("Acceptance Criteria")
                .map(str::trim)
                .filter(|criteria| !criteria.is_empty())
                .map(str::to_string),
            fixed: FixedTests::take(dir, &story.meta.acceptance_tests),
            missing_rounds: Mutex::new(Default::default()),
            failing_rounds: Mutex::new(Default::default()),
            runs: Mutex::new(Vec::new()),
        })
    }

    /// The run the check makes: the story's names first, then the test command.
    async fn check_now(&self) -> Option<TestRun> {
        let dir = self.dir.clone();
        let named = self.named.clone();
        // The board holds the story's own text (and code quoted in notes): no definition. The
        // folders are taken inside the tree checked, which is a worktree for each of several
        // attempts: the root's own worktrees folder holds that tree itself.
        let skip: Vec<PathBuf> = self
            .wf
            .own_paths()
            .iter()
            .map(|own| self.dir.join(own))
            .collect();
        let missing = tokio::task::spawn_blocking(move || undefined(&dir, &named, &skip))
            .await
            .unwrap_or_default();
        if !missing.is_empty() {
            self.transcript
                .record("named_check", serde_json::json!({"missing": missing}));
            return Some(TestRun {
                command: self
                    .wf
                    .config
                    .review
                    .test_command
                    .clone()
                    .unwrap_or_default(),
                outcome: TestOutcome::NotDefined { missing },
                output: String::new(),
            });
        }
        run(self.wf, self.story_id, &self.dir, &self.transcript).await
    }

    /// The last run and how many runs there were; runs the tests now if the agent never did
    /// (an agent that does not call the check, or one that failed before it could).
    ///
    /// When the last run failed only on tests the implementer added for what the story does not
    /// ask, those test files are put back as the story's branch has them and the tests run once
    /// more: such tests never block the story (docs/design.md §21).
    pub async fn last_run(&self) -> Option<(TestRun, usize)> {
        if self.runs().is_empty() {
            let run = self.check_now().await?;
            self.runs().push(run);
        }
        let last = self.runs().last().cloned()?;
        if !last.passed() {
            if let Some(unasked) = self.unasked(&last) {
                let restored = super::unasked_tests::take_out(&self.dir, &unasked);
                self.transcript.record(
                    "unasked_tests_removed",
                    serde_json::json!({"files": restored,
                                       "tests": unasked.tests.iter().map(|t| &t.name).collect::<Vec<_>>()}),
                );
                if !restored.is_empty() {
                    if let Some(run) = self.check_now().await {
                        self.runs().push(run);
                    }
                }
            }
        }
        let runs = self.runs();
        runs.last().cloned().map(|last| (last, runs.len()))
    }

    /// A named definition missing in this run and the rounds before it, asked for alone once
    /// it has been missing for [`super::narrowed::ROUNDS_BEFORE_NARROWING`] rounds.
    fn missing_long_enough(&self, run: &TestRun) -> Option<Missing> {
        let TestOutcome::NotDefined { missing } = &run.outcome else {
            return None;
        };
        let mut rounds = self
            .missing_rounds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut due = None;
        for one in missing {
            let count = rounds.entry(one.name.clone()).or_default();
            *count += 1;
            if *count == super::narrowed::ROUNDS_BEFORE_NARROWING && due.is_none() {
                due = Some(one.clone());
            }
        }
        due
    }

    /// A named definition that is written but whose acceptance tests failed in this run and
    /// the rounds before it, asked for again, alone, from the
    /// [`super::narrowed::ROUNDS_BEFORE_NARROWING`]th such round on: a small model that copies
    /// a neighbouring function into `truncate` keeps doing so in the whole file, and writes the
    /// one function right when that is all it is shown.
    fn failing_long_enough(&self, run: &TestRun) -> Option<Missing> {
        if !matches!(run.outcome, TestOutcome::Failed { .. }) {
            return None;
        }
        let failing = super::narrowed::failing_in_acceptance(
            &self.dir,
            &run.output,
            &self.named,
            &self.fixed,
        );
        let mut rounds = self
            .failing_rounds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut due = None;
        for function in failing {
            let count = rounds.entry(function.name.clone()).or_default();
            *count += 1;
            if *count >= super::narrowed::ROUNDS_BEFORE_NARROWING && due.is_none() {
                let file = function.files.first().cloned().or_else(|| {
                    super::named_functions::python_file_defining(&self.dir, &function.name)
                });
                due = Some(Missing {
                    name: function.name.clone(),
                    file,
                });
            }
        }
        due
    }

    /// Asks for `missing` alone, sample after sample at a rising temperature, until the tests
    /// no longer fail on it or [`super::narrowed::SAMPLES`] are spent: the tests choose, as in
    /// best-of-n. A 1.5B model asked the same way twice answered with the same wrong `truncate`
    /// twice. An answer already tried is not tested again. The last run is returned.
    async fn narrow_by_samples(
        &self,
        missing: &Missing,
        mut failure: Option<String>,
        mut result: TestRun,
    ) -> Option<TestRun> {
        let mut tried: Vec<String> = Vec::new();
        for variant in 0..super::narrowed::SAMPLES {
            let written = super::narrowed::narrow(
                self.wf,
                self.story,
                &self.dir,
                &self.transcript,
                missing,
                &self.fixed,
                failure.as_deref(),
                variant,
                &tried,
            )
            .await;
            let Some(code) = written else { continue };
            tried.push(code);
            result = self.check_now().await?;
            if !self.still_fails_on(&result, &missing.name) {
                break;
            }
            failure = Some(result.output.clone());
        }
        Some(result)
    }

    /// Whether `run` still fails for want of `name` or on an acceptance test that calls it.
    fn still_fails_on(&self, run: &TestRun, name: &str) -> bool {
        match &run.outcome {
            TestOutcome::NotDefined { missing } => missing.iter().any(|one| one.name == name),
            // Without acceptance tests nothing says which definition a failure is about: the
            // samples go on while the tests fail.
            TestOutcome::Failed { .. } if self.fixed.paths().next().is_none() => true,
            TestOutcome::Failed { .. } => super::narrowed::failing_in_acceptance(
                &self.dir,
                &run.output,
                &self.named,
                &self.fixed,
            )
            .iter()
            .any(|function| function.name == name),
            _ => false,
        }
    }

    /// The run's failures, when only unasked tests of the implementer's account for them.
    fn unasked(&self, run: &TestRun) -> Option<super::unasked_tests::Unasked> {
        if !matches!(run.outcome, TestOutcome::Failed { .. }) {
            return None;
        }
        unasked_failures(&self.dir, &run.output, &self.named, &self.fixed)
    }

    fn runs(&self) -> std::sync::MutexGuard<'_, Vec<TestRun>> {
        self.runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl WorkCheck for TestRounds<'_> {
    async fn run(&self) -> Option<String> {
        let restored = self.fixed.restore();
        if !restored.is_empty() {
            self.transcript.record(
                "acceptance_tests_restored",
                serde_json::json!({"paths": restored}),
            );
        }
        let mut result = self.check_now().await?;
        // A definition missing or failing for rounds is asked for alone (docs/design.md §21);
        // the tests then run on whatever it gave.
        let narrowed = match self.missing_long_enough(&result) {
            Some(missing) => Some((missing, None)),
            None => self
                .failing_long_enough(&result)
                .map(|failing| (failing, Some(result.output.clone()))),
        };
        if let Some((missing, failure)) = narrowed {
            let was_missing = failure.is_none();
            result = self.narrow_by_samples(&missing, failure, result).await?;
            if was_missing {
                // Written now: a failing round of its, which counts towards asking for it
                // again in the next.
                self.failing_long_enough(&result);
            }
        }
        if result.refusal().is_some() {
            // No edit fixes a refusal: the rounds end and the attempt fails on it.
            self.runs().push(result);
            return None;
        }
        let how = match self.wf.config.edit_format() {
            EditFormat::Whole => {
                "write each file you fix out whole under its path; the tests will run again"
            }
            EditFormat::Tools | EditFormat::Auto => {
                "with the tools, then reply without a tool call when you are done; the tests \
                 will run again"
            }
        };
        let fixed_note = self.fixed_note(&restored);
        let unasked = self.unasked(&result);
        let feedback = result.failure().map(|failure| {
            if let Some(unasked) = &unasked {
                return format!(
                    "The tests fail.\n{failure}\n\n{} Then {how}.",
                    unasked.feedback()
                );
            }
            let own = failing_tests_of(&result.output, &self.named, &self.fixed);
            match (own.is_empty(), &self.criteria) {
                (false, Some(criteria)) => format!(
                    "The tests fail, so the work is not done yet.\n{failure}\n\n{} {} what \
                     this story adds, and a test written for it can be wrong too. The story's \
                     acceptance criteria:\n{criteria}\n\nMake the code do what they say, and \
                     correct a test that expects something else: {how}.",
                    backticked(&own),
                    if own.len() == 1 { "tests" } else { "test" },
                ),
                _ => format!(
                    "The tests fail, so the work is not done yet.\n{failure}\n\nFix the code \
                     (not the tests, unless a test itself is wrong): {how}."
                ),
            }
        });
        self.runs().push(result);
        match (feedback, fixed_note) {
            (Some(feedback), Some(note)) => Some(format!("{note}\n\n{feedback}")),
            (feedback, _) => feedback,
        }
    }

    fn feedback_rounds(&self) -> u32 {
        self.rounds.saturating_sub(1)
    }

    fn describe(&self) -> String {
        self.wf.config.test_command_text()
    }
}

/// The failing tests (pytest's `FAILED file::test - …` lines) whose names hold one of the
/// functions the story names: tests of what the story adds, which the model itself may have
/// written wrong. The story's acceptance tests are not among them: they are fixed.
fn failing_tests_of(output: &str, named: &[NamedFunction], fixed: &FixedTests) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for test in failed_tests(output) {
        let of_the_story = named.iter().any(|f| test.name.contains(f.name.as_str()));
        let acceptance = fixed.paths().any(|path| path == test.file);
        if of_the_story && !acceptance && !found.contains(&test.name) {
            found.push(test.name);
        }
    }
    found
}

/// `a`, `b` in stats.py: the missing functions as a story's reader names them.
fn listed(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(Missing::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn backticked(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The Implementation Notes' record of the last test run.
pub fn notes_line(run: &TestRun, runs: usize) -> String {
    let times = if runs == 1 {
        "1 run".to_string()
    } else {
        format!("{runs} runs")
    };
    match &run.outcome {
        TestOutcome::Passed => format!(
            "### Tests\n`{}` passed on the last of {times} after the change.",
            run.command
        ),
        _ => format!(
            "### Tests\n`{}` still fails after {times}: {}",
            run.command,
            run.first_failing_line()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(output: &str) -> TestRun {
        TestRun {
            command: "python3 -m pytest -q".into(),
            outcome: TestOutcome::Failed { exit_code: Some(1) },
            output: output.into(),
        }
    }

    fn function(name: &str) -> NamedFunction {
        NamedFunction {
            name: name.to_string(),
            files: Vec::new(),
        }
    }

    #[test]
    fn failing_tests_of_what_the_story_adds_are_found_by_its_names() {
        let output = "..F.F\n=== short test summary info ===\nFAILED test_textkit.py::test_word_count - AssertionError: assert 2 == 1\nFAILED test_textkit.py::test_word_count_spaces[a  b] - x\nFAILED test_textkit.py::test_shout - y\n3 failed";
        assert_eq!(
            failing_tests_of(output, &[function("word_count")], &FixedTests::default()),
            ["test_word_count", "test_word_count_spaces"]
        );
        assert!(failing_tests_of(output, &[function("median")], &FixedTests::default()).is_empty());
        assert!(
            failing_tests_of("error[E0425]: x", &[function("x")], &FixedTests::default())
                .is_empty()
        );
    }

    #[test]
    fn the_first_failing_line_is_the_one_that_names_the_failure() {
        let rows = [
            (
                "....F\n=== FAILURES ===\n___ test_mean ___\n    def test_mean():\n>       assert mean([]) == 0.0\nE       ZeroDivisionError: division by zero\n=== short test summary info ===\nFAILED test_stats.py::test_mean - ZeroDivisionError: division by zero\n1 failed, 4 passed in 0.05s\n",
                "FAILED test_stats.py::test_mean - ZeroDivisionError: division by zero",
            ),
            (
                "Traceback (most recent call last):\n  File \"t.py\", line 1\nE       NameError: name 'x' is not defined\n",
                "E       NameError: name 'x' is not defined",
            ),
            (
                "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\nthread 'b' panicked at src/lib.rs:4:5:\n",
                "test b ... FAILED",
            ),
            (
                "error[E0425]: cannot find value `x` in this scope\n",
                "error[E0425]: cannot find value `x` in this scope",
            ),
            ("something odd\nthe end\n", "the end"),
        ];
        for (output, line) in rows {
            assert_eq!(failed(output).first_failing_line(), line, "{output}");
        }
    }

    #[test]
    fn notes_say_how_the_last_run_ended() {
        let passed = TestRun {
            outcome: TestOutcome::Passed,
            ..failed("5 passed")
        };
        assert_eq!(
            notes_line(&passed, 2),
            "### Tests\n`python3 -m pytest -q` passed on the last of 2 runs after the change."
        );
        assert_eq!(
            notes_line(&failed("FAILED t.py::x - boom\n"), 1),
            "### Tests\n`python3 -m pytest -q` still fails after 1 run: FAILED t.py::x - boom"
        );
    }
}
