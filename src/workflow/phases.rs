//! Running a phase (refine, research, plan, implement) under its review gate (docs/design.md §8,
//! §9): produce, let the gate decide, carry out the re-runs its decision asks for, and commit only
//! the accepted output. What a decision does to the story is [`super::gate`]'s.

use std::path::PathBuf;

use super::context::Workflow;
use super::decision::ParsedDecision;
use super::events::RunEvent;
use super::gate::{commit_output, consult, Applied, GateAnswer, PhaseGate, Rerun, Subject};
use super::outcome::{Outcome, Stop};
use super::phase_output;
use super::phase_output::previous_output;
use super::{no_progress, story_ops, workspace};
use crate::agents::transcript::Transcript;
use crate::agents::{AgentOutput, PhaseRequest, Revision};
use crate::board::records::{DecidedBy, IterationResult, ReviewDecision};
use crate::board::StoryId;
use crate::board::{Column, Phase, Story};
use crate::config::{GateConfig, Reviewer};
use crate::error::Result;
use crate::hint::told;
use crate::names::BranchName;
use crate::protocol::TranscriptEntry;

mod acceptance;
mod attempts;
mod bare_methods;
mod builtin_calls;
mod checked;
mod example_completion;
mod examples_file;
mod scratch;
mod setup_in_words;
mod small_story;
mod story_objects;
mod test_mends;
mod test_path;
mod unpassable;

/// Runs `phase` for a story to its committed output, a pending human gate, a block or a failure.
pub async fn run(wf: &Workflow, story_id: &StoryId, phase: Phase) -> Result<Outcome> {
    if phase == Phase::Refine && !wf.config.phase_enabled(Phase::Refine) {
        return skip_refine(wf, story_id);
    }
    let story = wf.board.locate(story_id)?;
    let reworked = rework_revision(&story, phase)?.is_some();
    if let Some(why) = small_story::skip_reason(wf, &story, phase, reworked) {
        return small_story::skip(wf, story_id, phase, why);
    }
    if phase == Phase::Acceptance {
        if let Some(why) = acceptance::skip_reason(wf, &story) {
            return acceptance::skip(wf, story_id, why);
        }
    }
    let transcript = match story_ops::open_transcript(wf, story_id, phase.name())? {
        Ok(transcript) => transcript,
        Err(outcome) => return Ok(outcome),
    };
    let work = match workspace::prepare(wf, &story, workspace::Purpose::of(phase)).await {
        Ok(work) => work,
        Err(err) => return story_ops::fail(wf, story_id, told(&err), Default::default()),
    };
    if !phase.reads_only() {
        workspace::start_implementation(wf, story_id, &work)?;
    }
    let gate = wf.config.phases.gate(phase).cloned();
    let mut run = PhaseRun {
        wf,
        story_id,
        phase,
        work_dir: work.dir.clone(),
        branch: work.branch.clone(),
        ignore: work.ignore(wf),
        transcript: &transcript,
        gate: PhaseGate::new(&wf.board, story_id, phase),
        tree_before: None,
        rework_downstream: false,
        tries: 0,
        tests: None,
        applied_attempt: std::sync::atomic::AtomicBool::new(false),
        refused_by_check: None,
    };
    let mut revision = match run.resume_from_person(&story, gate.as_ref()).await? {
        Step::Again(revision) => revision,
        Step::Done(outcome) => return Ok(outcome),
    };
    if revision.is_none() {
        revision = rework_revision(&story, phase)?;
        // Only the phase a rework went back to must change; the phases after it re-run on new
        // input and may well come to the same result (docs/design.md §14).
        run.rework_downstream =
            revision.is_some() && no_progress::rework_target(&story) != Some(phase);
    }
    if !work.conflicts.is_empty() || !work.restarted.is_empty() {
        revision = Some(with_merge_to_resolve(revision, &story, &work));
    }
    let outcome = run.produce_until_accepted(gate.as_ref(), revision).await;
    // An implementation that did not complete (failed, blocked by its gate, or waiting for a
    // person) still leaves its edits committed on the story's branch: the shared tree is clean
    // for the next story, switching back cannot carry them onto the user's branch, and a retry
    // starts from them.
    let unfinished = match &outcome {
        Ok(Outcome::Completed(_)) => None,
        Ok(
            Outcome::Failed(why)
            | Outcome::ServerLost(why)
            | Outcome::Waiting(why)
            | Outcome::Stopped(why),
        )
        | Ok(Outcome::Blocked { reason: why, .. }) => Some(why.clone()),
        Err(err) => Some(err.to_string()),
    };
    match (
        match phase {
            Phase::Acceptance => {
                acceptance::finish(wf, &work, story_id, unfinished.as_deref()).await
            }
            _ => workspace::finish(wf, &work, story_id, phase, unfinished.as_deref()).await,
        },
        &unfinished,
    ) {
        (Err(err), None) => {
            workspace::release(wf, work).await;
            // The output was accepted, but its work could not be kept on the branch: the
            // implementation is not complete.
            wf.board.update(story_id, |story| {
                story.set_phase_flag(phase, false);
                Ok(())
            })?;
            return story_ops::fail(wf, story_id, told(&err), Default::default());
        }
        (Err(err), Some(_)) => wf.events.emit(super::events::RunEvent::Warning {
            story_id: Some(StoryId::from(story_id)),
            message: format!("could not save the partial implementation: {err}"),
        }),
        (Ok(()), _) => {}
    }
    workspace::release(wf, work).await;
    if phase == Phase::Implement
        && matches!(outcome, Ok(Outcome::Failed(_) | Outcome::ServerLost(_)))
    {
        restore_column(wf, story_id, story.column)?;
    }
    outcome
}

