//! The acceptance phase (docs/design.md §21): the story's criteria and examples become tests
//! before its code exists. The tool checks them before the phase completes: they were written
//! (test files only), they run under `review.testCommand` and fail on the tree without the
//! story's code, they import nothing the story does not name from a module that lacks it, and
//! they carry the story's examples as written. Implement then cannot change them
//! ([`crate::workflow::fixed_tests::FixedTests`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;

use crate::agents::prompts::mentioned_names;
use crate::workflow::examples::{examples, Example};
use crate::workflow::python_imports::unknown_imports;
use crate::workflow::unbound_names;

use super::example_completion::{AskedAlone, Completion};
use super::{examples_file, test_mends, unpassable};
use crate::agents::prompts::{backticked, is_test_path};
use crate::agents::transcript::Transcript;
use crate::agents::WorkCheck;
use crate::agents::{AgentError, AgentOutput, PhaseRequest, Revision};
use crate::board::StoryId;
use crate::board::{Phase, Story, StoryType};
use crate::error::Result;
use crate::vcs;
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::call_criteria;
use crate::workflow::context::Workflow;
use crate::workflow::fixed_tests::{listing, put_back};
use crate::workflow::outcome::Outcome;
use crate::workflow::phase_output::TreeFingerprint;
use crate::workflow::python_imports;
use crate::workflow::tests_run::{self, TestOutcome, TestRun};
use crate::workflow::workspace::Work;

/// What the acceptance check concluded about the tests as they are now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The tests are good: their paths, relative to the tree.
    Written(Vec<String>),
    /// Why they cannot be kept, in words the model can act on.
    Refused(String),
}

/// Whether the phase writes tests for a story of this type: a chore or a spike may change no
/// code, so there is nothing its tests could fail on.
pub fn applies_to(story_type: &StoryType) -> bool {
    matches!(story_type, StoryType::Feature | StoryType::Bug)
}

/// Why a story gets no acceptance tests, when it gets none: there is no test command to run
/// them, the phase is off, or the story is of a type that may change no code.
pub fn skip_reason(wf: &Workflow, story: &Story) -> Option<String> {
    if !wf.config.has_test_command() {
        Some("no review.testCommand is set to run them".into())
    } else if !wf.config.phase_enabled(Phase::Acceptance) {
        Some("phases.acceptance.enabled is false".into())
    } else if !applies_to(&story.meta.story_type) {
        Some(format!("a {} may change no code", story.meta.story_type))
    } else {
        None
    }
}

/// Completes the phase without tests, saying why in its section.
pub fn skip(wf: &Workflow, story_id: &StoryId, why: String) -> Result<Outcome> {
    wf.board.update(story_id, |story| {
        story.set_section(
            Phase::Acceptance.section(),
            &format!("No acceptance tests: {why}."),
        );
        story.set_phase_flag(Phase::Acceptance, true);
        Ok(())
    })?;
    Ok(Outcome::Completed(format!("acceptance skipped ({why})")))
}

/// Where the phase's agent works and writes down what it does.
pub struct Desk<'a> {
    pub wf: &'a Workflow,
    pub work_dir: &'a Path,
    pub ignore: &'a [PathBuf],
    pub transcript: &'a Transcript,
}

/// The note over the tests of a story that gives no example: nothing they expect is a person's.
const NO_EXAMPLE: &str = "The story gives no example (`f(x) == y`, \"`f(x)` returns `y`\"), so every value these tests expect is the model's own: check them, or write examples into the criteria, which the tests must then carry as written.";

