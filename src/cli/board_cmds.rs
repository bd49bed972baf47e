//! `move` and `unblock`: changing a story's column by hand.

use clap::Args;

use super::context::Context;
use super::values::Choice;
use crate::board::{lookup, store, Board, Column, Story};
use crate::error::{Error, ExitStatus, Result};
use serde::Serialize;

#[derive(Debug, Args)]
pub struct MoveArgs {
    /// Id or slug (any case), or a unique prefix of either.
    pub story: String,
    /// The column to move it to.
    #[arg(value_parser = Choice::<Column>::new(
        |typed, names| format!("unknown column `{typed}`; use one of {names}")))]
    pub column: Column,
}

#[derive(Debug, Args)]
pub struct UnblockArgs {
    /// Id or slug (any case), or a unique prefix of either.
    pub story: String,
    /// Also set refinement_count to 0, re-opening a story whose circuit breaker tripped.
    #[arg(long)]
    pub reset: bool,
}

fn find(context: &Context, query: &str) -> Result<(std::path::PathBuf, Story)> {
    let project = context.project()?;
    let board_dir = project.board_dir();
    let board = Board::load(&board_dir)?;
    let found = lookup::find_on_board(&board, query)?;
    let story = store::locate(&board_dir, found.id(), Some(&found.path))?;
    Ok((board_dir, story))
}

/// `move --json` and `unblock --json`.
#[derive(Serialize)]
struct Moved<'a> {
    id: &'a str,
    slug: &'a str,
    from: &'static str,
    to: &'static str,
    path: &'a std::path::Path,
}

fn report(context: &Context, kind: &str, story: &Story, from: Column) {
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(
        kind,
        Moved {
            id: story.id(),
            slug: &story.slug,
            from: from.name(),
            to: story.column.name(),
            path: &story.path,
        },
    ));
    printer.out(format!(
        "Moved {} from {from} to {}",
        printer.palette().id(&story.slug),
        story.column
    ));
}

pub fn run_move(args: MoveArgs, context: &Context) -> Result<ExitStatus> {
    let column = args.column;
    let (board_dir, story) = find(context, &args.story)?;
    let from = story.column;
    let (moved, ()) = store::update(&board_dir, story.id(), Some(&story.path), |s| {
        s.set_column(column);
        if column == Column::Blocked {
            if s.meta.blocked_reason.is_none() {
                s.set("blocked_reason", &"Moved to blocked by hand");
            }
        } else {
            s.remove("blocked_reason");
        }
        Ok(())
    })?;
    report(context, "moved", &moved, from);
    Ok(ExitStatus::Success)
}

pub fn run_unblock(args: UnblockArgs, context: &Context) -> Result<ExitStatus> {
    let (board_dir, story) = find(context, &args.story)?;
    if story.column != Column::Blocked {
        return Err(Error::ActionFailed(format!(
            "{} is not blocked (it is in {})",
            story.slug, story.column
        )));
    }
    let from = story.column;
    let (moved, ()) = store::update(&board_dir, story.id(), Some(&story.path), |s| {
        let column = s.resume_column();
        s.set_column(column);
        s.remove("blocked_reason");
        s.remove("last_error");
        if args.reset {
            s.set("refinement_count", &0);
        }
        Ok(())
    })?;
    report(context, "unblocked", &moved, from);
    Ok(ExitStatus::Success)
}
