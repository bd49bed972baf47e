//! The tools LLM agents call through OpenAI function calling (SPEC §10, §13).
//!
//! Every tool is confined to the repository root ([`confine`]): paths outside it, inside
//! `.git`, inside the board folder, and writes to `.agentic-sdlc.json` are refused, because an
//! agent must neither touch the user's machine nor what the tool itself owns. Every call ends
//! within `tools.timeoutSeconds`, and reads return at most `tools.maxReadBytes`.
//! `ToolBox::call` never fails: every tool call yields exactly one tool result, and a problem
//! the model can act on becomes an error result (`Error: …`).

mod args;
mod confine;
mod files;
mod schema;
mod search;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

pub use crate::exec::{head_tail, BoxedCommand, Sandbox, ShellOutput, OUTPUT_BUDGET};
use args::Args;

/// What an agent may do: every agent reads, only implement writes and runs commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolAccess {
    ReadOnly,
    ReadWrite,
}

/// The bounds every call keeps (`tools.*` in SPEC §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Bytes one read_file or search result holds at most.
    pub max_read_bytes: usize,
    /// How long one call may take; a command's own `timeout_seconds` may only shorten it.
    pub timeout: Duration,
}

impl ToolLimits {
    pub fn from_config(config: &crate::config::ToolsConfig) -> ToolLimits {
        ToolLimits {
            max_read_bytes: usize::try_from(config.max_read_bytes).unwrap_or(usize::MAX),
            timeout: Duration::from_secs(config.timeout_seconds),
        }
    }
}

/// Why a tool call did not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// For the model to act on: a bad argument, a refused path, a missing file, a timeout.
    #[error("{0}")]
    ForModel(String),
    /// A failure on the tool's side (the runtime, the command runner): it ends the action.
    #[error("{0}")]
    Fatal(String),
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::ForModel(message)
    }
}

/// The result of one tool call, sent back to the model as the tool message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    pub content: String,
    pub is_error: bool,
    /// The call failed on the tool's side; the action should end with this message.
    pub fatal: bool,
}

impl ToolOutcome {
    fn from_result(result: Result<String, ToolError>) -> Self {
        let (content, is_error, fatal) = match result {
            Ok(content) => (content, false, false),
            Err(ToolError::ForModel(message)) => (format!("Error: {message}"), true, false),
            Err(ToolError::Fatal(message)) => (format!("Error: {message}"), true, true),
        };
        Self {
            content,
            is_error,
            fatal,
        }
    }
}

/// The tools by name; the names and argument names are fixed by SPEC §10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    ReadFile,
    ListFiles,
    Search,
    WriteFile,
    EditFile,
    RunCommand,
}

impl Tool {
    const ALL: [Tool; 6] = [
        Tool::ReadFile,
        Tool::ListFiles,
        Tool::Search,
        Tool::WriteFile,
        Tool::EditFile,
        Tool::RunCommand,
    ];

    fn name(self) -> &'static str {
        match self {
            Tool::ReadFile => "read_file",
            Tool::ListFiles => "list_files",
            Tool::Search => "search",
            Tool::WriteFile => "write_file",
            Tool::EditFile => "edit_file",
            Tool::RunCommand => "run_command",
        }
    }

    fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    fn needs_write(self) -> bool {
        matches!(self, Tool::WriteFile | Tool::EditFile | Tool::RunCommand)
    }

    fn allowed(self, access: ToolAccess) -> bool {
        access == ToolAccess::ReadWrite || !self.needs_write()
    }
}

/// The tools of one agent, confined to one repository.
#[derive(Debug, Clone)]
pub struct ToolBox {
    /// Absolute and lexically normalised, as given.
    root: PathBuf,
    /// With symbolic links resolved; what confinement is checked against.
    canon_root: PathBuf,
    board_dir: PathBuf,
    canon_board: PathBuf,
    /// Files the tools may read but never write: the project's `.agentic-sdlc.json`.
    protected: Vec<PathBuf>,
    /// Folders treated like the board: a worktree's copy of it, the worktrees folder.
    protected_dirs: Vec<PathBuf>,
    access: ToolAccess,
    limits: ToolLimits,
    /// The box `run_command` runs in.
    sandbox: Sandbox,
    /// Values (the API key) blanked out of every result, should one ever show up in it.
    secrets: Vec<String>,
}

impl ToolBox {
    pub fn new(root: PathBuf, board_dir: PathBuf, access: ToolAccess, limits: ToolLimits) -> Self {
        let root = confine::absolute_normalized(&root);
        let board_dir = confine::absolute_normalized(&board_dir);
        // A root that cannot be canonicalised makes every later resolve fail with a clear
        // I/O error, so falling back to the lexical path here loses nothing.
        let canon_root = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let canon_board =
            confine::canonicalize_lenient(&board_dir).unwrap_or_else(|_| board_dir.clone());
        let protected = confine::protected_files(&root, &canon_root);
        Self {
            root,
            canon_root,
            board_dir,
            canon_board,
            protected,
            protected_dirs: Vec::new(),
            access,
            limits,
            sandbox: Sandbox::default(),
            secrets: Vec::new(),
        }
    }

