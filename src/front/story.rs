//! One story as `details --json` and the MCP tool `get_story` show it, and finding it by what a
//! person or a caller names it with.

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::board::{lookup, store, Board, Story};
use crate::error::Result;

/// The story `query` names (id, slug or a unique prefix of either), read whole from its file.
pub(crate) fn find(board_dir: &Path, query: &str) -> Result<Story> {
    let board = Board::load(board_dir)?;
    let found = lookup::find_on_board(&board, query)?;
    store::locate(board_dir, found.id(), Some(&found.path))
}

/// The story as `details --json` shows it: every frontmatter key, where it is, and its
/// sections.
pub(crate) fn story_json(story: &Story) -> Result<Value> {
    let mapping = story
        .frontmatter()
        .to_mapping()
        .map_err(|e| crate::Error::StoryParse {
            path: story.path.clone(),
            line: e.line + 2,
            message: e.message,
        })?;
    let mut object = match serde_json::to_value(&mapping) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    };
    object.insert("status".into(), story.column.name().into());
    object.insert("slug".into(), story.slug.as_str().into());
    object.insert("path".into(), json!(story.path));
    let sections: Map<String, Value> = crate::board::sections::all(story.body())
        .into_iter()
        .map(|(name, content)| (name, Value::String(content)))
        .collect();
    object.insert("sections".into(), Value::Object(sections));
    Ok(Value::Object(object))
}
