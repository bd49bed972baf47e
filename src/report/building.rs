//! Reading a run's journal into a [`RunReport`]: each event put on its story, then what the board
//! says now added, and each story's next step.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::run_report::*;
use crate::board::records::ReviewDecision;
use crate::board::Board;
use crate::board::{Column, Slug, StoryId};
use crate::error::ReportError;
use crate::protocol::{ActionRef, ActionType, BlockCause, JournalLine, RunEvent, Spent};
use crate::workflow::attention::{self, Need};
use crate::workflow::decision::GateDecision;
use crate::workflow::journal;

/// Finds the journal of run `id`, or the latest one.
pub fn find_journal(board_dir: &Path, id: Option<&str>) -> Result<PathBuf, ReportError> {
    let dir = board_dir.join(crate::board::RUNS_DIR);
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
        match serde_json::from_str::<JournalLine>(line) {
            Ok(line) => builder.line(line),
            Err(err) => builder.warn(index + 1, &format!("not a journal event ({err})")),
        }
    }
    let running = builder.pid.is_some() && builder.pid == lock_holder.map(u64::from);
    Ok(builder.finish(board, running))
}

/// The line that ends an action, as the report needs it.
struct Ended<'a> {
    story_id: &'a str,
    slug: &'a str,
    /// The action's type when the line names it.
    action_type: Option<ActionType>,
    outcome: ActionOutcome,
    detail: &'a str,
    at: &'a str,
    started_at: Option<String>,
    duration_ms: Option<u64>,
    spent: Option<Spent>,
}

impl<'a> Ended<'a> {
    fn of(
        line: &'a JournalLine,
        action: Option<&'a ActionRef>,
        outcome: ActionOutcome,
        detail: &'a str,
    ) -> Ended<'a> {
        Ended {
            story_id: action.map_or("", |a| a.story_id.as_str()),
            slug: action.map_or("", |a| a.slug.as_str()),
            action_type: action.map(|a| a.action_type),
            outcome,
            detail,
            at: &line.timestamp,
            started_at: line.started_at.clone(),
            duration_ms: line.duration_ms,
            spent: line.spent,
        }
    }
}

struct Builder {
    report: RunReport,
    index: HashMap<StoryId, usize>,
    priced: Option<bool>,
    /// The process that wrote the journal.
    pid: Option<u64>,
    /// Per story: a review or gate rejected the work of its open action, with why.
    rejected: HashMap<StoryId, String>,
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

