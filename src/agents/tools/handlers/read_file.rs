//! read_file: lines of a text file, streamed within the byte cap.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::super::args::opt_count;
use super::super::confine::open_regular;
use super::super::fsio::{read_lines, Window};
use super::super::registry::{blocking, ToolHandler, ToolSpec};
use super::super::toolbox::{ToolBox, ToolError, ToolLimits};

/// Lines returned when the model gives no `limit`.
const READ_LINE_LIMIT: usize = 2000;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(alias = "file_path", alias = "filename", alias = "file")]
    path: String,
    #[serde(default, deserialize_with = "opt_count")]
    offset: Option<usize>,
    #[serde(default, deserialize_with = "opt_count")]
    limit: Option<usize>,
}

fn spec(max_bytes: usize) -> ToolSpec {
    ToolSpec {
        description: format!(
            "Read a text file of the repository. Returns the raw text of lines \
             [offset, offset+limit); at most {READ_LINE_LIMIT} lines and {max_bytes} bytes per \
             call, with a note saying how to read on when the file is longer. Only regular \
             text files can be read."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "offset": { "type": "integer", "minimum": 0, "description": "First line to return, 0-based. Default 0." },
                "limit": { "type": "integer", "minimum": 1, "description": format!("Number of lines to return. Default {READ_LINE_LIMIT}.") }
            },
            "required": ["path"]
        }),
    }
}

pub(super) struct ReadFile;

#[async_trait]
impl ToolHandler for ReadFile {
    fn name(&self) -> &'static str {
        "read_file"
    }

    fn writes(&self) -> bool {
        false
    }

    fn spec(&self, limits: &ToolLimits) -> ToolSpec {
        spec(limits.max_read_bytes)
    }

    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError> {
        blocking(tools, self.name(), arguments, read_file).await
    }
}

fn read_file(tools: &ToolBox, args: Args) -> Result<String, ToolError> {
    let limit = args.limit.unwrap_or(READ_LINE_LIMIT);
    if limit == 0 {
        return Err("limit must be at least 1".to_string().into());
    }
    let real = tools.resolve(&args.path, false)?;
    let file = open_regular(&real, &args.path)?;
    let window = Window {
        offset: args.offset.unwrap_or(0),
        limit,
        max_bytes: tools.limits.max_read_bytes,
    };
    let text = read_lines(file, window, &args.path)?;
    tools.mark_seen(real);
    Ok(text)
}