    /// The box `run_command` runs in (the run's, with its guard).
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Also refuses writes to `file` (the project's config, when the tools work in another
    /// folder such as a worktree).
    pub fn protect(mut self, file: PathBuf) -> Self {
        self.protected.push(file);
        self
    }

    /// Refuses any path inside `folder`, as inside the board.
    pub fn protect_folder(mut self, folder: PathBuf) -> Self {
        let canonical = confine::canonicalize_lenient(&folder).unwrap_or_else(|_| folder.clone());
        self.protected_dirs.push(folder);
        self.protected_dirs.push(canonical);
        self
    }

    /// Values blanked out of every result (the API key).
    pub fn with_secrets(mut self, secrets: Vec<String>) -> Self {
        self.secrets = secrets.into_iter().filter(|s| s.len() >= 4).collect();
        self
    }

    /// The OpenAI `tools` array for this agent's access.
    pub fn definitions(&self) -> Vec<Value> {
        Tool::ALL
            .into_iter()
            .filter(|tool| tool.allowed(self.access))
            .map(|tool| self.definition(tool))
            .collect()
    }

    fn definition(&self, tool: Tool) -> Value {
        let (description, parameters) = match tool {
            Tool::ReadFile => schema::read_file(self.limits.max_read_bytes),
            Tool::ListFiles => schema::list_files(),
            Tool::Search => schema::search(),
            Tool::WriteFile => schema::write_file(),
            Tool::EditFile => schema::edit_file(),
            Tool::RunCommand => schema::run_command(self.limits.timeout),
        };
        json!({
            "type": "function",
            "function": { "name": tool.name(), "description": description, "parameters": parameters }
        })
    }

    /// Runs one tool call. Always returns an outcome, so the conversation keeps exactly one
    /// tool result per tool call whatever the model sent.
    pub async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        let mut outcome = ToolOutcome::from_result(self.dispatch(name, arguments).await);
        for secret in &self.secrets {
            if outcome.content.contains(secret.as_str()) {
                outcome.content = outcome.content.replace(secret.as_str(), "[redacted]");
            }
        }
        tracing::debug!(tool = name, is_error = outcome.is_error, "tool call");
        outcome
    }

    async fn dispatch(&self, name: &str, arguments: &str) -> Result<String, ToolError> {
        let tool = self.tool_for(name)?;
        let args = Args::parse(arguments)?;
        if tool == Tool::RunCommand {
            return self.run_command(&args).await;
        }
        // File tools do blocking I/O (a search may walk a large tree); keep it off the
        // runtime's worker threads so parallel stories stay responsive. The timeout returns to
        // the model even if the file system hangs; the thread then finishes on its own.
        let this = self.clone();
        let work = tokio::task::spawn_blocking(move || this.file_tool(tool, &args));
        match tokio::time::timeout(self.limits.timeout, work).await {
            Ok(Ok(result)) => result,
            Ok(Err(err)) => Err(ToolError::Fatal(format!(
                "the tool stopped unexpectedly: {err}"
            ))),
            Err(_) => Err(ToolError::ForModel(format!(
                "{name} did not finish within {} (tools.timeoutSeconds); try a narrower path",
                schema::format_seconds(self.limits.timeout)
            ))),
        }
    }

    fn tool_for(&self, name: &str) -> Result<Tool, String> {
        let Some(tool) = Tool::from_name(name) else {
            let known: Vec<&str> = Tool::ALL
                .into_iter()
                .filter(|tool| tool.allowed(self.access))
                .map(Tool::name)
                .collect();
            return Err(format!(
                "unknown tool '{name}'; available tools: {}",
                known.join(", ")
            ));
        };
        if !tool.allowed(self.access) {
            return Err(format!(
                "tool '{name}' is not available to this agent: it has read-only access"
            ));
        }
        Ok(tool)
    }

    fn file_tool(&self, tool: Tool, args: &Args) -> Result<String, ToolError> {
        match tool {
            Tool::ReadFile => self.read_file(args),
            Tool::ListFiles => self.list_files(args),
            Tool::Search => self.search(args),
            Tool::WriteFile => self.write_file(args),
            Tool::EditFile => self.edit_file(args),
            Tool::RunCommand => Err(ToolError::Fatal(
                "run_command is async and dispatched separately".to_string(),
            )),
        }
    }

    async fn run_command(&self, args: &Args) -> Result<String, ToolError> {
        let command = args.string("command")?;
        if command.trim().is_empty() {
            return Err("command must not be empty".to_string().into());
        }
        let limit = self.effective_timeout(args.opt_seconds("timeout_seconds")?);
        let result = self
            .sandbox
            .run(BoxedCommand {
                command,
                tree: &self.canon_root,
                limit,
                env: &[],
            })
            .await
            .map_err(|err| ToolError::Fatal(err.to_string()))?;
        if result.timed_out {
            return Err(ToolError::ForModel(format!(
                "command timed out after {}\nIt and everything it started were killed. Output so far:\n{}",
                schema::format_seconds(limit),
                result.output
            )));
        }
        Ok(format!("{}\n{}", result.describe_status(), result.output))
    }

    /// The model may ask for less time than configured, never more.
    fn effective_timeout(&self, requested: Option<f64>) -> Duration {
        requested
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .map_or(self.limits.timeout, |asked| asked.min(self.limits.timeout))
    }
}
