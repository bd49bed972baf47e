//! Small story changes every action makes: counting usage, recording a failure, blocking.

use super::context::Workflow;
use super::outcome::Outcome;
use crate::agents::transcript::Transcript;
use crate::board::records::Usage;
use crate::board::{store, Column, Story};
use crate::error::Result;

/// Adds an agent call's usage to the story right away (SPEC §10), so nothing spent is lost
/// even if the action fails later.
pub fn add_usage(wf: &Workflow, story_id: &str, usage: Usage) -> Result<()> {
    if usage == Usage::default() {
        return Ok(());
    }
    store::update(&wf.board_dir, story_id, None, |story| {
        Ok(story.add_usage(usage)?)
    })?;
    Ok(())
}

/// Leaves the story as it was, with `last_error` set and the usage spent, and reports the
/// failure.
pub fn fail(wf: &Workflow, story_id: &str, message: String, usage: Usage) -> Result<Outcome> {
    store::update(&wf.board_dir, story_id, None, |story| {
        if usage != Usage::default() {
            story.add_usage(usage)?;
        }
        story.set("last_error", &message);
        Ok(())
    })?;
    Ok(Outcome::Failed(message))
}

/// Opens the action's transcript. When it cannot be written the action fails like an agent
/// error: running agents without a record of what they did is not an option.
pub fn open_transcript(
    wf: &Workflow,
    story_id: &str,
    label: &str,
) -> Result<Result<Transcript, Outcome>> {
    match Transcript::create(&wf.board_dir, story_id, label) {
        Ok(transcript) => Ok(Ok(transcript)),
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
