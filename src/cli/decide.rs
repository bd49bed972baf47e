//! `decide <story> "<DECISION>"`: a person's answer to a pending human phase review (SPEC §8).

use clap::Args;
use serde_json::json;

use super::Context;
use crate::board::records::{GateState, PhaseReview};
use crate::board::{lookup, store, Board, Phase};
use crate::error::{Error, ExitStatus, Result};
use crate::workflow::decision::{parse_decision, GateDecision};
use crate::workflow::{phases, story_ops};

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
    let story = lookup::find(&board.stories, &args.story)?;
    let id = story.id().to_string();
    let reviews = story.phase_reviews()?;
    let (phase, record) = reviews
        .iter()
        .find(|(_, r)| r.decision.is_pending())
        .and_then(|(name, r)| Phase::parse(name).map(|p| (p, r.clone())))
        .ok_or_else(|| {
            Error::ActionFailed(format!(
                "{} has no human phase review waiting for a decision",
                story.slug
            ))
        })?;
    let parsed = parse_decision(&args.decision);
    if !parsed.had_decision_line {
        return Err(Error::Usage(format!(
            "`{}` is not a decision; use APPROVE, \"RETRY: <feedback>\", \"RETRY_PREDECESSOR <phase>: <feedback>\" or \"REJECT: <reason>\"",
            args.decision
        )));
    }
    let decided = PhaseReview {
        decision: GateState::decided(parsed.decision.keyword()),
        ..record
    };
    let message = match &parsed.decision {
        GateDecision::Approve => {
            let pending = phases::pending_output_path(&board_dir, &id, phase);
            let output = fs_err::read_to_string(&pending).map_err(|_| {
                Error::ActionFailed(format!(
                    "the output waiting for review ({}) is gone; decide \"RETRY: …\" to run the {phase} phase again",
                    pending.display()
                ))
            })?;
            let record = PhaseReview {
                feedback: Some("approved by a person".into()),
                ..decided
            };
            phases::commit_output(&board_dir, &id, phase, &output, Some((phase, record)))?;
            format!("{phase} output approved and written into the story")
        }
        GateDecision::Reject { reason } => {
            let reason_line = format!("Phase {phase} rejected by review: {reason}");
            let record = PhaseReview {
                feedback: Some(reason.clone()),
                ..decided
            };
            store::update(&board_dir, &id, None, |s| {
                phases::set_phase_review(s, phase, record)?;
                story_ops::block(s, &reason_line);
                Ok(())
            })?;
            format!("{reason_line}; the story moved to blocked/")
        }
        retry => {
            let record = PhaseReview {
                resume: Some(retry.to_string()),
                ..decided
            };
            store::update(&board_dir, &id, None, |s| {
                phases::set_phase_review(s, phase, record)
            })?;
            format!(
                "{} recorded; `agentic-sdlc run` carries it out",
                retry.keyword()
            )
        }
    };
    let printer = &context.printer;
    printer.json_line(&super::envelope(
        "decision",
        json!({ "id": id, "phase": phase, "decision": parsed.decision.to_string(), "message": message })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    ));
    printer.out(message);
    Ok(ExitStatus::Success)
}
