//! The working tree a story's work lives in: the repository itself on the story's branch (one
//! story at a time), or a git worktree of its own (in parallel), and putting things back after
//! an action, or after a run that was killed in the middle of one (docs/design.md §12).

pub(crate) mod recovery;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::OwnedMutexGuard;

use super::blocking::off_the_runtime;
use super::context::Workflow;
use crate::agents::prompts::DIFF_BUDGET;
use crate::board::Slug;
use crate::board::StoryId;
use crate::board::{Phase, Story};
use crate::config::{Config, Integrate};
use crate::error::{Error, Result};
use crate::names::BranchName;
use crate::vcs as git;

/// Where an action works, holding the shared tree for as long as the action runs.
pub struct Work {
    pub dir: PathBuf,
    pub branch: Option<BranchName>,
    /// The branch the story's work goes into.
    pub base: Option<BranchName>,
    /// Files of a merge of the base that stopped on conflicts and still hold their markers;
    /// the implement agent resolves them, and the merge is committed only once none is left.
    pub conflicts: Vec<String>,
    /// Conflicted files of that merge that now hold the base's version, each with the story's
    /// change to it, for the implement agent to make again (docs/design.md §12).
    pub restarted: Vec<git::RestartedFile>,
    /// The branch the shared tree was on before the story's branch was checked out; `release`
    /// goes back to it, so the user's checkout is left as it was found.
    return_to: Option<String>,
    /// The commit the story's branch was made from, when this action made it.
    pub branch_base: Option<String>,
    /// Untracked files a person had in the shared tree when the action began (a log that
    /// `run > night.log` is writing, say): theirs, so never committed, diffed or counted as
    /// the story's work.
    pub theirs: Vec<PathBuf>,
    _turn: Option<OwnedMutexGuard<()>>,
}

impl Work {
    /// What the story's commits, diffs and fingerprints leave out here: the tool's own files
    /// and the person's untracked ones.
    pub fn ignore(&self, wf: &Workflow) -> Vec<PathBuf> {
        let mut ignore = wf.own_paths();
        ignore.extend(self.theirs.iter().cloned());
        ignore
    }
}

/// What an action needs from the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Refine, research and plan read the repository as it is.
    Read,
    /// Implement works on the story's branch, which first takes in the base's latest work
    /// (`integrate: merge`) or, when it is new, its dependencies' branches (`pr`, `none`).
    Implement,
    /// Review, pull request and delivery look at the story's branch as it is.
    Inspect,
}

impl Purpose {
    pub fn of(phase: Phase) -> Purpose {
        // A phase that writes (acceptance's tests, implement's code) works on the story's
        // branch, where implement goes on.
        if phase.reads_only() {
            Purpose::Read
        } else {
            Purpose::Implement
        }
    }
}

/// Git does not wait for a lock on `.git/config` or the worktree list, it fails ("could not
/// lock config file"), so stories create and remove their worktrees one at a time; the work
/// inside the worktrees still runs in parallel.
static WORKTREE_ADMIN: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub(crate) fn worktree_admin_turn() -> std::sync::MutexGuard<'static, ()> {
    WORKTREE_ADMIN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn uses_worktrees(wf: &Workflow) -> bool {
    wf.config.git.worktrees && git::is_repo(&wf.root)
}

/// Whether stories get branches of their own here.
pub fn uses_branches(wf: &Workflow) -> bool {
    (wf.config.git.branch_per_story || wf.config.git.worktrees) && git::is_repo(&wf.root)
}

/// Sets up the working tree for an action. Implement and the actions that inspect its work
/// get the story's branch or worktree.
pub async fn prepare(wf: &Workflow, story: &Story, purpose: Purpose) -> Result<Work> {
    let mut work = Work {
        dir: wf.root.clone(),
        branch: None,
        base: None,
        conflicts: Vec::new(),
        restarted: Vec::new(),
        return_to: None,
        branch_base: None,
        theirs: Vec::new(),
        _turn: None,
    };
    if purpose == Purpose::Read {
        return Ok(work);
    }
    let worktrees = uses_worktrees(wf);
    if !worktrees {
        work._turn = Some(Arc::clone(&wf.shared_tree).lock_owned().await);
    }
    if !uses_branches(wf) {
        return Ok(work);
    }
    let plan = BranchPlan {
        root: wf.root.clone(),
        story_id: StoryId::from(story.id()),
        slug: story.slug.clone(),
        recorded_branch: story.meta.branch.clone(),
        recorded_branch_base: story.meta.branch_base.clone(),
        recorded_base: story.meta.base_branch.clone(),
        configured_base: wf.config.git.base_branch.clone(),
        integrate: wf.config.git.integrate,
        purpose,
        dependency_branches: dependency_branches(wf, story),
        worktrees: worktrees.then(|| wf.worktrees_dir()),
        own_paths: wf.own_paths(),
        acceptance_tests: story.meta.acceptance_tests.clone(),
    };
    let checkout = off_the_runtime(move || plan.check_out()).await?;
    work.dir = checkout.dir;
    work.branch = Some(checkout.branch);
    work.base = Some(checkout.base);
    work.conflicts = checkout.conflicts;
    work.restarted = checkout.restarted;
    work.return_to = checkout.return_to;
    work.branch_base = checkout.created_from;
    work.theirs = checkout.theirs;
    Ok(work)
}

