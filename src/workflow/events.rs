//! What a run reports while it works: one JSON object per line with `--json`, readable lines
//! (and a spinner on a terminal) otherwise.

use std::sync::Arc;

use serde_json::{json, Value};

use super::assessor::{Action, ActionType};
use super::journal::Journal;
use crate::output::{LiveLine, Printer, Spinner};

#[derive(Debug, Clone)]
pub enum Event {
    ActionStarted {
        action: Action,
        detail: Option<String>,
    },
    ActionCompleted {
        action: Action,
        summary: String,
    },
    ActionFailed {
        action: Action,
        error: String,
    },
    /// The run's budget stopped the action before its next model call (SPEC §14).
    ActionStopped {
        action: Action,
        reason: String,
    },
    StoryBlocked {
        story_id: String,
        slug: String,
        reason: String,
    },
    StoryWaiting {
        story_id: String,
        slug: String,
        reason: String,
    },
    GateDecision {
        story_id: String,
        slug: String,
        phase: String,
        attempt: u32,
        decision: String,
    },
    Warning {
        story_id: Option<String>,
        message: String,
    },
    RunFinished {
        actions: u32,
        failed: u32,
        exit_code: i32,
        message: String,
    },
}

impl Event {
    pub fn to_json(&self) -> Value {
        let action_json =
            |a: &Action| json!({ "type": a.action_type, "storyId": a.story_id, "slug": a.slug });
        match self {
            Event::ActionStarted { action, detail } => json!({
                "event": "action_started", "storyId": action.story_id, "action": action_json(action), "detail": detail,
            }),
            Event::ActionCompleted { action, summary } => json!({
                "event": "action_completed", "storyId": action.story_id, "action": action_json(action), "summary": summary,
            }),
            Event::ActionFailed { action, error } => json!({
                "event": "action_failed", "storyId": action.story_id, "action": action_json(action), "error": error,
            }),
            Event::ActionStopped { action, reason } => json!({
                "event": "action_stopped", "storyId": action.story_id, "action": action_json(action), "reason": reason,
            }),
            Event::StoryBlocked {
                story_id,
                slug,
                reason,
            } => json!({
                "event": "story_blocked", "storyId": story_id, "slug": slug, "reason": reason,
            }),
            Event::StoryWaiting {
                story_id,
                slug,
                reason,
            } => json!({
                "event": "story_waiting", "storyId": story_id, "slug": slug, "reason": reason,
            }),
            Event::GateDecision {
                story_id,
                slug,
                phase,
                attempt,
                decision,
            } => json!({
                "event": "gate_decision", "storyId": story_id, "slug": slug, "phase": phase, "attempt": attempt, "decision": decision,
            }),
            Event::Warning { story_id, message } => json!({
                "event": "warning", "storyId": story_id, "message": message,
            }),
            Event::RunFinished {
                actions,
                failed,
                exit_code,
                message,
            } => json!({
                "event": "run_finished", "storyId": null, "actions": actions, "failed": failed, "exitCode": exit_code, "message": message,
            }),
        }
    }
}

/// The verb a person reads while an action runs.
pub fn verb(action_type: ActionType) -> &'static str {
    match action_type {
        ActionType::Refine => "Refining",
        ActionType::Research => "Researching",
        ActionType::Plan => "Planning",
        ActionType::Implement => "Implementing",
        ActionType::Review => "Reviewing",
        ActionType::Rework => "Reworking",
        ActionType::CreatePr => "Opening a pull request for",
        ActionType::MoveToDone => "Finishing",
    }
}

/// Sends events to the printer, and to the run's journal once it has one.
#[derive(Debug, Clone)]
pub struct EventSink {
    printer: Printer,
    journal: Option<Arc<Journal>>,
}

impl EventSink {
    pub fn new(printer: Printer) -> Self {
        Self {
            printer,
            journal: None,
        }
    }

    /// A parallel run shows one live line per running story on a terminal (SPEC §14).
    pub fn with_live_lines(mut self) -> Self {
        self.printer = self.printer.with_live_lines();
        self
    }

    /// The live line of a story's action; `None` where no live lines are shown.
    pub fn live_line(&self, action: &Action) -> Option<LiveLine> {
        self.printer.live().line(format!(
            "{} {} ({})",
            verb(action.action_type),
            action.slug,
            action.action_type
        ))
    }

    /// Every event from now on also goes to `journal` (SPEC §14).
    pub fn with_journal(mut self, journal: Arc<Journal>) -> Self {
        self.journal = Some(journal);
        self
    }

    pub fn printer(&self) -> &Printer {
        &self.printer
    }

    pub fn emit(&self, event: Event) {
        if let Some(journal) = &self.journal {
            journal.append(&event);
        }
        if self.printer.is_json() {
            self.printer.json_line(&event.to_json());
            return;
        }
        let p = self.printer.palette();
        match event {
            Event::ActionStarted { .. } => {}
            Event::ActionCompleted { action, summary } => self.printer.info(format!(
                "{} {} {}: {summary}",
                p.ok("✓"),
                action.action_type,
                p.id(&action.slug)
            )),
            Event::ActionFailed { action, error } => self.printer.info(format!(
                "{} {} {}: {error}",
                p.error("✗"),
                action.action_type,
                p.id(&action.slug)
            )),
            Event::ActionStopped { action, reason } => self.printer.info(format!(
                "{} {} {}: {reason}",
                p.warn("■"),
                action.action_type,
                p.id(&action.slug)
            )),
            Event::StoryBlocked { slug, reason, .. } => self.printer.info(format!(
                "{} {} blocked: {reason}",
                p.warn("⛔"),
                p.id(&slug)
            )),
            Event::StoryWaiting { slug, reason, .. } => {
                self.printer
                    .info(format!("{} {} {reason}", p.warn("⏸"), p.id(&slug)))
            }
            Event::GateDecision {
                slug,
                phase,
                attempt,
                decision,
                ..
            } => self.printer.detail(format!(
                "  {phase} gate for {slug}, attempt {attempt}: {}",
                decision.lines().next().unwrap_or("")
            )),
            Event::Warning { message, .. } => self.printer.warn(message),
            Event::RunFinished { message, .. } => self.printer.info(message),
        }
    }

    /// Announces an action: a spinner on a terminal, a plain line otherwise, an event in JSON.
    pub fn start(&self, action: &Action, detail: Option<String>) -> Option<Spinner> {
        if self.printer.is_json() {
            self.emit(Event::ActionStarted {
                action: action.clone(),
                detail,
            });
            return None;
        }
        if let Some(journal) = &self.journal {
            journal.append(&Event::ActionStarted {
                action: action.clone(),
                detail: detail.clone(),
            });
        }
        let suffix = detail.map_or(String::new(), |d| format!(" ({d})"));
        Some(self.printer.spinner(format!(
            "⟳ {} \"{}\"{suffix}",
            verb(action.action_type),
            action.slug
        )))
    }
}
