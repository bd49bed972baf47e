//! Small story changes every action makes: counting usage, recording a failure, blocking.

use super::budget::{self, Refusal};
use super::context::Workflow;
use super::outcome::{Outcome, Stop};
use crate::agents::transcript::Transcript;
use crate::board::records::Usage;
use crate::board::{Column, Story};
use crate::error::Result;

/// Adds an agent call's usage to the story right away (SPEC §10), so nothing spent is lost
/// even if the action fails later.
pub fn add_usage(wf: &Workflow, story_id: &str, usage: Usage) -> Result<()> {
    if usage.is_empty() {
        return Ok(());
    }
    let usage = budget::priced(wf.spending.price(), usage);
    wf.board
        .update(story_id, |story| Ok(story.add_usage(usage)?))?;
    Ok(())
}

/// Leaves the story as it was, with `last_error` set and the usage spent, and reports the
/// failure.
///
/// A failure that was the budget refusing a call is not the agent's fault: it blocks the story
/// (its own budget) or stops the action (the run's), see [`budget_refusal`].
pub fn fail(wf: &Workflow, story_id: &str, message: String, usage: Usage) -> Result<Outcome> {
    if let Some(outcome) = budget_refusal(wf, story_id, usage)? {
        return Ok(outcome);
    }
    let usage = budget::priced(wf.spending.price(), usage);
    wf.board.update(story_id, |story| {
        if !usage.is_empty() {
            story.add_usage(usage)?;
        }
        story.set("last_error", &message);
        Ok(())
    })?;
    Ok(Outcome::Failed(message))
}

/// When the budget refused the story's last call, records that and returns how the action
/// ended; `None` when the failure was something else.
pub fn budget_refusal(wf: &Workflow, story_id: &str, usage: Usage) -> Result<Option<Outcome>> {
    let Some(refusal) = wf.spending.take_refusal(story_id) else {
        return Ok(None);
    };
    let usage = budget::priced(wf.spending.price(), usage);
    let outcome = wf
        .board
        .update(story_id, |story| {
            if !usage.is_empty() {
                story.add_usage(usage)?;
            }
            Ok(match &refusal {
                Refusal::Story { reason, key } => {
                    block(story, reason);
                    Outcome::Blocked {
                        reason: reason.clone(),
                        stop: Stop::Budget { key },
                    }
                }
                Refusal::Run(reason) => Outcome::Stopped(reason.clone()),
            })
        })?
        .1;
    Ok(Some(outcome))
}

/// Opens the action's transcript. When it cannot be written the action fails like an agent
/// error: running agents without a record of what they did is not an option.
pub fn open_transcript(
    wf: &Workflow,
    story_id: &str,
    label: &str,
) -> Result<Result<Transcript, Outcome>> {
    match Transcript::create(wf.board_dir(), story_id, label) {
        Ok(transcript) => Ok(Ok(transcript.observed_by(wf.events.tool_calls_of(story_id)))),
        Err(err) => fail(
            wf,
            story_id,
            format!("cannot write the transcript: {err}"),
            Usage::default(),
        )
        .map(Err),
    }
}

/// Moves a story to blocked/ with the reason as `blocked_reason` and `last_error`.
pub fn block(story: &mut Story, reason: &str) {
    story.set_column(Column::Blocked);
    story.set("blocked_reason", &reason);
    story.set("last_error", &reason);
}

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
