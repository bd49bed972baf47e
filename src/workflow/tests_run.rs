//! Running the project's tests (`review.testCommand`) on a story's tree, in the run's box, and
//! what their result says: to the review, to delivery, and to the
//! implement agent while it can still fix its work.

use std::path::Path;
use std::time::Duration;

use super::context::Workflow;
use super::named_functions::Missing;
use crate::agents::transcript::Transcript;
use crate::board::StoryId;
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

/// Implement's last test run over its work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastRun {
    pub run: TestRun,
    /// How many runs implement made.
    pub runs: usize,
    /// What the tool changed of the tests at the end, for the Implementation Notes.
    pub notes: Vec<String>,
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
        // What the model is told of a failure names the input a `pytest.raises` block held.
        Ok(out) => (
            TestOutcome::Failed {
                exit_code: out.exit_code,
            },
            super::unraised_calls::with_unraised_calls(dir, &out.output),
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

/// `a`, `b` in stats.py: the missing functions as a story's reader names them.
fn listed(missing: &[Missing]) -> String {
    missing
        .iter()
        .map(Missing::to_string)
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
