//! The JSON schemas and descriptions the model reads for each tool.

use std::time::Duration;

use serde_json::{json, Value};

use super::files::READ_LINE_LIMIT;
use super::search::SEARCH_MATCH_CAP;

pub(super) fn read_file(max_bytes: usize) -> (String, Value) {
    (
        format!(
            "Read a text file of the repository. Returns the raw text of lines \
             [offset, offset+limit); at most {READ_LINE_LIMIT} lines and {max_bytes} bytes per \
             call, with a note saying how to read on when the file is longer. Only regular \
             text files can be read."
        ),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "offset": { "type": "integer", "minimum": 0, "description": "First line to return, 0-based. Default 0." },
                "limit": { "type": "integer", "minimum": 1, "description": format!("Number of lines to return. Default {READ_LINE_LIMIT}.") }
            },
            "required": ["path"]
        }),
    )
}

pub(super) fn list_files() -> (String, Value) {
    (
        "List the entries of a folder of the repository (not recursive), without what \
         .gitignore ignores. Folders end with '/'."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "Folder relative to the repository root. Default: the root." }
            }
        }),
    )
}

pub(super) fn search() -> (String, Value) {
    (
        format!(
            "Search text files for a literal, case-sensitive substring (not a regex), recursively. \
             Skips .git, target/, node_modules/, what .gitignore ignores and binary files. \
             Returns 'path:line: text' lines, at most {SEARCH_MATCH_CAP}."
        ),
        json!({
            "type": "object",
            "properties": {
                "pattern": { "type": "string", "description": "Literal text to find within a line." },
                "path": { "type": "string", "description": "File or folder to search, relative to the repository root. Default: the root." }
            },
            "required": ["pattern"]
        }),
    )
}

pub(super) fn write_file() -> (String, Value) {
    (
        "Create or overwrite a file with the given content. Parent folders are created."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "content": { "type": "string", "description": "The complete new content of the file." }
            },
            "required": ["path", "content"]
        }),
    )
}

pub(super) fn edit_file() -> (String, Value) {
    (
        "Replace one exact occurrence of old_string in a file with new_string. old_string must \
         match exactly once, whitespace included; add surrounding lines to make it unique. An \
         empty old_string creates a file that does not exist yet."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "old_string": { "type": "string", "description": "Exact text to replace." },
                "new_string": { "type": "string", "description": "Replacement text." }
            },
            "required": ["path", "old_string", "new_string"]
        }),
    )
}

pub(super) fn run_command(timeout: Duration) -> (String, Value) {
    (
        format!(
            "Run a shell command (sh -c) in the repository root, without input. Returns the exit \
             code and the combined stdout and stderr, cut to its head and tail when long. The \
             command and everything it started are killed after the timeout (at most {}).",
            format_seconds(timeout)
        ),
        json!({
            "type": "object",
            "properties": {
                "command": { "type": "string", "description": "The shell command line." },
                "timeout_seconds": { "type": "number", "exclusiveMinimum": 0, "description": "Shorter timeout for this command, in seconds." }
            },
            "required": ["command"]
        }),
    )
}

pub(super) fn format_seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}