/// Asks for the tests once, under the acceptance check; the tests it kept are listed above what
/// the model said, and the check's verdict comes back for the output check.
pub async fn write_tests(
    desk: Desk<'_>,
    story: &Story,
    revision: Option<&Revision>,
    variant: u32,
) -> Result<(AgentOutput, Verdict), AgentError> {
    let (dir, ignore) = (desk.work_dir.to_path_buf(), desk.ignore.to_vec());
    let before = tokio::task::spawn_blocking(move || TreeFingerprint::take(&dir, &ignore))
        .await
        .unwrap_or_else(|_| TreeFingerprint::take(desk.work_dir, desk.ignore));
    let check = AcceptanceCheck::new(
        desk.wf,
        story,
        desk.work_dir,
        desk.ignore,
        before,
        desk.transcript,
    );
    let suggested = check.suggested().to_string();
    let request = PhaseRequest {
        phase: Phase::Acceptance,
        story,
        revision,
        work_dir: desk.work_dir,
        transcript: desk.transcript,
        check: Some(&check as &dyn WorkCheck),
        acceptance_path: Some(&suggested),
        variant,
    };
    let mut output = desk.wf.agents.run_phase(request).await?;
    let mut verdict = check.verdict().await;
    if let Verdict::Refused(why) = &verdict {
        match check.fall_back_to_examples(why).await {
            Some(written) => {
                output.text = format!(
                    "The model's tests were refused ({why}), so the acceptance tests are the story's own examples, written by the tool."
                );
                verdict = written;
            }
            // Refused tests are not left for the retry to build on: kept beside its answer,
            // a refused attempt's gathered `assert inventory.cart.Cart.add("apple", 0) ==
            // ValueError` went into the next one's file, a test no right code passes.
            None => {
                put_back(desk.work_dir, &check.changed_files().await);
            }
        }
    }
    if let Verdict::Written(paths) = &verdict {
        // What a person reading the story in the morning must know of tests that pass: a
        // 1.5B model's own `to_celsius(100) == 212` was fixed as the story's word, and the
        // story was merged wrong (a drive, 2026-11-29).
        if check.examples.is_empty() {
            output.text = format!("{NO_EXAMPLE}\n\n{}", output.text);
        }
        output.text = listing(desk.work_dir, paths, &output.text);
    }
    Ok((output, verdict))
}

/// Keeps the tests on the story's branch in a commit of their own; after a failure, puts back
/// what the agent changed instead.
pub async fn finish(
    wf: &Workflow,
    work: &Work,
    story_id: &StoryId,
    failure: Option<&str>,
) -> Result<()> {
    if work.branch.is_none() {
        return Ok(());
    }
    let dir = work.dir.clone();
    let own_paths = work.ignore(wf);
    let story_id = story_id.to_string();
    let failed = failure.is_some();
    off_the_runtime(move || {
        let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
        if failed {
            let dirty = vcs::dirty_paths(&dir, &ignore)?;
            put_back(&dir, &dirty);
            return Ok(());
        }
        vcs::commit_all(
            &dir,
            &format!("agentic-sdlc: acceptance tests for {story_id}"),
            &ignore,
        )?;
        Ok(())
    })
    .await
}

/// The acceptance phase's work check: run when the model says its tests are written, and sent
/// back to it while rounds are left (`implement.testRounds`).
pub struct AcceptanceCheck<'a> {
    wf: &'a Workflow,
    story: &'a Story,
    dir: PathBuf,
    ignore: Vec<PathBuf>,
    before: TreeFingerprint,
    transcript: Transcript,
    suggested: String,
    is_bug: bool,
    /// The story's title, summary and criteria: the values its tests may expect.
    story_text: String,
    /// The commit the story's branch started from.
    base: Option<String>,
    examples: Vec<Example>,
    story_names: Vec<String>,
    /// The functions the story names with the file it names for each, for their imports.
    homes: Vec<(String, String)>,
    last: Mutex<Option<Verdict>>,
    asked_alone: AskedAlone,
}

