//! The morning report (SPEC §14): what one run did, story by story, read from its journal and
//! the board as it is now. Pure data here; `cli/report.rs` prints it, [`html`] draws it.

pub mod html;
pub mod transcript;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::board::Board;
pub use crate::error::ReportError;
use crate::workflow::attention::{self, Need};
use crate::workflow::journal::{self, RUN_STARTED};
use crate::workflow::outcome::BlockCause;

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

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StoryReport {
    pub story_id: String,
    pub slug: String,
    /// As the run found it, or as the board has it now for an older journal.
    pub title: Option<String>,
    /// done, blocked, failed, waiting, stopped, interrupted, running or progressed.
    pub outcome: String,
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
    pub action_type: String,
    /// completed, rejected (a review or gate said no), failed, stopped, blocked, waiting,
    /// running, or interrupted (started and never ended).
    pub outcome: String,
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
        match (self.outcome.as_str(), &self.merged_commit) {
            ("blocked", _) => first_line(self.blocked_reason.as_deref().unwrap_or_default()),
            ("failed", _) => first_line(self.last_error.as_deref().unwrap_or_default()),
            ("waiting", _) => "waits for a decision".to_string(),
            (_, Some(commit)) => format!("merged {}", commit.chars().take(7).collect::<String>()),
            _ => String::new(),
        }
    }

    /// The slug, and the title when it is known: how a person recognises the story.
    pub fn label(&self) -> String {
        match &self.title {
            Some(title) => format!("{} ({title})", self.slug),
            None => self.slug.clone(),
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

/// Finds the journal of run `id`, or the latest one.
pub fn find_journal(board_dir: &Path, id: Option<&str>) -> Result<PathBuf, ReportError> {
    let dir = board_dir.join(journal::RUNS_DIR);
    let paths = journal::list(board_dir).map_err(|source| ReportError::Read {
        path: dir.clone(),
        source,
    })?;
    let Some(latest) = paths.last() else {
        return Err(ReportError::NoJournal(dir));
    };
    let Some(id) = id else {
        return Ok(latest.clone());
    };
    let id = id.trim().trim_end_matches(".jsonl");
    paths
        .iter()
        .find(|p| journal::run_id_of(p).as_deref() == Some(id))
        .cloned()
        .ok_or_else(|| ReportError::UnknownRun {
            id: id.to_string(),
            dir,
            known: paths.iter().filter_map(|p| journal::run_id_of(p)).collect(),
        })
}

/// Reads a journal into a report. `board` (with the project `root`) adds what the journal
/// cannot say: titles an older journal lacks, and the decision a story waits for now.
/// `lock_holder` is the pid of the run holding the board, if any, so a run still at work is
/// told from a killed one.
pub fn read(
    path: &Path,
    board: Option<(&Board, &Path)>,
    lock_holder: Option<u32>,
) -> Result<RunReport, ReportError> {
    let text = fs_err::read_to_string(path).map_err(|source| ReportError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut builder = Builder::new(path);
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(line) {
            Ok(event) if event.get("event").and_then(Value::as_str).is_some() => {
                builder.event(&event)
            }
            Ok(_) => builder.warn(index + 1, "not a journal event (no \"event\" key)"),
            Err(err) => builder.warn(index + 1, &format!("not JSON ({err})")),
        }
    }
    let running = builder.pid.is_some() && builder.pid == lock_holder.map(u64::from);
    Ok(builder.finish(board, running))
}

struct Builder {
    report: RunReport,
    index: HashMap<String, usize>,
    priced: Option<bool>,
    /// The process that wrote the journal.
    pid: Option<u64>,
    /// Per story: a review or gate rejected the work of its open action, with why.
    rejected: HashMap<String, String>,
}

fn text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_string)
}

fn first_line(text: &str) -> String {
    text.trim().lines().next().unwrap_or("").to_string()
}

