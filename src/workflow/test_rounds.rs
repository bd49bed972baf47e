//! Implement's work check (docs/design.md §18, §21): the project's tests run when the model
//! says it is done, up to `implement.testRounds` times, and each failure but the last goes back
//! to it with what to do: a definition the story names still missing or failing is asked for
//! alone (`narrowed`), a failing test of the implementer's own that the story does not ask for
//! is named as such (`unasked_tests`), and acceptance tests a command changed are put back.
//! Before a failure goes back, the tool mends what the model got wrong in form (`mends`).

mod mends;
mod narrowing;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use async_trait::async_trait;

use super::context::Workflow;
use super::fixed_tests::FixedTests;
use super::named_functions::{named_in_tree, undefined, NamedFunction};
use super::narrowed::SAMPLES;
use super::outvoted_acceptance::{note as outvoted_note, outvoted_acceptance_tests};
use super::round_feedback::RoundFailure;
use super::stray_changes::set_aside;
use super::tests_run::{run, LastRun, TestOutcome, TestRun};
use super::unasked_tests::{failing_tests_of, take_out_tests, unasked_failures};
use super::unchanged_rounds::{nothing_changed, RoundTrees};
use crate::agents::transcript::Transcript;
use crate::agents::WorkCheck;
use crate::board::StoryId;
use crate::config::EditFormat;
use narrowing::Sampled;

/// The tests as implement's work check: run when the model says it is done, up to
/// `implement.testRounds` times in all; each failure but the last goes back to the model. The
/// last run is kept for the Implementation Notes.
pub struct TestRounds<'a> {
    wf: &'a Workflow,
    story: &'a crate::board::Story,
    story_id: &'a StoryId,
    dir: PathBuf,
    /// The commit the story's own work starts from (`vcs::review_base`): a failed implement
    /// commits its partial work on the branch, so HEAD may hold some of the model's changes.
    base: String,
    transcript: Transcript,
    rounds: u32,
    /// Functions the story asks for by name; each must be defined before the tests run.
    named: Vec<NamedFunction>,
    /// Definitions a run found missing (`found_missing`: a method, a name the tests cannot
    /// import): from then on a failing acceptance test that calls one counts as its.
    learned: Mutex<Vec<NamedFunction>>,
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
    /// The tree as the last round left it, to tell a reply that changed nothing.
    trees: RoundTrees,
    /// What the tool's mends since the last feedback tell the model (its test files put back).
    notes: Mutex<Vec<String>>,
    /// What the Implementation Notes say of the project's tests the tool took out.
    taken_out: Mutex<Vec<String>>,
    /// The narrowed samples asked so far, by definition.
    sampled: Mutex<std::collections::HashMap<String, Sampled>>,
    /// The failure the opening (`first_alone`) left, for the conversation's first prompt.
    opening_failure: Mutex<Option<String>>,
    /// The opening's rounds after its first, which the conversation's feedback rounds give up.
    opening_further_rounds: std::sync::atomic::AtomicU32,
}

