//! The board: story files in column folders, read and written without losing hand edits.

pub mod frontmatter;
pub mod ids;
pub mod lookup;
pub mod records;
pub mod review;
pub mod sections;
mod simple_value;
pub mod store;
pub mod story;
pub mod validate;

pub use store::Board;
pub use story::{Story, StoryError};

/// The names of the phases that can carry a review gate, in pipeline order.
pub const PHASES: [&str; 4] = ["refine", "research", "plan", "implement"];

/// A phase that produces output into the story. Refine's completion is the move out of
/// backlog; the others have a `<phase>_complete` flag.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Refine,
    Research,
    Plan,
    Implement,
}

impl Phase {
    pub const ALL: [Phase; 4] = [
        Phase::Refine,
        Phase::Research,
        Phase::Plan,
        Phase::Implement,
    ];

    pub fn name(self) -> &'static str {
        PHASES[self as usize]
    }

    pub fn parse(name: &str) -> Option<Phase> {
        let wanted = name.trim().to_ascii_lowercase();
        Phase::ALL.into_iter().find(|p| p.name() == wanted)
    }

    /// The phase right before this one (refine → research → plan → implement).
    pub fn predecessor(self) -> Option<Phase> {
        (self as usize).checked_sub(1).map(|i| Phase::ALL[i])
    }

    /// The story section the phase writes (refine writes Acceptance Criteria as well).
    pub fn section(self) -> &'static str {
        match self {
            Phase::Refine => "Summary",
            Phase::Research => "Research",
            Phase::Plan => "Implementation Plan",
            Phase::Implement => "Implementation Notes",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A board column; the folder a story file sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Column {
    Backlog,
    Ready,
    InProgress,
    Done,
    Blocked,
}

impl Column {
    pub const ALL: [Column; 5] = [
        Column::Backlog,
        Column::Ready,
        Column::InProgress,
        Column::Done,
        Column::Blocked,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Column::Backlog => "backlog",
            Column::Ready => "ready",
            Column::InProgress => "in-progress",
            Column::Done => "done",
            Column::Blocked => "blocked",
        }
    }

    pub fn parse(name: &str) -> Option<Column> {
        let wanted = name.trim().to_ascii_lowercase().replace('_', "-");
        Column::ALL
            .into_iter()
            .find(|c| c.name() == wanted || (wanted == "inprogress" && *c == Column::InProgress))
    }
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
