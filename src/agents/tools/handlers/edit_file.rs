//! edit_file: one occurrence of a text replaced, matched exactly or else ignoring whitespace
//! differences; a miss quotes the closest lines of the file.

use std::path::Path;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::super::edit_match::{apply, Miss};
use super::super::fsio::{read_for_edit, write_atomic};
use super::super::syntax;
use super::super::registry::{blocking, ToolHandler, ToolSpec};
use super::super::toolbox::{ToolBox, ToolError, ToolLimits};

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(alias = "file_path", alias = "filename", alias = "file")]
    path: String,
    #[serde(alias = "old", alias = "old_str", alias = "search")]
    old_string: String,
    #[serde(alias = "new", alias = "new_str", alias = "replace")]
    new_string: String,
}

pub(super) struct EditFile;

#[async_trait]
impl ToolHandler for EditFile {
    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn writes(&self) -> bool {
        true
    }

    fn spec(&self, _limits: &ToolLimits) -> ToolSpec {
        ToolSpec {
            description: "Replace one occurrence of old_string in a file with new_string. \
                          old_string must match exactly one place; whitespace differences are \
                          tolerated, and a miss shows the closest lines of the file. Add \
                          surrounding lines to make it unique. An empty old_string creates a \
                          file that does not exist yet."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "File path relative to the repository root." },
                    "old_string": { "type": "string", "description": "The text to replace, copied from the file." },
                    "new_string": { "type": "string", "description": "Replacement text." }
                },
                "required": ["path", "old_string", "new_string"]
            }),
        }
    }

    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError> {
        blocking(tools, self.name(), arguments, edit_file).await
    }
}

fn edit_file(tools: &ToolBox, args: Args) -> Result<String, ToolError> {
    let path = args.path.as_str();
    let real = tools.resolve(path, true)?;
    tools.check_writable(path, &real)?;
    let Some(text) = read_for_edit(&real, path)? else {
        return Ok(create_by_edit(&real, path, &args.old_string, &args.new_string)?);
    };
    let (old, new) = (args.old_string.as_str(), args.new_string.as_str());
    if old.is_empty() {
        if !text.is_empty() {
            return Err(format!(
                "old_string is empty but '{path}' already exists; quote the exact text to replace"
            )
            .into());
        }
        write_atomic(&real, new.as_bytes()).map_err(|err| format!("cannot write '{path}': {err}"))?;
        return Ok(format!("Edited {path}: replaced 1 occurrence"));
    }
    if old == new {
        return Err("old_string and new_string are the same; nothing would change"
            .to_string()
            .into());
    }
    let applied = apply(&text, old, new).map_err(|miss| describe_miss(path, miss))?;
    if let Some(refused) = syntax::refusal(path, Some(&text), &applied.text) {
        return Err(refused.into());
    }
    write_atomic(&real, applied.text.as_bytes())
        .map_err(|err| format!("cannot write '{path}': {err}"))?;
    Ok(match applied.loose_lines {
        None => format!("Edited {path}: replaced 1 occurrence"),
        Some((first, last)) => format!(
            "Edited {path}: replaced 1 occurrence at {}, matched ignoring whitespace differences",
            lines_label(first, last)
        ),
    })
}

fn lines_label(first: usize, last: usize) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

fn describe_miss(path: &str, miss: Miss) -> String {
    match miss {
        Miss::Ambiguous { mut lines } => {
            let times = lines.len();
            lines.dedup();
            let at: Vec<String> = lines.iter().map(usize::to_string).collect();
            let label = if at.len() == 1 { "line" } else { "lines" };
            format!(
                "old_string matches {times} times in '{path}' ({label} {}); give more context \
                 so it matches exactly once",
                at.join(", ")
            )
        }
        Miss::NotFound { closest: Some(closest) } => format!(
            "old_string not found in '{path}', not even ignoring whitespace. The closest lines \
             of the file are:\n{closest}\nCopy old_string exactly from the file (read_file shows \
             it), or use write_file with the whole new content."
        ),
        Miss::NotFound { closest: None } => format!(
            "old_string not found in '{path}', and no lines of it come close; read the file \
             and copy the text exactly, whitespace included"
        ),
    }
}

fn create_by_edit(real: &Path, shown: &str, old: &str, new: &str) -> Result<String, String> {
    if !old.is_empty() {
        return Err(format!(
            "'{shown}' does not exist; to create it, call edit_file with an empty old_string or use write_file"
        ));
    }
    write_atomic(real, new.as_bytes()).map_err(|err| format!("cannot write '{shown}': {err}"))?;
    Ok(format!("Created {shown} ({} bytes)", new.len()))
}