impl Builder {
    fn new(path: &Path) -> Builder {
        Builder {
            report: RunReport {
                run_id: journal::run_id_of(path).unwrap_or_default(),
                journal: path.to_path_buf(),
                started_at: None,
                finished_at: None,
                duration_ms: None,
                exit_code: None,
                running: false,
                message: None,
                model: None,
                unpriced_models: Vec::new(),
                stories: Vec::new(),
                totals: Totals::default(),
                warnings: Vec::new(),
            },
            index: HashMap::new(),
            priced: None,
            pid: None,
            rejected: HashMap::new(),
        }
    }

    fn warn(&mut self, line: usize, why: &str) {
        self.report.warnings.push(format!(
            "{}:{line}: skipped a corrupt journal line: {why}",
            self.report.journal.display()
        ));
    }

    fn story(&mut self, event: &Value) -> Option<&mut StoryReport> {
        let id = text(event, "storyId")?;
        let slug = text(event, "slug")
            .or_else(|| {
                event
                    .pointer("/action/slug")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_else(|| id.clone());
        let stories = &mut self.report.stories;
        let at = *self.index.entry(id.clone()).or_insert_with(|| {
            stories.push(StoryReport {
                story_id: id,
                slug,
                title: None,
                outcome: "progressed".into(),
                actions: Vec::new(),
                reworks: 0,
                gates: Vec::new(),
                reviews: Vec::new(),
                tokens: 0,
                cost_usd: None,
                merged_commit: None,
                blocked_reason: None,
                block_cause: None,
                last_error: None,
                next_command: None,
                next_note: None,
            });
            stories.len() - 1
        });
        Some(&mut stories[at])
    }

    fn event(&mut self, event: &Value) {
        let kind = event["event"].as_str().unwrap_or_default().to_string();
        let at = text(event, "timestamp");
        match kind.as_str() {
            RUN_STARTED => {
                self.report.started_at = at;
                self.report.model = text(event, "model");
                self.priced = Some(event.get("price").is_some_and(|p| !p.is_null()));
                self.pid = event.get("pid").and_then(Value::as_u64);
            }
            "action_started" => {
                let action_type = event
                    .pointer("/action/type")
                    .and_then(Value::as_str)
                    .unwrap_or("action")
                    .to_string();
                if let Some(id) = text(event, "storyId") {
                    self.rejected.remove(&id);
                }
                if let Some(story) = self.story(event) {
                    if let Some(title) = text(event, "title").filter(|t| !t.is_empty()) {
                        story.title = Some(title);
                    }
                    story.actions.push(ActionReport {
                        action_type,
                        outcome: "interrupted".into(),
                        started_at: at,
                        finished_at: None,
                        duration_ms: None,
                        detail: text(event, "detail"),
                        feedback: None,
                        tokens: 0,
                        cost_usd: None,
                    });
                }
            }
            "action_completed" | "action_failed" | "action_stopped" => {
                let outcome = kind.trim_start_matches("action_").to_string();
                self.end_action(event, outcome, at);
            }
            "story_blocked" => {
                let reason = text(event, "reason");
                let cause: Option<BlockCause> = event
                    .get("cause")
                    .and_then(|c| serde_json::from_value(c.clone()).ok());
                if event.get("startedAt").is_some() {
                    let outcome = match cause {
                        Some(BlockCause::Rejected) => "rejected",
                        _ => "blocked",
                    };
                    self.end_action(event, outcome.into(), at);
                }
                if let Some(story) = self.story(event) {
                    story.outcome = "blocked".into();
                    story.blocked_reason = reason;
                    story.block_cause = cause;
                }
            }
            "story_waiting" => {
                if event.get("startedAt").is_some() {
                    self.end_action(event, "waiting".into(), at);
                }
                if let Some(story) = self.story(event) {
                    if story.outcome != "blocked" {
                        story.outcome = "waiting".into();
                    }
                }
            }
            "story_merged" => {
                if let Some(story) = self.story(event) {
                    story.merged_commit = text(event, "commit");
                }
            }
            "review_decided" => {
                let decision = text(event, "decision").unwrap_or_default();
                let feedback = text(event, "feedback")
                    .map(|f| first_line(&f))
                    .filter(|f| !f.is_empty());
                if decision == "REJECTED" {
                    if let Some(id) = text(event, "storyId") {
                        self.rejected
                            .insert(id, feedback.clone().unwrap_or_default());
                    }
                }
                if let Some(story) = self.story(event) {
                    story.reviews.push(ReviewReport {
                        decision,
                        blockers: event.get("blockers").and_then(Value::as_u64).unwrap_or(0),
                        feedback,
                    });
                }
            }
            "gate_decision" => {
                let decision = text(event, "decision").unwrap_or_default();
                let (keyword, feedback) = match decision.split_once(':') {
                    Some((keyword, rest)) => (keyword.trim().to_string(), Some(first_line(rest))),
                    None => (decision.trim().to_string(), None),
                };
                let gate = GateReport {
                    phase: text(event, "phase").unwrap_or_default(),
                    attempt: event.get("attempt").and_then(Value::as_u64).unwrap_or(0),
                    decision: keyword,
                    feedback: feedback.filter(|f| !f.is_empty()),
                };
                if gate.decision == "REJECT" {
                    if let Some(id) = text(event, "storyId") {
                        self.rejected
                            .insert(id, gate.feedback.clone().unwrap_or_default());
                    }
                }
                if let Some(story) = self.story(event) {
                    story.gates.push(gate);
                }
            }
            "run_finished" => {
                self.report.finished_at = at;
                self.report.exit_code = event
                    .get("exitCode")
                    .and_then(Value::as_i64)
                    .and_then(|c| i32::try_from(c).ok());
                self.report.message = text(event, "message");
                self.report.duration_ms = event.get("durationMs").and_then(Value::as_u64);
            }
            _ => {}
        }
    }

    /// Closes the story's open action: by its end event, or by the block or wait it led to.
    /// A completed action whose work a review rejected is a rejection, not a completion.
    fn end_action(&mut self, event: &Value, outcome: String, at: Option<String>) {
        let detail = text(event, "summary")
            .or_else(|| text(event, "error"))
            .or_else(|| text(event, "reason"));
        let tokens = event
            .pointer("/tokens/total")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let cost = event.get("costUsd").and_then(Value::as_f64);
        let named_type = event
            .pointer("/action/type")
            .and_then(Value::as_str)
            .map(str::to_string);
        let rejection = text(event, "storyId").and_then(|id| self.rejected.remove(&id));
        let outcome = match (outcome.as_str(), &rejection) {
            ("completed", Some(_)) => "rejected".to_string(),
            _ => outcome,
        };
        let Some(story) = self.story(event) else {
            return;
        };
        let open = story.actions.iter().rposition(|a| {
            a.outcome == "interrupted" && named_type.as_ref().is_none_or(|t| *t == a.action_type)
        });
        let action = match open {
            Some(index) => &mut story.actions[index],
            None => {
                story.actions.push(ActionReport {
                    action_type: named_type.clone().unwrap_or_else(|| "action".into()),
                    outcome: String::new(),
                    started_at: text(event, "startedAt"),
                    finished_at: None,
                    duration_ms: None,
                    detail: None,
                    feedback: None,
                    tokens: 0,
                    cost_usd: None,
                });
                story
                    .actions
                    .last_mut()
                    .expect("an action was pushed on the line above")
            }
        };
        action.outcome = outcome.clone();
        action.finished_at = at;
        action.duration_ms = event.get("durationMs").and_then(Value::as_u64);
        action.detail = detail;
        action.feedback = rejection.filter(|f| !f.is_empty());
        action.tokens = tokens;
        action.cost_usd = cost;
        let action_type = action.action_type.clone();
        if outcome == "failed" {
            story.last_error = action.detail.clone();
        }
        story.tokens += tokens;
        if let Some(cost) = cost {
            story.cost_usd = Some(crate::board::records::round_usd(
                story.cost_usd.unwrap_or(0.0) + cost,
            ));
        }
        if action_type == "rework" && outcome == "completed" {
            story.reworks += 1;
        }
        story.outcome = match (outcome.as_str(), action_type.as_str()) {
            ("completed", "move_to_done" | "create_pr") => "done".into(),
            // A rejected review or merge sends the work back: the story goes on.
            ("completed" | "rejected", _) => "progressed".into(),
            (other, _) => other.into(),
        };
    }

    fn finish(mut self, board: Option<(&Board, &Path)>, running: bool) -> RunReport {
        let report = &mut self.report;
        report.running = running && report.exit_code.is_none();
        if report.running {
            for action in report.stories.iter_mut().flat_map(|s| s.actions.iter_mut()) {
                if action.outcome == "interrupted" {
                    action.outcome = "running".into();
                }
            }
        }
        if self.priced == Some(false) {
            if let Some(model) = &report.model {
                report.unpriced_models.push(model.clone());
            }
        }
        let killed = report.exit_code.is_none();
        for story in &mut report.stories {
            // The board adds only what the journal of an older version did not record: the
            // title and a blocked reason. What later runs did is not this run's.
            if let Some(current) = board.and_then(|(b, _)| b.get(&story.story_id)) {
                if story.title.is_none() {
                    story.title = Some(current.meta.title.clone());
                }
                if story.outcome == "blocked" && story.blocked_reason.is_none() {
                    story.blocked_reason = current.meta.blocked_reason.clone();
                }
            }
            if story.actions.iter().any(|a| a.outcome == "interrupted") && killed {
                story.outcome = "interrupted".into();
            }
            if story.actions.iter().any(|a| a.outcome == "running") {
                story.outcome = "running".into();
            }
            let pending = board.and_then(|(b, root)| {
                attention::pending_decision(b.get(&story.story_id)?, root, &b.dir)
            });
            (story.next_command, story.next_note) = next_step(story, pending);
        }
        let totals = &mut report.totals;
        totals.stories = report.stories.len();
        for story in &report.stories {
            totals.actions += story.actions.len();
            totals.failed += story
                .actions
                .iter()
                .filter(|a| a.outcome == "failed")
                .count();
            totals.interrupted += story
                .actions
                .iter()
                .filter(|a| a.outcome == "interrupted")
                .count();
            totals.reworks += story.reworks;
            totals.tokens += story.tokens;
            if let Some(cost) = story.cost_usd {
                totals.cost_usd = Some(crate::board::records::round_usd(
                    totals.cost_usd.unwrap_or(0.0) + cost,
                ));
            }
        }
        let duration = report.duration_ms.or_else(|| span_ms(report));
        report.totals.duration_ms = duration;
        self.report
    }
}

/// A killed run's length: from its start to the last thing it wrote.
fn span_ms(report: &RunReport) -> Option<u64> {
    let start = parse_time(report.started_at.as_deref()?)?;
    let last = report
        .stories
        .iter()
        .flat_map(|s| &s.actions)
        .filter_map(|a| a.finished_at.as_deref().or(a.started_at.as_deref()))
        .filter_map(parse_time)
        .max()?;
    u64::try_from((last - start).num_milliseconds()).ok()
}

pub fn parse_time(text: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// The one command that moves a story on, and what to change before it. `pending` is the
/// decision the story waits for now, when it waits for one.
fn next_step(story: &StoryReport, pending: Option<Need>) -> (Option<String>, Option<String>) {
    let slug = &story.slug;
    let run_again = Some(format!("agentic-sdlc run --auto --story {slug}"));
    let person = |need: Need| {
        let step = need.next_step(slug);
        (Some(step.command), step.note)
    };
    match story.outcome.as_str() {
        "blocked" => person(Need::Blocked {
            reason: story.blocked_reason.clone().unwrap_or_default(),
            cause: story.block_cause.clone(),
        }),
        "waiting" => match pending {
            Some(need) => person(need),
            None => (
                Some(format!("agentic-sdlc decide {slug} \"APPROVE\"")),
                None,
            ),
        },
        "failed" => (
            run_again,
            Some("see last_error with `agentic-sdlc details`".into()),
        ),
        "stopped" | "interrupted" | "progressed" => (run_again, None),
        "running" => (None, Some("the run is still working on it".into())),
        _ => (None, None),
    }
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
