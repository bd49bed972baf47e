//! What the morning report holds (docs/design.md §14): one run, story by story, as plain data,
//! and how its times and costs read. The report's rooms stand on this one.

use std::path::PathBuf;

use serde::Serialize;

use crate::board::Slug;
use crate::board::StoryId;
use crate::protocol::{ActionType, BlockCause};

/// One run, as its journal tells it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub run_id: String,
    pub journal: PathBuf,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub duration_ms: Option<u64>,
    /// None when the run never wrote its last line: it was killed, or it is still running.
    pub exit_code: Option<i32>,
    /// The run still holds the board: its open actions are running, not interrupted.
    pub running: bool,
    pub message: Option<String>,
    pub model: Option<String>,
    /// Models whose usage has no cost because `pricing` does not list them.
    pub unpriced_models: Vec<String>,
    pub stories: Vec<StoryReport>,
    pub totals: Totals,
    /// Lines of the journal that could not be read, named by file and line.
    pub warnings: Vec<String>,
}

/// What a story came to in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoryOutcome {
    Done,
    Blocked,
    Failed,
    Waiting,
    Stopped,
    Interrupted,
    Running,
    /// It took actions and goes on in a later run.
    Progressed,
}

/// How one action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionOutcome {
    Completed,
    /// A review or a gate said no to the action's work.
    Rejected,
    Failed,
    Stopped,
    Blocked,
    Waiting,
    Running,
    /// Started and never ended: the run was killed.
    Interrupted,
}

macro_rules! names {
    ($kind:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $kind {
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl std::fmt::Display for $kind {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

names!(StoryOutcome {
    Done => "done",
    Blocked => "blocked",
    Failed => "failed",
    Waiting => "waiting",
    Stopped => "stopped",
    Interrupted => "interrupted",
    Running => "running",
    Progressed => "progressed",
});

names!(ActionOutcome {
    Completed => "completed",
    Rejected => "rejected",
    Failed => "failed",
    Stopped => "stopped",
    Blocked => "blocked",
    Waiting => "waiting",
    Running => "running",
    Interrupted => "interrupted",
});

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoryReport {
    pub story_id: StoryId,
    pub slug: Slug,
    /// As the run found it, or as the board has it now for an older journal.
    pub title: Option<String>,
    pub outcome: StoryOutcome,
    pub actions: Vec<ActionReport>,
    pub reworks: u32,
    pub gates: Vec<GateReport>,
    /// Every review's decision in this run, with its feedback's first line.
    pub reviews: Vec<ReviewReport>,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    /// The commit this run merged the story's work as; a merge made by a later run is not
    /// this run's.
    pub merged_commit: Option<String>,
    pub blocked_reason: Option<String>,
    /// Why the run blocked the story, when it did.
    pub block_cause: Option<BlockCause>,
    /// The error of the story's last failed action in this run.
    pub last_error: Option<String>,
    /// The one command that moves the story on, when it needs one.
    pub next_command: Option<String>,
    /// What to do before that command, when something must change first.
    pub next_note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionReport {
    #[serde(rename = "type")]
    pub action_type: ActionType,
    pub outcome: ActionOutcome,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    pub duration_ms: Option<u64>,
    pub detail: Option<String>,
    /// For a rejection, the first line of why.
    pub feedback: Option<String>,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewReport {
    /// APPROVED, REJECTED or FAILED.
    pub decision: String,
    pub blockers: u64,
    /// The first line of what the reviewers found.
    pub feedback: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateReport {
    pub phase: String,
    pub attempt: u64,
    pub decision: String,
    /// The first line of the gate's feedback or reason.
    pub feedback: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Totals {
    pub stories: usize,
    pub actions: usize,
    pub failed: usize,
    pub interrupted: usize,
    pub reworks: u32,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    pub duration_ms: Option<u64>,
}

impl StoryReport {
    /// What the story came to in this run, in a few words: the blocked reason or the error
    /// that failed it (their first line), the commit it was merged as.
    pub fn result(&self) -> String {
        match (self.outcome, &self.merged_commit) {
            (StoryOutcome::Blocked, _) => {
                first_line(self.blocked_reason.as_deref().unwrap_or_default())
            }
            (StoryOutcome::Failed, _) => first_line(self.last_error.as_deref().unwrap_or_default()),
            (StoryOutcome::Waiting, _) => "waits for a decision".to_string(),
            (_, Some(commit)) => format!("merged {}", commit.chars().take(7).collect::<String>()),
            _ => String::new(),
        }
    }

    /// The slug, and the title when it is known: how a person recognises the story.
    pub fn label(&self) -> String {
        match &self.title {
            Some(title) => format!("{} ({title})", self.slug),
            None => self.slug.to_string(),
        }
    }
}

impl Totals {
    /// What the run did in one line, for the terminal report and the HTML page alike.
    pub fn summary(&self) -> String {
        format!(
            "{} stories, {} actions ({} failed, {} interrupted), {} reworks, {} tokens, {}",
            self.stories,
            self.actions,
            self.failed,
            self.interrupted,
            self.reworks,
            self.tokens,
            format_cost(self.cost_usd)
        )
    }
}

pub(super) fn first_line(text: &str) -> String {
    text.trim().lines().next().unwrap_or("").to_string()
}

pub fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// Milliseconds as a person reads them.
pub fn format_duration(ms: Option<u64>) -> String {
    match ms {
        None => "–".into(),
        Some(ms) if ms < 1_000 => format!("{ms}ms"),
        Some(ms) if ms < 60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        Some(ms) => format!("{}m{:02}s", ms / 60_000, (ms / 1000) % 60),
    }
}

/// Dollars for a table cell; "–" without a price.
pub fn format_cost(usd: Option<f64>) -> String {
    usd.map_or("–".into(), |c| {
        format!("${}", crate::workflow::budget::format_usd(c))
    })
}
