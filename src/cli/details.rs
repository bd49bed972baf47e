//! `details <story>`: everything the board knows about one story.

use clap::Args;

use super::context::Context;
use crate::board::reader::read_story;
use crate::board::{lookup, store, Board, Column, Story};
use crate::error::{ExitStatus, Result};
use crate::output::Printer;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct DetailsArgs {
    /// Id or slug (any case), or a unique prefix of either.
    #[arg(add = clap_complete::ArgValueCandidates::new(super::values::story_candidates))]
    pub story: String,
}

/// `details --json`.
#[derive(Serialize)]
struct StoryDocument {
    story: serde_json::Value,
}

pub fn run(args: DetailsArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let board_dir = project.board_dir();
    // A slug names its file: read that one story, and the board only when the story's
    // dependencies are to be shown or the query needs the full lookup.
    let fast = lookup::find_by_file_name(&board_dir, &args.story)
        .and_then(|path| Some((Column::of_file(&path)?, path)))
        .and_then(|(column, path)| read_story(&path, column).ok());
    let (story, board) = match fast {
        Some(story) => (story, None),
        None => {
            let board = Board::load(&board_dir)?;
            let found = lookup::find_on_board(&board, &args.story)?;
            let story = store::locate(&board_dir, found.id(), Some(&found.path))?;
            (story, Some(board))
        }
    };
    let story = &story;
    let printer = &context.printer;
    if printer.is_json() {
        printer.json_line(&crate::front::envelope(
            "story",
            StoryDocument {
                story: crate::front::story::story_json(story)?,
            },
        ));
        return Ok(ExitStatus::Success);
    }
    let board = match board {
        Some(board) => board,
        None if story.meta.depends_on.is_empty() => Board::default(),
        None => Board::load(&board_dir)?,
    };
    print_human(story, &board, printer)?;
    Ok(ExitStatus::Success)
}

fn print_human(story: &Story, board: &Board, printer: &Printer) -> Result<()> {
    let p = printer.palette();
    let meta = &story.meta;
    let yes_no = |b: bool| if b { p.ok("yes") } else { p.dim("no") };
    let mut out = vec![
        p.heading(&meta.title),
        format!("  id:        {}", p.id(&meta.id)),
        format!("  slug:      {}", story.slug),
        format!("  column:    {}", story.column),
        format!("  type:      {}", meta.story_type),
        format!("  priority:  {}", meta.priority),
        format!("  path:      {}", story.path.display()),
    ];
    if !meta.labels.is_empty() {
        out.push(format!("  labels:    {}", meta.labels.join(", ")));
    }
    for (key, label) in [
        ("assignee", "assignee"),
        ("estimated_effort", "effort"),
        ("created", "created"),
        ("updated", "updated"),
    ] {
        if let Ok(Some(value)) = story.get::<String>(key) {
            out.push(format!("  {:<10} {value}", format!("{label}:")));
        }
    }
    for (label, value) in [
        ("branch:", meta.branch.as_deref()),
        ("base:", meta.base_branch.as_deref()),
        ("merged:", meta.merged_commit.as_deref()),
    ] {
        if let Some(value) = value {
            out.push(format!("  {label:<10} {value}"));
        }
    }
    if let Some(url) = &meta.pr_url {
        out.push(format!("  pr:        {url}"));
    }
    out.push(String::new());
    out.push(p.heading("Phases"));
    let mut phases: Vec<String> = crate::board::Phase::flagged()
        .map(|phase| {
            let name = match phase {
                crate::board::Phase::Implement => "implementation",
                other => other.name(),
            };
            format!(
                "{name} {}",
                yes_no(meta.phase_complete(phase, story.column))
            )
        })
        .collect();
    phases.push(format!("reviews {}", yes_no(meta.reviews_complete)));
    out.push(format!("  {}", phases.join("  ")));
    if !meta.acceptance_tests.is_empty() {
        out.push(String::new());
        out.push(p.heading("Acceptance tests"));
        for path in &meta.acceptance_tests {
            out.push(format!("  {path}"));
        }
    }
    if !meta.depends_on.is_empty() {
        out.push(String::new());
        out.push(p.heading("Depends on"));
        for dep in &meta.depends_on {
            let state = board.get(dep).map_or("unknown story".to_string(), |d| {
                format!("{} ({})", d.slug, d.column)
            });
            out.push(format!("  {dep}  {state}"));
        }
    }
    let limit = meta
        .max_refinement_attempts
        .map_or(String::new(), |m| format!(" (limit {m})"));
    out.push(String::new());
    out.push(p.heading("Refinement"));
    out.push(format!("  reworks: {}{limit}", meta.refinement_count));
    for it in story.refinement_iterations()? {
        let done = it
            .completed_at
            .as_deref()
            .map_or(String::new(), |c| format!(" → {c}"));
        out.push(format!(
            "  #{} {} by {} at {}{done}",
            it.iteration, it.result, it.agent_type, it.started_at
        ));
        if let Some(feedback) = it.review_feedback {
            out.push(format!("     {}", p.dim(&feedback)));
        }
    }
    let history = story.review_history()?;
    if !history.is_empty() {
        out.push(String::new());
        out.push(p.heading("Review history"));
        for review in history {
            let severity = review.severity.map_or(String::new(), |s| format!(" {s}"));
            out.push(format!(
                "  {} {}{severity}  code {} security {} po {}",
                review.timestamp,
                review.decision,
                yes_no(review.code_review_passed),
                yes_no(review.security_review_passed),
                yes_no(review.po_review_passed)
            ));
            if !review.feedback.is_empty() {
                out.push(format!(
                    "     {}",
                    review.feedback.lines().next().unwrap_or("")
                ));
            }
            for blocker in review.blockers {
                out.push(format!("     {} {blocker}", p.error("blocker:")));
            }
        }
    }
    let phase_reviews = story.phase_reviews()?;
    if !phase_reviews.is_empty() {
        out.push(String::new());
        out.push(p.heading("Phase reviews"));
        for (phase, review) in phase_reviews {
            let mut line = format!(
                "  {phase}: {} after {} attempt(s)",
                review.decision, review.attempts
            );
            if let Some(n) = review.predecessor_retries {
                line.push_str(&format!(
                    ", {n} predecessor retr{}",
                    if n == 1 { "y" } else { "ies" }
                ));
            }
            if review.exhausted == Some(true) {
                line.push_str(", retries exhausted");
            }
            if let Some(by) = review.decided_by {
                line.push_str(&format!(", decided {}", by.words()));
            }
            out.push(line);
            if let Some(feedback) = review.feedback {
                out.push(format!("     {}", p.dim(&feedback)));
            }
        }
    }
    let usage = story.usage()?;
    if usage.requests > 0 {
        out.push(String::new());
        out.push(p.heading("Usage"));
        let cost = usage.cost_usd.map_or(String::new(), |usd| {
            format!(", ${}", crate::workflow::budget::format_usd(usd))
        });
        out.push(format!(
            "  {} request(s), {} prompt + {} completion tokens{cost}",
            usage.requests, usage.prompt_tokens, usage.completion_tokens
        ));
    }
    if let Some(error) = &meta.last_error {
        out.push(String::new());
        out.push(format!("{} {error}", p.error("Last error:")));
    }
    if let Some(reason) = &meta.blocked_reason {
        out.push(format!("{} {reason}", p.warn("Blocked:")));
    }
    for (name, content) in story.non_empty_sections() {
        out.push(String::new());
        out.push(p.heading(&format!("## {name}")));
        out.push(content);
    }
    printer.out(out.join("\n"));
    Ok(())
}