/// The branches of the story's done dependencies, which a new branch takes in when finished
/// work is not merged into the base (`pr`, `none`).
fn dependency_branches(wf: &Workflow, story: &Story) -> Vec<BranchName> {
    if wf.config.git.integrate == Integrate::Merge {
        return Vec::new();
    }
    story
        .meta
        .depends_on
        .iter()
        .filter_map(|id| wf.board.locate(id).ok())
        .filter_map(|dependency| dependency.meta.branch)
        .collect()
}

/// Everything `prepare` needs to know, owned, so the git work can run on a blocking thread.
struct BranchPlan {
    root: PathBuf,
    story_id: StoryId,
    slug: Slug,
    recorded_branch: Option<BranchName>,
    recorded_branch_base: Option<String>,
    recorded_base: Option<BranchName>,
    configured_base: Option<BranchName>,
    integrate: Integrate,
    purpose: Purpose,
    dependency_branches: Vec<BranchName>,
    worktrees: Option<PathBuf>,
    own_paths: Vec<PathBuf>,
    /// The story's acceptance tests: a conflict in one keeps its markers, never the base's.
    acceptance_tests: Vec<String>,
}

struct Checkout {
    dir: PathBuf,
    branch: BranchName,
    base: BranchName,
    conflicts: Vec<String>,
    restarted: Vec<git::RestartedFile>,
    return_to: Option<String>,
    /// The branch was made now, from this commit.
    created_from: Option<String>,
    theirs: Vec<PathBuf>,
}

impl BranchPlan {
    fn check_out(self) -> Result<Checkout> {
        let root = &self.root;
        let branch = self.choose_branch()?;
        let exists = git::branch_tip(root, &branch)?.is_some();
        if !exists && self.purpose == Purpose::Inspect && self.recorded_branch.is_some() {
            return Err(git::GitError::StoryBranchMissing {
                branch: branch.into(),
            }
            .into());
        }
        let base = match &self.recorded_base {
            Some(base) => base.clone(),
            None => BranchName::from(git::resolve_base(root, self.configured_base.as_deref())?),
        };
        let ignore: Vec<&Path> = self.own_paths.iter().map(PathBuf::as_path).collect();
        let (dir, return_to, created_from, theirs) = match &self.worktrees {
            Some(worktrees) => {
                let _admin = worktree_admin_turn();
                refuse_a_link(&root.join(worktrees));
                exclude_from_git(root, worktrees);
                let (dir, created) =
                    git::ensure_worktree(root, worktrees, &branch, &self.story_id, &base)?;
                (dir, None, created, Vec::new())
            }
            None => {
                // Taken before the switch: whatever is untracked now is the person's. It is
                // remembered in the repository too, so recovery after a crash leaves it alone.
                let untracked = git::untracked_paths(root, &ignore)?;
                git::remember_persons_files(root, &untracked)?;
                let theirs = untracked.into_iter().map(PathBuf::from).collect();
                let switch =
                    git::ensure_story_branch(root, &branch, &self.story_id, &base, &ignore)?;
                (root.clone(), switch.previous, switch.created, theirs)
            }
        };
        let mut checkout = Checkout {
            dir,
            branch,
            base,
            conflicts: Vec::new(),
            restarted: Vec::new(),
            return_to,
            created_from,
            theirs,
        };
        if self.purpose == Purpose::Implement {
            if let Err(err) = self.take_in_finished_work(&mut checkout, exists) {
                // The tree must not stay on the story branch when the action cannot start.
                if let Some(previous) = &checkout.return_to {
                    let _ = git::switch_back(root, previous);
                }
                return Err(err);
            }
        }
        Ok(checkout)
    }

