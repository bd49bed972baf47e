//! Editing a story's frontmatter by hand, whoever asks (the MCP tool `edit_story`, the page's
//! edit form): the keys a person may change, checked like `validate` would and written the way
//! every story write is (atomic, keeping hand edits and every other key).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::board::board_store::BoardStore;
use crate::board::validate::dependency_cycles;
use crate::board::{lookup, Board, StoryType};
use crate::config::Project;
use crate::error::{Error, Result};

/// The keys a person may edit, and what each takes.
const EDITABLE: [(&str, &str); 8] = [
    ("title", "one non-empty line"),
    ("priority", "an integer (lower runs first)"),
    ("type", "feature, bug, chore or spike"),
    ("labels", "a list of strings"),
    ("assignee", "a string, or null to remove it"),
    (
        "estimated_effort",
        "small, medium or large, or null to remove it",
    ),
    ("depends_on", "a list of story ids or slugs"),
    (
        "max_refinement_attempts",
        "an integer of at least 1, or null to remove it",
    ),
];

/// What one key becomes.
enum Change {
    Set(serde_norway::Value),
    Remove,
}

/// Applies `changes` to the story `query` names; returns its id.
pub(crate) fn apply(
    project: &Project,
    query: &str,
    changes: &BTreeMap<String, Value>,
) -> Result<String> {
    if changes.is_empty() {
        return Err(Error::Usage(
            "nothing to change: `set` names no key".to_string(),
        ));
    }
    let board_dir = project.board_dir();
    let board = Board::load(&board_dir)?;
    let story = lookup::find_on_board(&board, query)?;
    let id = story.id().to_string();
    let mut planned = Vec::new();
    for (key, value) in changes {
        let change = check(key, value, &board, &id)?;
        planned.push((key.clone(), change));
    }
    let store = BoardStore::unloaded(&board_dir);
    store.remember(story);
    store.update(&id, |story| {
        for (key, change) in planned {
            match change {
                Change::Set(value) => story.set(&key, &value),
                Change::Remove => story.remove(&key),
            }
        }
        story.set("updated", &crate::board::today());
        Ok(())
    })?;
    Ok(id)
}

/// The change `value` makes to `key`, or an error naming the key and what it takes.
fn check(key: &str, value: &Value, board: &Board, id: &str) -> Result<Change> {
    let Some((_, takes)) = EDITABLE.iter().find(|(name, _)| *name == key) else {
        let keys: Vec<&str> = EDITABLE.iter().map(|(name, _)| *name).collect();
        return Err(Error::Usage(format!(
            "key `{key}` is not one a person edits here; editable keys: {}",
            keys.join(", ")
        )));
    };
    let wrong = || Error::Usage(format!("key `{key}`: takes {takes}, not {value}"));
    let yaml = |v: &Value| serde_norway::to_value(v).map_err(|_| wrong());
    let optional = matches!(
        key,
        "assignee" | "estimated_effort" | "max_refinement_attempts"
    );
    if value.is_null() {
        return if optional {
            Ok(Change::Remove)
        } else {
            Err(wrong())
        };
    }
    let ok = match key {
        // One line without control characters, as `add` takes it (docs/design.md §22).
        "title" => value
            .as_str()
            .is_some_and(|t| !t.trim().is_empty() && !t.chars().any(char::is_control)),
        "priority" => value.as_i64().is_some(),
        "type" => value
            .as_str()
            .is_some_and(|t| StoryType::from(t).is_known()),
        "labels" => value
            .as_array()
            .is_some_and(|items| items.iter().all(Value::is_string)),
        "assignee" => value.as_str().is_some_and(|a| !a.trim().is_empty()),
        "estimated_effort" => value
            .as_str()
            .is_some_and(|e| matches!(e, "small" | "medium" | "large")),
        "max_refinement_attempts" => value.as_u64().is_some_and(|n| n >= 1),
        "depends_on" => return dependencies(value, board, id).map(Change::Set),
        _ => false,
    };
    if !ok {
        return Err(wrong());
    }
    let value = match key {
        "title" | "assignee" => {
            Value::String(value.as_str().unwrap_or_default().trim().to_string())
        }
        // A label typed twice is one label, as `add` keeps it.
        "labels" => {
            let mut labels: Vec<Value> = Vec::new();
            for label in value.as_array().into_iter().flatten() {
                if !labels.contains(label) {
                    labels.push(label.clone());
                }
            }
            Value::Array(labels)
        }
        _ => value.clone(),
    };
    Ok(Change::Set(yaml(&value)?))
}