impl<'a> AcceptanceCheck<'a> {
    /// `before` is the tree before the phase's agent ran.
    pub fn new(
        wf: &'a Workflow,
        story: &'a Story,
        dir: &Path,
        ignore: &[PathBuf],
        before: TreeFingerprint,
        transcript: &Transcript,
    ) -> AcceptanceCheck<'a> {
        let text = crate::workflow::named_functions::story_text(story);
        AcceptanceCheck {
            wf,
            story,
            dir: dir.to_path_buf(),
            ignore: ignore.to_vec(),
            before,
            transcript: transcript.clone(),
            suggested: super::test_path::suggested_path(dir, &story.slug),
            is_bug: story.meta.story_type == StoryType::Bug,
            story_text: text.clone(),
            base: story.meta.branch_base.clone(),
            examples: examples(&text),
            story_names: mentioned_names(&text),
            homes: crate::workflow::named_functions::homes(dir, story),
            last: Mutex::new(None),
            asked_alone: AskedAlone::default(),
        }
    }

    /// Where the tests are asked to go.
    pub fn suggested(&self) -> &str {
        &self.suggested
    }

    /// The last verdict; the check runs now if the model never got to it.
    pub async fn verdict(&self) -> Verdict {
        if let Some(verdict) = self.last_verdict() {
            return verdict;
        }
        self.judge().await
    }

    fn last_verdict(&self) -> Option<Verdict> {
        self.last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// The files the agent changed since it started, relative to the tree.
    async fn changed_files(&self) -> Vec<String> {
        let (dir, ignore) = (self.dir.clone(), self.ignore.clone());
        let Ok(after) =
            tokio::task::spawn_blocking(move || TreeFingerprint::take(&dir, &ignore)).await
        else {
            return Vec::new();
        };
        self.before
            .changed_files(&after)
            .into_iter()
            .map(|path| path.to_string_lossy().into_owned())
            .collect()
    }

    async fn judge(&self) -> Verdict {
        let verdict = self.judge_now().await;
        self.transcript.record(
            "acceptance_check",
            match &verdict {
                Verdict::Written(paths) => serde_json::json!({"written": paths}),
                Verdict::Refused(why) => serde_json::json!({"refused": why}),
            },
        );
        *self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(verdict.clone());
        verdict
    }

    async fn judge_now(&self) -> Verdict {
        let changed = self.changed_files().await;
        let (tests, others): (Vec<String>, Vec<String>) = changed
            .into_iter()
            .partition(|path| is_test_path(Path::new(path)));
        let mut notes = Vec::new();
        if !others.is_empty() {
            let restored = put_back(&self.dir, &others);
            let kept: Vec<&String> = others.iter().filter(|p| !restored.contains(p)).collect();
            if !kept.is_empty() {
                return Verdict::Refused(format!(
                    "this phase writes tests only, and {} changed: put {} back as it was",
                    backticked(kept.iter().map(|p| p.as_str())),
                    if kept.len() == 1 { "it" } else { "them" }
                ));
            }
            notes.push(format!(
                "{} put back: this phase writes tests only, the code comes after",
                backticked(restored.iter().map(String::as_str))
            ));
        }
        let mut tests: Vec<String> = tests
            .into_iter()
            .filter(|path| self.dir.join(path).is_file())
            .collect();
        let moved = super::test_path::moved_to_suggested(&self.dir, &mut tests, &self.suggested);
        notes.extend(moved);
        if tests.is_empty() {
            return Verdict::Refused(format!(
                "no test file was written: write the tests into `{}`",
                self.suggested
            ));
        }
        let mends = test_mends::Mends {
            dir: &self.dir,
            story_text: &self.story_text,
            examples: &self.examples,
            story_names: &self.story_names,
            homes: &self.homes,
        };
        for path in tests.iter().filter(|path| path.ends_with(".py")) {
            notes.extend(mends.mend(path));
        }
        let not_added = match self.file_to_complete(&tests) {
            Some(path) => {
                let (added, not_added) = self
                    .completion()
                    .complete(path, &self.examples_missing_from(&tests))
                    .await;
                notes.extend(added);
                not_added
            }
            None => None,
        };
        let calls = call_criteria::Calls::of(&self.story_text, &self.examples, &self.homes);
        let to_complete = self.file_to_complete(&tests);
        notes.extend(
            to_complete.and_then(|path| call_criteria::complete_file(&self.dir, path, &calls)),
        );
        if let Some(why) = unpassable::holds_no_test(&self.dir, &tests) {
            // What the tool took out may be why; the model must know it.
            return Verdict::Refused(match notes.is_empty() {
                true => why,
                false => format!("{why}; the tool {}", notes.join("; ")),
            });
        }
        let missing: Vec<String> = self
            .examples_missing_from(&tests)
            .iter()
            .map(|example| format!("`{}`", example.assertion()))
            .collect();
        if !missing.is_empty() {
            // Why the tool could not add one is said too: a person reading the story's failure
            // learns what the story leaves open (which file, which class, how it is made).
            let unwritten = not_added.map(|why| format!("; {why}")).unwrap_or_default();
            return Verdict::Refused(format!(
                "the story's examples must be tests exactly as the story writes them, and {} missing: add {}{unwritten}",
                if missing.len() == 1 { "one is" } else { "some are" },
                missing.join(", ")
            ));
        }
        let unknown = unknown_imports(&self.dir, &self.text_of(&tests), &self.story_text);
        if let Some(first) = unknown.first() {
            return Verdict::Refused(format!(
                "the tests import `{}` from {}, which does not define it, and the story does not ask for it: test only what the story names or what exists",
                first.name, first.module_file
            ));
        }
        if let Some(why) = unbound_names::refusal(&self.dir, &tests) {
            return Verdict::Refused(why);
        }
        let text = self.text_of(&tests);
        let patched_missing =
            unpassable::patched_attributes_missing(&self.dir, &text, &self.story_text);
        if let Some(why) = patched_missing.or_else(|| unpassable::contradictory_assertions(&text)) {
            return Verdict::Refused(why);
        }
        let Some(mut run) = self.run_before_the_code(&tests).await else {
            return Verdict::Refused("no test command is set (review.testCommand)".into());
        };
        // Each pass imports one standard name the run found undefined (`pytest`, `Decimal`),
        // and runs the tests again; a name of the story's stays the model's to import.
        for _ in 0..3 {
            let Some(name) = python_imports::undefined_name(&run.output) else {
                break;
            };
            let Some((import, files)) = python_imports::import_where_used(&self.dir, &tests, &name)
            else {
                break;
            };
            notes.push(format!(
                "added `{import}` to {}",
                backticked(files.iter().map(String::as_str))
            ));
            let Some(again) = self.run_before_the_code(&tests).await else {
                break;
            };
            run = again;
        }
        let mentioned = tests.iter().any(|path| {
            let name = Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            run.output.contains(&name)
        });
        let fails_now = match &run.outcome {
            TestOutcome::Passed => {
                let why = if self.is_bug {
                    format!("the tests pass on the code as it is, so they do not reproduce the bug: `{}` must fail until the bug is fixed", run.command)
                } else {
                    format!("the tests pass before the story's code exists, so they check nothing the story adds: each test must call what the story asks for (`{}` passed)", run.command)
                };
                // What the tool took out may be why they pass; the model must know it.
                return Verdict::Refused(match notes.is_empty() {
                    true => why,
                    false => format!("{why}; the tool {}", notes.join("; ")),
                });
            }
            TestOutcome::Failed { .. } => true,
            other => {
                return Verdict::Refused(format!(
                    "the tests could not be run: {}",
                    run.failure().unwrap_or_else(|| format!("{other:?}"))
                ))
            }
        };
        if let Some(name) = python_imports::undefined_name(&run.output) {
            return Verdict::Refused(format!(
                "the tests use `{name}` without importing or defining it: add its import at the top of the test file (a name the story asks for comes from the file the story names)"
            ));
        }
        let broken = run
            .output
            .lines()
            .find(|line| line.contains("SyntaxError") || line.contains("IndentationError"));
        if let Some(line) = broken {
            return Verdict::Refused(format!(
                "a test file does not parse ({}): write it out again, whole and valid",
                line.trim()
            ));
        }
        if let Some(why) = unpassable::never_passing(&self.dir, &run.output, &self.story_text) {
            return Verdict::Refused(why);
        }
        if !self.is_bug {
            let stopped =
                unpassable::stops_before_the_story(&self.dir, &run.output, &self.story_text);
            if let Some(why) = stopped {
                return Verdict::Refused(why);
            }
        }
        if fails_now && !mentioned {
            return Verdict::Refused(format!(
                "`{}` fails, but not in {} (it says `{}`): the tests were not collected, or something else fails; name the file and its tests as the test framework expects",
                run.command,
                backticked(tests.iter().map(String::as_str)),
                run.first_failing_line()
            ));
        }
        if !notes.is_empty() {
            self.transcript
                .record("acceptance_notes", serde_json::json!({"notes": notes}));
        }
        Verdict::Written(tests)
    }
}