/// With `phases.refine.enabled: false` a story leaves backlog as it was written: no model is
/// asked, its Summary and Acceptance Criteria stay, and it moves to ready.
fn skip_refine(wf: &Workflow, story_id: &StoryId) -> Result<Outcome> {
    wf.board.update(story_id, |story| {
        if story.column == Column::Backlog {
            story.set_column(Column::Ready);
        }
        Ok(())
    })?;
    Ok(Outcome::Completed(
        "refine skipped (phases.refine.enabled is false); moved to ready as written".into(),
    ))
}

/// An implement that failed leaves the story in the column it started from (docs/design.md §13),
/// not in in-progress where the attempt put it.
fn restore_column(wf: &Workflow, story_id: &StoryId, column: Column) -> Result<()> {
    wf.board.update(story_id, |story| {
        if story.column != column && story.column == Column::InProgress {
            story.set_column(column);
        }
        Ok(())
    })?;
    Ok(())
}

struct PhaseRun<'a> {
    wf: &'a Workflow,
    story_id: &'a StoryId,
    phase: Phase,
    work_dir: PathBuf,
    /// The story's branch, when it has one.
    branch: Option<BranchName>,
    /// What the story's diffs and fingerprints leave out (see [`workspace::Work::ignore`]).
    ignore: Vec<PathBuf>,
    transcript: &'a Transcript,
    gate: PhaseGate<'a>,
    /// The working tree before implement's first attempt in this action, which its output
    /// must have changed (docs/design.md §15): a gate's retry may keep the earlier attempt's edits.
    tree_before: Option<phase_output::TreeFingerprint>,
    /// This phase re-runs because a rework reset an earlier one.
    rework_downstream: bool,
    /// Times an agent was asked for this action's output so far; each try is asked
    /// differently (see [`PhaseRun::variant`]).
    tries: u32,
    /// The last test run over implement's latest output, and how many runs it took.
    tests: Option<crate::workflow::tests_run::LastRun>,
    /// An attempt best-of-n kept is applied to the story's tree and not committed yet: another
    /// try commits it first and makes its attempts on top, instead of giving up attempts for a
    /// tree "with uncommitted changes" (docs/design.md §21, "Passing work is kept").
    applied_attempt: std::sync::atomic::AtomicBool,
    /// Why the phase's own check (acceptance's) refused what its latest try wrote.
    refused_by_check: Option<(Phase, String)>,
}

