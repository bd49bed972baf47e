//! The board: story files in column folders, read and written without losing hand edits.

pub(crate) mod board_store;
mod commit;
mod disk;
pub mod frontmatter;
pub(crate) mod ids;
mod lines;
pub mod lookup;
pub(crate) mod merge;
pub(crate) mod meta;
mod nesting;
pub(crate) mod reader;
pub(crate) mod records;
mod render;
pub(crate) mod review;
pub mod sections;
mod simple_value;
pub(crate) mod store;
pub(crate) mod story;
pub(crate) mod story_file;
pub(crate) mod summary;
pub(crate) mod swap;
pub mod validate;
mod vocabulary;
pub(crate) mod watch;

pub use crate::names::{Slug, StoryId};
pub use store::Board;
pub use story::{Story, StoryError};
pub use summary::{Listed, StorySummary};
pub use vocabulary::{today, Column, Phase, PhaseSet, StoryType, LOCK_FILE, RUNS_DIR};
