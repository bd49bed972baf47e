//! The tools LLM agents call through OpenAI function calling (docs/design.md §10, §13).
//!
//! Every tool is confined to the repository root ([`confine`]): paths outside it, inside
//! `.git`, inside the board folder, and writes to `.agentic-sdlc.json` are refused, because an
//! agent must neither touch the user's machine nor what the tool itself owns. Every call ends
//! within `tools.timeoutSeconds`, and reads return at most `tools.maxReadBytes`.
//! `ToolBox::call` never fails: every tool call yields exactly one tool result, and a problem
//! the model can act on becomes an error result (`Error: …`).

mod args;
mod confine;
mod definitions;
mod edit_match;
mod fsio;
mod handlers;
mod merge_definitions;
mod registry;
#[cfg(test)]
mod tests;
mod walk;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

pub use crate::exec::{head_tail, BoxedCommand, Sandbox};
pub(crate) use definitions::{defined_name, names as defined_names, source_of};

/// Whether the tool `name` can change the repository (an unknown name counts as one that can).
pub(crate) fn writes(name: &str) -> bool {
    handlers::find(name).is_none_or(|tool| tool.writes())
}
use registry::ToolHandler;

/// What an agent may do: every agent reads, only implement writes and runs commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolAccess {
    ReadOnly,
    ReadWrite,
}

/// The bounds every call keeps (`tools.*` in docs/design.md §4).
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
    /// The story's acceptance tests, by real path: implement may read them but not change
    /// them (docs/design.md §21).
    fixed: Vec<PathBuf>,
    access: ToolAccess,
    limits: ToolLimits,
    /// The box `run_command` runs in.
    sandbox: Sandbox,
    /// Values (the API key) blanked out of every result, should one ever show up in it.
    secrets: Vec<String>,
    /// The files this agent has seen (read, shown in its prompt, or written by it), by real
    /// path: only those may be replaced whole without `overwrite` (as Claude Code's write tool
    /// wants a read first), so a model cannot rewrite a file from what it imagines is in it.
    seen: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<PathBuf>>>,
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
            fixed: Vec::new(),
            access,
            limits,
            sandbox: Sandbox::default(),
            secrets: Vec::new(),
            seen: Default::default(),
        }
    }

    /// Counts these files (paths relative to the root) as seen: they are in the prompt.
    pub fn shown(self, paths: &[String]) -> Self {
        for path in paths {
            if let Ok(real) = self.resolve(path, false) {
                self.mark_seen(real);
            }
        }
        self
    }

    fn mark_seen(&self, real: PathBuf) {
        self.seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(real);
    }

    fn has_seen(&self, real: &std::path::Path) -> bool {
        self.seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .contains(real)
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

    /// Refuses writes to these files (paths relative to the root): the story's acceptance
    /// tests while implement works.
    pub fn fixing(mut self, paths: &[String]) -> Self {
        for path in paths {
            let lexical = confine::absolute_normalized(&self.root.join(path));
            let real = confine::canonicalize_lenient(&lexical).unwrap_or_else(|_| lexical.clone());
            self.fixed.push(lexical);
            self.fixed.push(real);
        }
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
        self.available()
            .map(|tool| registry::definition(tool, &self.limits))
            .collect()
    }

    /// The tools this agent may call, in the order the model sees them.
    fn available(&self) -> impl Iterator<Item = &'static dyn ToolHandler> + '_ {
        handlers::all()
            .iter()
            .copied()
            .filter(|tool| self.access == ToolAccess::ReadWrite || !tool.writes())
    }

    /// Runs one tool call. Always returns an outcome, so the conversation keeps exactly one
    /// tool result per tool call whatever the model sent.
    pub async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        let result = match self.tool_for(name) {
            Ok(tool) => tool.handle(self, arguments).await,
            Err(refused) => Err(ToolError::ForModel(refused)),
        };
        let mut outcome = ToolOutcome::from_result(result);
        for secret in &self.secrets {
            if outcome.content.contains(secret.as_str()) {
                outcome.content = outcome.content.replace(secret.as_str(), "[redacted]");
            }
        }
        tracing::debug!(tool = name, is_error = outcome.is_error, "tool call");
        outcome
    }

    fn tool_for(&self, name: &str) -> Result<&'static dyn ToolHandler, String> {
        let Some(tool) = handlers::find(name) else {
            let known: Vec<&str> = self.available().map(|tool| tool.name()).collect();
            return Err(format!(
                "unknown tool '{name}'; available tools: {}",
                known.join(", ")
            ));
        };
        if tool.writes() && self.access != ToolAccess::ReadWrite {
            return Err(format!(
                "tool '{name}' is not available to this agent: it has read-only access"
            ));
        }
        Ok(tool)
    }
}