impl PhaseRun<'_> {
    async fn produce_until_accepted(
        &mut self,
        gate: Option<&GateConfig>,
        mut revision: Option<Revision>,
    ) -> Result<Outcome> {
        loop {
            let story = self.wf.board.locate(self.story_id)?;
            let output = match self
                .produce_checked(self.phase, &story, revision.as_ref())
                .await?
            {
                Ok(text) => text,
                Err(outcome) => return Ok(outcome),
            };
            let Some(gate) = gate else {
                commit_output(&self.wf.board, self.story_id, self.phase, &output, None)?;
                return Ok(Outcome::Completed(self.phase.done().to_string()));
            };
            let subject = Subject {
                phase: self.phase,
                story: &story,
                output: &output,
                work_dir: &self.work_dir,
                diff: self.diff_for_a_person(gate).await,
            };
            let (answer, usage) = match consult(self.wf, gate, &subject, self.transcript).await {
                Ok(answer) => answer,
                Err(err) => {
                    let phase = self.phase;
                    let err = err.context(|why| format!("{phase} gate: {why}"));
                    return story_ops::agent_failed(self.wf, self.story_id, err);
                }
            };
            story_ops::add_usage(self.wf, self.story_id, usage)?;
            let parsed = match answer {
                GateAnswer::Decided(parsed) => parsed,
                GateAnswer::Pending => return self.wait_for_person(&output),
            };
            self.announce(&story, &parsed);
            let by_a_person = gate.reviewer == Reviewer::Human;
            self.gate
                .decided_by(by_a_person.then_some(DecidedBy::Terminal));
            let applied = self.gate.apply_in_run(gate, &output, parsed)?;
            match self.carry_out(applied).await? {
                Step::Again(next) => revision = next,
                Step::Done(outcome) => return Ok(outcome),
            }
        }
    }

    /// Runs the phase's agent once. `Ok(Err(outcome))` is a failed agent, already recorded.
    async fn produce(
        &mut self,
        phase: Phase,
        story: &Story,
        revision: Option<&Revision>,
        check_progress: bool,
    ) -> Result<Result<AgentOutput, Outcome>> {
        let first_after_rework =
            self.rework_downstream && phase == self.phase && self.gate.retries() == 0;
        let previous = revision
            .filter(|_| check_progress && !first_after_rework)
            .and_then(|r| r.previous_output.as_deref());
        let code_before = self.code_fingerprint(phase, story, previous).await;
        let variant = self.variant(story);
        self.tries += 1;
        let result = if phase == Phase::Implement {
            self.implement(story, revision, variant)
                .await
                .map(|produced| {
                    self.tests = produced.tests;
                    produced.output
                })
        } else if phase == Phase::Acceptance {
            let desk = acceptance::Desk {
                wf: self.wf,
                work_dir: &self.work_dir,
                ignore: &self.ignore,
                transcript: self.transcript,
            };
            acceptance::write_tests(desk, story, revision, variant)
                .await
                .map(|(output, verdict)| {
                    self.refused_by_check = match verdict {
                        acceptance::Verdict::Refused(why) => Some((phase, why)),
                        acceptance::Verdict::Written(_) => None,
                    };
                    output
                })
        } else {
            let request = PhaseRequest {
                phase,
                story,
                revision,
                work_dir: &self.work_dir,
                transcript: self.transcript,
                check: None,
                acceptance_path: None,
                variant,
            };
            self.wf.agents.run_phase(request).await
        };
        if phase == self.phase {
            self.gate.count_attempt();
        }
        match result {
            Ok(output) => {
                story_ops::add_usage(self.wf, self.story_id, output.usage)?;
                self.transcript.entry(TranscriptEntry::PhaseOutput {
                    phase,
                    attempt: self.gate.attempts(),
                    text: output.text.clone(),
                    truncated: output.truncated,
                });
                // Output the check will refuse is no "output" to compare: it is retried with
                // feedback instead (docs/design.md §15).
                if phase_output::check_text(phase, &output.text).is_ok() {
                    let code_unchanged =
                        code_before == self.code_fingerprint(phase, story, previous).await;
                    if let Some(reason) =
                        no_progress::repeated_output(phase, previous, &output.text, code_unchanged)
                    {
                        return Ok(Err(no_progress::block(self.wf, self.story_id, &reason)?));
                    }
                }
                Ok(Ok(output))
            }
            Err(err) => {
                let err = err.context(|why| format!("{phase} agent failed: {why}"));
                Ok(Err(story_ops::agent_failed(self.wf, self.story_id, err)?))
            }
        }
    }

    /// The change an implement made, for a person who judges it at the terminal: the notes
    /// alone do not show what is to be approved. `None` for other phases and reviewers.
    async fn diff_for_a_person(&self, gate: &GateConfig) -> Option<String> {
        let asks_a_person = gate.reviewer == Reviewer::Human && self.wf.terminal.is_some();
        if self.phase.reads_only() || !asks_a_person {
            return None;
        }
        match workspace::diff_of(&self.work_dir, self.branch.clone(), self.ignore.clone()).await {
            Ok(diff) => Some(diff),
            Err(err) => Some(format!("(the diff could not be made: {err})")),
        }
    }

    /// How differently this try is asked: 0 for a phase's very first try, more for each
    /// retry in this action, each rework the story went through, and an earlier action that
    /// failed. A retry that is asked the same way tends to get the same answer.
    fn variant(&self, story: &Story) -> u32 {
        story.meta.refinement_count + u32::from(story.meta.last_error.is_some()) + self.tries
    }

    /// For an implement re-run, the story's code as a patch (docs/design.md §14 compares it).
    async fn code_fingerprint(
        &self,
        phase: Phase,
        story: &Story,
        previous: Option<&str>,
    ) -> Option<String> {
        if phase != Phase::Implement || previous.is_none() {
            return None;
        }
        no_progress::work_fingerprint(
            &self.work_dir,
            story.meta.branch.clone(),
            self.ignore.clone(),
        )
        .await
    }

    fn announce(&self, story: &Story, parsed: &ParsedDecision) {
        self.wf.events.emit(RunEvent::GateDecision {
            story_id: StoryId::from(self.story_id),
            slug: story.slug.clone(),
            phase: self.phase.name().to_string(),
            attempt: self.gate.attempts(),
            decision: parsed.decision.to_string(),
        });
        self.transcript.entry(TranscriptEntry::GateDecision {
            attempt: self.gate.attempts(),
            decision: parsed.decision.to_string(),
            had_decision_line: parsed.had_decision_line,
        });
    }

    /// Does what is left of a gate's decision once it is applied to the story.
    async fn carry_out(&mut self, applied: Applied<Rerun>) -> Result<Step> {
        let summary = self.phase.done().to_string();
        Ok(Step::Done(match applied {
            Applied::Committed { note: None } => Outcome::Completed(summary),
            Applied::Committed { note: Some(note) } => {
                Outcome::Completed(format!("{summary}; {note}"))
            }
            Applied::Blocked { reason } => Outcome::Blocked {
                reason,
                stop: Stop::Rejected,
            },
            Applied::Retry(Rerun::Phase(revision)) => return Ok(Step::Again(Some(revision))),
            Applied::Retry(Rerun::Predecessor {
                predecessor,
                feedback,
            }) => return self.rerun_predecessor(predecessor, feedback).await,
        }))
    }

    /// The predecessor re-runs once, without its own gate, and is committed at once; then
    /// this phase starts over from its first attempt, without feedback.
    async fn rerun_predecessor(&mut self, predecessor: Phase, feedback: String) -> Result<Step> {
        let story = self.wf.board.locate(self.story_id)?;
        let revision = Revision {
            attempt: 2,
            feedback,
            previous_output: previous_output(&story, predecessor),
        };
        let text = match self
            .produce_checked(predecessor, &story, Some(&revision))
            .await?
        {
            Ok(text) => text,
            Err(outcome) => return Ok(Step::Done(outcome)),
        };
        commit_output(&self.wf.board, self.story_id, predecessor, &text, None)?;
        Ok(Step::Again(None))
    }

    fn wait_for_person(&mut self, output: &str) -> Result<Outcome> {
        self.gate.wait_for_person(output)?;
        let story = self.wf.board.locate(self.story_id)?;
        Ok(Outcome::Waiting(format!(
            "waiting for a human decision on the {} review: agentic-sdlc decide {} \"APPROVE\"",
            self.phase, story.slug
        )))
    }

    /// Picks up a person's RETRY or RETRY_PREDECESSOR recorded by `decide`.
    async fn resume_from_person(
        &mut self,
        story: &Story,
        gate: Option<&GateConfig>,
    ) -> Result<Step> {
        match self.gate.resume(story, gate)? {
            Some(applied) => self.carry_out(applied).await,
            None => Ok(Step::Again(None)),
        }
    }
}

