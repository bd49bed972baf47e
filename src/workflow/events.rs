//! What a run reports while it works: one typed stream of [`RunEvent`]s. The workflow only
//! emits them; a [`RunRenderer`] that the command line wires up (see `crate::output`) draws
//! them for a person or writes them as JSON lines, and the run journal records them.

use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use super::assessor::Action;
use crate::agents::meter::CallMeter;
use crate::agents::transcript::ToolCallObserver;
use crate::board::records::Usage;
use crate::board::Phase;

#[derive(Debug, Clone)]
pub enum RunEvent {
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
    /// A rework action began: which iteration of how many, and the phase the work goes back to.
    ReworkStarted {
        action: Action,
        iteration: u32,
        limit: u32,
        target: Phase,
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
    /// An agent ran one of its tools.
    ToolCall {
        story_id: String,
        agent: String,
        name: String,
        is_error: bool,
    },
    /// One answered model call and what it cost (priced when the model has a price).
    Usage {
        story_id: String,
        usage: Usage,
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

impl RunEvent {
    /// The story the event is about; `None` for the whole run.
    pub fn story_id(&self) -> Option<&str> {
        match self {
            RunEvent::ActionStarted { action, .. }
            | RunEvent::ActionCompleted { action, .. }
            | RunEvent::ActionFailed { action, .. }
            | RunEvent::ActionStopped { action, .. }
            | RunEvent::ReworkStarted { action, .. } => Some(&action.story_id),
            RunEvent::StoryBlocked { story_id, .. }
            | RunEvent::StoryWaiting { story_id, .. }
            | RunEvent::GateDecision { story_id, .. }
            | RunEvent::ToolCall { story_id, .. }
            | RunEvent::Usage { story_id, .. } => Some(story_id),
            RunEvent::Warning { story_id, .. } => story_id.as_deref(),
            RunEvent::RunFinished { .. } => None,
        }
    }

    /// Progress within an action (a tool call, a model call's usage): many per action, shown
    /// on the live display and, with `-v`, as JSON lines; the journal leaves them to the
    /// transcripts and the action's totals.
    pub fn is_progress(&self) -> bool {
        matches!(self, RunEvent::ToolCall { .. } | RunEvent::Usage { .. })
    }

    /// The event as a `run --json` line and a journal entry.
    pub fn to_json(&self) -> Value {
        let action_json =
            |a: &Action| json!({ "type": a.action_type, "storyId": a.story_id, "slug": a.slug });
        match self {
            RunEvent::ActionStarted { action, detail } => json!({
                "event": "action_started", "storyId": action.story_id, "action": action_json(action), "detail": detail,
            }),
            RunEvent::ActionCompleted { action, summary } => json!({
                "event": "action_completed", "storyId": action.story_id, "action": action_json(action), "summary": summary,
            }),
            RunEvent::ActionFailed { action, error } => json!({
                "event": "action_failed", "storyId": action.story_id, "action": action_json(action), "error": error,
            }),
            RunEvent::ActionStopped { action, reason } => json!({
                "event": "action_stopped", "storyId": action.story_id, "action": action_json(action), "reason": reason,
            }),
            RunEvent::ReworkStarted {
                action,
                iteration,
                limit,
                target,
            } => json!({
                "event": "rework_started", "storyId": action.story_id, "slug": action.slug,
                "iteration": iteration, "limit": limit, "target": target.name(),
            }),
            RunEvent::StoryBlocked {
                story_id,
                slug,
                reason,
            } => json!({
                "event": "story_blocked", "storyId": story_id, "slug": slug, "reason": reason,
            }),
            RunEvent::StoryWaiting {
                story_id,
                slug,
                reason,
            } => json!({
                "event": "story_waiting", "storyId": story_id, "slug": slug, "reason": reason,
            }),
            RunEvent::GateDecision {
                story_id,
                slug,
                phase,
                attempt,
                decision,
            } => json!({
                "event": "gate_decision", "storyId": story_id, "slug": slug, "phase": phase, "attempt": attempt, "decision": decision,
            }),
            RunEvent::ToolCall {
                story_id,
                agent,
                name,
                is_error,
            } => json!({
                "event": "tool_call", "storyId": story_id, "agent": agent, "name": name, "isError": is_error,
            }),
            RunEvent::Usage { story_id, usage } => json!({
                "event": "usage", "storyId": story_id,
                "tokens": {"prompt": usage.prompt_tokens, "completion": usage.completion_tokens, "total": usage.tokens()},
                "costUsd": usage.cost_usd,
            }),
            RunEvent::Warning { story_id, message } => json!({
                "event": "warning", "storyId": story_id, "message": message,
            }),
            RunEvent::RunFinished {
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

/// Draws or writes the events of a run; the command line picks one (`crate::output`).
pub trait RunRenderer: Send + Sync {
    /// The run is about to start actions, up to `concurrency` stories at once.
    fn begin(&self, concurrency: usize);
    fn render(&self, event: &RunEvent);
}

/// A renderer that shows nothing, for runs nobody watches (library tests).
struct Unseen;

impl RunRenderer for Unseen {
    fn begin(&self, _concurrency: usize) {}
    fn render(&self, _event: &RunEvent) {}
}

/// Keeps a record of a run's events: the run journal (SPEC §14, `journal.rs`).
pub trait EventRecord: Send + Sync + std::fmt::Debug {
    fn append(&self, event: &RunEvent);
}

/// Where the workflow emits its events: the renderer, and the run's journal once it has one.
/// Clones share both.
#[derive(Clone)]
pub struct EventSink {
    renderer: Arc<dyn RunRenderer>,
    journal: Arc<OnceLock<Arc<dyn EventRecord>>>,
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("journal", &self.journal.get())
            .finish_non_exhaustive()
    }
}

impl EventSink {
    pub fn new(renderer: Arc<dyn RunRenderer>) -> Self {
        Self {
            renderer,
            journal: Arc::new(OnceLock::new()),
        }
    }

    /// A sink whose events nobody sees.
    pub fn unseen() -> Self {
        Self::new(Arc::new(Unseen))
    }

    /// Every event from now on also goes to `journal` (SPEC §14), in every clone of this sink.
    pub fn attach_journal(&self, journal: Arc<dyn EventRecord>) {
        let _ = self.journal.set(journal);
    }

    /// Tells the renderer how many stories may run at once.
    pub fn begin(&self, concurrency: usize) {
        self.renderer.begin(concurrency);
    }

    pub fn emit(&self, event: RunEvent) {
        if let Some(journal) = self.journal.get() {
            if !event.is_progress() {
                journal.append(&event);
            }
        }
        self.renderer.render(&event);
    }

    /// The tool calls of `story_id`'s agents as events.
    pub fn tool_calls_of(&self, story_id: &str) -> Arc<dyn ToolCallObserver> {
        Arc::new(StoryToolCalls {
            events: self.clone(),
            story_id: story_id.to_string(),
        })
    }
}

struct StoryToolCalls {
    events: EventSink,
    story_id: String,
}

impl ToolCallObserver for StoryToolCalls {
    fn tool_called(&self, agent: &str, name: &str, is_error: bool) {
        self.events.emit(RunEvent::ToolCall {
            story_id: self.story_id.clone(),
            agent: agent.to_string(),
            name: name.to_string(),
            is_error,
        });
    }
}

/// The run's meter, reporting every answered model call as a [`RunEvent::Usage`].
pub struct ReportingMeter<M> {
    meter: Arc<M>,
    events: EventSink,
    price: Option<crate::config::Price>,
}

impl<M> ReportingMeter<M> {
    pub fn new(meter: Arc<M>, events: EventSink, price: Option<crate::config::Price>) -> Self {
        Self {
            meter,
            events,
            price,
        }
    }
}

impl<M: CallMeter> CallMeter for ReportingMeter<M> {
    fn admit(&self, story_id: &str) -> Result<(), String> {
        self.meter.admit(story_id)
    }

    fn answered(&self, story_id: &str, usage: &Usage) {
        self.meter.answered(story_id, usage);
        self.events.emit(RunEvent::Usage {
            story_id: story_id.to_string(),
            usage: super::budget::priced(self.price, *usage),
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;
    use crate::agents::transcript::Transcript;
    use crate::config::Config;
    use crate::workflow::budget::Spending;

    /// Keeps every event it is shown, as JSON.
    #[derive(Default)]
    struct Recorded(Mutex<Vec<Value>>);

    impl RunRenderer for Recorded {
        fn begin(&self, _concurrency: usize) {}
        fn render(&self, event: &RunEvent) {
            self.0.lock().unwrap().push(event.to_json());
        }
    }

    fn recorded_sink() -> (EventSink, Arc<Recorded>) {
        let recorded = Arc::new(Recorded::default());
        (EventSink::new(recorded.clone()), recorded)
    }

    #[test]
    fn tool_calls_recorded_in_a_transcript_become_events_of_its_story() {
        let (events, recorded) = recorded_sink();
        let transcript = Transcript::disabled()
            .observed_by(events.tool_calls_of("story-1"))
            .for_agent("code-review");
        transcript.record_tool_call(
            "call-1",
            "read_file",
            "{}",
            "Error: no such file",
            true,
            crate::agents::text_calls::CallForm::Native,
        );
        transcript.record("response", json!({}));
        assert_eq!(
            *recorded.0.lock().unwrap(),
            [
                json!({"event": "tool_call", "storyId": "story-1", "agent": "code-review",
                    "name": "read_file", "isError": true})
            ]
        );
    }

    #[test]
    fn every_answered_call_is_counted_and_reported_priced() {
        let user = json!({
            "llm": {"model": "m"},
            "pricing": {"m": {"inputPerMTok": 1.0, "outputPerMTok": 2.0}},
        });
        let config = Config::from_value(
            crate::config::merged_value(&user),
            std::path::Path::new("cfg.json"),
        )
        .unwrap();
        let spending = Arc::new(Spending::new(&config));
        let (events, recorded) = recorded_sink();
        let meter = ReportingMeter::new(Arc::clone(&spending), events, spending.price());
        let call = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            requests: 1,
            cost_usd: None,
        };
        meter.answered("story-1", &call);
        assert_eq!(spending.run_usage().tokens(), 1_500_000);
        assert_eq!(
            *recorded.0.lock().unwrap(),
            [json!({"event": "usage", "storyId": "story-1",
                    "tokens": {"prompt": 1_000_000, "completion": 500_000, "total": 1_500_000},
                    "costUsd": 2.0})]
        );
    }

    /// A journal that keeps the kinds of the events it was given.
    #[derive(Debug, Default)]
    struct KeptKinds(Mutex<Vec<String>>);

    impl EventRecord for KeptKinds {
        fn append(&self, event: &RunEvent) {
            let kind = event.to_json()["event"].to_string();
            self.0.lock().unwrap().push(kind);
        }
    }

    #[test]
    fn progress_is_kept_out_of_the_journal() {
        let journal = Arc::new(KeptKinds::default());
        let (events, recorded) = recorded_sink();
        events.attach_journal(Arc::clone(&journal) as Arc<dyn EventRecord>);
        events.emit(RunEvent::Usage {
            story_id: "story-1".into(),
            usage: Usage::default(),
        });
        events.emit(RunEvent::Warning {
            story_id: None,
            message: "careful".into(),
        });
        assert_eq!(*journal.0.lock().unwrap(), ["\"warning\""]);
        assert_eq!(
            recorded.0.lock().unwrap().len(),
            2,
            "the renderer sees both"
        );
    }
}
