//! One gate path (docs/design.md §8): what a phase gate's decision does to the story, whoever
//! decided.
//!
//! The phase runner applies its reviewer's decision here during a run, and `decide` applies a
//! person's decision here afterwards, so APPROVE, RETRY, RETRY_PREDECESSOR and REJECT each
//! mean one thing and the `phase_reviews` record is written one way. Producing output and
//! re-running agents stay with the runner: this module says what is to be re-run.
//! The reviewers themselves (an AI, a command, a person) are in [`reviewers`].

mod reviewers;

pub use reviewers::{consult, GateAnswer, Subject};

use std::path::{Path, PathBuf};

use super::decision::{parse_decision, GateDecision, ParsedDecision};
use super::{phase_output, story_ops};
use crate::agents::Revision;
use crate::board::board_store::BoardStore;
use crate::board::records::{DecidedBy, GateState, PhaseReview};
use crate::board::StoryId;
use crate::board::{store, Phase, Story};
use crate::config::GateConfig;
use crate::error::{Error, Result};

/// What applying a decision did to the story. `R` is what is left of a retry: who decided
/// sets when it happens (see [`PhaseGate::apply_in_run`] and [`PhaseGate::apply_afterwards`]).
#[derive(Debug, PartialEq)]
pub enum Applied<R> {
    /// The output is written into the story. `note` says why it was kept without an approval.
    Committed { note: Option<String> },
    /// The story moved to blocked/ with this reason.
    Blocked { reason: String },
    /// The reviewer asked for another attempt, of this phase or of its predecessor.
    Retry(R),
}

/// A retry decided during a run, which the phase runner carries out at once.
#[derive(Debug, PartialEq)]
pub enum Rerun {
    /// Run the phase again with this revision.
    Phase(Revision),
    /// Re-run the direct predecessor once with this feedback, without its own gate, commit
    /// its output, then run this phase again from its first attempt.
    Predecessor {
        predecessor: Phase,
        feedback: String,
    },
}

/// A person's retry, recorded in `phase_reviews` for the next run to carry out (see
/// [`PhaseGate::resume`]); the text says so.
#[derive(Debug, PartialEq)]
pub struct Recorded(pub String);

/// A phase's gate on one story: its `phase_reviews` record as it will be written, and the
/// retries spent on it in this run.
pub struct PhaseGate<'a> {
    board: &'a BoardStore,
    story_id: &'a StoryId,
    phase: Phase,
    record: PhaseReview,
    retries: u32,
    predecessor_retries: u32,
}

impl<'a> PhaseGate<'a> {
    /// A phase's gate before its first attempt in a run.
    pub fn new(board: &'a BoardStore, story_id: &'a StoryId, phase: Phase) -> Self {
        PhaseGate {
            board,
            story_id,
            phase,
            record: PhaseReview::default(),
            retries: 0,
            predecessor_retries: 0,
        }
    }

