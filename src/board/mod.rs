//! The board: story files in column folders, read and written without losing hand edits.

pub mod frontmatter;
pub mod ids;
pub mod lookup;
pub mod records;
pub mod sections;
pub mod store;
pub mod story;
pub mod validate;

pub use store::Board;
pub use story::{Story, StoryError};

/// The phases a story passes through before review, in order. Refine's completion is the move
/// out of backlog; the others have a `<phase>_complete` flag.
pub const PHASES: [&str; 4] = ["refine", "research", "plan", "implement"];

/// The phase right before `phase` in the pipeline, if any.
pub fn predecessor(phase: &str) -> Option<&'static str> {
    let index = PHASES.iter().position(|p| *p == phase)?;
    index.checked_sub(1).map(|i| PHASES[i])
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
