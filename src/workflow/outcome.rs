//! How one action ended, and what that means for the rest of the run.

/// Why a story was moved to blocked/, which decides whether the run goes on (docs/design.md §7,
/// §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Circuit breaker with escalation `manual`: stop new work, exit 3.
    Manual,
    /// Circuit breaker with escalation `error`: stop, exit 1.
    Error,
    /// Circuit breaker with escalation `skip`: go on with other stories.
    Skip,
    /// A gate's REJECT: go on with other stories, exit 3 at the end.
    Rejected,
    /// The story reached `budget.storyTokens` or `budget.storyUsd`, the key named:
    /// go on with other stories, exit 3 at the end.
    Budget { key: &'static str },
    /// The story repeated itself (docs/design.md §14): go on with other stories, exit 3 at the end.
    NoProgress,
    /// Its work may not be merged (it changes the config or a board, or its history is not the
    /// tool's): go on with other stories, exit 3 at the end.
    Refused,
}

impl Stop {
    /// Why the story is blocked, as the run's events and journal record it.
    pub fn cause(self) -> BlockCause {
        match self {
            Stop::Manual | Stop::Error | Stop::Skip => BlockCause::Breaker,
            Stop::Rejected => BlockCause::Rejected,
            Stop::Budget { key } => BlockCause::Budget {
                key: key.to_string(),
            },
            Stop::NoProgress => BlockCause::NoProgress,
            Stop::Refused => BlockCause::Refused,
        }
    }
}

pub use crate::protocol::BlockCause;

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Completed(String),
    /// The action's agent failed; the story kept its state and has `last_error`.
    Failed(String),
    /// Like `Failed`, for a model server that could not be reached: the run asks the server
    /// whether it is still there before starting anything else (docs/design.md §22).
    ServerLost(String),
    Blocked {
        reason: String,
        stop: Stop,
    },
    /// The story waits for a person (`agentic-sdlc decide`).
    Waiting(String),
    /// The run's budget refused the action's next model call: the action ended early and the
    /// story is as it was, ready for the next run (docs/design.md §14).
    Stopped(String),
}