/// `depends_on` as ids: every story named must exist, and none may lead back to this one.
fn dependencies(value: &Value, board: &Board, id: &str) -> Result<serde_norway::Value> {
    let wrong = || {
        Error::Usage(format!(
            "key `depends_on`: takes a list of story ids or slugs, not {value}"
        ))
    };
    let names = value.as_array().ok_or_else(wrong)?;
    let mut ids = Vec::new();
    for name in names {
        let name = name.as_str().ok_or_else(wrong)?;
        let dependency = lookup::find_on_board(board, name)?.id().clone();
        if dependency == id {
            return Err(Error::Usage(
                "key `depends_on`: a story cannot depend on itself".to_string(),
            ));
        }
        if !ids.contains(&dependency) {
            ids.push(dependency);
        }
    }
    let mut after = board.clone();
    if let Some(story) = after.stories.iter_mut().find(|s| s.id() == id) {
        story.meta.depends_on = ids.clone();
    }
    if let Some(cycle) = dependency_cycles(&after).into_iter().next() {
        return Err(Error::Usage(format!(
            "key `depends_on`: that makes a dependency cycle {}",
            cycle.join(" -> ")
        )));
    }
    serde_norway::to_value(&ids).map_err(|_| wrong())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_editable_key_takes_its_own_kind_of_value() {
        let board = Board::default();
        let set = |key: &str, value: Value| check(key, &value, &board, "story-1");
        for (key, value) in [
            ("title", json!("A better title")),
            ("priority", json!(-5)),
            ("type", json!("spike")),
            ("labels", json!(["ui", "export"])),
            ("assignee", json!("ada")),
            ("estimated_effort", json!("large")),
            ("max_refinement_attempts", json!(2)),
            ("depends_on", json!([])),
        ] {
            assert!(
                matches!(set(key, value.clone()), Ok(Change::Set(_))),
                "{key}: {value}"
            );
        }
        for key in ["assignee", "estimated_effort", "max_refinement_attempts"] {
            assert!(matches!(set(key, Value::Null), Ok(Change::Remove)), "{key}");
        }
        for (key, value) in [
            ("title", json!("")),
            ("title", json!("two\nlines")),
            ("title", Value::Null),
            ("priority", json!("high")),
            ("type", json!("epic")),
            ("labels", json!("ui")),
            ("estimated_effort", json!("huge")),
            ("max_refinement_attempts", json!(0)),
            ("depends_on", json!("story-2")),
            ("status", json!("done")),
            ("research_complete", json!(true)),
            ("id", json!("story-9")),
        ] {
            let err = set(key, value.clone())
                .err()
                .unwrap_or_else(|| panic!("{key}: {value}"));
            assert!(err.to_string().contains(key), "{key}: {err}");
            assert_eq!(err.exit_status().code(), 2, "{key}");
        }
    }

    #[test]
    fn a_label_given_twice_is_kept_once_in_its_first_place() {
        let board = Board::default();
        let Ok(Change::Set(labels)) = check(
            "labels",
            &json!(["money", "billing", "money"]),
            &board,
            "story-1",
        ) else {
            panic!("labels are a list of strings");
        };
        let labels: Vec<String> = serde_norway::from_value(labels).unwrap();
        assert_eq!(labels, ["money", "billing"]);
    }
}
