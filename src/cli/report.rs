//! `report [--run <id>|--last] [--json] [--html <file>]`: what a run did (docs/design.md §14).

use std::path::PathBuf;

use clap::Args;

use super::context::Context;
use crate::board::Board;
use crate::error::{ExitStatus, Result};
use crate::output::Printer;
use crate::report::{self, format_cost, format_duration, ActionOutcome, RunReport, StoryReport};
use crate::workflow::lock;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run to report on: its id, the journal's name in <board>/runs/ without `.jsonl`.
    #[arg(long, value_name = "ID", conflicts_with = "last")]
    pub run: Option<String>,
    /// The latest run (the default).
    #[arg(long)]
    pub last: bool,
    /// Also write the report as one self-contained HTML page to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: ReportArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let board_dir = project.board_dir();
    let path = report::find_journal(&board_dir, args.run.as_deref())?;
    // The board adds what the journal cannot know: merged commits and current blocked reasons.
    let board = Board::load(&board_dir).ok();
    let report = report::read(
        &path,
        board.as_ref().map(|b| (b, project.root.as_path())),
        lock::holder(&board_dir),
    )?;
    let printer = &context.printer;
    for warning in &report.warnings {
        printer.warn(warning);
    }
    if let Some(file) = &args.html {
        let file = context.cwd.join(file);
        fs_err::write(&file, report::html::render(&report))?;
        printer.info(format!("Wrote {}", file.display()));
    }
    if printer.is_json() {
        printer.json_line(&crate::front::envelope("report", &report));
    } else {
        print_table(printer, &report);
    }
    Ok(ExitStatus::Success)
}

fn print_table(printer: &Printer, report: &RunReport) {
    let p = printer.palette();
    let started = report
        .started_at
        .as_deref()
        .and_then(report::parse_time)
        .map_or("unknown".to_string(), |t| {
            t.format("%Y-%m-%d %H:%M:%S UTC").to_string()
        });
    let ending = match (report.exit_code, &report.message) {
        (Some(code), Some(message)) => format!("exit {code}: {message}"),
        (Some(code), None) => format!("exit {code}"),
        (None, _) if report.running => "still running".to_string(),
        (None, _) => "interrupted: the run ended without finishing its journal".to_string(),
    };
    printer.out(format!(
        "Run {} · started {started} · took {} · {}",
        p.id(&report.run_id),
        format_duration(report.totals.duration_ms),
        ending
    ));
    if report.stories.is_empty() {
        printer.out("No actions ran.");
    } else {
        printer.out("");
        print_stories(printer, report);
        for story in &report.stories {
            print_story_detail(printer, story);
        }
    }
    printer.out("");
    printer.out(format!("Totals: {}", report.totals.summary()));
    if !report.unpriced_models.is_empty() {
        printer.out(format!(
            "No price for {}: set pricing.<model> (USD per million tokens) to see costs",
            report.unpriced_models.join(", ")
        ));
    }
}

fn print_stories(printer: &Printer, report: &RunReport) {
    let header = [
        "STORY", "OUTCOME", "ACTIONS", "REWORKS", "TOKENS", "COST", "RESULT",
    ];
    let rows: Vec<[String; 7]> = report
        .stories
        .iter()
        .map(|s| {
            [
                s.slug.to_string(),
                s.outcome.to_string(),
                s.actions.len().to_string(),
                s.reworks.to_string(),
                s.tokens.to_string(),
                format_cost(s.cost_usd),
                s.result(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        let mut text = String::new();
        for (index, (cell, width)) in cells.iter().zip(widths).enumerate() {
            if index == 6 {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        text.trim_end().to_string()
    };
    printer.out(printer.palette().dim(&line(header)));
    for row in &rows {
        printer.out(line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5], &row[6],
        ]));
    }
}

fn print_story_detail(printer: &Printer, story: &StoryReport) {
    let p = printer.palette();
    printer.out("");
    let title = story
        .title
        .as_deref()
        .map_or(String::new(), |t| format!(" {t}"));
    printer.out(format!("{}{title} ({})", p.id(&story.slug), story.outcome));
    let actions: Vec<String> = story
        .actions
        .iter()
        .map(|a| {
            let mark = match a.outcome {
                ActionOutcome::Completed => "✓",
                ActionOutcome::Rejected => "↺",
                ActionOutcome::Failed => "✗",
                ActionOutcome::Stopped => "■",
                ActionOutcome::Blocked => "⛔",
                ActionOutcome::Waiting => "⏸",
                ActionOutcome::Running | ActionOutcome::Interrupted => "…",
            };
            let duration = match a.outcome {
                ActionOutcome::Interrupted | ActionOutcome::Running => a.outcome.to_string(),
                _ => format_duration(a.duration_ms),
            };
            format!("{} {mark} {duration}", a.action_type)
        })
        .collect();
    printer.out(format!("  actions: {}", actions.join(" · ")));
    for action in story
        .actions
        .iter()
        .filter(|a| a.outcome == ActionOutcome::Failed)
    {
        printer.out(format!(
            "  {} failed: {}",
            action.action_type,
            action.detail.as_deref().unwrap_or("")
        ));
    }
    for review in &story.reviews {
        let feedback = review
            .feedback
            .as_deref()
            .map_or(String::new(), |f| format!(": {f}"));
        printer.out(format!(
            "  review: {} ({} blocker(s)){feedback}",
            review.decision, review.blockers
        ));
    }
    for gate in &story.gates {
        let feedback = gate
            .feedback
            .as_deref()
            .map_or(String::new(), |f| format!(": {f}"));
        printer.out(format!(
            "  {} gate, attempt {}: {}{feedback}",
            gate.phase, gate.attempt, gate.decision
        ));
    }
    if let Some(command) = &story.next_command {
        let note = story
            .next_note
            .as_deref()
            .map_or(String::new(), |n| format!("  ({n})"));
        printer.out(format!("  next: {}{note}", p.accent(command)));
    }
}