impl PhaseRun<'_> {
    /// Why the output `phase` just produced was refused by the phase's own check, if it was.
    fn refused_by_own_check(&self, phase: Phase) -> Option<String> {
        match &self.refused_by_check {
            Some((checked, why)) if *checked == phase => Some(why.clone()),
            _ => None,
        }
    }
}

enum Step {
    Again(Option<Revision>),
    Done(Outcome),
}

/// Implement starts with a merge of the base in progress: its Revision Instructions say which
/// files hold conflict markers, and which now hold the base's version with the story's change
/// to make again, whatever else they say.
fn with_merge_to_resolve(
    revision: Option<Revision>,
    story: &Story,
    work: &workspace::Work,
) -> Revision {
    let base = work.base.as_deref().unwrap_or("the base branch");
    let mut notes = Vec::new();
    if !work.conflicts.is_empty() {
        notes.push(format!(
            "Your branch is in the middle of merging the latest {base}, which conflicts with this story's work in: {}.\nResolve every conflict (the <<<<<<< ======= >>>>>>> blocks) in those files so that both sides' changes keep working, and leave no conflict marker behind: the merge is committed only when none is left.",
            work.conflicts.join(", ")
        ));
    }
    if !work.restarted.is_empty() {
        notes.push(restarted_note(base, &work.restarted));
    }
    let note = notes.join("\n\n");
    match revision {
        Some(mut revision) => {
            if !revision.feedback.contains(&note) {
                revision.feedback = format!("{}\n\n{note}", revision.feedback);
            }
            revision
        }
        None => Revision {
            attempt: 2,
            feedback: note,
            previous_output: previous_output(story, Phase::Implement),
        },
    }
}

