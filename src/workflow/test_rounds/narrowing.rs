//! A definition the story names, missing or failing round after round, asked for alone
//! (docs/design.md §21, `narrowed`): when it is due, and the samples the tests choose from.

use super::TestRounds;
use crate::atomic_file;
use crate::workflow::named_functions::Missing;
use crate::workflow::narrowed::{ROUNDS_BEFORE_NARROWING, SAMPLES};
use crate::workflow::stray_definitions::does_better;
use crate::workflow::tests_run::{TestOutcome, TestRun};

/// The narrowed samples asked for one definition: a later round's go on from them. Asked again
/// from the first, the 1.5B model's second round of `slugify` samples replayed its first, one of
/// them an 80-second copy of the repository map (textkit, 2026-12-06).
#[derive(Default)]
pub(super) struct Sampled {
    /// Samples asked; the next further sample's variant (its seed) counts on from it.
    asked: u32,
    /// The answers written, each never written again.
    tried: Vec<String>,
}

/// Samples asked for each definition in the opening's first round (`first_alone`): the tests
/// choose between two, and a definition the model writes right at once costs no more.
const FIRST_SAMPLES: u32 = 2;

/// Rounds of the opening, the first of [`FIRST_SAMPLES`] samples for each definition due, each
/// further one of [`SAMPLES`], before the conversation starts: ten samples of one definition in
/// all. In the foundry and ledger runs after the opening came (2026-12-07), no whole-file
/// conversation turn made the tests pass in eight stories whose opening failed, and those turns
/// took half of implement's time (45 to 416 seconds a story), while the samples asked in the
/// rounds between them passed at the sixth, sixth and eighth. The further rounds count among
/// `implement.testRounds`, and never more than it: they take the place of the conversation's
/// rounds, not add to them (workshop, 2026-12-08: a story whose opening failed went on to three
/// whole-file turns and eight more samples, 13 minutes of implement, none passing).
const OPENING_ROUNDS: u32 = 3;

/// What implement's opening wrote, when that was all the story needed: the definitions asked
/// for alone and the files they went into. Its passing run is the check's last.
pub struct FirstAlone {
    pub names: Vec<String>,
    pub files: Vec<String>,
}

impl FirstAlone {
    /// The Implementation Notes for a change no conversation made: what was written where,
    /// and how (the tests' line follows them, as for any implement).
    pub fn notes(&self) -> String {
        format!(
            "Wrote {} in {}: each asked for alone, from the story and its acceptance tests, \
             before any change of whole files; the acceptance tests pass with it.",
            quoted(&self.names),
            quoted(&self.files)
        )
    }
}

