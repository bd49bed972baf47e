//! run_command: a shell command in the repository root, in the run's box.

use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::super::args::{self, opt_seconds};
use super::super::registry::{format_seconds, ToolHandler, ToolSpec};
use super::super::toolbox::{ToolBox, ToolError, ToolLimits};
use crate::exec::BoxedCommand;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(alias = "cmd", alias = "bash", alias = "shell")]
    command: String,
    #[serde(default, alias = "timeout", deserialize_with = "opt_seconds")]
    timeout_seconds: Option<f64>,
}

pub(super) struct RunCommand;

#[async_trait]
impl ToolHandler for RunCommand {
    fn name(&self) -> &'static str {
        "run_command"
    }

    fn writes(&self) -> bool {
        true
    }

    fn spec(&self, limits: &ToolLimits) -> ToolSpec {
        ToolSpec {
            description: format!(
                "Run a shell command (sh -c) in the repository root, without input. Returns the \
                 exit code and the combined stdout and stderr, cut to its head and tail when \
                 long. The command and everything it started are killed after the timeout (at \
                 most {}).",
                format_seconds(limits.timeout)
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": { "type": "string", "description": "The shell command line." },
                    "timeout_seconds": { "type": "number", "exclusiveMinimum": 0, "description": "Shorter timeout for this command, in seconds." }
                },
                "required": ["command"]
            }),
        }
    }

    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError> {
        let args: Args = args::parse(arguments)?;
        if args.command.trim().is_empty() {
            return Err("command must not be empty".to_string().into());
        }
        let limit = tools.effective_timeout(args.timeout_seconds);
        let result = tools
            .sandbox
            .run(BoxedCommand {
                command: &args.command,
                tree: &tools.canon_root,
                limit,
                env: &[],
            })
            .await
            .map_err(|err| ToolError::Fatal(err.to_string()))?;
        if result.timed_out {
            return Err(ToolError::ForModel(format!(
                "command timed out after {}\nIt and everything it started were killed. Output so far:\n{}",
                format_seconds(limit),
                result.output
            )));
        }
        Ok(format!("{}\n{}", result.describe_status(), result.output))
    }
}

impl ToolBox {
    /// The model may ask for less time than configured, never more.
    pub(in crate::agents::tools) fn effective_timeout(&self, requested: Option<f64>) -> Duration {
        requested
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .map_or(self.limits.timeout, |asked| asked.min(self.limits.timeout))
    }
}
