//! `status`: the board column by column, then what the assessor recommends. Read-only.

use std::collections::HashMap;
use std::path::Path;

use clap::Args;

use super::context::Context;
use crate::board::{Board, Column, StorySummary};
use crate::config::Config;
use crate::error::{ExitStatus, Result};
use crate::front::status::{claim_note, known_claims, status_json};
use crate::names::BranchName;
use crate::output::Palette;
use crate::vcs;
use crate::workflow::assessor::{self, Assessment, Policy};

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Hide the done column.
    #[arg(long)]
    pub active: bool,
    /// Fetch the claims of this git remote first (otherwise the claims shown are those the
    /// last `run --remote` of this clone saw).
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
}

pub fn run(args: StatusArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    if let Some(name) = &args.remote {
        let target = vcs::remote_target(&project.root, name)?;
        let timeout = std::time::Duration::from_secs(project.config.remote.timeout_seconds);
        vcs::fetch_claims(&project.root, &target, timeout)?;
    }
    let claims = known_claims(&project.root);
    let board = Board::load(&project.board_dir())?;
    let assessment = assessor::assess(&board, Policy::from_config(&project.config));
    let columns: Vec<Column> = Column::ALL
        .iter()
        .copied()
        .filter(|c| !(args.active && *c == Column::Done))
        .collect();
    let printer = &context.printer;
    if printer.is_json() {
        printer.json_document(&status_json(&board, &assessment, &columns, &claims));
        return Ok(ExitStatus::Success);
    }
    let palette = printer.palette();
    let behind = behind_counts(&project.root, &board, &project.config);
    let mut out = String::new();
    for column in &columns {
        let mut stories: Vec<&StorySummary> = board.in_column(*column).collect();
        stories.sort_by(|a, b| (a.meta.priority, a.id()).cmp(&(b.meta.priority, b.id())));
        out.push_str(&palette.heading(&format!("{} ({})", column.name(), stories.len())));
        out.push('\n');
        for story in stories {
            out.push_str(&story_line(story, &assessment, &behind, palette));
            if let Some(claim) = claims.iter().find(|c| c.seen.story_id == story.id()) {
                out.push_str(&format!("\n      {}", palette.accent(&claim_note(claim))));
            }
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
    Ok(ExitStatus::Success)
}

/// `[priority] slug - title [RPIV]`, then `!` for an error, the blocked reason, or what it waits on.
fn story_line(
    story: &StorySummary,
    assessment: &Assessment,
    behind: &HashMap<BranchName, u32>,
    palette: &Palette,
) -> String {
    let meta = &story.meta;
    let flags: String = meta
        .shown_flags(story.column)
        .into_iter()
        .map(|flag| if flag.set { flag.letter } else { '-' })
        .collect();
    let flags = format!("[{flags}]");
    let mut line = format!(
        "  [{}] {} - {} {}",
        meta.priority,
        palette.id(&story.slug),
        meta.title,
        palette.dim(&flags)
    );
    if let Some(note) = delivery_note(story, behind) {
        line.push_str(&format!(" {}", palette.dim(&format!("({note})"))));
    }
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

/// Where a story's work is (docs/design.md §12): a done story's merge commit or "branch only", a
/// started story's branch and how many base commits it lacks.
fn delivery_note(story: &StorySummary, behind: &HashMap<BranchName, u32>) -> Option<String> {
    let meta = &story.meta;
    if story.column == Column::Done {
        return match (&meta.merged_commit, &meta.branch) {
            (Some(commit), _) => Some(format!("merged {}", &commit[..commit.len().min(7)])),
            (None, Some(_)) => Some("branch only".into()),
            (None, None) => None,
        };
    }
    let branch = meta.branch.as_ref()?;
    let base = meta.base_branch.as_deref().unwrap_or("its base");
    Some(match behind.get(branch) {
        Some(0) => format!("{branch}, up to date with {base}"),
        Some(n) => format!("{branch}, {n} behind {base}"),
        None => branch.to_string(),
    })
}

/// How far each started story's branch is behind its base, from git; nothing outside a
/// repository. One `git rev-list` per started story: they are few next to the board.
fn behind_counts(root: &Path, board: &Board, config: &Config) -> HashMap<BranchName, u32> {
    let mut counts = HashMap::new();
    let started: Vec<&StorySummary> = board
        .stories
        .iter()
        .filter(|s| s.column != Column::Done && s.meta.branch.is_some())
        .collect();
    if started.is_empty() || !vcs::is_repo(root) {
        return counts;
    }
    for story in started {
        let (Some(branch), Some(base)) = (
            &story.meta.branch,
            story
                .meta
                .base_branch
                .as_ref()
                .or(config.git.base_branch.as_ref()),
        ) else {
            continue;
        };
        if let Ok(Some(n)) = vcs::commits_behind(root, branch, base) {
            counts.insert(branch.clone(), n);
        }
    }
    counts
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or("")
}
