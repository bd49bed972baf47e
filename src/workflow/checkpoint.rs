//! `.workflow-state.json`: what a run has done, so `run --continue` can resume it (docs/design.md
//! §11).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::assessor::{Action, ActionType};
#[cfg(doc)]
use crate::board::board_store::BoardStore;
use crate::board::store::write_atomic;
use crate::board::StoryId;
use crate::error::{Error, Result};

pub const CHECKPOINT_FILE: &str = ".workflow-state.json";
const VERSION: &str = "1.0";
/// A checkpoint older than this is probably not the run the user means to resume.
pub const STALE_AFTER_HOURS: i64 = 48;

pub use crate::protocol::RunOptions;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointAction {
    #[serde(rename = "type")]
    pub action_type: ActionType,
    pub story_id: StoryId,
    pub story_path: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointContext {
    pub sdlc_root: PathBuf,
    pub options: RunOptions,
    pub story_content_hash: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub version: String,
    pub workflow_id: String,
    pub timestamp: String,
    pub current_action: Option<CheckpointAction>,
    pub completed_actions: Vec<CheckpointAction>,
    pub context: CheckpointContext,
}

pub fn path(board_dir: &Path) -> PathBuf {
    board_dir.join(CHECKPOINT_FILE)
}

impl Checkpoint {
    /// `content_hash` is [`BoardStore::content_hash`] of the board the run starts from.
    pub fn new(board_dir: &Path, options: RunOptions, content_hash: String) -> Checkpoint {
        Checkpoint {
            version: VERSION.into(),
            workflow_id: format!(
                "workflow-{}",
                chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ")
            ),
            timestamp: now(),
            current_action: None,
            completed_actions: Vec::new(),
            context: CheckpointContext {
                sdlc_root: board_dir.to_path_buf(),
                options,
                story_content_hash: content_hash,
            },
        }
    }

    /// Reads the checkpoint: `Ok(None)` when there is none; a corrupt file is an error naming it.
    pub fn load(board_dir: &Path) -> Result<Option<Checkpoint>> {
        let file = path(board_dir);
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(Error::io(format!("cannot read {}", file.display()), err)),
        };
        serde_json::from_str(&text).map(Some).map_err(|err| {
            Error::ActionFailed(format!(
                "the checkpoint {} is corrupt ({err}); delete it to start a fresh run",
                file.display()
            ))
        })
    }

    /// Writes the checkpoint; `content_hash` is [`BoardStore::content_hash`] of the board now.
    pub fn save(&mut self, board_dir: &Path, content_hash: String) -> Result<()> {
        self.timestamp = now();
        self.context.story_content_hash = content_hash;
        let text = serde_json::to_string_pretty(self)
            .expect("a checkpoint is strings, numbers and string-keyed maps, so it serialises");
        write_atomic(&path(board_dir), &format!("{text}\n"))
    }

    pub fn start(&mut self, action: &Action, story_path: PathBuf) {
        self.current_action = Some(CheckpointAction {
            action_type: action.action_type,
            story_id: action.story_id.clone(),
            story_path,
            completed_at: None,
        });
    }

    pub fn complete(&mut self, action: &Action, story_path: PathBuf) {
        if self
            .current_action
            .as_ref()
            .is_some_and(|c| c.story_id == action.story_id)
        {
            self.current_action = None;
        }
        self.completed_actions.push(CheckpointAction {
            action_type: action.action_type,
            story_id: action.story_id.clone(),
            story_path,
            completed_at: Some(now()),
        });
    }

    /// Hours since the checkpoint was written, when its timestamp parses.
    pub fn age_hours(&self) -> Option<i64> {
        let written = chrono::DateTime::parse_from_rfc3339(&self.timestamp).ok()?;
        Some((chrono::Utc::now() - written.with_timezone(&chrono::Utc)).num_hours())
    }

    pub fn remove(board_dir: &Path) -> Result<()> {
        match std::fs::remove_file(path(board_dir)) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(Error::io(
                format!("cannot remove {}", path(board_dir).display()),
                err,
            )),
            _ => Ok(()),
        }
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
