//! The vocabulary that crosses modules and leaves the process, as serde types: the events of a
//! run (what `run --json` prints and the journal records, one per line), the journal's lines,
//! the actions they name, why a story is blocked and who needs a person, and the lines of an
//! agent's transcript that `logs` reads back. The workflow emits
//! them; the terminal display, the journal, `report`, `serve` and the notifiers read them by
//! matching on their variants, never by looking for a key or a word in a string.
//!
//! The JSON of each type is the documented shape (docs/reference.md §8); a change to it is a
//! change of `schemaVersion`.

use serde::{Deserialize, Serialize};

use crate::board::records::{ReviewDecision, Usage};
use crate::board::Phase;
use crate::board::Slug;
use crate::board::StoryId;
use crate::config::Price;
use crate::names::BranchName;

/// The kinds of action the state assessor picks.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case", ascii_case_insensitive)]
pub enum ActionType {
    Refine,
    Research,
    Plan,
    Acceptance,
    Implement,
    Review,
    Rework,
    CreatePr,
    MoveToDone,
}

impl ActionType {
    pub const ALL: &[ActionType] = <ActionType as strum::VariantArray>::VARIANTS;

    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The action that runs a phase.
    pub fn of_phase(phase: Phase) -> ActionType {
        match phase {
            Phase::Refine => ActionType::Refine,
            Phase::Research => ActionType::Research,
            Phase::Plan => ActionType::Plan,
            Phase::Acceptance => ActionType::Acceptance,
            Phase::Implement => ActionType::Implement,
        }
    }

    /// The verb a person reads while the action runs.
    pub fn doing(self) -> &'static str {
        if let Some(phase) = self.phase() {
            return phase.doing();
        }
        match self {
            ActionType::Review => "Reviewing",
            ActionType::Rework => "Reworking",
            ActionType::CreatePr => "Opening a pull request for",
            _ => "Finishing",
        }
    }

    /// The phase this action runs, for the actions that run one.
    pub fn phase(self) -> Option<Phase> {
        Phase::ALL
            .iter()
            .copied()
            .find(|p| ActionType::of_phase(*p) == self)
    }
}

/// An action as events name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionRef {
    #[serde(rename = "type")]
    pub action_type: ActionType,
    pub story_id: StoryId,
    pub slug: Slug,
}

/// Why a story sits in blocked/, which decides what a person does about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BlockCause {
    /// The circuit breaker: as many reworks as allowed were made.
    Breaker,
    /// A phase gate or a person said REJECT.
    Rejected,
    /// The story's budget (`key`: `budget.storyTokens` or `budget.storyUsd`) is spent.
    Budget { key: String },
    /// A retry or rework repeated the attempt before it.
    NoProgress,
    /// Its branch may not be merged: it changes the config or a board, or its history is not
    /// the tool's.
    Refused,
}

/// How a run's hold on a story through the git remote changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimChange {
    /// The story was free; this run holds it now.
    Claimed,
    /// Another run's claim had lapsed; this run replaced it.
    TakenOver,
    /// The story is done, blocked or left for later; others may take it.
    Released,
    /// Another run took the story over (this run's claim lapsed); this run stopped working
    /// on it and kept none of its changes to it.
    Lost,
}

impl ClaimChange {
    pub fn name(self) -> &'static str {
        match self {
            ClaimChange::Claimed => "claimed",
            ClaimChange::TakenOver => "taken_over",
            ClaimChange::Released => "released",
            ClaimChange::Lost => "lost",
        }
    }
}

/// The way on for one story that needs a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NextStep {
    /// What to read first.
    pub read: String,
    /// What must change before the command, when something must.
    pub note: Option<String>,
    /// The one command that moves the story on.
    pub command: String,
}

/// A story that needs a person when a run ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    pub story_id: StoryId,
    pub slug: Slug,
    pub title: String,
    /// Why it waits.
    pub why: String,
    #[serde(flatten)]
    pub next: NextStep,
}

/// The options a run was started with; `--continue` reuses them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOptions {
    pub auto: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<ActionType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_actions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u32>,
    /// `--remote`: the git remote other clones share the board through (docs/design.md §20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

/// The `storyId` of an event about the whole run: always `null`, so that every event line has
/// the key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoStory;

