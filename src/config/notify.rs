//! `notify.*`: who hears about a run's news, and the kinds of news there are.

use serde::{Deserialize, Serialize};

/// `notify`: who hears about a run's news (a story merged or blocked, a gate waiting for a
/// person, an action failed, the run finished) while nobody watches the terminal.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotifyConfig {
    /// A shell command run for each event, with the event's JSON on its stdin.
    pub command: Option<String>,
    /// A URL that gets each event's JSON as a POST (Slack-style: its `text` is shown as is).
    pub webhook: Option<String>,
    /// Seconds one command or one POST may take before it is given up.
    pub timeout_seconds: u64,
    /// The events that notify; the default is all of them.
    pub events: Vec<NoticeKind>,
}

/// The news a notifier can be told about; `notify.events` lists the ones it wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// A story's work reached its base branch.
    StoryMerged,
    /// A story moved to blocked/ (a rejection, the circuit breaker, a budget, no progress).
    StoryBlocked,
    /// A human review gate holds a phase's output until someone decides.
    GateWaiting,
    /// An action failed: the story kept its state and has `last_error`.
    ActionFailed,
    /// A run ended, whatever its outcome.
    RunFinished,
}

impl NoticeKind {
    pub fn name(self) -> &'static str {
        match self {
            NoticeKind::StoryMerged => "story_merged",
            NoticeKind::StoryBlocked => "story_blocked",
            NoticeKind::GateWaiting => "gate_waiting",
            NoticeKind::ActionFailed => "action_failed",
            NoticeKind::RunFinished => "run_finished",
        }
    }
}
