//! `move` and `unblock`: changing a story's column by hand.

use clap::Args;

use super::context::Context;
use super::values::Choice;
use crate::board::Column;
use crate::error::{ExitStatus, Result};
use crate::front::moving::{self, Moved};

#[derive(Debug, Args)]
pub struct MoveArgs {
    /// Id or slug (any case), or a unique prefix of either.
    #[arg(add = clap_complete::ArgValueCandidates::new(super::values::story_candidates))]
    pub story: String,
    /// The column to move it to.
    #[arg(value_parser = Choice::<Column>::new(
        |typed, names| format!("unknown column `{typed}`; use one of {names}")))]
    pub column: Column,
}

#[derive(Debug, Args)]
pub struct UnblockArgs {
    /// Id or slug (any case), or a unique prefix of either.
    #[arg(add = clap_complete::ArgValueCandidates::new(super::values::story_candidates))]
    pub story: String,
    /// Also set refinement_count to 0, re-opening a story whose circuit breaker tripped.
    #[arg(long)]
    pub reset: bool,
}

fn report(context: &Context, kind: &str, moved: &Moved) {
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(kind, moved.view()));
    printer.out(format!(
        "Moved {} from {} to {}",
        printer.palette().id(&moved.story.slug),
        moved.from,
        moved.story.column
    ));
}

pub fn run_move(args: MoveArgs, context: &Context) -> Result<ExitStatus> {
    let board_dir = context.project()?.board_dir();
    let moved = moving::move_story(&board_dir, &args.story, args.column)?;
    report(context, "moved", &moved);
    Ok(ExitStatus::Success)
}

pub fn run_unblock(args: UnblockArgs, context: &Context) -> Result<ExitStatus> {
    let board_dir = context.project()?.board_dir();
    let moved = moving::unblock(&board_dir, &args.story, args.reset)?;
    report(context, "unblocked", &moved);
    Ok(ExitStatus::Success)
}