/// What the implementer must make again: `base`'s latest work changed the lines the story had
/// changed in `restarted`, which now hold `base`'s version.
fn restarted_note(base: &str, restarted: &[crate::vcs::RestartedFile]) -> String {
    // A long diff would crowd out the file it applies to; its head says what it did.
    const SHOWN: usize = 3_000;
    let paths: Vec<&str> = restarted.iter().map(|file| file.path.as_str()).collect();
    let mut note = format!(
        "The latest {base} changed the same lines as this story's work in: {}. Those files now hold {base}'s latest version, without this story's change. Make the story's change again on each file as it is now, keeping what {base} changed. What the story had changed:",
        paths.join(", ")
    );
    for file in restarted {
        let mut change = file.story_change.trim_end().to_string();
        if change.len() > SHOWN {
            let cut = (0..=SHOWN)
                .rev()
                .find(|at| change.is_char_boundary(*at))
                .unwrap_or(0);
            change.truncate(cut);
            change.push_str("\n… (cut)");
        }
        note.push_str(&format!("\n```diff\n{change}\n```"));
    }
    note
}

/// The Revision Instructions for a phase re-run after a rework (docs/design.md §7, §9): while a
/// rework iteration is open, every phase it reset sees the review's feedback.
fn rework_revision(story: &Story, phase: Phase) -> Result<Option<Revision>> {
    let Some(iteration) = story.latest_iteration()? else {
        return Ok(None);
    };
    if iteration.result != IterationResult::InProgress {
        return Ok(None);
    }
    let review = story
        .review_history()?
        .into_iter()
        .rev()
        .find(|r| r.decision == ReviewDecision::Rejected);
    let feedback = match review {
        Some(review) if !review.issues.is_empty() => {
            crate::agents::verdict::format_issues(&review.issues)
        }
        Some(review) => review.feedback,
        None => iteration.review_feedback.clone().unwrap_or_default(),
    };
    Ok(Some(Revision {
        attempt: iteration.iteration + 1,
        feedback,
        previous_output: previous_output(story, phase),
    }))
}