    /// The story's report, made on its first event.
    fn story(&mut self, id: &str, slug: &str) -> &mut StoryReport {
        let stories = &mut self.report.stories;
        let at = *self.index.entry(StoryId::from(id)).or_insert_with(|| {
            stories.push(StoryReport {
                story_id: StoryId::from(id),
                slug: Slug::from(slug),
                title: None,
                outcome: StoryOutcome::Progressed,
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
        &mut stories[at]
    }

    fn line(&mut self, line: JournalLine) {
        let at = Some(line.timestamp.clone());
        match &line.event {
            RunEvent::RunStarted {
                pid, model, price, ..
            } => {
                self.report.started_at = at;
                self.report.model = Some(model.clone());
                self.priced = Some(price.is_some());
                self.pid = Some(u64::from(*pid));
            }
            RunEvent::ActionStarted {
                story_id,
                action,
                title,
                detail,
            } => {
                self.rejected.remove(story_id);
                let story = self.story(story_id, &action.slug);
                if !title.is_empty() {
                    story.title = Some(title.clone());
                }
                story.actions.push(ActionReport {
                    action_type: action.action_type,
                    outcome: ActionOutcome::Interrupted,
                    started_at: at,
                    finished_at: None,
                    duration_ms: None,
                    detail: detail.clone(),
                    feedback: None,
                    tokens: 0,
                    cost_usd: None,
                });
            }
            RunEvent::ActionCompleted {
                action, summary, ..
            } => {
                let ended = Ended::of(&line, Some(action), ActionOutcome::Completed, summary);
                self.end_action(ended);
            }
            RunEvent::ActionFailed { action, error, .. } => {
                let ended = Ended::of(&line, Some(action), ActionOutcome::Failed, error);
                self.end_action(ended);
            }
            RunEvent::ActionStopped { action, reason, .. } => {
                let ended = Ended::of(&line, Some(action), ActionOutcome::Stopped, reason);
                self.end_action(ended);
            }
            RunEvent::StoryBlocked {
                story_id,
                slug,
                reason,
                cause,
            } => {
                if line.started_at.is_some() {
                    let outcome = match cause {
                        Some(BlockCause::Rejected) => ActionOutcome::Rejected,
                        _ => ActionOutcome::Blocked,
                    };
                    self.end_action(Ended {
                        story_id,
                        slug,
                        ..Ended::of(&line, None, outcome, reason)
                    });
                }
                let story = self.story(story_id, slug);
                story.outcome = StoryOutcome::Blocked;
                story.blocked_reason = Some(reason.clone());
                story.block_cause = cause.clone();
            }
            RunEvent::StoryWaiting {
                story_id,
                slug,
                reason,
            } => {
                if line.started_at.is_some() {
                    self.end_action(Ended {
                        story_id,
                        slug,
                        ..Ended::of(&line, None, ActionOutcome::Waiting, reason)
                    });
                }
                let story = self.story(story_id, slug);
                if story.outcome != StoryOutcome::Blocked {
                    story.outcome = StoryOutcome::Waiting;
                }
            }
            RunEvent::StoryMerged {
                story_id,
                slug,
                commit,
                ..
            } => {
                self.story(story_id, slug).merged_commit = Some(commit.clone());
            }
            RunEvent::ReviewDecided {
                story_id,
                slug,
                decision,
                feedback,
                blockers,
            } => {
                let feedback = Some(first_line(feedback)).filter(|f| !f.is_empty());
                if *decision == ReviewDecision::Rejected {
                    self.rejected
                        .insert(story_id.clone(), feedback.clone().unwrap_or_default());
                }
                self.story(story_id, slug).reviews.push(ReviewReport {
                    decision: decision.to_string(),
                    blockers: u64::try_from(*blockers).unwrap_or(u64::MAX),
                    feedback,
                });
            }
            RunEvent::GateDecision {
                story_id,
                slug,
                phase,
                attempt,
                decision,
            } => {
                let parsed = crate::workflow::decision::parse_decision(decision);
                let gate = GateReport {
                    phase: phase.clone(),
                    attempt: u64::from(*attempt),
                    decision: parsed.decision.keyword().to_string(),
                    feedback: parsed
                        .decision
                        .text()
                        .map(first_line)
                        .filter(|f| !f.is_empty()),
                };
                if matches!(parsed.decision, GateDecision::Reject { .. }) {
                    self.rejected
                        .insert(story_id.clone(), gate.feedback.clone().unwrap_or_default());
                }
                self.story(story_id, slug).gates.push(gate);
            }
            RunEvent::RunFinished {
                exit_code, message, ..
            } => {
                self.report.finished_at = at;
                self.report.exit_code = Some(*exit_code);
                self.report.message = Some(message.clone());
                self.report.duration_ms = line.duration_ms;
            }
            RunEvent::ReworkStarted { .. }
            | RunEvent::ToolCall { .. }
            | RunEvent::Usage { .. }
            | RunEvent::Warning { .. }
            | RunEvent::Notice { .. }
            | RunEvent::Claim { .. }
            | RunEvent::Unknown => {}
        }
    }

    /// Closes the story's open action: by its end event, or by the block or wait it led to.
    /// A completed action whose work a review rejected is a rejection, not a completion.
    fn end_action(&mut self, ended: Ended<'_>) {
        let spent = ended.spent.unwrap_or(Spent {
            tokens: Default::default(),
            requests: 0,
            cost_usd: None,
        });
        let tokens = spent.tokens.total;
        let rejection = self.rejected.remove(ended.story_id);
        let outcome = match (ended.outcome, &rejection) {
            (ActionOutcome::Completed, Some(_)) => ActionOutcome::Rejected,
            (outcome, _) => outcome,
        };
        let story = self.story(ended.story_id, ended.slug);
        let open = story.actions.iter().rposition(|a| {
            a.outcome == ActionOutcome::Interrupted
                && ended.action_type.is_none_or(|t| t == a.action_type)
        });
        let action = match open {
            Some(index) => &mut story.actions[index],
            None => {
                story.actions.push(ActionReport {
                    // An end without its start (a journal cut short at the top).
                    action_type: ended.action_type.unwrap_or(ActionType::Review),
                    outcome,
                    started_at: ended.started_at.clone(),
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
        action.outcome = outcome;
        action.finished_at = Some(ended.at.to_string());
        action.duration_ms = ended.duration_ms;
        action.detail = Some(ended.detail.to_string());
        action.feedback = rejection.filter(|f| !f.is_empty());
        action.tokens = tokens;
        action.cost_usd = spent.cost_usd;
        let action_type = action.action_type;
        if outcome == ActionOutcome::Failed {
            story.last_error = action.detail.clone();
        }
        story.tokens += tokens;
        if let Some(cost) = spent.cost_usd {
            story.cost_usd = Some(crate::board::records::round_usd(
                story.cost_usd.unwrap_or(0.0) + cost,
            ));
        }
        if action_type == ActionType::Rework && outcome == ActionOutcome::Completed {
            story.reworks += 1;
        }
        story.outcome = match (outcome, action_type) {
            (ActionOutcome::Completed, ActionType::MoveToDone | ActionType::CreatePr) => {
                StoryOutcome::Done
            }
            // A rejected review or merge sends the work back: the story goes on.
            (ActionOutcome::Completed | ActionOutcome::Rejected, _) => StoryOutcome::Progressed,
            (ActionOutcome::Failed, _) => StoryOutcome::Failed,
            (ActionOutcome::Stopped, _) => StoryOutcome::Stopped,
            (ActionOutcome::Blocked, _) => StoryOutcome::Blocked,
            (ActionOutcome::Waiting, _) => StoryOutcome::Waiting,
            (ActionOutcome::Running, _) => StoryOutcome::Running,
            (ActionOutcome::Interrupted, _) => StoryOutcome::Interrupted,
        };
    }

    fn finish(mut self, board: Option<(&Board, &Path)>, running: bool) -> RunReport {
        let report = &mut self.report;
        report.running = running && report.exit_code.is_none();
        if report.running {
            for action in report.stories.iter_mut().flat_map(|s| s.actions.iter_mut()) {
                if action.outcome == ActionOutcome::Interrupted {
                    action.outcome = ActionOutcome::Running;
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
                if story.outcome == StoryOutcome::Blocked && story.blocked_reason.is_none() {
                    story.blocked_reason = current.meta.blocked_reason.clone();
                }
            }
            if story
                .actions
                .iter()
                .any(|a| a.outcome == ActionOutcome::Interrupted)
                && killed
            {
                story.outcome = StoryOutcome::Interrupted;
            }
            if story
                .actions
                .iter()
                .any(|a| a.outcome == ActionOutcome::Running)
            {
                story.outcome = StoryOutcome::Running;
            }
            let pending = board.and_then(|(b, root)| {
                attention::pending_decision(b.get(&story.story_id)?, root, &b.dir)
            });
            let blocked_dependency = board.and_then(|(b, _)| {
                let current = b.get(&story.story_id)?;
                current
                    .meta
                    .depends_on
                    .iter()
                    .filter_map(|dep| b.get(dep))
                    .find(|dep| dep.column == Column::Blocked)
                    .map(|dep| dep.slug.to_string())
            });
            (story.next_command, story.next_note) =
                next_step(story, pending, blocked_dependency.as_deref());
        }
        let totals = &mut report.totals;
        totals.stories = report.stories.len();
        for story in &report.stories {
            totals.actions += story.actions.len();
            totals.failed += story
                .actions
                .iter()
                .filter(|a| a.outcome == ActionOutcome::Failed)
                .count();
            totals.interrupted += story
                .actions
                .iter()
                .filter(|a| a.outcome == ActionOutcome::Interrupted)
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

/// The one command that moves a story on, and what to change before it. `pending` is the
/// decision the story waits for now, when it waits for one; `blocked_dependency`, the blocked
/// story it waits on.
fn next_step(
    story: &StoryReport,
    pending: Option<Need>,
    blocked_dependency: Option<&str>,
) -> (Option<String>, Option<String>) {
    let slug = &story.slug;
    // Running it again would find nothing to do: its dependency needs a person first.
    if let (
        Some(dependency),
        StoryOutcome::Failed
        | StoryOutcome::Stopped
        | StoryOutcome::Interrupted
        | StoryOutcome::Progressed,
    ) = (blocked_dependency, &story.outcome)
    {
        return (
            Some(format!("agentic-sdlc unblock {dependency}")),
            Some(format!("waits on {dependency}, which is blocked")),
        );
    }
    let run_again = Some(format!("agentic-sdlc run --auto --story {slug}"));
    let person = |need: Need| {
        let step = need.next_step(slug);
        (Some(step.command), step.note)
    };
    match story.outcome {
        StoryOutcome::Blocked => person(Need::Blocked {
            reason: story.blocked_reason.clone().unwrap_or_default(),
            cause: story.block_cause.clone(),
        }),
        StoryOutcome::Waiting => match pending {
            Some(need) => person(need),
            None => (
                Some(format!("agentic-sdlc decide {slug} \"APPROVE\"")),
                None,
            ),
        },
        StoryOutcome::Failed => (
            run_again,
            Some("see last_error with `agentic-sdlc details`".into()),
        ),
        StoryOutcome::Stopped | StoryOutcome::Interrupted | StoryOutcome::Progressed => {
            (run_again, None)
        }
        StoryOutcome::Running => (None, Some("the run is still working on it".into())),
        StoryOutcome::Done => (None, None),
    }
}
