//! Throwaway git worktrees of the story's repository, for work that must not touch the story's
//! tree: implement's attempts, and the acceptance tests' run on the story's base commit.

use std::path::Path;

use crate::agents::prompts::is_test_path;
use crate::agents::transcript::Transcript;
use crate::board::StoryId;
use crate::workflow::tests_run::{self, TestRun};

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

/// A story's tree, where its tests run.
pub(super) struct Tree<'a> {
    pub(super) wf: &'a Workflow,
    pub(super) story_id: &'a StoryId,
    pub(super) dir: &'a Path,
    pub(super) transcript: &'a Transcript,
}

impl Tree<'_> {
    /// The test command's run with `tests` (paths in the tree) where the story's code does not
    /// exist: in the tree itself while it holds no code changed since `base`, else in a
    /// scratch worktree at `base` with the tests copied in (`acceptance_on_base`).
    pub(super) async fn tests_before_the_code(
        &self,
        base: &str,
        tests: &[String],
    ) -> Option<TestRun> {
        if !self.code_changed_since(base).await {
            return tests_run::run(self.wf, self.story_id, self.dir, self.transcript).await;
        }
        let scratch = self
            .wf
            .root
            .join(self.wf.worktrees_dir())
            .join(format!("{}.acceptance-base", self.story_id));
        if let Err(why) = make(self.wf, &scratch, base).await {
            tracing::warn!("{why}; the acceptance tests run in the story's tree");
            return tests_run::run(self.wf, self.story_id, self.dir, self.transcript).await;
        }
        for path in tests {
            let to = scratch.join(path);
            if let Some(folder) = to.parent() {
                let _ = std::fs::create_dir_all(folder);
            }
            let _ = std::fs::copy(self.dir.join(path), to);
        }
        self.transcript
            .record("acceptance_on_base", serde_json::json!({"base": base}));
        let run = tests_run::run(self.wf, self.story_id, &scratch, self.transcript).await;
        drop(self.wf, &scratch).await;
        run
    }

    /// Whether the tree holds code (not only tests, not the tool's own folders) changed since
    /// `base`.
    async fn code_changed_since(&self, base: &str) -> bool {
        let (dir, base, own) = (
            self.dir.to_path_buf(),
            base.to_string(),
            self.wf.own_paths(),
        );
        tokio::task::spawn_blocking(move || {
            git::worktree_changes(&dir, &base, &[])
                .unwrap_or_default()
                .iter()
                .filter(|path| !own.iter().any(|own| Path::new(path).starts_with(own)))
                .any(|path| !is_test_path(Path::new(path)))
        })
        .await
        .unwrap_or(false)
    }
}
