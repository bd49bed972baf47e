//! `decide <story> "<DECISION>"`: a person's answer to a pending human phase review (docs/design.md
//! §8).

use clap::Args;
use serde_json::json;

use super::context::Context;
use crate::error::{ExitStatus, Result};
use crate::workflow::gate;

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// Id or slug (any case), or a unique prefix of either.
    pub story: String,
    /// APPROVE, "RETRY: <feedback>", "RETRY_PREDECESSOR <phase>: <feedback>" or "REJECT: <reason>".
    pub decision: String,
}

pub fn run(args: DecideArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let decided = gate::decide(&project.board_dir(), &args.story, &args.decision)?;
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(
        "decision",
        json!({ "id": decided.story_id, "phase": decided.phase, "decision": decided.decision, "message": decided.message })
            .as_object()
            .cloned()
            .unwrap_or_default(),
    ));
    printer.out(decided.message);
    Ok(ExitStatus::Success)
}
