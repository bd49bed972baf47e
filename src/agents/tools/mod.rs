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
mod syntax;
#[cfg(test)]
mod tests;
mod toolbox;
mod walk;

use std::path::PathBuf;

use serde_json::Value;

pub use crate::exec::Sandbox;
pub(crate) use definitions::{decorators_start, defined_name, names as defined_names, source_of};
pub(crate) use syntax::{isolated_python, refusal as unparseable_python};
pub use toolbox::{CallFailure, ToolAccess, ToolBox, ToolError, ToolLimits, ToolOutcome};

/// Whether the tool `name` can change the repository (an unknown name counts as one that can).
pub(crate) fn writes(name: &str) -> bool {
    handlers::find(name).is_none_or(|tool| tool.writes())
}
use registry::ToolHandler;

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
            others_tests: Vec::new(),
            elsewhere: Vec::new(),
            access,
            limits,
            sandbox: Sandbox::default(),
            secrets: Vec::new(),
            seen: Default::default(),
        }
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

    /// Keeps the tests of these files (paths relative to the root) as they are when a whole
    /// file written out in a reply rewrites them; tests it adds are added.
    pub fn keeping_tests_of(mut self, paths: &[String]) -> Self {
        for path in paths {
            if let Ok(real) = self.resolve(path, false) {
                self.others_tests.push(real);
            }
        }
        self
    }

    /// Counts a refused write to one of these files (paths relative to the root) as
    /// [`CallFailure::Elsewhere`]: the files the story does not name.
    pub fn elsewhere(mut self, paths: &[String]) -> Self {
        for path in paths {
            if let Ok(real) = self.resolve(path, false) {
                self.elsewhere.push(real);
            }
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
        if outcome.failure == Some(CallFailure::ForModel) && self.writes_elsewhere(name, arguments)
        {
            outcome.failure = Some(CallFailure::Elsewhere);
        }
        for secret in &self.secrets {
            if outcome.content.contains(secret.as_str()) {
                outcome.content = outcome.content.replace(secret.as_str(), "[redacted]");
            }
        }
        tracing::debug!(tool = name, failure = ?outcome.failure, "tool call");
        outcome
    }

    /// Whether the call `name` writes to one of the files the story does not name.
    fn writes_elsewhere(&self, name: &str, arguments: &str) -> bool {
        if self.elsewhere.is_empty() || !writes(name) {
            return false;
        }
        let arguments: Value = serde_json::from_str(arguments).unwrap_or_default();
        arguments["path"]
            .as_str()
            .and_then(|path| self.resolve(path, false).ok())
            .is_some_and(|real| self.elsewhere.contains(&real))
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