impl<'a> TestRounds<'a> {
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
            base: crate::vcs::review_base(dir, story.meta.branch.as_deref())
                .unwrap_or_else(|_| "HEAD".into()),
            transcript: transcript.clone(),
            rounds: wf.config.implement.test_rounds,
            named: named_in_tree(dir, story),
            learned: Mutex::new(Vec::new()),
            criteria: story
                .section("Acceptance Criteria")
                .map(str::trim)
                .filter(|criteria| !criteria.is_empty())
                .map(str::to_string),
            fixed: FixedTests::take(dir, &story.meta.acceptance_tests),
            missing_rounds: Mutex::new(Default::default()),
            failing_rounds: Mutex::new(Default::default()),
            runs: Mutex::new(Vec::new()),
            trees: RoundTrees::new(dir, wf.own_paths()),
            notes: Mutex::new(Vec::new()),
            taken_out: Mutex::new(Vec::new()),
            sampled: Mutex::new(Default::default()),
            opening_failure: Mutex::new(None),
            opening_further_rounds: Default::default(),
        })
    }

    /// The tool's own folders (the board, the worktrees) inside the tree checked, which is a
    /// worktree for each of several attempts: the root's own worktrees folder holds that tree.
    fn own_folders(&self) -> Vec<PathBuf> {
        self.wf
            .own_paths()
            .iter()
            .map(|own| self.dir.join(own))
            .collect()
    }

    /// The files the story's work changed since its base, the tool's own folders left out (a
    /// self-import committed with a failed implement's partial work failed the next run, in
    /// HEAD and no change of the tree).
    fn changed_by_the_story(&self) -> Vec<String> {
        let own = self.wf.own_paths();
        let changed = crate::vcs::worktree_changes(&self.dir, &self.base, &[]).unwrap_or_default();
        changed
            .into_iter()
            .filter(|path| !own.iter().any(|own| Path::new(path).starts_with(own)))
            .collect()
    }

    /// The run the check makes: the story's names first, then the test command.
    async fn check_now(&self) -> Option<TestRun> {
        let homes = super::named_functions::homes(&self.dir, self.story);
        let changed = self.changed_by_the_story();
        super::own_files::mend(&self.dir, &changed, &self.fixed, &homes, &self.transcript);
        let dir = self.dir.clone();
        let named = self.named.clone();
        // The board holds the story's own text (and code quoted in notes): no definition.
        let skip = self.own_folders();
        let missing = tokio::task::spawn_blocking(move || undefined(&dir, &named, &skip))
            .await
            .unwrap_or_default();
        if !missing.is_empty() {
            self.transcript
                .record("named_check", serde_json::json!({"missing": missing}));
            return Some(TestRun {
                command: self.wf.config.test_command_text(),
                outcome: TestOutcome::NotDefined { missing },
                output: String::new(),
            });
        }
        run(self.wf, self.story_id, &self.dir, &self.transcript).await
    }

    /// The last run and how many runs there were; runs the tests now if the agent never did
    /// (an agent that does not call the check, or one that failed before it could).
    ///
    /// When the last run failed only on acceptance tests that the story's examples outvote,
    /// those are taken out (`outvoted_acceptance`). When it failed only on tests the implementer
    /// added for what the story does not ask, those test files are put back as the story's
    /// branch has them. Either way the tests run once more: such tests never block the story
    /// (docs/design.md §21).
    pub async fn last_run(&self) -> Option<LastRun> {
        if self.runs().is_empty() {
            let run = self.unchecked_end().await?;
            self.runs().push(run);
        }
        let mut last = self.runs().last().cloned()?;
        if let Some(run) = self.without_contradicted_tests(&last).await {
            self.runs().push(run.clone());
            last = run;
        }
        let mut notes = std::mem::take(&mut *self.taken_out_mut());
        if let Some((run, note)) = self.without_outvoted_acceptance_tests(&last).await {
            self.runs().push(run.clone());
            notes.push(note);
            last = run;
        }
        if let Some(run) = self.without_unasked_tests(&last).await {
            self.runs().push(run);
        }
        self.without_stray_changes().await;
        let runs = self.runs();
        runs.last().cloned().map(|run| LastRun {
            run,
            runs: runs.len(),
            notes,
        })
    }

    /// When only acceptance tests that the story's examples outvote fail in `run`, they are
    /// taken out of their files (`acceptance_tests_outvoted`) and the tests run again: that run,
    /// with the note for the Implementation Notes.
    async fn without_outvoted_acceptance_tests(&self, run: &TestRun) -> Option<(TestRun, String)> {
        if !matches!(run.outcome, TestOutcome::Failed { .. }) {
            return None;
        }
        let examples = super::examples::examples(&super::named_functions::story_text(self.story));
        let outvoted = outvoted_acceptance_tests(&self.dir, &run.output, &examples, &self.fixed);
        if outvoted.is_empty() {
            return None;
        }
        let files = take_out_tests(&self.dir, &outvoted);
        self.transcript.record(
            "acceptance_tests_outvoted",
            serde_json::json!({"files": files,
                               "tests": outvoted.iter().map(|t| &t.name).collect::<Vec<_>>()}),
        );
        if files.is_empty() {
            return None;
        }
        Some((self.check_now().await?, outvoted_note(&outvoted)))
    }

    /// When only the implementer's unasked tests account for `run`'s failures, their files are
    /// put back as the story's branch has them (`unasked_tests_removed`) and the tests run
    /// again: that run; `None` when nothing was put back.
    async fn without_unasked_tests(&self, run: &TestRun) -> Option<TestRun> {
        let unasked = self.unasked(run)?;
        let restored = super::unasked_tests::take_out(&self.dir, &unasked);
        self.transcript.record(
            "unasked_tests_removed",
            serde_json::json!({"files": restored,
                               "tests": unasked.tests.iter().map(|t| &t.name).collect::<Vec<_>>()}),
        );
        if restored.is_empty() {
            return None;
        }
        self.check_now().await
    }

    /// When the last run passed or failed, the files the story does not name that the agent
    /// changed are put back and the tests run once more; the change is kept without them when
    /// that run passes (`stray_changes`). A passing change loses them too: asked for
    /// `truncate`, the 1.5B model also rewrote the 14 KB README.md, which would have gone to
    /// every reviewer whole (11k tokens a perspective, three of them queued on one slot) and
    /// then into the base branch.
    async fn without_stray_changes(&self) {
        let ran = self.runs().last().is_some_and(|last| {
            matches!(
                last.outcome,
                TestOutcome::Failed { .. } | TestOutcome::Passed
            )
        });
        if !ran {
            return;
        }
        let stray = self.stray_files();
        if stray.is_empty() {
            return;
        }
        let set = set_aside(&self.dir, &self.base, &stray);
        let mut again = self.check_now().await;
        // Without the stray rewrite, what still fails may be only the implementer's own
        // rewrite of a project test, written to the stray code: asked for
        // `total_with_discount`, the 1.5B model broke `Cart.add` and rewrote the project's
        // `test_add_zero_quantity` to expect what the broken `add` did.
        if let Some(run) = again.as_ref() {
            if let Some(rerun) = self.without_unasked_tests(run).await {
                again = Some(rerun);
            }
        }
        match again {
            Some(run) if run.passed() => {
                self.transcript.record(
                    "stray_changes_put_back",
                    serde_json::json!({"files": stray}),
                );
                self.runs().push(run);
            }
            _ => {
                set.restore(&self.dir);
                self.transcript
                    .record("stray_changes_kept", serde_json::json!({"files": stray}));
            }
        }
    }

    /// The definitions the story mentions that `run` says are missing, remembered among
    /// [`Self::named`] for the rounds after.
    fn learn_missing(&self, run: &TestRun) -> Vec<NamedFunction> {
        let story_text = super::named_functions::story_text(self.story);
        let found = super::named_functions::found_missing(&self.dir, &run.output, &story_text);
        let mut learned = self
            .learned
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for definition in &found {
            let known = self.named.iter().chain(learned.iter());
            if !known.map(|k| &k.name).any(|name| *name == definition.name) {
                learned.push(definition.clone());
            }
        }
        found
    }

    /// The definitions the story asks for: the functions it names, and the definitions found
    /// missing so far.
    fn named(&self) -> Vec<NamedFunction> {
        let learned = self
            .learned
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.named.iter().chain(learned.iter()).cloned().collect()
    }

    /// The run's failures, when only unasked tests of the implementer's account for them.
    fn unasked(&self, run: &TestRun) -> Option<super::unasked_tests::Unasked> {
        if !matches!(run.outcome, TestOutcome::Failed { .. }) {
            return None;
        }
        unasked_failures(
            &self.dir,
            &self.base,
            &run.output,
            &self.named(),
            &self.fixed,
        )
    }

    fn notes_mut(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.notes
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn taken_out_mut(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.taken_out
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The notes gathered since the last feedback, which now goes out with them.
    fn notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes_mut())
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
        let unchanged = self.trees.unchanged();
        let restored = self.fixed.restore();
        if !restored.is_empty() {
            self.transcript.record(
                "acceptance_tests_restored",
                serde_json::json!({"paths": restored}),
            );
        }
        let mut result = self.checked_and_mended().await?;
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
            result = self
                .narrow_by_samples(&missing, failure, result, SAMPLES)
                .await?;
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
        let mut notes: Vec<String> = self.fixed.note(&restored).into_iter().collect();
        if unchanged {
            notes.push(nothing_changed(how));
        }
        notes.append(&mut self.notes());
        let unasked = self.unasked(&result);
        let feedback = result.failure().map(|failure| {
            RoundFailure {
                failure: &failure,
                how,
                unasked: unasked.as_ref(),
                own: failing_tests_of(&result.output, &self.named(), &self.fixed),
                criteria: self.criteria.as_deref(),
            }
            .told(&notes)
        });
        self.runs().push(result);
        self.trees.settle();
        feedback
    }

    /// `implement.testRounds` bounds the rounds of tests implement goes through: the opening's
    /// further rounds are among them.
    fn feedback_rounds(&self) -> u32 {
        let opening = self
            .opening_further_rounds
            .load(std::sync::atomic::Ordering::Relaxed);
        self.rounds.saturating_sub(1).saturating_sub(opening)
    }

    fn describe(&self) -> String {
        self.wf.config.test_command_text()
    }

    fn standing_failure(&self) -> Option<String> {
        self.opening_failure
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}
