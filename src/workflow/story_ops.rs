//! Small story changes every action makes: counting usage, recording a failure, blocking.

use super::budget::Refusal;
use super::context::Workflow;
use super::outcome::{Outcome, Stop};
use crate::agents::transcript::Transcript;
use crate::agents::{AgentError, AgentFailure};
use crate::board::records::Usage;
use crate::board::StoryId;
use crate::board::{Column, Story};
use crate::error::Result;

/// Adds an agent call's usage to the story right away (docs/design.md §10), so nothing spent is
/// lost even if the action fails later.
pub fn add_usage(wf: &Workflow, story_id: &StoryId, usage: Usage) -> Result<()> {
    let usage = wf.spending.not_yet_written(story_id, usage);
    if usage.is_empty() {
        return Ok(());
    }
    wf.board
        .update(story_id, |story| Ok(story.add_usage(usage)?))?;
    Ok(())
}

/// Leaves the story as it was, with `last_error` set and the usage spent, and reports the
/// failure.
pub fn fail(wf: &Workflow, story_id: &StoryId, message: String, usage: Usage) -> Result<Outcome> {
    let usage = wf.spending.not_yet_written(story_id, usage);
    wf.board.update(story_id, |story| {
        if !usage.is_empty() {
            story.add_usage(usage)?;
        }
        story.set("last_error", &message);
        Ok(())
    })?;
    Ok(Outcome::Failed(message))
}

/// How an action ends when its agent could not finish: a budget that refused a call blocks
/// the story (its own budget) or stops the action (the run's), since that is not the agent's
/// fault; anything else fails the action with `last_error` ([`fail`]).
pub fn agent_failed(wf: &Workflow, story_id: &StoryId, error: AgentError) -> Result<Outcome> {
    match error.failure {
        AgentFailure::Refused(refusal) => refused(wf, story_id, &refusal, error.usage),
        AgentFailure::Failed(message) => fail(wf, story_id, message, error.usage),
        AgentFailure::Unreachable(message) => {
            fail(wf, story_id, message.clone(), error.usage)?;
            Ok(Outcome::ServerLost(message))
        }
    }
}

/// Records a budget's refusal and returns how the action ended.
fn refused(wf: &Workflow, story_id: &StoryId, refusal: &Refusal, usage: Usage) -> Result<Outcome> {
    let usage = wf.spending.not_yet_written(story_id, usage);
    let outcome = wf
        .board
        .update(story_id, |story| {
            if !usage.is_empty() {
                story.add_usage(usage)?;
            }
            Ok(match refusal {
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
    Ok(outcome)
}

/// Opens the action's transcript. When it cannot be written the action fails like an agent
/// error: running agents without a record of what they did is not an option.
pub fn open_transcript(
    wf: &Workflow,
    story_id: &StoryId,
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
