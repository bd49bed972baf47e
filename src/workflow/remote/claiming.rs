//! Claims: taking a story (new or lapsed), renewing what this run holds, noticing what it lost.

use chrono::Utc;

use super::claims::Claim;
use super::connection::{blocking, lock, Claimed, Held, Remote};
use crate::board::Column;
use crate::board::StoryId;
use crate::error::Result;
use crate::vcs::{self as git, Expect, RefOutcome, RefUpdate};
use crate::workflow::context::Workflow;
use crate::workflow::events::{ClaimChange, RunEvent};

impl Remote {
    pub(super) fn claim_ref(story_id: &StoryId) -> String {
        format!("{}{story_id}", git::CLAIMS_NAMESPACE)
    }

    /// Claims a story for this run: a new claim if none is there, a takeover if the one there
    /// has lapsed. On success the board folder is brought to the remote's latest base, so the
    /// story is worked on as the remote has it now (another clone may have finished it the
    /// moment before).
    pub async fn claim(&self, story_id: &StoryId) -> Result<Claimed> {
        blocking(|| self.claim_now(story_id))
    }

    pub(super) fn claim_now(&self, story_id: &StoryId) -> Result<Claimed> {
        if self.holds(story_id) {
            return Ok(Claimed::Won);
        }
        let mut synced = lock(&self.synced);
        let now = Utc::now();
        let (seen, live) = {
            let book = lock(&self.book);
            let seen = book.seen.get(story_id).cloned();
            let live = seen
                .as_ref()
                .is_some_and(|seen| book.is_live(seen, now, self.claim_ttl));
            (seen, live)
        };
        if live {
            return Ok(Claimed::Elsewhere);
        }
        let claim = Claim {
            story_id: StoryId::from(story_id),
            host: self.me.host.clone(),
            run_id: self.me.run_id().to_string(),
            pid: self.me.pid,
            claimed_at: now,
            expires_at: now + self.claim_ttl,
        };
        let oid = git::claim_commit(&self.place.root, &claim.to_message())?;
        let update = RefUpdate {
            refname: Self::claim_ref(story_id),
            new: Some(oid.clone()),
            expect: match &seen {
                Some(seen) => Expect::At(seen.oid.clone()),
                None => Expect::Absent,
            },
        };
        let outcome = self.push_cas(std::slice::from_ref(&update), true)?;
        if outcome.get(&update.refname) != Some(&RefOutcome::Updated) {
            lock(&self.book).refused.insert(StoryId::from(story_id));
            return Ok(Claimed::Elsewhere);
        }
        git::mirror_claim(&self.place.root, self.name(), story_id, Some(&oid))?;
        {
            let mut book = lock(&self.book);
            book.held.insert(
                StoryId::from(story_id),
                Held {
                    oid,
                    claim: claim.clone(),
                },
            );
            book.lost.remove(story_id);
        }
        let expires = claim.expires_at.format("%H:%M:%S UTC");
        match seen.and_then(|seen| seen.claim) {
            Some(old) => self.claim_event(
                story_id,
                ClaimChange::TakenOver,
                format!(
                    "took the story over from {} (run {}), whose claim lapsed at {}",
                    old.host,
                    old.run_id,
                    old.expires_at.format("%H:%M:%S UTC")
                ),
            ),
            None => self.claim_event(
                story_id,
                ClaimChange::Claimed,
                format!("on {}, until {expires} unless renewed", self.name()),
            ),
        }
        self.pull_locked(&mut synced)?;
        Ok(Claimed::Won)
    }

    /// Renews every claim this run holds, in one push. A claim found replaced was taken over
    /// by another run (this one was too slow to renew): the story is marked lost.
    pub async fn renew(&self) {
        blocking(|| {
            if let Err(err) = self.renew_now() {
                self.warn(None, format!("could not renew this run's claims: {err}"));
            }
        })
    }

    pub(super) fn renew_now(&self) -> Result<()> {
        let _turn = lock(&self.synced);
        let held: Vec<(StoryId, Held)> = {
            let book = lock(&self.book);
            book.held
                .iter()
                .filter(|(id, _)| !book.lost.contains(*id))
                .map(|(id, held)| (id.clone(), held.clone()))
                .collect()
        };
        if held.is_empty() {
            return Ok(());
        }
        let expires_at = Utc::now() + self.claim_ttl;
        let mut renewed = Vec::new();
        let mut updates = Vec::new();
        for (id, held) in &held {
            let claim = Claim {
                expires_at,
                ..held.claim.clone()
            };
            let oid = git::claim_commit(&self.place.root, &claim.to_message())?;
            updates.push(RefUpdate {
                refname: Self::claim_ref(id),
                new: Some(oid.clone()),
                expect: Expect::At(held.oid.clone()),
            });
            renewed.push((id.clone(), Held { oid, claim }));
        }
        let outcomes = self.push_cas(&updates, false)?;
        for ((id, held), update) in renewed.into_iter().zip(&updates) {
            match outcomes.get(&update.refname) {
                Some(RefOutcome::Updated) => {
                    git::mirror_claim(&self.place.root, self.name(), &id, Some(&held.oid))?;
                    lock(&self.book).held.insert(id, held);
                }
                _ => self.mark_lost(&id),
            }
        }
        Ok(())
    }

    pub(super) fn mark_lost(&self, story_id: &StoryId) {
        let newly = lock(&self.book).lost.insert(StoryId::from(story_id));
        if newly {
            self.claim_event(
                story_id,
                ClaimChange::Lost,
                "another run took the story over; this run stops working on it".into(),
            );
        }
    }
}

/// After a claim is won: a story another clone had started implementing records a branch
/// that only that clone has. Its implementation starts again here, from the base.
pub fn adopt(wf: &Workflow, story_id: &StoryId) -> Result<()> {
    let story = wf.board.locate(story_id)?;
    if matches!(story.column, Column::Done | Column::Blocked) {
        return Ok(());
    }
    let Some(branch) = story.meta.branch.clone() else {
        return Ok(());
    };
    if git::branch_tip(&wf.root, &branch)?.is_some() {
        return Ok(());
    }
    wf.board.update(story_id, |story| {
        story.set("implementation_complete", &false);
        story.set("reviews_complete", &false);
        story.remove("branch");
        story.remove("base_branch");
        Ok(())
    })?;
    wf.events.emit(RunEvent::Warning {
        story_id: Some(StoryId::from(story_id)),
        message: format!(
            "{branch} was made on another clone and is not here; the story is implemented again from the base"
        ),
    });
    Ok(())
}