impl TestRounds<'_> {
    /// Implement's opening, before the conversation (docs/design.md §21, `first_alone`): each
    /// definition the story names that the tree lacks, or whose acceptance tests fail, is asked
    /// for alone, and the tests choose between [`FIRST_SAMPLES`] answers; those still failing
    /// are asked again in up to [`OPENING_ROUNDS`] rounds. `Some` when the tests then pass, and
    /// the conversation is not needed; otherwise what was written stays for the conversation to
    /// go on from, and the answers tried are not asked for again.
    ///
    /// Asked for `average_rating`, the 1.5B model spent three whole-file replies (100 seconds)
    /// copying the fixed acceptance test file, which was refused each time, and writing the
    /// function without its `ValueError`; asked for the function alone, it wrote it right in
    /// 23 seconds (drive on ca2f762, 2026-12-07).
    pub async fn first_alone(&self) -> Option<FirstAlone> {
        self.fixed.paths().next()?;
        let mut run = self.checked_and_mended().await?;
        let mut names: Vec<String> = Vec::new();
        let mut rounds = 0;
        while rounds < OPENING_ROUNDS.min(self.rounds) {
            let samples = if rounds == 0 { FIRST_SAMPLES } else { SAMPLES };
            let mut asked: Vec<String> = Vec::new();
            while let Some((due, failure)) = self.due_alone(&run, &asked) {
                asked.push(due.name.clone());
                if !names.contains(&due.name) {
                    names.push(due.name.clone());
                }
                run = self.narrow_by_samples(&due, failure, run, samples).await?;
            }
            if asked.is_empty() {
                break;
            }
            rounds += 1;
            if run.passed() {
                break;
            }
        }
        if names.is_empty() {
            return None;
        }
        let passed = run.passed();
        self.transcript.record(
            "first_alone",
            serde_json::json!({"names": names, "passed": passed}),
        );
        if !passed {
            self.opening_further_rounds.store(
                rounds.saturating_sub(1),
                std::sync::atomic::Ordering::Relaxed,
            );
            *self
                .opening_failure
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()) = standing(&names, &run);
            return None;
        }
        self.runs().push(run);
        // The acceptance tests are changed on the branch too, but the opening wrote none of
        // them: "Wrote `reading_time` in `shelf/books.py`, `tests/test_reading_time.py`" said
        // otherwise (a drive, 2026-12-08).
        let files = self
            .changed_by_the_story()
            .into_iter()
            .filter(|path| !self.fixed.paths().any(|fixed| fixed == path))
            .collect();
        Some(FirstAlone { names, files })
    }

    /// The next definition of the opening not yet asked for: one `run` found missing, else one
    /// whose acceptance tests failed in it (with that failure).
    fn due_alone(&self, run: &TestRun, asked: &[String]) -> Option<(Missing, Option<String>)> {
        let fresh = |missing: &Missing| !asked.contains(&missing.name);
        match &run.outcome {
            TestOutcome::NotDefined { missing } => missing
                .iter()
                .find(|one| fresh(one))
                .cloned()
                .map(|one| (one, None)),
            TestOutcome::Failed { .. } => {
                if let Some(one) = self.methods_lacking(run).into_iter().find(|one| fresh(one)) {
                    return Some((one, None));
                }
                self.failing_acceptance(run)
                    .into_iter()
                    .find(|one| fresh(one))
                    .map(|one| (one, Some(run.output.clone())))
            }
            _ => None,
        }
    }

    /// The run of a conversation that ended without the check: with a definition the story
    /// names still missing, that definition is asked for alone at once, as rounds would have
    /// asked for it, and the tests run on what it gave.
    ///
    /// Asked for a new module, the 1.5B model twice answered with notes under file headings
    /// and no code until the reply cap cut it off; a cut-off reply is no claim to be done, so
    /// no round ran, and both attempts were refused for changing no file (transit
    /// `fares-module`, 2026-12-06), where the one function asked alone is what it writes best.
    pub(super) async fn unchecked_end(&self) -> Option<TestRun> {
        let run = self.check_now().await?;
        let first = match &run.outcome {
            TestOutcome::NotDefined { missing } => missing.first().cloned(),
            _ => None,
        };
        let Some(first) = first else {
            return Some(run);
        };
        self.transcript.record(
            "narrowed_at_end",
            serde_json::json!({"name": first.name, "file": first.file}),
        );
        self.narrow_by_samples(&first, None, run, SAMPLES).await
    }

    /// A named definition missing in this run and the rounds before it, asked for alone once
    /// it has been missing for [`ROUNDS_BEFORE_NARROWING`] rounds: a function
    /// the story names that no file defines, or a method the tests found missing.
    pub(super) fn missing_long_enough(&self, run: &TestRun) -> Option<Missing> {
        let missing: Vec<Missing> = match &run.outcome {
            TestOutcome::NotDefined { missing } => missing.clone(),
            TestOutcome::Failed { .. } => self.methods_lacking(run),
            _ => return None,
        };
        counted(&self.missing_rounds, missing, |rounds| {
            rounds == ROUNDS_BEFORE_NARROWING
        })
    }

    /// A named definition that is written but whose acceptance tests failed in this run and
    /// the rounds before it, asked for again, alone, from the
    /// [`ROUNDS_BEFORE_NARROWING`]th such round on: a small model that copies
    /// a neighbouring function into `truncate` keeps doing so in the whole file, and writes the
    /// one function right when that is all it is shown.
    pub(super) fn failing_long_enough(&self, run: &TestRun) -> Option<Missing> {
        if !matches!(run.outcome, TestOutcome::Failed { .. }) {
            return None;
        }
        counted(
            &self.failing_rounds,
            self.failing_acceptance(run),
            |rounds| rounds >= ROUNDS_BEFORE_NARROWING,
        )
    }

    /// The definitions a failing `run` found missing (`learn_missing`), each in its file.
    fn methods_lacking(&self, run: &TestRun) -> Vec<Missing> {
        self.learn_missing(run)
            .into_iter()
            .map(|method| Missing {
                file: method.files.first().cloned(),
                name: method.name,
            })
            .collect()
    }

    /// The named definitions whose acceptance tests failed in `run`, each in the file the
    /// story names for it, else the one of the tree that defines it.
    fn failing_acceptance(&self, run: &TestRun) -> Vec<Missing> {
        crate::workflow::failing_functions::failing_in_acceptance(
            &self.dir,
            &run.output,
            &self.named(),
            &self.fixed,
        )
        .into_iter()
        .map(|function| Missing {
            file: function.files.first().cloned().or_else(|| {
                crate::workflow::tree_definitions::python_file_defining(&self.dir, &function.name)
            }),
            name: function.name,
        })
        .collect()
    }

    /// Asks for `missing` alone, sample after sample at a rising temperature, until the tests
    /// no longer fail on it or `samples` are spent: the tests choose, as in
    /// best-of-n. A 1.5B model asked the same way twice answered with the same wrong `truncate`
    /// twice. An answer already tried, in this round or an earlier one, is not tested again; a
    /// round's first sample is asked as the phase asks, its further ones take seeds of their own
    /// (`Sampled`). The last run is returned, unless an earlier state of the file did better:
    /// then that state is put back (a 1.5B model's third and fourth `is_low_stock` took a `self`
    /// and failed six tests where its first failed one).
    pub(super) async fn narrow_by_samples(
        &self,
        missing: &Missing,
        mut failure: Option<String>,
        mut result: TestRun,
        samples: u32,
    ) -> Option<TestRun> {
        let (before, mut tried) = {
            let sampled = self.sampled_mut();
            let earlier = sampled.get(&missing.name);
            (
                earlier.map_or(0, |earlier| earlier.asked),
                earlier
                    .map(|earlier| earlier.tried.clone())
                    .unwrap_or_default(),
            )
        };
        let path = missing.file.as_ref().map(|file| self.dir.join(file));
        let text_now = || {
            path.as_ref()
                .and_then(|path| std::fs::read_to_string(path).ok())
        };
        let mut best = (result.clone(), text_now());
        for sample in 0..samples {
            let variant = match sample {
                0 => 0,
                further => before + further,
            };
            let written = crate::workflow::narrowed::narrow(
                self.wf,
                self.story,
                &self.dir,
                &self.transcript,
                missing,
                &self.fixed,
                failure.as_deref(),
                variant,
                &tried,
                &self.base,
            )
            .await;
            self.remember_sample(&missing.name, before + sample + 1, written.as_ref());
            let Some(code) = written else { continue };
            tried.push(code);
            result = self.checked_and_mended().await?;
            // A sample that keeps the tests from loading fails none of the name's, and is no
            // answer: done means no worse than the best so far (workshop, 2026-12-08: the
            // opening's fifth sample left a `NameError` at import, the opening took it as
            // done, and every reply after worked on the broken file).
            let worse = !result.passed() && does_better(&best.0, &result);
            if !self.still_fails_on(&result, &missing.name) && !worse {
                return Some(result);
            }
            if does_better(&result, &best.0) {
                best = (result.clone(), text_now());
            }
            failure = Some(result.output.clone());
        }
        if let (Some(path), (kept, Some(text))) = (&path, &best) {
            if does_better(kept, &result) && atomic_file::write(path, text.as_bytes()).is_ok() {
                self.transcript.record(
                    "narrowed_best_kept",
                    serde_json::json!({"name": missing.name, "file": missing.file}),
                );
                result = self.check_now().await?;
            }
        }
        Some(result)
    }

    /// Whether `run` still fails for want of `name` or on an acceptance test that calls it.
    pub(super) fn still_fails_on(&self, run: &TestRun, name: &str) -> bool {
        match &run.outcome {
            TestOutcome::NotDefined { missing } => missing.iter().any(|one| one.name == name),
            // Without acceptance tests nothing says which definition a failure is about: the
            // samples go on while the tests fail.
            TestOutcome::Failed { .. } if self.fixed.paths().next().is_none() => true,
            TestOutcome::Failed { .. } => {
                crate::workflow::failing_functions::failing_in_acceptance(
                    &self.dir,
                    &run.output,
                    &self.named(),
                    &self.fixed,
                )
                .iter()
                .any(|function| function.name == name)
            }
            _ => false,
        }
    }

    fn sampled_mut(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Sampled>> {
        self.sampled
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Counts a narrowed sample of `name` (`asked` in all now), with the answer it wrote.
    fn remember_sample(&self, name: &str, asked: u32, written: Option<&String>) {
        let mut sampled = self.sampled_mut();
        let entry = sampled.entry(name.to_string()).or_default();
        entry.asked = asked;
        entry.tried.extend(written.cloned());
    }
}

/// What the conversation's first prompt says of the opening's failing run: a first version of
/// `names` is written and the tests fail on it, with their output. `None` when no test ran (a
/// definition still missing is what the prompt's map says already).
fn standing(names: &[String], run: &TestRun) -> Option<String> {
    if !matches!(run.outcome, TestOutcome::Failed { .. }) {
        return None;
    }
    Some(format!(
        "A first version of {} is written, and the tests fail on it:\n```\n{}\n```\nFix the code so that they pass (not the tests, unless a test itself is wrong).",
        quoted(names),
        run.output.trim()
    ))
}

/// `a`, `b`: names as the notes and prompts quote them.
fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Counts one more round for each of `names` in `rounds`; the first of them whose count of
/// rounds is `due`.
fn counted(
    rounds: &std::sync::Mutex<std::collections::HashMap<String, u32>>,
    names: Vec<Missing>,
    due: impl Fn(u32) -> bool,
) -> Option<Missing> {
    let mut rounds = rounds
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut first = None;
    for one in names {
        let count = rounds.entry(one.name.clone()).or_default();
        *count += 1;
        if due(*count) && first.is_none() {
            first = Some(one);
        }
    }
    first
}