    /// The story's branch: the one recorded in the story when the tool made it for this story
    /// (and its history still starts where it was made), else a name no branch has yet:
    /// `agentic-sdlc/<slug>`, then `-2`, `-3`… A person's branch of the same name is never
    /// adopted.
    fn choose_branch(&self) -> Result<BranchName> {
        let root = &self.root;
        if let Some(recorded) = &self.recorded_branch {
            if git::branch_tip(root, recorded)?.is_none() {
                return Ok(recorded.clone());
            }
            let owner = git::branch_owner(root, recorded, Some(&self.story_id))?;
            if owner.as_deref() == Some(self.story_id.as_str()) {
                if let Some(start) = &self.recorded_branch_base {
                    if !git::descends_from(root, start, recorded)? {
                        return Err(Error::ActionFailed(format!(
                            "{recorded} no longer starts at {start:.7}, where agentic-sdlc made \
                             it: its history was rewritten outside the tool, so it is not used"
                        ))
                        .with_hint(
                            "look at the branch; to start the story over, delete the branch and \
                             remove `branch` and `branch_base` from the story",
                        ));
                    }
                }
                return Ok(recorded.clone());
            }
            if self.purpose == Purpose::Inspect {
                return Err(Error::ActionFailed(format!(
                    "{recorded} was not made by agentic-sdlc for this story, so its work is not \
                     reviewed or merged"
                ))
                .with_hint(
                    "remove `branch` from the story to let implement start a branch of its own",
                ));
            }
        }
        Ok(BranchName::from(git::free_story_branch(
            root,
            &self.slug,
            &self.story_id,
        )?))
    }

    /// Brings into the story's branch the finished work it must build on: the base's latest
    /// tip when work is merged, the dependencies' branches when it is not.
    fn take_in_finished_work(&self, checkout: &mut Checkout, existed: bool) -> Result<()> {
        let (dir, branch) = (&checkout.dir, &checkout.branch);
        if self.integrate == Integrate::Merge {
            if !existed {
                return Ok(()); // just made from the base's tip
            }
            let message = format!("Merge {} into {branch}", checkout.base);
            let base_tip = git::branch_tip(&self.root, &checkout.base)?.ok_or_else(|| {
                git::GitError::BaseMissing {
                    branch: checkout.base.to_string(),
                }
            })?;
            if let git::MergeOutcome::Conflicted(files) =
                git::merge_into_checkout(dir, &base_tip, &message)?
            {
                let restart = git::restart_from_base(dir, &files, &self.acceptance_tests)?;
                checkout.conflicts = restart.marked;
                checkout.restarted = restart.restarted;
            }
            // The review diff starts at the base the story now holds, so reviewers see the
            // story's own work, not the teammates' commits that came in with the merge.
            git::record_base(&self.root, branch, &base_tip)?;
            return Ok(());
        }
        if existed {
            return Ok(());
        }
        for dependency in &self.dependency_branches {
            if git::branch_tip(&self.root, dependency)?.is_none() {
                continue;
            }
            let message = format!("Merge dependency {dependency} into {branch}");
            if let git::MergeOutcome::Conflicted(paths) =
                git::merge_into_checkout(dir, dependency, &message)?
            {
                git::abort_merge(dir)?;
                return Err(git::GitError::DependencyConflict {
                    branch: branch.to_string(),
                    paths,
                }
                .into());
            }
        }
        Ok(())
    }
}

/// Records where the story's implementation lives: its branch, the commit the tool made it
/// from, and the branch it goes into.
pub fn start_implementation(wf: &Workflow, story_id: &StoryId, work: &Work) -> Result<()> {
    if work.branch.is_none() {
        return Ok(());
    }
    wf.board.update(story_id, |story| {
        story.set_opt("branch", work.branch.as_ref());
        if work.branch_base.is_some() {
            story.set_opt("branch_base", work.branch_base.as_ref());
        }
        story.set_opt("base_branch", work.base.as_ref());
        Ok(())
    })?;
    Ok(())
}

/// After implement is committed into the story, its changes are committed on the story branch,
/// so the next story's branch starts from a clean tree and review sees exactly this work. With
/// `failure`, the commit keeps an unfinished attempt's partial work and says why.
///
/// A merge of the base the agent was to resolve is committed only when no conflict marker is
/// left; otherwise it is given up (the tree goes back to the story's last commit), what the
/// agent did is kept as a patch beside the transcripts, and the action fails.
pub async fn finish(
    wf: &Workflow,
    work: &Work,
    story_id: &StoryId,
    phase: Phase,
    failure: Option<&str>,
) -> Result<()> {
    if phase.reads_only() || work.branch.is_none() {
        return Ok(());
    }
    let dir = work.dir.clone();
    let own_paths = work.ignore(wf);
    let logs = wf.board_dir().join("logs").join(story_id);
    let conflicts = work.conflicts.clone();
    let message = match failure {
        None => format!("agentic-sdlc: implement {story_id}"),
        Some(why) => {
            format!("agentic-sdlc: partial implementation of {story_id}\n\n{why}")
        }
    };
    off_the_runtime(move || {
        let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
        if let Some(unresolved) = give_up_unresolved_merge(&dir, &conflicts, &logs)? {
            return Err(Error::ActionFailed(unresolved));
        }
        git::commit_all(&dir, &message, &ignore)?;
        Ok(())
    })
    .await
}

