//! The run loop's side of the remote: claims and releases run as tasks of their own beside
//! the actions, so a slow remote never holds up an action in flight.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::task::JoinSet;

use super::claiming::adopt;
use super::connection::{Claimed, Remote};
use crate::board::StoryId;
use crate::board::{Board, Column};
use crate::error::Result;
use crate::workflow::context::Workflow;
use crate::workflow::events::RunEvent;

/// A claim or release that finished.
pub enum Turn {
    Claimed(Result<Claimed>),
    Released(Result<()>),
}

/// Claims and releases in flight.
pub struct Turns {
    remote: Arc<Remote>,
    tasks: JoinSet<(StoryId, Turn)>,
    claiming: HashSet<StoryId>,
    releasing: HashSet<StoryId>,
}

impl Turns {
    pub fn new(remote: Arc<Remote>) -> Turns {
        Turns {
            remote,
            tasks: JoinSet::new(),
            claiming: HashSet::new(),
            releasing: HashSet::new(),
        }
    }

    pub fn remote(&self) -> &Arc<Remote> {
        &self.remote
    }

    /// Claims in flight: each takes one of the run's `--concurrency` places, like an action.
    pub fn claims_in_flight(&self) -> usize {
        self.claiming.len()
    }

    pub fn is_idle(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Whether the loop may start story `story_id`'s action now: yes when this run holds it.
    /// Otherwise a claim is started (unless one is under way, or another run holds it), and
    /// the loop looks again once it ends.
    pub fn admit(&mut self, wf: &Arc<Workflow>, story_id: &StoryId) -> bool {
        let remote = &self.remote;
        if remote.holds(story_id) {
            return true;
        }
        if self.claiming.contains(story_id)
            || self.releasing.contains(story_id)
            || remote.lost(story_id)
            || remote.held_elsewhere(story_id)
        {
            return false;
        }
        self.claiming.insert(StoryId::from(story_id));
        let (wf, remote, id) = (Arc::clone(wf), Arc::clone(remote), StoryId::from(story_id));
        self.tasks.spawn(async move {
            let claimed = match remote.claim(&id).await {
                Ok(Claimed::Won) => adopt(&wf, &id).map(|()| Claimed::Won),
                other => other,
            };
            (id, Turn::Claimed(claimed))
        });
        false
    }

    /// Releases every story this run holds that `keep` does not name (it has no action left
    /// in this run, or none that may run).
    pub fn release_idle(&mut self, keep: impl Fn(&str) -> bool) {
        for id in self.remote.held() {
            if keep(&id) || self.releasing.contains(&id) || self.claiming.contains(&id) {
                continue;
            }
            self.releasing.insert(id.clone());
            let remote = Arc::clone(&self.remote);
            self.tasks.spawn(async move {
                let released = remote.release(&id).await;
                (id, Turn::Released(released))
            });
        }
    }

    /// Whether other runs hold stories still open on `board` that this run might work on
    /// (not `parked`; with `story`, that story and what it depends on).
    pub fn waits_for_others(
        &self,
        board: &Board,
        parked: &HashSet<StoryId>,
        story: Option<&str>,
    ) -> bool {
        let wanted: Option<Vec<StoryId>> = story.map(|id| {
            let mut wanted = vec![StoryId::from(id)];
            wanted.extend(
                board
                    .get(id)
                    .map(|s| s.meta.depends_on.clone())
                    .unwrap_or_default(),
            );
            wanted
        });
        self.remote.others_hold(|id| {
            !parked.contains(id)
                && wanted.as_ref().is_none_or(|w| w.iter().any(|x| x == id))
                && board
                    .get(id)
                    .is_some_and(|s| !matches!(s.column, Column::Done | Column::Blocked))
        })
    }

    /// After an action: when another run took the story over meanwhile, this run's changes
    /// to it are set aside and the story goes back to the remote's version. Says whether it
    /// did, so the loop leaves the story alone from now on.
    pub fn give_up_if_lost(&self, story_id: &StoryId) -> bool {
        if !self.remote.lost(story_id) {
            return false;
        }
        if let Err(err) = self.remote.forget(story_id) {
            self.remote.events.emit(RunEvent::Warning {
                story_id: Some(StoryId::from(story_id)),
                message: err.to_string(),
            });
        }
        true
    }

    /// The next claim or release to finish; pending for ever when none is in flight.
    pub async fn join_next(&mut self) -> (StoryId, Turn) {
        loop {
            match self.tasks.join_next().await {
                Some(Ok((id, turn))) => {
                    self.claiming.remove(&id);
                    self.releasing.remove(&id);
                    return (id, turn);
                }
                // A claim task that panicked: the story is simply not claimed.
                Some(Err(err)) => tracing::warn!("a claim task failed: {err}"),
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// Waits for the claims and releases in flight, then pushes the board's last changes and
    /// releases every claim still held.
    pub async fn finish(&mut self) {
        while self.tasks.join_next().await.is_some() {}
        self.claiming.clear();
        self.releasing.clear();
        self.remote.finish().await;
    }
}
