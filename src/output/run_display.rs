//! Renders a run's events (`crate::workflow::events`): JSON lines with `--json`, otherwise
//! readable lines, with a spinner for the one running story or a live line per story in a
//! parallel run while stderr is a terminal.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::printer::{Printer, Verbosity};
use super::progress::LiveLine;
use crate::board::Slug;
use crate::board::StoryId;
use crate::protocol::ActionRef;
use crate::workflow::attention::Attention;
use crate::workflow::events::{RunEvent, RunRenderer};

pub struct RunDisplay {
    printer: Printer,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// More than one story may run at once: live lines rather than a spinner.
    parallel: bool,
    /// The stories with an action in flight.
    running: HashMap<StoryId, Running>,
}

/// What the live line of a running story shows.
struct Running {
    slug: Slug,
    line: Option<LiveLine>,
    tokens: u64,
    last_tool: Option<String>,
}

impl Running {
    fn refresh(&self) {
        if let Some(line) = &self.line {
            let mut text = format!("{} tokens", self.tokens);
            if let Some(tool) = &self.last_tool {
                text.push_str(" · ");
                text.push_str(tool);
            }
            line.set_message(text);
        }
    }
}

impl RunDisplay {
    pub fn new(printer: Printer) -> RunDisplay {
        RunDisplay {
            printer,
            state: Mutex::new(State::default()),
        }
    }

    /// Runs `f`, a prompt, with the live lines hidden and what others print held back until
    /// it returns; see [`LiveArea::hold`].
    pub fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        self.printer.live().hold(f)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while drawing leaves lines that are still fine to draw.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn started(&self, action: &ActionRef, detail: Option<&str>) {
        let mut state = self.state();
        let line = if state.parallel {
            self.printer.live().line(format!(
                "{} {} ({})",
                action.action_type.doing(),
                action.slug,
                action.action_type
            ))
        } else {
            let suffix = detail.map_or(String::new(), |d| format!(" ({d})"));
            let text = format!(
                "⟳ {} \"{}\"{suffix}",
                action.action_type.doing(),
                action.slug
            );
            let spinner = self.printer.live().spinner(text.clone());
            if spinner.is_none() {
                self.printer.info(text);
            }
            spinner
        };
        let running = Running {
            slug: action.slug.clone(),
            line,
            tokens: 0,
            last_tool: None,
        };
        if state.parallel {
            running.refresh();
        }
        state.running.insert(action.story_id.clone(), running);
    }

    /// The story's action is over: its line goes, the event prints its own.
    fn ended(&self, story_id: &StoryId) {
        let running = self.state().running.remove(story_id);
        if let Some(line) = running.and_then(|r| r.line) {
            line.finish();
        }
    }

    /// The line that says how an action ended, in place of its live line.
    fn action_ended(&self, action: &ActionRef, mark: String, text: &str) {
        self.ended(&action.story_id);
        self.printer.info(format!(
            "{mark} {} {}: {text}",
            action.action_type,
            self.printer.palette().id(&action.slug)
        ));
    }

    /// Updates the story's line; its slug, for the log line (the id when it is not running).
    fn progressed(&self, story_id: &StoryId, change: impl FnOnce(&mut Running)) -> String {
        match self.state().running.get_mut(story_id) {
            Some(running) => {
                change(running);
                running.refresh();
                running.slug.to_string()
            }
            None => story_id.to_string(),
        }
    }
}

/// One story that needs a person, in the run's summary: what to read and what to run.
fn summarise_attention(printer: &Printer, story: &Attention) {
    let p = printer.palette();
    let note = story
        .next
        .note
        .as_deref()
        .map_or(String::new(), |note| format!("  ({note})"));
    printer.out(format!(
        "  {} ({}) {}",
        p.id(&story.slug),
        story.title,
        story.why
    ));
    printer.out(format!("    read: {}", story.next.read));
    printer.out(format!("    run:  {}{note}", p.accent(&story.next.command)));
}

impl RunRenderer for RunDisplay {
    fn begin(&self, concurrency: usize) {
        self.state().parallel = concurrency > 1;
    }