impl AcceptanceCheck<'_> {
    /// The tests run where the story's code does not exist yet: the story's tree, or, when
    /// the phase runs again after implement (a review sent the story back to it), the story's
    /// base commit with `tests` copied in. In the story's tree such tests passed on the code
    /// they were to precede, and the phase refused them.
    async fn run_before_the_code(&self, tests: &[String]) -> Option<TestRun> {
        let at = super::scratch::Tree {
            wf: self.wf,
            story_id: self.story.id(),
            dir: &self.dir,
            transcript: &self.transcript,
        };
        match &self.base {
            Some(base) => at.tests_before_the_code(base, tests).await,
            None => tests_run::run(self.wf, self.story.id(), &self.dir, &self.transcript).await,
        }
    }

    /// The story's examples as a Python test file of the tool's own ([`examples_file::write`]).
    fn examples_file(&self) -> Option<String> {
        if !self.suggested.ends_with(".py") {
            return None;
        }
        examples_file::write(&self.examples_story())
    }

    /// What the tool adds the examples the model's tests lack with.
    fn completion(&self) -> Completion<'_> {
        Completion {
            wf: self.wf,
            story: self.story,
            examples: self.examples_story(),
            transcript: &self.transcript,
            asked: &self.asked_alone,
        }
    }

    /// What the tool writes the story's examples as tests from.
    fn examples_story(&self) -> examples_file::Story<'_> {
        examples_file::Story {
            dir: &self.dir,
            text: &self.story_text,
            examples: &self.examples,
            homes: &self.homes,
        }
    }

    /// When the model's tests are refused and the story's examples can be tests of their own,
    /// those are the acceptance tests (docs/design.md §21): the model's files are put back, the
    /// tool writes the examples into the suggested file, and the check runs on that. A small
    /// model that copies the repository map's layout into its test file would otherwise fail a
    /// story whose examples say exactly what to test. `None` when there is nothing to fall
    /// back to, or the examples fail the check too (then nothing of them is left behind).
    pub async fn fall_back_to_examples(&self, refused: &str) -> Option<Verdict> {
        let content = self.examples_file()?;
        let changed = self.changed_files().await;
        put_back(&self.dir, &changed);
        let path = self.dir.join(&self.suggested);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).ok()?;
        }
        crate::atomic_file::write(&path, content.as_bytes()).ok()?;
        self.transcript.record(
            "acceptance_examples_written",
            serde_json::json!({"path": self.suggested, "refused": refused}),
        );
        match self.judge().await {
            Verdict::Written(paths) => Some(Verdict::Written(paths)),
            Verdict::Refused(_) => {
                put_back(&self.dir, std::slice::from_ref(&self.suggested));
                None
            }
        }
    }

    /// The files `tests`, one after the other.
    fn text_of(&self, tests: &[String]) -> String {
        tests
            .iter()
            .filter_map(|path| std::fs::read_to_string(self.dir.join(path)).ok())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The story's examples that the files `tests` do not carry.
    fn examples_missing_from(&self, tests: &[String]) -> Vec<Example> {
        let text = self.text_of(tests);
        self.examples
            .iter()
            .filter(|example| !example.carried_by(&text))
            .cloned()
            .collect()
    }

    /// The Python test file the tool adds tests to: the suggested one if it is among `tests`.
    fn file_to_complete<'t>(&self, tests: &'t [String]) -> Option<&'t String> {
        let python = |path: &&String| path.ends_with(".py");
        tests
            .iter()
            .filter(python)
            .find(|path| **path == self.suggested)
            .or_else(|| tests.iter().find(python))
    }
}

#[async_trait]
impl WorkCheck for AcceptanceCheck<'_> {
    async fn run(&self) -> Option<String> {
        match self.judge().await {
            Verdict::Written(_) => None,
            Verdict::Refused(why) => Some(format!(
                "The acceptance tests are not done yet: {why}. Write the test file out again, whole."
            )),
        }
    }

    fn feedback_rounds(&self) -> u32 {
        self.wf.config.implement.test_rounds.saturating_sub(1)
    }

    fn describe(&self) -> String {
        self.wf.config.test_command_text()
    }
}