impl Serialize for NoStory {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_none()
    }
}

impl<'de> Deserialize<'de> for NoStory {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<NoStory, D::Error> {
        // Whatever it holds, a run-wide event is about no story.
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| NoStory)
    }
}

/// Tokens as events report them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub prompt: u64,
    pub completion: u64,
    pub total: u64,
}

impl From<&Usage> for Tokens {
    fn from(usage: &Usage) -> Tokens {
        Tokens {
            prompt: usage.prompt_tokens,
            completion: usage.completion_tokens,
            total: usage.tokens(),
        }
    }
}

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "event",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum RunEvent {
    /// The journal's first line: what the run was asked to do, with which model (never shown
    /// on the terminal).
    RunStarted {
        story_id: NoStory,
        run_id: String,
        pid: u32,
        model: String,
        price: Option<Price>,
        options: RunOptions,
    },
    ActionStarted {
        story_id: StoryId,
        action: ActionRef,
        /// The story's title, for the journal and the report.
        #[serde(default)]
        title: String,
        detail: Option<String>,
    },
    ActionCompleted {
        story_id: StoryId,
        action: ActionRef,
        summary: String,
    },
    ActionFailed {
        story_id: StoryId,
        action: ActionRef,
        error: String,
    },
    /// The run's budget stopped the action before its next model call.
    ActionStopped {
        story_id: StoryId,
        action: ActionRef,
        reason: String,
    },
    /// A rework action began: which iteration of how many, and the phase the work goes back to.
    ReworkStarted {
        story_id: StoryId,
        slug: Slug,
        iteration: u32,
        limit: u32,
        target: Phase,
    },
    StoryBlocked {
        story_id: StoryId,
        slug: Slug,
        reason: String,
        /// `None` in journals written before the cause was recorded.
        #[serde(default)]
        cause: Option<BlockCause>,
    },
    /// The story's work reached its base branch as `commit`; the action that did it reports
    /// its own end afterwards.
    StoryMerged {
        story_id: StoryId,
        slug: Slug,
        commit: String,
        base: BranchName,
    },
    StoryWaiting {
        story_id: StoryId,
        slug: Slug,
        reason: String,
    },
    GateDecision {
        story_id: StoryId,
        slug: Slug,
        phase: String,
        attempt: u32,
        /// The decision in the text form gates answer in (`RETRY: <feedback>`).
        decision: String,
    },
    /// A review reached its decision: a rejection sends the work back.
    ReviewDecided {
        story_id: StoryId,
        slug: Slug,
        decision: ReviewDecision,
        /// The first line of what the reviewers found.
        feedback: String,
        blockers: usize,
    },
    /// An agent ran one of its tools.
    ToolCall {
        story_id: StoryId,
        agent: String,
        name: String,
        is_error: bool,
    },
    /// One answered model call and what it cost (priced when the model has a price).
    Usage {
        story_id: StoryId,
        tokens: Tokens,
        cost_usd: Option<f64>,
    },
    Warning {
        story_id: Option<StoryId>,
        message: String,
    },
    /// Something the run settled that a person may want to know, once (the tool protocol it
    /// found for the model, say).
    Notice { story_id: NoStory, message: String },
    /// This run's hold on a story through the remote changed.
    Claim {
        story_id: StoryId,
        change: ClaimChange,
        detail: String,
    },
    RunFinished {
        story_id: NoStory,
        actions: u32,
        failed: u32,
        exit_code: i32,
        message: String,
        /// The stories that need a person now, and what they should do, by slug.
        #[serde(default)]
        attention: Vec<Attention>,
    },
    /// An event of a later version, read from its journal: skipped.
    #[serde(other)]
    Unknown,
}

