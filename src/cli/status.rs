//! `status`: the board column by column, then what the assessor recommends. Read-only.

use clap::Args;
use serde_json::{json, Value};

use super::Context;
use crate::board::{Board, Column, Story};
use crate::error::Result;
use crate::output::Palette;
use crate::workflow::assessor::{self, Assessment};

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Hide the done column.
    #[arg(long)]
    pub active: bool,
}

pub fn run(args: StatusArgs, context: &Context) -> Result<i32> {
    let project = context.project()?;
    let board = Board::load(&project.board_dir())?;
    let assessment = assessor::assess(&board, project.config.git.create_pr);
    let columns: Vec<Column> = Column::ALL
        .into_iter()
        .filter(|c| !(args.active && *c == Column::Done))
        .collect();
    let printer = &context.printer;
    if printer.is_json() {
        printer.json_line(&status_json(&board, &assessment, &columns));
        return Ok(0);
    }
    let palette = printer.palette();
    let mut out = String::new();
    for column in &columns {
        let mut stories: Vec<&Story> = board.in_column(*column).collect();
        stories.sort_by(|a, b| (a.meta.priority, a.id()).cmp(&(b.meta.priority, b.id())));
        out.push_str(&palette.heading(&format!("{} ({})", column.name(), stories.len())));
        out.push('\n');
        for story in stories {
            out.push_str(&story_line(story, &assessment, palette));
            out.push('\n');
        }
    }
    if !board.broken.is_empty() {
        out.push_str(&palette.error(&format!("unreadable story files ({})", board.broken.len())));
        out.push('\n');
        for err in &board.broken {
            out.push_str(&format!(
                "  {} {}\n",
                palette.error("✗"),
                super::validate::relative(err, &project.root)
            ));
        }
        out.push_str(&palette.dim("  run `agentic-sdlc validate` for details\n"));
    }
    out.push('\n');
    match assessment.actions.first() {
        Some(action) => out.push_str(&format!(
            "Next: {} {} ({})",
            palette.accent(action.action_type.name()),
            palette.id(&action.slug),
            action.reason
        )),
        None if !assessment.waiting.is_empty() => {
            out.push_str("Next: nothing runnable; every open story is waiting")
        }
        None => out.push_str("Next: nothing to do"),
    }
    printer.out(out);
    Ok(0)
}

/// `[priority] slug - title [RPIV]`, then `!` for an error, the blocked reason, or what it waits on.
fn story_line(story: &Story, assessment: &Assessment, palette: &Palette) -> String {
    let meta = &story.meta;
    let flag = |done: bool, letter: &str| {
        if done {
            letter.to_string()
        } else {
            "-".to_string()
        }
    };
    let flags = format!(
        "[{}{}{}{}]",
        flag(meta.research_complete, "R"),
        flag(meta.plan_complete, "P"),
        flag(meta.implementation_complete, "I"),
        flag(meta.reviews_complete, "V"),
    );
    let mut line = format!(
        "  [{}] {} - {} {}",
        meta.priority,
        palette.id(&story.slug),
        meta.title,
        palette.dim(&flags)
    );
    if let Some(error) = &meta.last_error {
        line.push_str(&format!(
            " {} {}",
            palette.error("!"),
            palette.error(first_line(error))
        ));
    }
    if story.column == Column::Blocked {
        let reason = meta
            .blocked_reason
            .as_deref()
            .unwrap_or("no reason recorded");
        line.push_str(&format!(
            "\n      {} {}",
            palette.warn("blocked:"),
            first_line(reason)
        ));
    }
    if let Some(waiting) = assessment.waiting.iter().find(|w| w.story_id == story.id()) {
        line.push_str(&format!("\n      {} {}", palette.warn("⏸"), waiting.reason));
    }
    line
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}

fn story_json(story: &Story) -> Value {
    let meta = &story.meta;
    json!({
        "id": meta.id,
        "slug": story.slug,
        "title": meta.title,
        "priority": meta.priority,
        "status": story.column.name(),
        "type": meta.story_type,
        "path": story.path,
        "research_complete": meta.research_complete,
        "plan_complete": meta.plan_complete,
        "implementation_complete": meta.implementation_complete,
        "reviews_complete": meta.reviews_complete,
        "refinement_count": meta.refinement_count,
        "last_error": meta.last_error,
        "blocked_reason": meta.blocked_reason,
        "depends_on": meta.depends_on,
    })
}

fn status_json(board: &Board, assessment: &Assessment, columns: &[Column]) -> Value {
    let mut by_column = serde_json::Map::new();
    for column in columns {
        let mut stories: Vec<&Story> = board.in_column(*column).collect();
        stories.sort_by(|a, b| (a.meta.priority, a.id()).cmp(&(b.meta.priority, b.id())));
        by_column.insert(
            column.name().into(),
            stories.into_iter().map(story_json).collect(),
        );
    }
    let errors: Vec<Value> = board
        .broken
        .iter()
        .map(|e| json!({ "path": e.path, "line": e.line, "message": e.message }))
        .collect();
    let body = json!({
        "columns": by_column,
        "recommended": assessment.actions,
        "waiting": assessment.waiting,
        "errors": errors,
    });
    super::envelope("status", body.as_object().cloned().unwrap_or_default())
}
