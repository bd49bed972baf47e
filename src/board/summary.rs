//! What board-wide reads keep of each story: a [`StorySummary`], not the story's text.
//!
//! `status`, run planning and a run's view of the board need each story's place, its parsed
//! keys and what the assessor reads of its records. Keeping only that holds 10,000 stories in a
//! few MiB; a command that shows or writes one story reads that file in full.

use std::path::{Path, PathBuf};

use super::meta::StoryMeta;
use super::story::{Progress, Story, StoryError};
use super::vocabulary::Column;
use crate::names::Slug;

/// A story without its text: where it is, its keys, and its [`Progress`].
#[derive(Debug, Clone)]
pub struct StorySummary {
    pub path: PathBuf,
    pub column: Column,
    pub slug: Slug,
    pub meta: StoryMeta,
    /// What the assessor reads of the records, or why they do not parse (the assessor says so
    /// where it would have used them).
    pub progress: Result<Progress, StoryError>,
}

impl StorySummary {
    pub fn id(&self) -> &crate::names::StoryId {
        &self.meta.id
    }
}

impl From<&Story> for StorySummary {
    fn from(story: &Story) -> Self {
        StorySummary {
            path: story.path.clone(),
            column: story.column,
            slug: story.slug.clone(),
            meta: story.meta.clone(),
            progress: story.progress(),
        }
    }
}

impl From<Story> for StorySummary {
    fn from(story: Story) -> Self {
        let progress = story.progress();
        StorySummary {
            path: story.path,
            column: story.column,
            slug: story.slug,
            meta: story.meta,
            progress,
        }
    }
}

/// What every board-wide read holds of a story, whole ([`Story`]) or summarised
/// ([`StorySummary`]): enough to list, find and order stories.
pub trait Listed {
    fn id(&self) -> &str;
    fn slug(&self) -> &str;
    fn path(&self) -> &Path;
    fn column(&self) -> Column;
    fn meta(&self) -> &StoryMeta;
}

/// Both kinds keep these fields under the same names.
macro_rules! listed {
    ($kind:ty) => {
        impl Listed for $kind {
            fn id(&self) -> &str {
                &self.meta.id
            }
            fn slug(&self) -> &str {
                &self.slug
            }
            fn path(&self) -> &Path {
                &self.path
            }
            fn column(&self) -> Column {
                self.column
            }
            fn meta(&self) -> &StoryMeta {
                &self.meta
            }
        }
    };
}

listed!(Story);
listed!(StorySummary);
