//! Talking to the remote with retries: a fetch or push that got no answer is tried again, and
//! a push whose answer was lost is looked up before it is pushed again.

use std::collections::HashMap;

use super::claims::seen_claims;
use super::connection::{lock, transient, Remote, FIRST_RETRY, NETWORK_ATTEMPTS};
use crate::board::StoryId;
use crate::error::Result;
use crate::vcs::{self as git, Expect, GitError, RefOutcome, RefUpdate};

impl Remote {
    /// Runs a network command, trying again (with a growing pause) when it got no answer.
    pub(super) fn network<T>(
        &self,
        what: &str,
        mut op: impl FnMut() -> std::result::Result<T, GitError>,
    ) -> std::result::Result<T, GitError> {
        let mut pause = FIRST_RETRY;
        let mut attempt = 1;
        loop {
            match op() {
                Err(err) if transient(&err) && attempt < NETWORK_ATTEMPTS => {
                    self.warn(
                        None,
                        format!(
                            "{what} failed, trying again in {} ms: {}",
                            pause.as_millis(),
                            err.to_string().lines().next().unwrap_or_default()
                        ),
                    );
                    std::thread::sleep(pause);
                    pause *= 2;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }

    /// Fetches the remote's base and claims, and updates what this run knows of the claims.
    pub(super) fn fetch_now(&self) -> Result<String> {
        let tip = self.fetch_quietly()?;
        self.notice_taken_claims();
        Ok(tip)
    }

    /// [`Remote::fetch_now`] without concluding that a claim that changed was taken over: for
    /// a look at what a push without an answer did, which may have been this run's own change.
    pub(super) fn fetch_quietly(&self) -> Result<String> {
        let place = &self.place;
        let fetched = self.network("fetching from the remote", || {
            git::fetch(&place.root, &place.target, &place.base, place.timeout)
        })?;
        *lock(&self.last_fetch) = std::time::Instant::now();
        self.refresh_seen()?;
        Ok(fetched.base_tip)
    }

    /// Reads the claims the last fetch mirrored.
    pub(super) fn refresh_seen(&self) -> Result<()> {
        let seen = seen_claims(&self.place.root, &self.place.target.name)?;
        let mut book = lock(&self.book);
        book.observe(seen);
        book.refused.clear();
        Ok(())
    }

    /// A claim of this run's that the remote no longer holds as this run left it was taken
    /// over. A fetch is the first to show it when the push that would have said so was
    /// refused as a whole.
    pub(super) fn notice_taken_claims(&self) {
        let taken: Vec<StoryId> = {
            let book = lock(&self.book);
            book.held
                .iter()
                .filter(|(id, held)| {
                    !book.lost.contains(*id)
                        && book.seen.get(*id).map(|seen| &seen.oid) != Some(&held.oid)
                })
                .map(|(id, _)| id.clone())
                .collect()
        };
        for id in taken {
            self.mark_lost(&id);
        }
    }

    /// Pushes `updates` with compare-and-swap. When a push gets no answer it may still have
    /// landed: before trying again, a fetch shows what the remote holds, so a claim or a merge
    /// that did land is known as such and never pushed twice or left behind half known.
    pub(super) fn push_cas(
        &self,
        updates: &[RefUpdate],
        atomic: bool,
    ) -> Result<HashMap<String, RefOutcome>> {
        let place = &self.place;
        let mut pause = FIRST_RETRY;
        for attempt in 1..=NETWORK_ATTEMPTS {
            let error = match git::push(&place.root, &place.target, updates, atomic, place.timeout)
            {
                Ok(outcomes) => return Ok(outcomes),
                Err(err) if transient(&err) && attempt < NETWORK_ATTEMPTS => err,
                Err(err) => return Err(err.into()),
            };
            self.warn(
                None,
                format!(
                    "a push to {} got no answer, looking at what landed before trying again: {}",
                    place.target.name,
                    error.to_string().lines().next().unwrap_or_default()
                ),
            );
            std::thread::sleep(pause);
            pause *= 2;
            self.fetch_quietly()?;
            let observed: Vec<Option<RefOutcome>> = updates
                .iter()
                .map(|update| self.observe(update))
                .collect::<Result<_>>()?;
            if observed.iter().all(Option::is_none) {
                continue; // nothing landed: push again
            }
            return Ok(updates
                .iter()
                .zip(observed)
                .map(|(update, outcome)| {
                    let outcome = outcome.unwrap_or(RefOutcome::NotAttempted);
                    (update.refname.clone(), outcome)
                })
                .collect());
        }
        unreachable!("the last attempt returns")
    }

    /// What a fetch shows of one update: landed, not landed (`None`), or overtaken.
    pub(super) fn observe(&self, update: &RefUpdate) -> Result<Option<RefOutcome>> {
        let place = &self.place;
        let local = match update.refname.strip_prefix(git::CLAIMS_NAMESPACE) {
            Some(story) => format!("{}{story}", git::claims_mirror(&place.target.name)),
            None => git::tracking_ref(&place.target.name, &place.base),
        };
        let now = git::resolve(&place.root, &local)?;
        if now == update.new {
            return Ok(Some(RefOutcome::Updated));
        }
        let untouched = match (&update.expect, &now) {
            (Expect::Absent, None) => true,
            (Expect::At(old), Some(now)) => old == now,
            _ => false,
        };
        if untouched {
            return Ok(None);
        }
        // The base moved past this push's commit: it landed, and someone built on it.
        if let (Some(new), Some(now)) = (&update.new, &now) {
            if local.starts_with("refs/remotes/") && git::is_ancestor(&place.root, new, now)? {
                return Ok(Some(RefOutcome::Updated));
            }
        }
        Ok(Some(RefOutcome::Rejected(
            "changed on the remote meanwhile".into(),
        )))
    }
}
