//! What the agents tell the run about every model call, so budgets hold across parallel
//! stories (docs/design.md §14): a call is admitted before it is sent and counted as soon as it is
//! answered, so stories together overshoot a limit by at most the calls already in flight.

use std::sync::Arc;

use crate::board::records::Usage;
use crate::board::StoryId;

/// Why the meter refused a model call before it was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The story reached its own budget (`key`, `budget.storyTokens` or `budget.storyUsd`):
    /// it moves to blocked/ with this reason.
    Story { reason: String, key: &'static str },
    /// The run reached its budget: the action stops, the story stays as it is.
    Run(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Story { reason, .. } | Refusal::Run(reason) => f.write_str(reason),
        }
    }
}

/// The run's view of spending, shared by every agent of the run.
pub trait CallMeter: Send + Sync {
    /// Whether the story may send one more request, whose prompt is about `prompt_tokens`
    /// long; the refusal says why. Admitted, the most tokens its reply may take under the
    /// budgets (`None` when none limits it).
    fn admit(&self, story_id: &StoryId, prompt_tokens: u64) -> Result<Option<u64>, Refusal>;
    /// One answered call and what it cost.
    fn answered(&self, story_id: &StoryId, usage: &Usage);
}

/// A meter bound to the story whose agent makes the calls.
#[derive(Clone)]
pub struct StoryMeter {
    meter: Arc<dyn CallMeter>,
    story_id: StoryId,
}

impl StoryMeter {
    pub fn new(meter: Arc<dyn CallMeter>, story_id: &StoryId) -> Self {
        Self {
            meter,
            story_id: StoryId::from(story_id),
        }
    }

    pub fn admit(&self, prompt_tokens: u64) -> Result<Option<u64>, Refusal> {
        self.meter.admit(&self.story_id, prompt_tokens)
    }

    pub fn answered(&self, usage: &Usage) {
        self.meter.answered(&self.story_id, usage);
    }
}

impl std::fmt::Debug for StoryMeter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoryMeter")
            .field("story_id", &self.story_id)
            .finish_non_exhaustive()
    }
}
