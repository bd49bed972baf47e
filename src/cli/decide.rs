//! `decide <story> "<DECISION>"`: a person's answer to a pending human phase review (SPEC §8).

use clap::Args;
use serde_json::json;

use super::Context;
use crate::board::board_store::BoardStore;
use crate::board::{lookup, Board};
use crate::error::{Error, ExitStatus, Result};
use crate::workflow::decision::parse_decision;
use crate::workflow::gate::{Applied, PhaseGate, Recorded};

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// Id or slug (any case), or a unique prefix of either.
    pub story: String,
    /// APPROVE, "RETRY: <feedback>", "RETRY_PREDECESSOR <phase>: <feedback>" or "REJECT: <reason>".
    pub decision: String,
}

pub fn run(args: DecideArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let board_dir = project.board_dir();
    let board = Board::load(&board_dir)?;
    let found = lookup::find(&board.stories, &args.story)?;
    // The story was just found; the gate writes it at that path, scanning only if it moved.
    let store = BoardStore::unloaded(&board_dir);
    store.remember(found);
    let id = found.id().to_string();
    let story = &store.locate(&id)?;
    let mut gate = PhaseGate::awaiting_person(&store, story)?.ok_or_else(|| {
        Error::ActionFailed(format!(
            "{} has no human phase review waiting for a decision",
            story.slug
        ))
    })?;
    let phase = gate.phase();
    let parsed = parse_decision(&args.decision);
    if !parsed.had_decision_line {
        return Err(Error::Usage(format!(
            "`{}` is not a decision; use APPROVE, \"RETRY: <feedback>\", \"RETRY_PREDECESSOR <phase>: <feedback>\" or \"REJECT: <reason>\"",
            args.decision
        )));
    }
    let decision = parsed.decision.to_string();
    let message = match gate.apply_afterwards(parsed)? {
        Applied::Committed { .. } => format!("{phase} output approved and written into the story"),
        Applied::Blocked { reason } => format!("{reason}; the story moved to blocked/"),
        Applied::Retry(Recorded(message)) => message,
    };
    let printer = &context.printer;
    printer.json_line(&super::envelope(
        "decision",
        json!({ "id": id, "phase": phase, "decision": decision, "message": message })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    ));
    printer.out(message);
    Ok(ExitStatus::Success)
}
