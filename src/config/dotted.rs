//! Dotted keys (`refinement.maxIterations`): how `config <key> [value]` reads and writes one
//! value of the JSON document.

use serde_json::{Map, Value};

/// Looks up a dotted key (`refinement.maxIterations`) in a JSON document.
pub fn get_dotted<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.').try_fold(value, |node, part| node.get(part))
}

/// Sets a dotted key in the user's config document, creating objects on the way.
pub fn set_dotted(document: &mut Value, key: &str, new_value: Value) -> Result<(), String> {
    let parts: Vec<&str> = key.split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(format!("`{key}` is not a valid dotted key"));
    }
    let mut node = document;
    for part in &parts[..parts.len() - 1] {
        let object = node
            .as_object_mut()
            .ok_or_else(|| format!("`{key}`: `{part}` is inside a value that is not an object"))?;
        node = object
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let object = node
        .as_object_mut()
        .ok_or_else(|| format!("`{key}`: the parent is not an object"))?;
    object.insert(parts[parts.len() - 1].to_string(), new_value);
    Ok(())
}

/// Reads a command-line value: JSON when it parses as JSON, a plain string otherwise.
pub fn parse_cli_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}
