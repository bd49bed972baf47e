//! Pushing the board's changes (and a tested merge) to the remote's base, with the release of
//! claims in the same atomic push; giving up a story; the last push of a run.

use std::time::Duration;

use chrono::Utc;

use super::connection::{blocking, lock, Delivered, Published, Remote, PUBLISH_ATTEMPTS};
use super::sync::{self, Side};
use crate::board::StoryId;
use crate::board::{today, Column, Story};
use crate::error::{Error, Result};
use crate::vcs::{self as git, Expect, RefOutcome, RefUpdate};
use crate::workflow::events::ClaimChange;

impl Remote {
    /// Releases a story this run holds (done, blocked, or set aside), pushing the board's
    /// changes with it.
    pub async fn release(&self, story_id: &StoryId) -> Result<()> {
        blocking(|| self.release_now(&[StoryId::from(story_id)]))
    }

    pub(super) fn release_now(&self, stories: &[StoryId]) -> Result<()> {
        let mut stories: Vec<StoryId> = stories
            .iter()
            .filter(|id| self.holds(id))
            .cloned()
            .collect();
        let mut synced = lock(&self.synced);
        for attempt in 1..=PUBLISH_ATTEMPTS {
            match self.publish(&mut synced, None, &[], &stories, "agentic-sdlc: board")? {
                Published::Done => return Ok(()),
                Published::ClaimsLost(lost) => stories.retain(|id| !lost.contains(id)),
                Published::Raced => {
                    std::thread::sleep(race_pause(attempt));
                    self.pull_locked(&mut synced)?;
                }
            }
        }
        Err(Error::ActionFailed(format!(
            "the board could not be pushed to {}: other clones kept pushing first ({PUBLISH_ATTEMPTS} tries); the changes stay in this checkout for the next run",
            self.name()
        )))
    }

    /// Pushes `parent` (a tested merge, or the tip that already holds the story's work) as the
    /// new base, with the story moved to done (its file going from `from` to `to`) and its
    /// claim released, in one atomic push.
    pub async fn deliver(
        &self,
        story_id: &StoryId,
        parent: &str,
        from: Side,
        to: Side,
    ) -> Result<Delivered> {
        blocking(|| {
            // A run merges only a story it still holds: the claim's release is pushed with
            // the merge, compare-and-swap, so a claim taken over meanwhile refuses the whole
            // push; one already known to be lost is not pushed at all (docs/design.md §22).
            if !self.holds(story_id) {
                return Ok(Delivered::ClaimLost);
            }
            let mut synced = lock(&self.synced);
            let release = vec![StoryId::from(story_id)];
            let message = format!("agentic-sdlc: {story_id} done");
            let overrides = [(story_id.to_string(), from, to)];
            Ok(
                match self.publish(&mut synced, Some(parent), &overrides, &release, &message)? {
                    Published::Done => Delivered::Merged,
                    Published::Raced => Delivered::Raced,
                    Published::ClaimsLost(_) => Delivered::ClaimLost,
                },
            )
        })
    }

