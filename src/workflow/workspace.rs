//! The working tree a story's implementation lives in: the repository itself on the story's
//! branch (one implementation at a time), or a git worktree of its own (in parallel).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::OwnedMutexGuard;

use super::context::Workflow;
use crate::agents::prompts::DIFF_BUDGET;
use crate::board::{store, Column, Phase, Story};
use crate::vcs as git;

/// Where an action works, holding the shared tree for as long as the action runs.
pub struct Work {
    pub dir: PathBuf,
    pub branch: Option<String>,
    /// The branch the shared tree was on before the story's branch was checked out; `release`
    /// goes back to it, so every story branch starts from the user's branch, not the previous
    /// story's.
    return_to: Option<String>,
    _turn: Option<OwnedMutexGuard<()>>,
}

/// Git does not wait for a lock on `.git/config` or the worktree list, it fails ("could not
/// lock config file"), so stories create and remove their worktrees one at a time; the work
/// inside the worktrees still runs in parallel.
static WORKTREE_ADMIN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn worktree_admin_turn() -> std::sync::MutexGuard<'static, ()> {
    WORKTREE_ADMIN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn uses_worktrees(wf: &Workflow) -> bool {
    wf.config.git.worktrees && git::is_repo(&wf.root)
}

fn uses_branches(wf: &Workflow) -> bool {
    (wf.config.git.branch_per_story || wf.config.git.worktrees) && git::is_repo(&wf.root)
}

/// Sets up the working tree for `phase`. Phases before implement only read the repository.
/// Implement (and review, which reads the implementation) get the story's branch or worktree;
/// implement also moves the story to in-progress.
pub async fn prepare(wf: &Workflow, story: &Story, phase: Phase) -> Result<Work, String> {
    if phase != Phase::Implement {
        return Ok(Work {
            dir: wf.root.clone(),
            branch: None,
            return_to: None,
            _turn: None,
        });
    }
    let own_paths = wf.own_paths();
    let (dir, branch, return_to, turn) = if uses_worktrees(wf) {
        let (root, worktrees, slug) = (wf.root.clone(), wf.worktrees_dir(), story.slug.clone());
        let dir = blocking(move || {
            let _admin = worktree_admin_turn();
            exclude_from_git(&root, &worktrees);
            git::ensure_worktree(&root, &worktrees, &slug).map_err(|e| e.to_string())
        })
        .await?;
        (dir, Some(git::story_branch(&story.slug)), None, None)
    } else {
        let turn = Arc::clone(&wf.shared_tree).lock_owned().await;
        let branch = if uses_branches(wf) {
            let (root, slug) = (wf.root.clone(), story.slug.clone());
            let switch = blocking(move || {
                let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
                git::ensure_story_branch(&root, &slug, &ignore).map_err(|e| e.to_string())
            })
            .await?;
            Some(switch)
        } else {
            None
        };
        let (branch, return_to) = branch.map_or((None, None), |s| (Some(s.branch), s.previous));
        (wf.root.clone(), branch, return_to, Some(turn))
    };
    Ok(Work {
        dir,
        branch,
        return_to,
        _turn: turn,
    })
}

/// Marks the story as being implemented: in-progress, with its branch recorded.
pub fn start_implementation(wf: &Workflow, story_id: &str, work: &Work) -> crate::Result<()> {
    store::update(&wf.board_dir, story_id, None, |story| {
        if story.column != Column::InProgress {
            story.set_column(Column::InProgress);
        }
        story.set_opt("branch", work.branch.as_ref());
        Ok(())
    })?;
    Ok(())
}

/// After implement is committed into the story, its changes are committed on the story branch,
/// so the next story's branch starts from a clean tree and review sees exactly this work. With
/// `failure`, the commit keeps an unfinished attempt's partial work and says why.
pub async fn finish(
    wf: &Workflow,
    work: &Work,
    story_id: &str,
    phase: Phase,
    failure: Option<&str>,
) -> Result<(), String> {
    if phase != Phase::Implement || work.branch.is_none() {
        return Ok(());
    }
    let dir = work.dir.clone();
    let own_paths = wf.own_paths();
    let message = match failure {
        None => format!("agentic-sdlc: implement {story_id}"),
        Some(why) => {
            format!("agentic-sdlc: partial implementation of {story_id}\n\n{why}")
        }
    };
    blocking(move || {
        let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
        git::commit_all(&dir, &message, &ignore)
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
    .await
}

/// Puts the shared tree back on the branch it was on and lets the next story have it.
pub async fn release(wf: &Workflow, work: Work) {
    let Some(previous) = work.return_to.clone() else {
        return;
    };
    let dir = work.dir.clone();
    let result = blocking(move || git::checkout(&dir, &previous).map_err(|e| e.to_string())).await;
    if let Err(message) = result {
        wf.events.emit(super::events::Event::Warning {
            story_id: None,
            message: format!("could not switch the working tree back: {message}"),
        });
    }
}

/// The story's work as the reviewers see it.
pub async fn diff(wf: &Workflow, _story: &Story, work: &Work) -> Result<String, String> {
    if !git::is_repo(&work.dir) {
        return Ok(String::new());
    }
    let (dir, branch, own_paths) = (work.dir.clone(), work.branch.clone(), wf.own_paths());
    blocking(move || {
        let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
        git::diff_for_review(&dir, branch.as_deref(), &ignore, DIFF_BUDGET)
            .map_err(|e| e.to_string())
    })
    .await
}

/// Removes a finished story's worktree; its branch stays for the pull request.
pub async fn cleanup(wf: &Workflow, story: &Story) {
    if !uses_worktrees(wf) {
        return;
    }
    let path = wf.worktrees_dir().join(&story.slug);
    if !path.exists() {
        return;
    }
    let root = wf.root.clone();
    if let Err(err) = blocking(move || {
        let _admin = worktree_admin_turn();
        git::remove_worktree(&root, &path).map_err(|e| e.to_string())
    })
    .await
    {
        tracing::warn!("could not remove the worktree of {}: {err}", story.slug);
    }
}

/// Keeps the worktrees folder out of the user's `git status` without touching their
/// `.gitignore`: `.git/info/exclude` is local to this clone.
fn exclude_from_git(root: &Path, worktrees: &Path) {
    let Ok(relative) = worktrees.strip_prefix(root) else {
        return;
    };
    let exclude = root.join(".git").join("info").join("exclude");
    let line = format!("/{}/", relative.display());
    let current = std::fs::read_to_string(&exclude).unwrap_or_default();
    if current.lines().any(|l| l.trim() == line) {
        return;
    }
    if let Some(folder) = exclude.parent() {
        let _ = std::fs::create_dir_all(folder);
    }
    let separator = if current.is_empty() || current.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    let _ = std::fs::write(&exclude, format!("{current}{separator}{line}\n"));
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("git task failed: {e}"))?
}