/// Acceptance's tests are committed on the story's branch when the phase completes; tests that
/// did not pass the check are put back as the branch had them, so a retry starts clean.
/// When a merge is in progress in `dir` and conflict markers are left in its files, aborts it
/// and says which files, and where the attempt's patch was saved.
fn give_up_unresolved_merge(
    dir: &Path,
    known_conflicts: &[String],
    logs: &Path,
) -> Result<Option<String>> {
    if git::operation_in_progress(dir)? != Some("merge") {
        return Ok(None);
    }
    let mut candidates = git::unmerged_paths(dir)?;
    candidates.extend(known_conflicts.iter().cloned());
    candidates.sort();
    candidates.dedup();
    let marked = git::files_with_markers(dir, &candidates);
    if marked.is_empty() {
        return Ok(None);
    }
    let patch = git::abort_merge(dir)?;
    fs_err::create_dir_all(logs)?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let saved = logs.join(format!("unresolved-merge-{stamp}.patch"));
    fs_err::write(&saved, patch)?;
    Ok(Some(format!(
        "conflict markers are left in {}; the merge was given up and nothing was committed (the attempt is saved in {})",
        marked.join(", "),
        saved.display()
    )))
}

/// Puts the shared tree back on the branch it was on and lets the next story have it.
pub async fn release(wf: &Workflow, work: Work) {
    let Some(previous) = work.return_to.clone() else {
        return;
    };
    let dir = work.dir.clone();
    let result = off_the_runtime(move || Ok(git::switch_back(&dir, &previous)?)).await;
    if let Err(err) = result {
        wf.events.emit(super::events::RunEvent::Warning {
            story_id: None,
            message: format!("could not switch the working tree back: {err}"),
        });
    }
}

/// The story's work as the reviewers see it.
pub async fn diff(wf: &Workflow, _story: &Story, work: &Work) -> Result<String> {
    diff_of(&work.dir, work.branch.clone(), work.ignore(wf)).await
}

/// The story's work in `dir` (on `branch`, when it has one) as one patch, cut to the
/// reviewers' budget, leaving out `ignore`; empty outside git.
pub async fn diff_of(
    dir: &Path,
    branch: Option<BranchName>,
    ignore: Vec<PathBuf>,
) -> Result<String> {
    if !git::is_repo(dir) {
        return Ok(String::new());
    }
    let (dir, own_paths) = (dir.to_path_buf(), ignore);
    off_the_runtime(move || {
        let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
        Ok(git::diff_for_review(
            &dir,
            branch.as_deref(),
            &ignore,
            DIFF_BUDGET,
        )?)
    })
    .await
}

/// Removes a finished story's worktree; its branch stays.
pub async fn cleanup(wf: &Workflow, story: &Story) {
    if !uses_worktrees(wf) {
        return;
    }
    let Some(branch) = &story.meta.branch else {
        return;
    };
    let name = branch.strip_prefix(git::BRANCH_PREFIX).unwrap_or(branch);
    let path = wf.worktrees_dir().join(name);
    if !path.exists() {
        return;
    }
    let root = wf.root.clone();
    if let Err(err) = off_the_runtime(move || {
        let _admin = worktree_admin_turn();
        Ok(git::remove_worktree(&root, &path)?)
    })
    .await
    {
        tracing::warn!("could not remove the worktree of {}: {err}", story.slug);
    }
}

/// Right before a worktree is made in it: the worktrees folder must be the tool's own folder,
/// not a link a boxed command planted since the run began (docs/design.md §22).
pub(crate) fn refuse_a_link(worktrees: &Path) {
    if let Some(warning) = super::own_folders::ensure_real_folder(worktrees) {
        tracing::warn!("{warning}");
    }
}

/// Keeps the worktrees folder out of the user's `git status` without touching their
/// `.gitignore`: `.git/info/exclude` is local to this clone.
pub(crate) fn exclude_from_git(root: &Path, worktrees: &Path) {
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
