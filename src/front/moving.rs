//! Moving a story by hand, as `move` and `unblock` do on the command line and the MCP tools of
//! the same names: the same rules and the same refusals, whoever asks.

use std::path::Path;

use serde::Serialize;

use super::story::find;
use crate::board::{store, Column, Story};
use crate::error::{Error, Result};

/// A story moved, and the column it came from.
pub struct Moved {
    pub story: Story,
    pub from: Column,
}

/// `move --json`, `unblock --json` and the MCP tools' answer.
#[derive(Serialize)]
pub struct MovedView<'a> {
    id: &'a str,
    slug: &'a str,
    from: &'static str,
    to: &'static str,
    path: &'a Path,
}

impl Moved {
    pub fn view(&self) -> MovedView<'_> {
        MovedView {
            id: self.story.id(),
            slug: &self.story.slug,
            from: self.from.name(),
            to: self.story.column.name(),
            path: &self.story.path,
        }
    }
}

/// The column a caller named (any case, `in-progress` or `in_progress`), or a usage error that
/// lists the columns.
pub fn column_named(name: &str) -> Result<Column> {
    Column::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Column::ALL.iter().map(|c| c.name()).collect();
        Error::Usage(format!(
            "unknown column `{}`; use one of {}",
            name.trim(),
            names.join(", ")
        ))
    })
}

/// Moves the story `query` names to `column`; into blocked/ with a reason, out of it without.
pub fn move_story(board_dir: &Path, query: &str, column: Column) -> Result<Moved> {
    let story = find(board_dir, query)?;
    let from = story.column;
    let (story, ()) = store::update(board_dir, story.id(), Some(&story.path), |s| {
        s.set_column(column);
        if column == Column::Blocked {
            if s.meta.blocked_reason.is_none() {
                s.set("blocked_reason", &"Moved to blocked by hand");
            }
        } else {
            s.remove("blocked_reason");
        }
        Ok(())
    })?;
    Ok(Moved { story, from })
}

/// Moves a blocked story back to the column its flags call for; `reset` also sets
/// refinement_count to 0, re-opening a story whose circuit breaker tripped.
pub fn unblock(board_dir: &Path, query: &str, reset: bool) -> Result<Moved> {
    let story = find(board_dir, query)?;
    if story.column != Column::Blocked {
        return Err(Error::ActionFailed(format!(
            "{} is not blocked (it is in {})",
            story.slug, story.column
        )));
    }
    let from = story.column;
    let (story, ()) = store::update(board_dir, story.id(), Some(&story.path), |s| {
        let column = s.resume_column();
        s.set_column(column);
        s.remove("blocked_reason");
        s.remove("last_error");
        if reset {
            s.set("refinement_count", &0);
        }
        Ok(())
    })?;
    Ok(Moved { story, from })
}
