//! What a tool is, and the one list of them.
//!
//! A tool is one file under `handlers/`: its serde `Args` type, the JSON schema of those
//! arguments written beside it, and a [`ToolHandler`]. Adding a tool is that file plus one line
//! in `handlers/mod.rs`, which lists them; the OpenAI definitions, the text-protocol descriptions, the access
//! check and the dispatch all come from this registry.

use std::time::Duration;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::args;
use super::toolbox::{ToolBox, ToolError, ToolLimits};

/// What the model reads about a tool: what it does and the JSON schema of its arguments.
pub(crate) struct ToolSpec {
    pub(crate) description: String,
    pub(crate) parameters: Value,
}

/// One tool: its name, whether it changes anything, what the model reads about it, and what
/// a call does.
#[async_trait]
pub(super) trait ToolHandler: Sync {
    /// The name the model calls it by (fixed by the contract for the six standard tools).
    fn name(&self) -> &'static str;

    /// Whether it can change the repository; only an agent with write access gets it.
    fn writes(&self) -> bool;

    fn spec(&self, limits: &ToolLimits) -> ToolSpec;

    /// Runs one call with the model's raw JSON arguments.
    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError>;
}

/// The OpenAI `tools` entry of one tool.
pub(super) fn definition(tool: &dyn ToolHandler, limits: &ToolLimits) -> Value {
    let spec = tool.spec(limits);
    json!({
        "type": "function",
        "function": { "name": tool.name(), "description": spec.description, "parameters": spec.parameters }
    })
}

/// Reads the arguments into the tool's `Args` type and runs `work` on a blocking thread,
/// within `tools.timeoutSeconds`.
///
/// File tools do blocking I/O (a search may walk a large tree); it stays off the runtime's
/// worker threads so that parallel stories stay responsive. The timeout returns to the model
/// even if the file system hangs; the thread then finishes on its own.
pub(super) async fn blocking<A, F>(
    tools: &ToolBox,
    name: &'static str,
    arguments: &str,
    work: F,
) -> Result<String, ToolError>
where
    A: DeserializeOwned + Send + 'static,
    F: FnOnce(&ToolBox, A) -> Result<String, ToolError> + Send + 'static,
{
    let parsed: A = args::parse(arguments)?;
    let this = tools.clone();
    let task = tokio::task::spawn_blocking(move || work(&this, parsed));
    match tokio::time::timeout(tools.limits.timeout, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(err)) => Err(ToolError::Fatal(format!(
            "the tool stopped unexpectedly: {err}"
        ))),
        Err(_) => Err(ToolError::ForModel(format!(
            "{name} did not finish within {} (tools.timeoutSeconds); try a narrower path",
            format_seconds(tools.limits.timeout)
        ))),
    }
}

pub(super) fn format_seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}
