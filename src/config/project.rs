//! A project: the folder that holds `.agentic-sdlc.json`, and its merged config.

use std::path::{Path, PathBuf};

use super::layers::load;
use super::settings::{Config, CONFIG_FILE};
use crate::error::{Error, Result};

/// The project root and its merged config.
#[derive(Debug, Clone)]
pub struct Project {
    pub root: PathBuf,
    pub config: Config,
}

impl Project {
    /// Finds the nearest ancestor of `start` that holds `.agentic-sdlc.json` and loads it.
    pub fn discover(start: &Path) -> Result<Project> {
        let start = fs_err::canonicalize(start)?;
        let root = start
            .ancestors()
            .find(|dir| dir.join(CONFIG_FILE).is_file())
            .ok_or_else(|| Error::NoRoot(start.clone()))?
            .to_path_buf();
        let config = load(&root)?;
        Ok(Project { root, config })
    }

    /// The project folder's name, which pages and notices are titled with.
    pub fn name(&self) -> String {
        self.root.file_name().map_or_else(
            || self.root.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        )
    }

    pub fn config_path(&self) -> PathBuf {
        self.root.join(CONFIG_FILE)
    }

    pub fn board_dir(&self) -> PathBuf {
        self.root.join(&self.config.sdlc_folder)
    }

    /// The project root of a board folder: the folder without its `sdlcFolder` components.
    pub fn root_of_board(board_dir: &Path, sdlc_folder: &str) -> PathBuf {
        let depth = Path::new(sdlc_folder)
            .components()
            .filter(|part| matches!(part, std::path::Component::Normal(_)))
            .count();
        board_dir
            .ancestors()
            .nth(depth)
            .unwrap_or(board_dir)
            .to_path_buf()
    }
}
