//! The board: story files in column folders, read and written without losing hand edits.

pub mod frontmatter;

/// The phases a story passes through, in order. Each has a `<phase>_complete` flag except refine,
/// whose completion is the move out of backlog.
pub const PHASES: [&str; 4] = ["refine", "research", "plan", "implement"];
