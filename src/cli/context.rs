//! What every command is handed: where it runs and how it prints.

use std::path::PathBuf;

use crate::config::Project;
use crate::error::Result;
use crate::output::Printer;

/// Where a command runs: the directory from `-C`, or the current one.
pub struct Context {
    pub cwd: PathBuf,
    pub printer: Printer,
}

impl Context {
    pub fn project(&self) -> Result<Project> {
        let project = Project::discover(&self.cwd)?;
        crate::vcs::withhold_from_git(&project.config.llm.api_key_env);
        Ok(project)
    }
}
