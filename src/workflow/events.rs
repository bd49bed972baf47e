//! What a run reports while it works: one typed stream of [`RunEvent`]s. The workflow only
//! emits them; a [`RunRenderer`] that the command line wires up (the output module) draws
//! them for a person or writes them as JSON lines, and the run journal records them.

use std::sync::{Arc, OnceLock};

use super::budget::Spending;
use crate::agents::meter::CallMeter;
use crate::agents::transcript::ToolCallObserver;
use crate::board::board_store::BoardStore;
use crate::board::records::Usage;
use crate::board::StoryId;

pub use crate::protocol::{ActionRef, ClaimChange, RunEvent};

/// Draws or writes the events of a run; the command line picks one from its output module.
pub trait RunRenderer: Send + Sync {
    /// The run is about to start actions, up to `concurrency` stories at once.
    fn begin(&self, concurrency: usize);
    fn render(&self, event: &RunEvent);
}

/// Several renderers shown the same events, in order: the terminal display and the
/// notifiers, say.
pub struct Fanout(pub Vec<Arc<dyn RunRenderer>>);

impl RunRenderer for Fanout {
    fn begin(&self, concurrency: usize) {
        for renderer in &self.0 {
            renderer.begin(concurrency);
        }
    }

    fn render(&self, event: &RunEvent) {
        for renderer in &self.0 {
            renderer.render(event);
        }
    }
}

/// A renderer that shows nothing, for runs nobody watches (library tests).
struct Unseen;

impl RunRenderer for Unseen {
    fn begin(&self, _concurrency: usize) {}
    fn render(&self, _event: &RunEvent) {}
}

/// Keeps a record of a run's events: the run journal (docs/design.md §14, `journal.rs`).
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

    /// Every event from now on also goes to `journal` (docs/design.md §14), in every clone of this
    /// sink.
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
    pub fn tool_calls_of(&self, story_id: &StoryId) -> Arc<dyn ToolCallObserver> {
        Arc::new(StoryToolCalls {
            events: self.clone(),
            story_id: StoryId::from(story_id),
        })
    }
}

struct StoryToolCalls {
    events: EventSink,
    story_id: StoryId,
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

/// The run's meter, reporting every answered model call as a [`RunEvent::Usage`] (which the
/// journal keeps) and, with a board, adding it to the story file as it arrives, so that an
/// action interrupted halfway keeps what it spent (docs/design.md §22).
pub struct ReportingMeter {
    meter: Arc<Spending>,
    events: EventSink,
    board: Option<Arc<BoardStore>>,
}

impl ReportingMeter {
    pub fn new(meter: Arc<Spending>, events: EventSink) -> Self {
        Self {
            meter,
            events,
            board: None,
        }
    }

    /// Every answered call is added to its story's `usage` at once.
    pub fn writing_to(mut self, board: Arc<BoardStore>) -> Self {
        self.board = Some(board);
        self
    }
}

impl CallMeter for ReportingMeter {
    fn admit(
        &self,
        story_id: &StoryId,
        prompt_tokens: u64,
    ) -> Result<Option<u64>, crate::agents::meter::Refusal> {
        self.meter.admit(story_id, prompt_tokens)
    }

    fn answered(&self, story_id: &StoryId, usage: &Usage) {
        self.meter.answered(story_id, usage);
        let priced = super::budget::priced(self.meter.price(), *usage);
        if let Some(board) = &self.board {
            match board.update(story_id, |story| Ok(story.add_usage(priced)?)) {
                Ok(_) => self.meter.written(story_id, usage),
                // The action's own account adds it later, as before.
                Err(err) => tracing::debug!("usage of {story_id} not written yet: {err}"),
            }
        }
        let usage = priced;
        self.events.emit(RunEvent::Usage {
            story_id: StoryId::from(story_id),
            tokens: (&usage).into(),
            cost_usd: usage.cost_usd,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{json, Value};

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
            .observed_by(events.tool_calls_of(&StoryId::from("story-1")))
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
        let meter = ReportingMeter::new(Arc::clone(&spending), events);
        let call = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            requests: 1,
            cost_usd: None,
            estimated: false,
        };
        meter.answered(&StoryId::from("story-1"), &call);
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
            tokens: Default::default(),
            cost_usd: None,
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
