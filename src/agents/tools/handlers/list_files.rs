//! list_files: one folder's entries, without what .gitignore ignores.

use std::path::Path;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::super::registry::{blocking, ToolHandler, ToolSpec};
use super::super::walk::Walk;
use super::super::toolbox::{ToolBox, ToolError, ToolLimits};

/// Entries shown at most.
const LIST_CAP: usize = 1000;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(default, alias = "folder", alias = "dir", alias = "directory")]
    path: Option<String>,
}

pub(super) struct ListFiles;

#[async_trait]
impl ToolHandler for ListFiles {
    fn name(&self) -> &'static str {
        "list_files"
    }

    fn writes(&self) -> bool {
        false
    }

    fn spec(&self, _limits: &ToolLimits) -> ToolSpec {
        ToolSpec {
            description: "List the entries of a folder of the repository (not recursive), \
                          without what .gitignore ignores. Folders end with '/'."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "Folder relative to the repository root. Default: the root." }
                }
            }),
        }
    }

    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError> {
        blocking(tools, self.name(), arguments, list_files).await
    }
}

fn list_files(tools: &ToolBox, args: Args) -> Result<String, ToolError> {
    let path = args.path.as_deref().unwrap_or(".");
    let real = tools.resolve(path, false)?;
    if !real.is_dir() {
        return Err(format!("'{path}' is a file, not a folder; use read_file to read it").into());
    }
    // The walk skips what `.gitignore` ignores, `.git` and the board.
    let mut entries = Vec::new();
    for entry in tools.walk(&real, Walk::Entries) {
        let entry = entry.map_err(|err| format!("cannot list '{path}': {err}"))?;
        if entry.depth() == 1 {
            entries.push(entry_line(tools, entry.path()));
        }
    }
    Ok(cap_listing(&mut entries))
}

fn entry_line(tools: &ToolBox, entry: &Path) -> String {
    let shown = tools.display(entry);
    // Follows links on purpose: a link to a folder is listed (and usable) as a folder.
    if entry.is_dir() {
        format!("{shown}/")
    } else {
        shown
    }
}

fn cap_listing(entries: &mut Vec<String>) -> String {
    if entries.is_empty() {
        return "(empty folder)".to_string();
    }
    let left_out = entries.len().saturating_sub(LIST_CAP);
    entries.truncate(LIST_CAP);
    let mut out = entries.join("\n");
    if left_out > 0 {
        out.push_str(&format!("\n... and {left_out} more entries not shown"));
    }
    out
}
