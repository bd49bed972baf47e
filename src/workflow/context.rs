//! What every action of a run shares.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::budget::Spending;
use super::events::EventSink;
use crate::agents::Agents;
use crate::board::board_store::BoardStore;
use crate::config::{Config, CONFIG_FILE, WORKTREES_DIR};

pub struct Workflow {
    pub root: PathBuf,
    /// The run's board: read once, written with path hints, refreshed by what changed.
    pub board: Arc<BoardStore>,
    pub config: Config,
    pub agents: Arc<dyn Agents>,
    pub events: EventSink,
    /// Held by actions that change or read the shared working tree (implement, review, PR),
    /// so two stories never edit one tree at once. Not taken when each story has a worktree.
    pub shared_tree: Arc<tokio::sync::Mutex<()>>,
    /// Held while a story is merged into its base and tested there: merges into one base
    /// happen one at a time (docs/design.md §12).
    pub integration: tokio::sync::Mutex<()>,
    /// Human gates may ask a person here; one question at a time.
    pub terminal: Option<super::prompter::Terminal>,
    /// What the run spent, against `budget.*` (docs/design.md §14).
    pub spending: Arc<Spending>,
    /// The box every command an agent can influence runs in, with the run's guard.
    pub sandbox: crate::exec::Sandbox,
}

impl Workflow {
    pub fn board_dir(&self) -> &Path {
        self.board.dir()
    }

    /// Paths the tool itself writes all the time, relative to the repository root; they never
    /// count as a user's uncommitted work and never go into a story's diff or commit.
    pub fn own_paths(&self) -> Vec<PathBuf> {
        let mut paths = vec![PathBuf::from(CONFIG_FILE)];
        if let Ok(relative) = self.board_dir().strip_prefix(&self.root) {
            paths.push(relative.to_path_buf());
        }
        paths.push(PathBuf::from(WORKTREES_DIR));
        paths
    }

    pub fn worktrees_dir(&self) -> PathBuf {
        self.root.join(WORKTREES_DIR)
    }
}
