//! `validate`: every story and the config; exit 1 when anything needs fixing.

use std::path::Path;

use super::context::Context;
use crate::board::validate::{check_board, Problem};
use crate::board::{Board, StoryError};
use crate::error::{ExitStatus, Result};
use serde::Serialize;

/// `validate --json`.
#[derive(Serialize)]
struct Validation<'a, P: Serialize> {
    valid: bool,
    stories: usize,
    problems: &'a [P],
}

pub fn run(context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let board = Board::load_stories(&project.board_dir())?;
    let problems = check_board(&board);
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(
        "validation",
        Validation {
            valid: problems.is_empty(),
            stories: board.stories.len() + board.broken.len(),
            problems: &problems,
        },
    ));
    let palette = printer.palette();
    for problem in &problems {
        printer.out(format!(
            "{} {}",
            palette.error("✗"),
            relative_problem(problem, &project.root)
        ));
    }
    if problems.is_empty() {
        printer.out(format!(
            "{} {} stories, config valid",
            palette.ok("✓"),
            board.stories.len()
        ));
        Ok(ExitStatus::Success)
    } else {
        printer.out(format!("{} problem(s) found", problems.len()));
        Ok(ExitStatus::Failure)
    }
}

fn shorten(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn relative_problem(problem: &Problem, root: &Path) -> String {
    format!(
        "{}:{}: {}",
        shorten(&problem.path, root),
        problem.line,
        problem.message
    )
}

/// `path:line: message` with the path relative to the project root.
pub fn relative(err: &StoryError, root: &Path) -> String {
    format!("{}:{}: {}", shorten(&err.path, root), err.line, err.message)
}