    /// The gate whose output waits for a person's decision, or `None` when no phase waits.
    pub fn awaiting_person(board: &'a BoardStore, story: &'a Story) -> Result<Option<Self>> {
        let reviews = story.phase_reviews()?;
        let pending = reviews
            .into_iter()
            .find(|(_, record)| record.decision.is_pending())
            .and_then(|(name, record)| Phase::parse(&name).map(|phase| (phase, record)));
        Ok(pending.map(|(phase, record)| PhaseGate {
            record,
            ..PhaseGate::new(board, story.id(), phase)
        }))
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The phase's attempts so far, counted across the runs a person's retry joins.
    pub fn attempts(&self) -> u32 {
        self.record.attempts
    }

    /// Records who decides next in a run: a person at the terminal, or `None` for an AI or a
    /// command.
    pub fn decided_by(&mut self, by: Option<DecidedBy>) {
        self.record.decided_by = by;
    }

    /// Counts one more attempt of the phase.
    pub fn count_attempt(&mut self) {
        self.record.attempts += 1;
    }

    /// RETRYs since the phase's first attempt (a predecessor's re-run starts it over).
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Applies the decision of the gate's reviewer (an AI, a command or a person at the
    /// terminal), made during a run on the output in hand: a retry happens at once, within the
    /// gate's budgets.
    pub fn apply_in_run(
        &mut self,
        gate: &GateConfig,
        output: &str,
        parsed: ParsedDecision,
    ) -> Result<Applied<Rerun>> {
        self.record.decision = GateState::decided(parsed.decision.keyword());
        match parsed.decision {
            GateDecision::Approve => {
                let note = (!parsed.had_decision_line)
                    .then(|| "no decision line; approved by default".to_string());
                self.approve(output, note)
            }
            GateDecision::Reject { reason } => self.reject(reason),
            GateDecision::Retry { feedback } => {
                if self.retries < gate.max_retries {
                    self.retries += 1;
                    return Ok(Applied::Retry(Rerun::Phase(Revision {
                        attempt: self.retries + 1,
                        feedback,
                        previous_output: Some(output.to_string()),
                    })));
                }
                self.record.exhausted = Some(true);
                self.record.feedback = Some(feedback);
                self.commit(output)?;
                Ok(Applied::Committed {
                    note: Some("gate retries exhausted, last output kept".to_string()),
                })
            }
            GateDecision::RetryPredecessor { phase, feedback } => {
                self.retry_predecessor(gate, &phase, feedback, output)
            }
        }
    }

    /// Applies a person's decision given with `decide` after the run, on the output that
    /// waited for them: a retry is recorded for the next run to carry out.
    pub fn apply_afterwards(
        &mut self,
        parsed: ParsedDecision,
        by: DecidedBy,
    ) -> Result<Applied<Recorded>> {
        self.record.decision = GateState::decided(parsed.decision.keyword());
        self.record.decided_by = Some(by);
        match parsed.decision {
            GateDecision::Approve => {
                let output = self.pending_output()?;
                self.approve(&output, Some("approved by a person".to_string()))
            }
            GateDecision::Reject { reason } => self.reject(reason),
            retry @ (GateDecision::Retry { .. } | GateDecision::RetryPredecessor { .. }) => {
                self.record.resume = Some(retry.to_string());
                self.save(|_| {})?;
                Ok(Applied::Retry(Recorded(format!(
                    "{} recorded; `agentic-sdlc run` carries it out",
                    retry.keyword()
                ))))
            }
        }
    }

    /// Picks up, at the start of a run, a person's RETRY or RETRY_PREDECESSOR recorded by
    /// `decide`: the phase's record and spent retries carry on, and the result is what to do
    /// first. `None` when nothing was recorded, or when the phase has no gate any more.
    pub fn resume(
        &mut self,
        story: &Story,
        gate: Option<&GateConfig>,
    ) -> Result<Option<Applied<Rerun>>> {
        let reviews = story.phase_reviews()?;
        let Some(previous) = reviews.get(self.phase.name()) else {
            return Ok(None);
        };
        let Some(resume) = previous.resume.clone() else {
            return Ok(None);
        };
        self.record = PhaseReview {
            resume: None,
            ..previous.clone()
        };
        self.retries = previous.attempts.saturating_sub(1);
        self.predecessor_retries = previous.predecessor_retries.unwrap_or(0);
        let pending_text = fs_err::read_to_string(self.pending_path()).ok();
        let Some(gate) = gate else {
            return Ok(None);
        };
        match parse_decision(&resume).decision {
            // The person asked for this re-run, so the gate's retry budget does not refuse it.
            GateDecision::Retry { feedback } => Ok(Some(Applied::Retry(Rerun::Phase(Revision {
                attempt: previous.attempts + 1,
                feedback,
                previous_output: pending_text,
            })))),
            GateDecision::RetryPredecessor { phase, feedback } => {
                let output = pending_text.unwrap_or_default();
                self.retry_predecessor(gate, &phase, feedback, &output)
                    .map(Some)
            }
            GateDecision::Approve | GateDecision::Reject { .. } => Ok(None),
        }
    }

    /// Leaves the output for a person to decide on with `decide`: it waits beside the
    /// transcripts, and the record says PENDING.
    pub fn wait_for_person(&mut self, output: &str) -> Result<()> {
        let pending = self.pending_path();
        if let Some(folder) = pending.parent() {
            fs_err::create_dir_all(folder)?;
        }
        store::write_atomic(&pending, output)?;
        self.record.decision = GateState::Pending;
        self.save(|_| {})
    }

    /// APPROVE, whoever decided; `note` is what the record says about the approval.
    fn approve<R>(&mut self, output: &str, note: Option<String>) -> Result<Applied<R>> {
        self.record.feedback = note;
        self.commit(output)?;
        Ok(Applied::Committed { note: None })
    }

    /// REJECT, whoever decided: the story moves to blocked/ (docs/design.md §8).
    fn reject<R>(&mut self, reason: String) -> Result<Applied<R>> {
        self.record.feedback = Some(reason.clone());
        let reason = format!("Phase {} rejected by review: {reason}", self.phase);
        self.save(|story| story_ops::block(story, &reason))?;
        Ok(Applied::Blocked { reason })
    }

    /// RETRY_PREDECESSOR during a run: the named phase must be the direct predecessor, within
    /// the gate's budget; otherwise the current output is committed and the record says why.
    fn retry_predecessor(
        &mut self,
        gate: &GateConfig,
        named: &str,
        feedback: String,
        output: &str,
    ) -> Result<Applied<Rerun>> {
        let direct = self
            .phase
            .predecessor()
            .filter(|p| p.name() == named.trim().to_ascii_lowercase());
        let Some(predecessor) =
            direct.filter(|_| self.predecessor_retries < gate.max_predecessor_retries)
        else {
            let why = if direct.is_none() {
                format!("`{named}` is not the direct predecessor of {}", self.phase)
            } else {
                "predecessor retries exhausted".to_string()
            };
            self.record.feedback = Some(format!("{feedback} ({why}; current output kept)"));
            self.record.exhausted = Some(direct.is_some());
            self.commit(output)?;
            return Ok(Applied::Committed { note: Some(why) });
        };
        self.predecessor_retries += 1;
        self.record.predecessor_retries = Some(self.predecessor_retries);
        self.retries = 0;
        Ok(Applied::Retry(Rerun::Predecessor {
            predecessor,
            feedback,
        }))
    }

    fn commit(&self, output: &str) -> Result<()> {
        commit_output(
            self.board,
            self.story_id,
            self.phase,
            output,
            Some(self.record.clone()),
        )
    }

    /// Writes the record, with `also` changing the story in the same atomic write.
    fn save(&self, also: impl FnOnce(&mut Story)) -> Result<()> {
        let (phase, record) = (self.phase, self.record.clone());
        self.board.update(self.story_id, |story| {
            set_phase_review(story, phase, record)?;
            also(story);
            Ok(())
        })?;
        Ok(())
    }

    fn pending_path(&self) -> PathBuf {
        pending_output_path(self.board.dir(), self.story_id, self.phase)
    }

    fn pending_output(&self) -> Result<String> {
        let pending = self.pending_path();
        fs_err::read_to_string(&pending).map_err(|_| {
            Error::ActionFailed(format!(
                "the output waiting for review ({}) is gone; decide \"RETRY: …\" to run the {} phase again",
                pending.display(),
                self.phase
            ))
        })
    }
}

/// Writes a phase's accepted output into the story, sets its flag or column, and records the
/// gate when there is one, in one atomic write; an output that waited for a person is done.
pub fn commit_output(
    board: &BoardStore,
    story_id: &StoryId,
    phase: Phase,
    output: &str,
    record: Option<PhaseReview>,
) -> Result<()> {
    board.update(story_id, |story| {
        phase_output::write_into(story, phase, output);
        if let Some(record) = record {
            set_phase_review(story, phase, record)?;
        }
        story.remove("last_error");
        Ok(())
    })?;
    let _ = fs_err::remove_file(pending_output_path(board.dir(), story_id, phase));
    Ok(())
}

/// Where a human gate's undecided output waits for `decide`.
pub fn pending_output_path(board_dir: &Path, story_id: &StoryId, phase: Phase) -> PathBuf {
    board_dir
        .join("logs")
        .join(story_id)
        .join(format!("pending-{}.md", phase.name()))
}

fn set_phase_review(story: &mut Story, phase: Phase, record: PhaseReview) -> Result<()> {
    let mut reviews = story.phase_reviews()?;
    reviews.insert(phase.name().to_string(), record);
    story.set("phase_reviews", &reviews);
    Ok(())
}

#[cfg(test)]
mod tests;