    fn render(&self, event: &RunEvent) {
        let printer = &self.printer;
        if printer.is_json() {
            if !event.is_progress() || printer.verbosity() >= Verbosity::Verbose {
                printer.json_line(&event.to_json());
            }
            return;
        }
        let p = printer.palette();
        match event {
            RunEvent::ActionStarted { action, detail, .. } => {
                self.started(action, detail.as_deref())
            }
            RunEvent::ActionCompleted {
                action, summary, ..
            } => self.action_ended(action, p.ok("✓"), summary),
            RunEvent::ActionFailed { action, error, .. } => {
                // A failure is shown even with -q: nothing else would say why the run exits 1.
                self.ended(&action.story_id);
                printer.problem(format!(
                    "{} {} {}: {error}",
                    p.error("✗"),
                    action.action_type,
                    p.id(&action.slug)
                ));
            }
            RunEvent::ActionStopped { action, reason, .. } => {
                self.action_ended(action, p.warn("■"), reason)
            }
            RunEvent::ReworkStarted {
                slug,
                iteration,
                limit,
                target,
                ..
            } => printer.detail(format!(
                "  rework of {slug}: iteration {iteration}/{limit}, back to {}",
                target.name()
            )),
            RunEvent::StoryBlocked {
                story_id,
                slug,
                reason,
                ..
            } => {
                self.ended(story_id);
                printer.problem(format!("{} {} blocked: {reason}", p.warn("⛔"), p.id(slug)))
            }
            RunEvent::StoryWaiting {
                story_id,
                slug,
                reason,
            } => {
                self.ended(story_id);
                printer.info(format!("{} {} {reason}", p.warn("⏸"), p.id(slug)))
            }
            // The action's own end says where the work went; this adds the commit with -v.
            RunEvent::StoryMerged {
                slug, commit, base, ..
            } => printer.detail(format!("  {slug} merged into {base} as {commit}")),
            RunEvent::GateDecision {
                slug,
                phase,
                attempt,
                decision,
                ..
            } => printer.detail(format!(
                "  {phase} gate for {slug}, attempt {attempt}: {}",
                decision.lines().next().unwrap_or("")
            )),
            RunEvent::ReviewDecided {
                slug,
                decision,
                feedback,
                blockers,
                ..
            } => printer.detail(format!(
                "  review of {slug}: {decision} ({blockers} blocker(s)): {feedback}"
            )),
            RunEvent::ToolCall {
                story_id,
                agent,
                name,
                is_error,
            } => {
                let slug = self.progressed(story_id, |r| r.last_tool = Some(name.clone()));
                let failed = if *is_error { " (error)" } else { "" };
                printer.detail(format!("  {slug} {agent}: {name}{failed}"));
            }
            RunEvent::Usage {
                story_id, tokens, ..
            } => {
                self.progressed(story_id, |r| r.tokens += tokens.total);
            }
            RunEvent::Warning { message, .. } => printer.warn(message),
            RunEvent::Notice { message, .. } => printer.info(message),
            RunEvent::Claim {
                story_id,
                change,
                detail,
            } => {
                use crate::protocol::ClaimChange;
                let line = format!("{story_id} {}: {detail}", change.name().replace('_', " "));
                match change {
                    ClaimChange::Claimed | ClaimChange::Released => printer.detail(line),
                    ClaimChange::TakenOver | ClaimChange::Lost => printer.warn(line),
                }
            }
            RunEvent::RunFinished {
                message, attention, ..
            } => {
                // An interrupted run ends with actions that never reported their end.
                let left: Vec<Running> = self.state().running.drain().map(|(_, r)| r).collect();
                for line in left.into_iter().filter_map(|r| r.line) {
                    line.finish();
                }
                // The summary is the run's result: stdout, so `run --auto > night.log` keeps it.
                printer.out(message);
                for story in attention {
                    summarise_attention(printer, story);
                }
            }
            // The journal's first line, and what a later version adds: nothing to show.
            RunEvent::RunStarted { .. } | RunEvent::Unknown => {}
        }
    }
}
