//! Throwaway git worktrees of the story's repository, for work that must not touch the story's
//! tree: implement's attempts, and the acceptance tests' run on the story's base commit.

use std::path::Path;

use crate::vcs as git;
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::context::Workflow;
use crate::workflow::workspace::{exclude_from_git, refuse_a_link, worktree_admin_turn};

/// A detached worktree at `start` in `dir`, under the tool's worktrees folder.
pub(super) async fn make(wf: &Workflow, dir: &Path, start: &str) -> Result<(), String> {
    let (root, dir, start) = (wf.root.clone(), dir.to_path_buf(), start.to_string());
    let worktrees = wf.worktrees_dir();
    off_the_runtime(move || {
        let _admin = worktree_admin_turn();
        refuse_a_link(&root.join(&worktrees));
        exclude_from_git(&root, &worktrees);
        Ok(git::add_scratch_worktree(&root, &dir, &start)?)
    })
    .await
    .map_err(|err| format!("could not make a worktree: {err}"))
}

/// Removes the worktree `dir`; a failure is only logged (the next run's cleanup takes it).
pub(super) async fn drop(wf: &Workflow, dir: &Path) {
    let (root, dir) = (wf.root.clone(), dir.to_path_buf());
    let removed = off_the_runtime(move || {
        let _admin = worktree_admin_turn();
        Ok(git::remove_worktree(&root, &dir)?)
    });
    if let Err(err) = removed.await {
        tracing::warn!("could not remove a scratch worktree: {err}");
    }
}