    /// Commits the board folder's changes on `code` (a tested merge) or on the synced base,
    /// with `overrides` (a story's new version, not yet in the folder), and pushes it as the
    /// base with the release of `release`'s claims, atomically.
    pub(super) fn publish(
        &self,
        synced: &mut String,
        code: Option<&str>,
        overrides: &[(String, Side, Side)],
        release: &[StoryId],
        message: &str,
    ) -> Result<Published> {
        let place = &self.place;
        // The push is a compare-and-swap on `synced`, and a lease that matches lets git replace
        // the base with any commit: one that does not build on `synced` (a merge made on an
        // older tip, while this run's other story pushed) would drop what came in between.
        if let Some(code) = code {
            if !git::descends_from(&place.root, synced, code)? {
                return Ok(Published::Raced);
            }
        }
        let parent = code.unwrap_or(synced.as_str()).to_string();
        // Stories another run holds are its to publish; what this clone did to them (a lapsed
        // claim's late work) stays here, to be set aside. A story given in `overrides` goes
        // as given, its other copies on the parent removed as for any story.
        let skip = self.others_stories();
        let note = |message: String| self.warn(None, message);
        let mut files = sync::publishable(place, synced, &parent, &skip, &note)?;
        for (_, from, to) in overrides {
            files.retain(|(path, _)| *path != from.path && *path != to.path);
            if from.path != to.path {
                files.push((from.path.clone(), None));
            }
            files.push((to.path.clone(), Some(to.bytes.clone())));
        }
        let commit = git::commit_files(&place.root, &parent, &files, message)?;
        let mut updates = Vec::new();
        let base_ref = format!("refs/heads/{}", place.base);
        if commit != *synced {
            updates.push(RefUpdate {
                refname: base_ref.clone(),
                new: Some(commit.clone()),
                expect: Expect::At(synced.clone()),
            });
        }
        let held: Vec<(StoryId, String)> = {
            let book = lock(&self.book);
            release
                .iter()
                .filter_map(|id| book.held.get(id).map(|h| (id.clone(), h.oid.clone())))
                .collect()
        };
        for (id, oid) in &held {
            updates.push(RefUpdate {
                refname: Self::claim_ref(id),
                new: None,
                expect: Expect::At(oid.clone()),
            });
        }
        if updates.is_empty() {
            return Ok(Published::Done);
        }
        let outcomes = self.push_cas(&updates, true)?;
        let landed = |refname: &str| outcomes.get(refname) == Some(&RefOutcome::Updated);
        if !updates.iter().all(|u| landed(&u.refname)) {
            let lost: Vec<StoryId> = held
                .iter()
                .filter(|(id, _)| {
                    matches!(
                        outcomes.get(&Self::claim_ref(id)),
                        Some(RefOutcome::Rejected(_))
                    )
                })
                .map(|(id, _)| id.clone())
                .collect();
            if !lost.is_empty() {
                for id in &lost {
                    self.mark_lost(id);
                }
                return Ok(Published::ClaimsLost(lost));
            }
            return Ok(Published::Raced);
        }
        for (id, _) in &held {
            git::mirror_claim(&place.root, self.name(), id, None)?;
            lock(&self.book).held.remove(id);
            self.claim_event(id, ClaimChange::Released, format!("on {}", self.name()));
        }
        if commit != *synced {
            *synced = commit.clone();
            git::set_ref(&place.root, &place.synced_ref(), &commit, None)?;
        }
        for (id, from, to) in overrides {
            sync::settle_story(place, id, Some(from), Some(to), &|m| self.warn(Some(id), m))?;
        }
        self.follow(&commit);
        Ok(Published::Done)
    }

    /// Gives up a story another run took over: this clone's changes to it since the last
    /// sync are set aside (beside its transcripts) and its file goes back to the remote's
    /// version, so nothing of this run's work on it reaches the remote.
    pub fn forget(&self, story_id: &StoryId) -> Result<()> {
        blocking(|| {
            let synced = lock(&self.synced);
            let note = |message: String| self.warn(Some(story_id), message);
            sync::give_up_story(&self.place, story_id, &synced, &note)?;
            lock(&self.book).held.remove(story_id);
            Ok(())
        })
    }

    /// At the end of a run: the board's last changes are pushed and every claim still held is
    /// released, in one push. A failure is said, not fatal: the changes stay in the checkout
    /// for the next run, and the claims lapse on their own.
    pub async fn finish(&self) {
        let held = self.held();
        let result = blocking(|| self.release_now(&held));
        if let Err(err) = result {
            self.warn(
                None,
                format!(
                    "the run's last board changes did not reach {}: {err}",
                    self.name()
                ),
            );
        }
    }
}

/// A short, growing, jittered pause after losing a race to the base, so clones that collided
/// do not collide again in step.
pub(super) fn race_pause(attempt: usize) -> Duration {
    let jitter = u64::from(Utc::now().timestamp_subsec_millis() % 50);
    Duration::from_millis(20 * attempt as u64 + jitter)
}

/// The version of a story that moves it to done with its merge recorded, as `move_to_done`
/// writes it, for the push that merges it; the story file is rewritten locally after.
pub fn done_version(
    story: &Story,
    root: &std::path::Path,
    merged: &str,
    base: &str,
) -> Result<(Side, Side)> {
    let relative = |path: &std::path::Path| {
        path.strip_prefix(root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    };
    // The file's own bytes: the push replaces exactly what the board folder holds.
    let bytes = fs_err::read(&story.path)?;
    let mut done = Story::parse_bytes(&bytes, story.path.clone(), story.column)?;
    let from = Side {
        path: relative(&story.path),
        bytes,
    };
    crate::workflow::merging::record_done(&mut done, Some((merged, base)));
    done.set("updated", &today());
    let folder = story
        .path
        .parent()
        .and_then(std::path::Path::parent)
        .map(|board| board.join(Column::Done.name()))
        .unwrap_or_default();
    let name = story
        .path
        .file_name()
        .map(std::path::PathBuf::from)
        .unwrap_or_default();
    let to = Side {
        path: relative(&folder.join(name)),
        bytes: done.to_text().into_bytes(),
    };
    Ok((from, to))
}
