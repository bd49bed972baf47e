//! docs/reference.md §4 shows the config's defaults; they are generated from the one source,
//! [`default_value`] and the optional keys merged over it, and these tests fail when the page
//! and the code part. `AGENTIC_SDLC_BLESS=1 cargo test --lib config::reference` writes the page
//! anew from the code instead of failing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::*;

fn reference_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md")
}

fn blessing() -> bool {
    std::env::var_os("AGENTIC_SDLC_BLESS").is_some_and(|v| v == "1")
}

/// A value as one line of JSON with a space after each comma and colon, as the page writes it.
fn compact(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(compact).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) if map.is_empty() => "{}".to_string(),
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{}: {}", Value::from(key.as_str()), compact(value)))
                .collect();
            format!("{{ {} }}", entries.join(", "))
        }
        other => other.to_string(),
    }
}

/// The defaults `init` writes, one top-level key a line; a line longer than the page's 100
/// columns breaks after a comma, its rest lined up under the object's first key.
fn defaults_block(defaults: &Value) -> String {
    const WIDTH: usize = 100;
    let Value::Object(map) = defaults else {
        panic!("the defaults are an object")
    };
    let mut out = String::from("{\n");
    for (index, (key, value)) in map.iter().enumerate() {
        let comma = if index + 1 < map.len() { "," } else { "" };
        let head = format!("  {}: ", Value::from(key.as_str()));
        let Value::Object(inner) = value else {
            out.push_str(&format!("{head}{}{comma}\n", compact(value)));
            continue;
        };
        let indent = " ".repeat(head.len() + 2);
        let entries: Vec<String> = inner
            .iter()
            .map(|(key, value)| format!("{}: {}", Value::from(key.as_str()), compact(value)))
            .collect();
        let mut line = format!("{head}{{ ");
        if entries.is_empty() {
            line = format!("{head}{{}}");
        }
        for (i, entry) in entries.iter().enumerate() {
            let last = i + 1 == entries.len();
            let piece = if last {
                format!("{entry} }}")
            } else {
                format!("{entry},")
            };
            if line.trim_end().len() + 1 + piece.len() > WIDTH && !line.trim().ends_with('{') {
                out.push_str(line.trim_end());
                out.push('\n');
                line = indent.clone();
            }
            line.push_str(&piece);
            if !last {
                line.push(' ');
            }
        }
        out.push_str(&format!("{}{comma}\n", line.trim_end()));
    }
    out.push('}');
    out
}