impl RunEvent {
    /// The story the event is about; `None` for the whole run.
    pub fn story_id(&self) -> Option<&str> {
        match self {
            RunEvent::ActionStarted { story_id, .. }
            | RunEvent::ActionCompleted { story_id, .. }
            | RunEvent::ActionFailed { story_id, .. }
            | RunEvent::ActionStopped { story_id, .. }
            | RunEvent::ReworkStarted { story_id, .. }
            | RunEvent::StoryBlocked { story_id, .. }
            | RunEvent::StoryMerged { story_id, .. }
            | RunEvent::StoryWaiting { story_id, .. }
            | RunEvent::GateDecision { story_id, .. }
            | RunEvent::ReviewDecided { story_id, .. }
            | RunEvent::ToolCall { story_id, .. }
            | RunEvent::Usage { story_id, .. }
            | RunEvent::Claim { story_id, .. } => Some(story_id),
            RunEvent::Warning { story_id, .. } => story_id.as_deref(),
            RunEvent::RunStarted { .. }
            | RunEvent::RunFinished { .. }
            | RunEvent::Notice { .. }
            | RunEvent::Unknown => None,
        }
    }

    /// The action an action event is about.
    pub fn action(&self) -> Option<&ActionRef> {
        match self {
            RunEvent::ActionStarted { action, .. }
            | RunEvent::ActionCompleted { action, .. }
            | RunEvent::ActionFailed { action, .. }
            | RunEvent::ActionStopped { action, .. } => Some(action),
            _ => None,
        }
    }

    /// Progress within an action (a tool call, a model call's usage), and the run's notices:
    /// shown on the terminal and, with `-v`, as JSON lines; the journal leaves them to the
    /// transcripts and the action's totals.
    pub fn is_progress(&self) -> bool {
        matches!(
            self,
            RunEvent::ToolCall { .. } | RunEvent::Usage { .. } | RunEvent::Notice { .. }
        )
    }

    /// The event as a `run --json` line.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// What an action (or the whole run) spent, as the journal records it on the line that ends it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spent {
    pub tokens: Tokens,
    pub requests: u64,
    /// `None` when the model has no price.
    pub cost_usd: Option<f64>,
}

/// One line of a run's journal `<sdlcFolder>/runs/<run-id>.jsonl`: an event of `run --json`,
/// with when it happened and, on the line that ends an action or the run, its start, duration
/// and what it spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JournalLine {
    #[serde(flatten)]
    pub event: RunEvent,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub spent: Option<Spent>,
}

/// One line of a transcript `<board>/logs/<story-id>/<time>-<phase>.jsonl` (docs/design.md
/// §2): when, which agent wrote it (the three reviewers share one file, so each line says whose
/// it is), and what happened. Lines whose `event` is none of [`TranscriptEntry`]'s are notes
/// with free-form data (a re-ask, a check's round, a test run); `logs` shows them as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TranscriptLine {
    pub timestamp: String,
    #[serde(default)]
    pub agent: String,
    #[serde(flatten)]
    pub entry: TranscriptEntry,
}

/// What a transcript line records, by its `event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TranscriptEntry {
    /// A request to the model, with the messages added since the previous one (the first holds
    /// the system prompt and the task) out of `message_count` in all.
    Request {
        turn: u32,
        #[serde(default)]
        message_count: usize,
        #[serde(default)]
        messages: Vec<serde_json::Value>,
        #[serde(default)]
        tools: Vec<String>,
    },
    /// The model's reply to a request.
    Response {
        turn: u32,
        #[serde(default)]
        content: Option<String>,
        #[serde(default)]
        tool_calls: Vec<RequestedCall>,
        #[serde(default)]
        usage: Usage,
        #[serde(default)]
        finish_reason: Option<String>,
    },
    /// A tool call that was run, with its result. `protocol` is `native` or `text` (read from
    /// the reply's text), `form` how it was written.
    ToolCall {
        id: String,
        name: String,
        arguments: String,
        result: String,
        is_error: bool,
        protocol: String,
        form: String,
    },
    /// The model call failed.
    Error {
        error: String,
        #[serde(default)]
        retryable: bool,
    },
    /// The conversation ended.
    Done {
        turns: u32,
        tool_calls: u32,
        usage: Usage,
        #[serde(default)]
        truncated: bool,
        #[serde(default)]
        structured: bool,
        #[serde(default)]
        check_rounds: u32,
    },
    /// A phase's output, as its gate judges it.
    PhaseOutput {
        phase: Phase,
        attempt: u32,
        text: String,
        #[serde(default)]
        truncated: bool,
    },
    /// A phase gate's decision.
    GateDecision {
        attempt: u32,
        decision: String,
        #[serde(default)]
        had_decision_line: bool,
    },
}

