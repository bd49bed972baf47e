//! `decide <story> "<DECISION>"`: a person's answer to a pending human phase review (docs/design.md
//! §8).

use clap::Args;

use super::context::Context;
use crate::board::records::DecidedBy;
use crate::error::{ExitStatus, Result};
use crate::workflow::person_decides;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// Id or slug (any case), or a unique prefix of either.
    #[arg(add = clap_complete::ArgValueCandidates::new(super::values::story_candidates))]
    pub story: String,
    /// APPROVE, "RETRY: <feedback>", "RETRY_PREDECESSOR <phase>: <feedback>" or "REJECT: <reason>".
    pub decision: String,
}

/// `decide --json`.
#[derive(Serialize)]
struct Decision<'a, P: Serialize, D: Serialize> {
    id: &'a str,
    phase: &'a P,
    decision: &'a D,
    message: &'a str,
}

pub fn run(args: DecideArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let decided = person_decides::decide(
        &project.board_dir(),
        &args.story,
        &args.decision,
        DecidedBy::Decide,
    )?;
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(
        "decision",
        Decision {
            id: &decided.story_id,
            phase: &decided.phase,
            decision: &decided.decision,
            message: &decided.message,
        },
    ));
    printer.out(decided.message);
    Ok(ExitStatus::Success)
}
