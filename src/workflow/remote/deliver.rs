//! Delivering a story through the shared remote: docs/design.md §12's merge, with the remote's base
//! as the base. The merge is made on the remote's tip as fetched now, tested there, and pushed as a
//! compare-and-swap on that tip, together with the story's record and the release of its claim.
//! When another clone moved the base first, the merge is made again on the new tip.

use super::connection::{Delivered, Remote};
use super::publishing::done_version;
use crate::agents::transcript::Transcript;
use crate::board::Story;
use crate::board::StoryId;
use crate::error::{Error, Result};
use crate::vcs as git;
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::context::Workflow;
use crate::workflow::merging::{merge_and_test, Delivery, Merge, MergeStep, Testing};
use crate::workflow::workspace::Work;

/// Times a delivery merges again because the base moved while it tested: other clones' merges
/// and board pushes (and this run's other stories') move the base all night, every few hundred
/// milliseconds on a busy fleet. Each new try waits a little longer, jittered, so clones that
/// collided do not collide again in step.
const REMOTE_BASE_RACES: usize = 40;

pub(crate) async fn integrate_through(
    wf: &Workflow,
    remote: &Remote,
    story: &Story,
    work: &Work,
    transcript: &Transcript,
) -> Result<Delivery> {
    let merge = Merge::of(story, work)?;
    let (root, name) = (wf.root.clone(), merge.branch.clone());
    let story_tip = off_the_runtime(move || {
        git::branch_tip(&root, &name)?.ok_or_else(|| {
            git::GitError::StoryBranchMissing {
                branch: name.to_string(),
            }
            .into()
        })
    })
    .await?;
    // The remote tip the story's merge last passed the tests on.
    let mut tested: Option<String> = None;
    for attempt in 0..REMOTE_BASE_RACES {
        if attempt > 0 {
            tokio::time::sleep(super::publishing::race_pause(attempt)).await;
        }
        remote.pull().await?;
        let tip = remote.synced_tip();
        if attempt > 0 {
            // The merge that lost the race is dropped, so the next one is made from the
            // story's own work again and the base's history keeps one merge per story.
            let (dir, own_tip) = (work.dir.clone(), story_tip.clone());
            off_the_runtime(move || Ok(git::reset_checkout(&dir, &own_tip)?)).await?;
        }
        let testing = testing(wf, remote, tested.as_deref(), &tip).await?;
        let step = merge_and_test(wf, story, work, &merge, Some(&tip), testing, transcript).await?;
        let (parent, commit) = match step {
            // Already in the remote's base: only the story's record goes with it.
            MergeStep::AlreadyMerged { commit } => (tip, commit),
            MergeStep::Rejected(issue) => return Ok(merge.rejected(issue)),
            MergeStep::Ready { commit, .. } => {
                tested = Some(tip);
                (commit.clone(), commit)
            }
        };
        if publish(wf, remote, story.id(), &parent, &commit, &merge.base).await? {
            return Ok(merge.merged(commit));
        }
    }
    let Merge { branch, base, .. } = merge;
    Err(Error::ActionFailed(format!(
        "{base} on {} kept moving while {branch} was tested against it ({REMOTE_BASE_RACES} \
         tries); nothing was merged",
        remote.name()
    ))
    .with_hint("run again later"))
}

/// Whether the merge on `tip` must be tested: always, unless the tests passed on a merge with
/// `tested` and the base changed only inside the board folder since (other clones' story
/// records), which leaves the merged tree outside it exactly as it was tested.
async fn testing(
    wf: &Workflow,
    remote: &Remote,
    tested: Option<&str>,
    tip: &str,
) -> Result<Testing> {
    let Some(tested) = tested else {
        return Ok(Testing::Run);
    };
    let (root, from, to, board) = (
        wf.root.clone(),
        tested.to_string(),
        tip.to_string(),
        remote.board_folder(),
    );
    let differ =
        off_the_runtime(move || Ok(git::differ_outside(&root, &from, &to, &board)?)).await?;
    Ok(if differ {
        Testing::Run
    } else {
        Testing::AlreadyPassed
    })
}

/// Pushes `parent` as the remote's base with the story moved to done (recording `merged` as
/// its merge) and its claim released, in one atomic push. `false` when another clone moved
/// the base first.
async fn publish(
    wf: &Workflow,
    remote: &Remote,
    story_id: &StoryId,
    parent: &str,
    merged: &str,
    base: &str,
) -> Result<bool> {
    let story = wf.board.locate(story_id)?;
    let (from, to) = done_version(&story, &wf.root, merged, base)?;
    match remote.deliver(story_id, parent, from, to).await? {
        Delivered::Merged => Ok(true),
        Delivered::Raced => Ok(false),
        Delivered::ClaimLost => Err(Error::ActionFailed(format!(
            "another run took {story_id} over while it was being merged (this run's claim lapsed); nothing was merged"
        ))),
    }
}