/// A tool call as the model asked for it, before it ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_transcript_line_is_flat_json_with_its_event_and_agent() {
        let line = TranscriptLine {
            timestamp: "2026-11-25T10:00:00.000Z".into(),
            agent: "security-review".into(),
            entry: TranscriptEntry::ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: r#"{"path":"a"}"#.into(),
                result: "text".into(),
                is_error: false,
                protocol: "text".into(),
                form: "json_fence".into(),
            },
        };
        let value = serde_json::to_value(&line).unwrap();
        assert_eq!(
            value,
            json!({"timestamp": "2026-11-25T10:00:00.000Z", "agent": "security-review",
                   "event": "tool_call", "id": "c1", "name": "read_file",
                   "arguments": "{\"path\":\"a\"}", "result": "text", "is_error": false,
                   "protocol": "text", "form": "json_fence"})
        );
        assert_eq!(
            serde_json::from_value::<TranscriptLine>(value).unwrap(),
            line
        );
        // A note is no entry: `logs` shows it by its fields instead.
        let note = json!({"timestamp": "t", "agent": "implement", "event": "reask", "reason": "x"});
        assert!(serde_json::from_value::<TranscriptLine>(note).is_err());
    }

    fn action() -> ActionRef {
        ActionRef {
            action_type: ActionType::Implement,
            story_id: "story-a".into(),
            slug: "a".into(),
        }
    }

    #[test]
    fn events_keep_their_documented_shapes() {
        let cases = [
            (
                RunEvent::ActionCompleted {
                    story_id: "story-a".into(),
                    action: action(),
                    summary: "implemented".into(),
                },
                json!({"event": "action_completed", "storyId": "story-a",
                       "action": {"type": "implement", "storyId": "story-a", "slug": "a"},
                       "summary": "implemented"}),
            ),
            (
                RunEvent::StoryBlocked {
                    story_id: "story-a".into(),
                    slug: "a".into(),
                    reason: "Budget: 10 of 5 tokens".into(),
                    cause: Some(BlockCause::Budget {
                        key: "budget.storyTokens".into(),
                    }),
                },
                json!({"event": "story_blocked", "storyId": "story-a", "slug": "a",
                       "reason": "Budget: 10 of 5 tokens",
                       "cause": {"kind": "budget", "key": "budget.storyTokens"}}),
            ),
            (
                RunEvent::Usage {
                    story_id: "story-a".into(),
                    tokens: Tokens {
                        prompt: 10,
                        completion: 2,
                        total: 12,
                    },
                    cost_usd: None,
                },
                json!({"event": "usage", "storyId": "story-a",
                       "tokens": {"prompt": 10, "completion": 2, "total": 12}, "costUsd": null}),
            ),
            (
                RunEvent::RunFinished {
                    story_id: NoStory,
                    actions: 3,
                    failed: 0,
                    exit_code: 0,
                    message: "Done".into(),
                    attention: Vec::new(),
                },
                json!({"event": "run_finished", "storyId": null, "actions": 3, "failed": 0,
                       "exitCode": 0, "message": "Done", "attention": []}),
            ),
        ];
        for (event, shape) in cases {
            assert_eq!(event.to_json(), shape);
            let back: RunEvent = serde_json::from_value(shape).unwrap();
            assert_eq!(back, event);
        }
    }

    #[test]
    fn journal_lines_read_back_and_skip_what_a_later_version_adds() {
        let line = JournalLine {
            event: RunEvent::ActionFailed {
                story_id: "story-a".into(),
                action: action(),
                error: "boom".into(),
            },
            timestamp: "2026-11-25T10:00:01.000Z".into(),
            started_at: Some("2026-11-25T10:00:00.000Z".into()),
            duration_ms: Some(1000),
            spent: Some(Spent {
                tokens: Tokens {
                    prompt: 1,
                    completion: 1,
                    total: 2,
                },
                requests: 1,
                cost_usd: Some(0.5),
            }),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert_eq!(serde_json::from_str::<JournalLine>(&text).unwrap(), line);
        let later: JournalLine = serde_json::from_str(
            r#"{"event":"something_new","storyId":"x","timestamp":"t","extra":1}"#,
        )
        .unwrap();
        assert_eq!(later.event, RunEvent::Unknown);
    }
}
