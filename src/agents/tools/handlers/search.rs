//! search: a literal substring, line by line, over the repository's text files.

use std::fs;
use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::super::confine::open_regular;
use super::super::registry::{blocking, ToolHandler, ToolSpec};
use super::super::walk::SEARCH_FILE_SIZE_CAP;
use super::super::toolbox::{ToolBox, ToolError, ToolLimits};
use crate::exec::floor_char_boundary;

/// Matches reported at most.
const SEARCH_MATCH_CAP: usize = 200;
/// Bytes of one matching line shown; minified files have enormous lines.
const SEARCH_LINE_CAP: usize = 300;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(alias = "query", alias = "text", alias = "needle")]
    pattern: String,
    #[serde(default, alias = "file_path", alias = "folder", alias = "dir")]
    path: Option<String>,
}

pub(super) struct Search;

#[async_trait]
impl ToolHandler for Search {
    fn name(&self) -> &'static str {
        "search"
    }

    fn writes(&self) -> bool {
        false
    }

    fn spec(&self, _limits: &ToolLimits) -> ToolSpec {
        ToolSpec {
            description: format!(
                "Search text files for a literal, case-sensitive substring (not a regex), \
                 recursively. Skips .git, target/, node_modules/, what .gitignore ignores and \
                 binary files. Returns 'path:line: text' lines, at most {SEARCH_MATCH_CAP}."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": { "type": "string", "description": "Literal text to find within a line." },
                    "path": { "type": "string", "description": "File or folder to search, relative to the repository root. Default: the root." }
                },
                "required": ["pattern"]
            }),
        }
    }

    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError> {
        blocking(tools, self.name(), arguments, search).await
    }
}

fn search(tools: &ToolBox, args: Args) -> Result<String, ToolError> {
    let pattern = args.pattern.as_str();
    if pattern.is_empty() {
        return Err("pattern must not be empty".to_string().into());
    }
    if pattern.contains('\n') {
        return Err("pattern must be a single line; search matches line by line"
            .to_string()
            .into());
    }
    let path = args.path.as_deref().unwrap_or(".");
    let real = tools.resolve(path, false)?;
    let mut files = Vec::new();
    let meta = fs::metadata(&real).map_err(|err| format!("cannot read '{path}': {err}"))?;
    if meta.is_dir() {
        tools.collect_files(&real, &mut files);
    } else {
        // Refuses a FIFO, socket or device at once instead of skipping it silently.
        drop(open_regular(&real, path)?);
        files.push(real);
    }
    let mut matches = Matches {
        lines: Vec::new(),
        bytes: 0,
        max_bytes: tools.limits.max_read_bytes,
        stopped: None,
    };
    for file in &files {
        if !search_file(file, pattern, &tools.display(file), &mut matches) {
            break;
        }
    }
    Ok(search_report(pattern, path, &matches))
}

/// The matches found so far, within the caps of one result.
struct Matches {
    lines: Vec<String>,
    bytes: usize,
    max_bytes: usize,
    /// Why the search stopped early, if it did.
    stopped: Option<String>,
}

impl Matches {
    /// Adds one match; false once a cap is reached.
    fn push(&mut self, line: String) -> bool {
        if self.lines.len() == SEARCH_MATCH_CAP {
            self.stopped = Some(format!("stopped at {SEARCH_MATCH_CAP} matches"));
            return false;
        }
        if self.bytes + line.len() + 1 > self.max_bytes {
            self.stopped = Some(format!(
                "stopped at {} bytes (tools.maxReadBytes)",
                self.max_bytes
            ));
            return false;
        }
        self.bytes += line.len() + 1;
        self.lines.push(line);
        true
    }
}

/// Adds the matches of one file; false once a cap is reached. Unreadable and binary files are
/// skipped silently: a search is a best-effort overview.
fn search_file(file: &Path, pattern: &str, shown: &str, matches: &mut Matches) -> bool {
    let Ok(handle) = open_regular(file, shown) else {
        return true;
    };
    let mut bytes = Vec::new();
    if handle
        .take(SEARCH_FILE_SIZE_CAP)
        .read_to_end(&mut bytes)
        .is_err()
        || bytes.contains(&0)
    {
        return true;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (index, line) in text.lines().enumerate() {
        if line.contains(pattern)
            && !matches.push(format!("{shown}:{}: {}", index + 1, clip_line(line)))
        {
            return false;
        }
    }
    true
}

fn clip_line(line: &str) -> String {
    if line.len() <= SEARCH_LINE_CAP {
        return line.to_string();
    }
    format!("{} …", &line[..floor_char_boundary(line, SEARCH_LINE_CAP)])
}

fn search_report(pattern: &str, path: &str, matches: &Matches) -> String {
    if matches.lines.is_empty() && matches.stopped.is_none() {
        return format!("No matches for '{pattern}' in '{path}'.");
    }
    let mut out = matches.lines.join("\n");
    if let Some(why) = &matches.stopped {
        out.push_str(&format!("\n[cut: {why}; narrow the pattern or the path]"));
    }
    out
}
