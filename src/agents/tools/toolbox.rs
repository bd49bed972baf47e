//! What the tools are and what bounds them: an agent's access, the limits of a call, what a
//! call gives back, and the tool box of one agent. The tools' rooms stand on this one; the
//! calls themselves go through `mod.rs`.

use std::path::PathBuf;
use std::time::Duration;

use crate::exec::Sandbox;

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
    /// A write to one of the story's fixed acceptance tests: refused, like any for the model,
    /// but the rest of a change stands and is checked (docs/design.md §15).
    #[error("{0}")]
    FixedTest(String),
    /// A failure on the tool's side (the runtime, the command runner): it ends the action.
    #[error("{0}")]
    Fatal(String),
}

/// How a tool call failed, as far as the conversation cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFailure {
    /// For the model to act on: a bad argument, a refused path, a missing file, a timeout.
    ForModel,
    /// A refused write to a fixed acceptance test; nothing else of the reply is kept from its
    /// check for it.
    FixedTest,
    /// A refused write to a file the story does not name; nothing else of the reply is kept
    /// from its check for it either.
    Elsewhere,
    /// The tool itself broke: the action ends.
    Fatal,
}

impl CallFailure {
    /// Whether the reply's change waits for the model to act on this failure before it is
    /// checked. A refusal of a write the story does not ask for does not hold the rest back:
    /// the 1.5B model wrote a right `inventory/parse.py` and its test, then the repository
    /// map's lines as the cart's, the prices' and six test files; each reply went back on
    /// the refusals, five replies of 80 to 120 s, and the tests that would have passed never
    /// ran (inventory `parse-quantity`, 2026-12-05).
    pub fn holds_the_check(self) -> bool {
        matches!(self, CallFailure::ForModel | CallFailure::Fatal)
    }
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
    /// `None` when the call did what was asked.
    pub failure: Option<CallFailure>,
}

impl ToolOutcome {
    /// A call that did what was asked.
    pub fn done(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            failure: None,
        }
    }

    /// A call that failed, with what the model reads of it.
    pub fn failed(content: impl Into<String>, failure: CallFailure) -> Self {
        Self {
            content: content.into(),
            failure: Some(failure),
        }
    }

    pub fn is_error(&self) -> bool {
        self.failure.is_some()
    }

    /// The call failed on the tool's side; the action ends with this message.
    pub fn is_fatal(&self) -> bool {
        self.failure == Some(CallFailure::Fatal)
    }

    pub(super) fn from_result(result: Result<String, ToolError>) -> Self {
        let (message, failure) = match result {
            Ok(content) => return Self::done(content),
            Err(ToolError::ForModel(message)) => (message, CallFailure::ForModel),
            Err(ToolError::FixedTest(message)) => (message, CallFailure::FixedTest),
            Err(ToolError::Fatal(message)) => (message, CallFailure::Fatal),
        };
        Self::failed(format!("Error: {message}"), failure)
    }
}

/// The tools of one agent, confined to one repository.
#[derive(Debug, Clone)]
pub struct ToolBox {
    /// Absolute and lexically normalised, as given.
    pub(super) root: PathBuf,
    /// With symbolic links resolved; what confinement is checked against.
    pub(super) canon_root: PathBuf,
    pub(super) board_dir: PathBuf,
    pub(super) canon_board: PathBuf,
    /// Files the tools may read but never write: the project's `.agentic-sdlc.json`.
    pub(super) protected: Vec<PathBuf>,
    /// Folders treated like the board: a worktree's copy of it, the worktrees folder.
    pub(super) protected_dirs: Vec<PathBuf>,
    /// The story's acceptance tests, by real path: implement may read them but not change
    /// them (docs/design.md §21).
    pub(super) fixed: Vec<PathBuf>,
    /// The project's test files the story does not name, by real path: a whole file written
    /// out in a reply adds tests to one but keeps its tests as they are (docs/design.md §21).
    pub(super) others_tests: Vec<PathBuf>,
    /// The files the story does not name, by real path: a refused write to one is
    /// [`CallFailure::Elsewhere`].
    pub(super) elsewhere: Vec<PathBuf>,
    pub(super) access: ToolAccess,
    pub(super) limits: ToolLimits,
    /// The box `run_command` runs in.
    pub(super) sandbox: Sandbox,
    /// Values (the API key) blanked out of every result, should one ever show up in it.
    pub(super) secrets: Vec<String>,
    /// The files this agent has seen (read, shown in its prompt, or written by it), by real
    /// path: only those may be replaced whole without `overwrite` (as Claude Code's write tool
    /// wants a read first), so a model cannot rewrite a file from what it imagines is in it.
    pub(super) seen: std::sync::Arc<std::sync::Mutex<std::collections::HashSet<PathBuf>>>,
}

impl ToolBox {
    /// Counts these files (paths relative to the root) as seen: they are in the prompt.
    pub fn shown(self, paths: &[String]) -> Self {
        for path in paths {
            if let Ok(real) = self.resolve(path, false) {
                self.mark_seen(real);
            }
        }
        self
    }

    pub(super) fn mark_seen(&self, real: PathBuf) {
        self.seen
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(real);
    }

    pub(super) fn has_seen(&self, real: &std::path::Path) -> bool {
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

    /// Values blanked out of every result (the API key).
    pub fn with_secrets(mut self, secrets: Vec<String>) -> Self {
        self.secrets = secrets.into_iter().filter(|s| s.len() >= 4).collect();
        self
    }
}
