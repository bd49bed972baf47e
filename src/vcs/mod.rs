//! Version control: everything the workflow needs from git and the GitHub CLI (docs/design.md §10,
//! §12).
//!
//! Every function runs `git` (or `gh`) as a child process with an argument vector, never
//! through a shell, so slugs, titles and paths cannot be interpreted as shell syntax. The
//! functions are synchronous because each is a quick local command; async callers wrap them in
//! `spawn_blocking`.
//!
//! Two rules run through the module. The user's work is never clobbered: a branch switch is
//! refused while the working tree has changes, and the review diff is built on a temporary index
//! so the user's staging area is untouched. And the files the tool itself keeps rewriting (the
//! board folder, `.agentic-sdlc.json`) are passed in as `ignore` paths, so they neither block a
//! switch nor end up in a diff or a commit.
//!
//! One file per concern: `repo` (facts and the user's uncommitted work), `branches`,
//! `worktrees`, `diff` (for reviewers), `integration` (delivering a story into its base),
//! `forge` (push and pull requests), `remote` (fetches and compare-and-swap pushes, for claims
//! and a shared base) and `snapshot` (commits of a few files made off the user's index, and the
//! checkout following a base that moved elsewhere).

mod branches;
mod command;
mod conflict_restart;
pub(crate) use command::withhold_from_git;
mod diff;
mod error;
mod forge;
mod gitlinks;
mod integration;
mod joined_additions;
mod refs;
mod remote;
mod repo;
mod snapshot;
#[cfg(test)]
pub(crate) mod test_support;
mod worktrees;

pub use branches::{
    branch_owner, commit_all, ensure_story_branch, free_story_branch, made_by_tool,
    operation_in_progress, record_base, remember_persons_files, remembered_persons_files,
    remembered_return_branch, resolve_base, story_branch_slugs, switch_back,
};
pub use conflict_restart::{restart_from_base, RestartedFile};
pub use diff::{diff_for_review, diff_of_branch, review_base};
pub use error::GitError;
pub use forge::{create_pull_request, gh_available, push_branch};
pub use gitlinks::story_gitlinks;
pub use integration::{
    abort_merge, advance_base, checkouts, commits_behind, commits_not_from, descends_from,
    fast_forward_checkout, files_with_markers, integrate, integrate_onto, is_merged,
    merge_into_checkout, story_changes, unmerged_paths, AdvanceRefused, Conflict, Integration,
    MergeOutcome,
};
pub use refs::{branch_tip, common_dir, restore_ref, tool_refs, BRANCH_PREFIX};
pub use remote::{
    claim_commit, claims_mirror, fetch, fetch_claims, mirror_claim, mirrored_claims, probe_push,
    push, remote_target, remotes_with_claims, tracking_ref, Expect, RefOutcome, RefUpdate,
    RemoteTarget, CLAIMS_NAMESPACE,
};
pub use repo::{
    current_branch, dirty_paths, dirty_tracked_paths, gitignored, head_commit, is_repo,
    may_be_in_repo, toplevel, untracked_paths,
};
pub use snapshot::{
    changed_paths, commit_files, differ_outside, follow_checkout, is_ancestor, read_files,
    reset_checkout, resolve, set_ref, worktree_changes, Followed,
};
pub use worktrees::{
    add_scratch_worktree, apply_patch, ensure_worktree, patch_since, remove_worktree,
};
