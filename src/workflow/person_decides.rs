//! A person's decision on a human gate that waits, wherever it is given: `decide` on the
//! command line, a button on the board's page, or an MCP client. All of them go through
//! [`decide`], so the same words mean the same thing and the story records it the same way.

use std::path::{Path, PathBuf};

use super::gate::{pending_output_path, Applied, PhaseGate, Recorded};
use crate::board::board_store::BoardStore;
use crate::board::records::DecidedBy;
use crate::board::Slug;
use crate::board::StoryId;
use crate::board::{lookup, Board, Phase};
use crate::error::{Error, Result};
use crate::workflow::decision::{parse_decision, GateDecision};

/// What a person's decision did.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub story_id: StoryId,
    pub slug: Slug,
    pub phase: Phase,
    /// The decision's keyword: APPROVE, RETRY, RETRY_PREDECESSOR or REJECT.
    pub decision: String,
    /// What happened, in a sentence.
    pub message: String,
}

/// The words that make a decision, for messages that refuse other words.
pub const DECISION_FORMS: &str = "APPROVE, \"RETRY: <feedback>\", \"RETRY_PREDECESSOR <phase>: <feedback>\" or \"REJECT: <reason>\"";

/// Gives the human gate of the story `query` (id, slug or a unique prefix) the decision
/// written in `text`, under the rules of a phase gate.
pub fn decide(board_dir: &Path, query: &str, text: &str, by: DecidedBy) -> Result<Decided> {
    let board = Board::load(board_dir)?;
    let found = lookup::find(&board.stories, query)?;
    // The story was just found; the gate writes it at that path, scanning only if it moved.
    let store = BoardStore::unloaded(board_dir);
    store.remember(found);
    let story_id = found.id().to_string();
    let story = &store.locate(&story_id)?;
    let mut gate = PhaseGate::awaiting_person(&store, story)?.ok_or_else(|| {
        Error::ActionFailed(format!(
            "{} has no human phase review waiting for a decision",
            story.slug
        ))
    })?;
    let phase = gate.phase();
    let parsed = parse_decision(text);
    if !parsed.had_decision_line {
        return Err(Error::Usage(format!(
            "`{text}` is not a decision; use {DECISION_FORMS}"
        )));
    }
    // A person who sends a phase back or rejects it says why: the next try and the morning's
    // reader only have those words.
    let unexplained = match &parsed.decision {
        GateDecision::Retry { feedback } | GateDecision::RetryPredecessor { feedback, .. } => {
            feedback.trim().is_empty()
        }
        GateDecision::Reject { reason } => reason.trim().is_empty(),
        GateDecision::Approve => false,
    };
    if unexplained {
        return Err(Error::Usage(format!(
            "{} needs a reason: what should change, after the colon (`{}: <reason>`)",
            parsed.decision.keyword(),
            parsed.decision.keyword()
        )));
    }
    let decision = parsed.decision.to_string();
    let message = match gate.apply_afterwards(parsed, by)? {
        Applied::Committed { .. } => format!("{phase} output approved and written into the story"),
        Applied::Blocked { reason } => format!("{reason}; the story moved to blocked/"),
        Applied::Retry(Recorded(message)) => message,
    };
    Ok(Decided {
        story_id: StoryId::from(story_id),
        slug: story.slug.clone(),
        phase,
        decision,
        message,
    })
}

/// Where the output that waits for a person's decision on `phase` is kept, to show it.
pub fn pending_output(board_dir: &Path, story_id: &StoryId, phase: Phase) -> PathBuf {
    pending_output_path(board_dir, story_id, phase)
}