/// Every leaf of the merged defaults by its dotted key; an empty object (`phases`, `pricing`)
/// is a map of the user's, with rows of its own pattern.
fn leaves(value: &Value, prefix: &str, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) if map.is_empty() => {}
        Value::Object(map) => {
            for (key, value) in map {
                let dotted = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                leaves(value, &dotted, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

/// The rows of the table under `heading`: each row's cells, by the line they are on.
fn table_rows(page: &str, heading: &str) -> Vec<(usize, Vec<String>)> {
    let start = page
        .lines()
        .position(|line| line == heading)
        .unwrap_or_else(|| panic!("docs/reference.md has no heading {heading:?}"));
    page.lines()
        .enumerate()
        .skip(start + 1)
        .take_while(|(_, line)| !line.starts_with("### ") && !line.starts_with("## "))
        .filter(|(_, line)| line.starts_with("| `"))
        .map(|(number, line)| {
            let cells = line
                .trim_matches('|')
                .split(" | ")
                .map(|cell| cell.trim().to_string())
                .collect();
            (number, cells)
        })
        .collect()
}

/// A table's default cell with `value` in place of what it says first: the backticked span
/// it starts with, or the whole cell when it starts with none.
fn default_cell(cell: &str, value: &Value) -> String {
    let shown = format!("`{}`", compact(value));
    match cell.strip_prefix('`').and_then(|rest| rest.split_once('`')) {
        Some((_, rest)) => format!("{shown}{rest}"),
        None => shown,
    }
}

/// Checks (or, blessing, rewrites) the default column of a table against `defaults`; returns
/// what disagrees, and the page with the cells as the code has them.
fn check_defaults(
    page: &str,
    heading: &str,
    key_of: impl Fn(&str) -> Option<String>,
    defaults: &BTreeMap<String, Value>,
) -> (Vec<String>, String) {
    let mut lines: Vec<String> = page.lines().map(str::to_string).collect();
    let mut problems = Vec::new();
    let mut seen = Vec::new();
    let rows = table_rows(page, heading);
    // A blank line or a paragraph between rows ends the table: the rows after it show as text.
    for pair in rows.windows(2) {
        if pair[1].0 != pair[0].0 + 1 {
            problems.push(format!(
                "docs/reference.md:{}: the table under {heading:?} is cut before this row",
                pair[1].0 + 1
            ));
        }
    }
    for (number, cells) in rows {
        let Some(key) = key_of(cells[0].trim_matches('`')) else {
            continue;
        };
        seen.push(key.clone());
        let Some(value) = defaults.get(&key) else {
            problems.push(format!(
                "docs/reference.md:{}: `{key}` is no key of the config",
                number + 1
            ));
            continue;
        };
        let wanted = default_cell(&cells[2], value);
        if cells[2] != wanted {
            problems.push(format!(
                "docs/reference.md:{}: `{key}` shows the default {} where the code has {}",
                number + 1,
                cells[2],
                wanted
            ));
            let mut fixed = cells.clone();
            fixed[2] = wanted;
            lines[number] = format!("| {} |", fixed.join(" | "));
        }
    }
    for key in defaults.keys().filter(|key| !seen.contains(key)) {
        problems.push(format!(
            "docs/reference.md, {heading:?}: no row for `{key}`"
        ));
    }
    let mut page = lines.join("\n");
    page.push('\n');
    (problems, page)
}

/// Replaces the JSON block that follows `marker` with `block`.
fn with_block(page: &str, marker: &str, block: &str) -> String {
    let at = page
        .find(marker)
        .unwrap_or_else(|| panic!("docs/reference.md has no {marker:?}"));
    let open = at + page[at..].find("```json\n").expect("a JSON block") + "```json\n".len();
    let close = open + page[open..].find("\n```").expect("the block ends");
    format!("{}{}{}", &page[..open], block, &page[close..])
}

#[test]
fn the_reference_shows_the_defaults_of_the_code() {
    let original = std::fs::read_to_string(reference_path()).unwrap();
    let mut problems = Vec::new();

    let block = defaults_block(&default_value());
    let page = with_block(&original, "\nThe defaults:\n", &block);
    if page != original {
        problems.push(
            "docs/reference.md §4: the defaults' JSON block is not what `init` writes".into(),
        );
    }

    let mut every_key = BTreeMap::new();
    leaves(&merged_value(&json!({})), "", &mut every_key);
    let (found, page) = check_defaults(
        &page,
        "### Every key",
        |key| (!key.contains('<')).then(|| key.to_string()),
        &every_key,
    );
    problems.extend(found);

    let gate: GateConfig =
        serde_json::from_value(json!({ "reviewer": "command", "command": "true" })).unwrap();
    let gate_defaults = BTreeMap::from([
        ("maxRetries".to_string(), json!(gate.max_retries)),
        (
            "maxPredecessorRetries".to_string(),
            json!(gate.max_predecessor_retries),
        ),
        ("timeoutSeconds".to_string(), json!(gate.timeout_seconds)),
    ]);
    let (found, page) = check_defaults(
        &page,
        "### A review gate: `phases.<phase>.review`",
        |key| gate_defaults.contains_key(key).then(|| key.to_string()),
        &gate_defaults,
    );
    problems.extend(found);

    if blessing() {
        std::fs::write(reference_path(), page).unwrap();
        return;
    }
    assert!(
        problems.is_empty(),
        "{}\nHint: AGENTIC_SDLC_BLESS=1 cargo test --lib config::reference writes the page from the code",
        problems.join("\n")
    );
}

#[test]
fn a_long_object_breaks_under_its_first_key() {
    let block = defaults_block(&json!({
        "short": 1,
        "llm": { "baseUrl": null, "model": "gpt-4o-mini", "apiKeyEnv": "OPENAI_API_KEY",
                 "timeoutSeconds": 300, "maxRetries": 3, "maxTurns": 50 },
        "empty": {}
    }));
    assert_eq!(
        block,
        "{\n  \"short\": 1,\n  \"llm\": { \"baseUrl\": null, \"model\": \"gpt-4o-mini\", \"apiKeyEnv\": \"OPENAI_API_KEY\",\n           \"timeoutSeconds\": 300, \"maxRetries\": 3, \"maxTurns\": 50 },\n  \"empty\": {}\n}"
    );
}
