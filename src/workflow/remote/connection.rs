//! The connection to the remote a run coordinates through (docs/design.md §20): the remote, the
//! claims this run holds there and sees of others, and what the rooms of `remote/` share.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use chrono::Utc;

use super::claims::Claim;
use super::claims::SeenClaim;
use super::preflight::RemotePlan;
use super::sync;
use super::sync::Place;
use crate::board::StoryId;
use crate::config::Project;
use crate::error::Result;
use crate::vcs::{self as git, GitError};
use crate::workflow::events::{ClaimChange, EventSink, RunEvent};

/// Tries of a fetch or push that got no answer (a dropped connection, a timeout).
pub(super) const NETWORK_ATTEMPTS: u32 = 4;
/// The wait before the first retry; it doubles after each.
pub(super) const FIRST_RETRY: Duration = Duration::from_millis(200);
/// Tries of a board push that another clone's push beat to the base.
pub(super) const PUBLISH_ATTEMPTS: usize = 12;

/// Runs blocking git work from async code without stalling the other tasks of the run.
pub(super) fn blocking<R>(work: impl FnOnce() -> R) -> R {
    tokio::task::block_in_place(work)
}

/// Who this run is, as its claims say.
#[derive(Debug)]
pub(super) struct Me {
    pub(super) host: String,
    pub(super) pid: u32,
    pub(super) run_id: OnceLock<String>,
    pub(super) fallback_run_id: String,
}

impl Me {
    pub(super) fn run_id(&self) -> &str {
        self.run_id.get().unwrap_or(&self.fallback_run_id)
    }
}

/// A claim this run holds: the commit its ref points at, and what it says.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) oid: String,
    pub(super) claim: Claim,
}

#[derive(Debug, Default)]
pub(super) struct ClaimBook {
    pub(super) held: HashMap<StoryId, Held>,
    /// Every claim on the remote as the last fetch saw it.
    pub(super) seen: HashMap<StoryId, SeenClaim>,
    /// Stories whose claim push found another claim there since the last fetch.
    pub(super) refused: HashSet<StoryId>,
    /// Stories another run took over from this one.
    pub(super) lost: HashSet<StoryId>,
    /// Each claim of another run's as this runner first saw it at its current value, on this
    /// runner's monotonic clock (docs/design.md §22): a claim whose value stays the same for a
    /// whole `remote.claimSeconds` was not renewed, and has lapsed whatever its `expires-at`
    /// says (a clock far ahead, or a hand-written `2099`).
    pub(super) observed: HashMap<StoryId, (String, std::time::Instant)>,
}

impl ClaimBook {
    /// Whether `seen` holds its story for another run now: readable, not past its own expiry,
    /// and renewed within the last `ttl` as far as this runner has watched it.
    pub(super) fn is_live(
        &self,
        seen: &SeenClaim,
        now: chrono::DateTime<Utc>,
        ttl: Duration,
    ) -> bool {
        let unchanged_too_long = self
            .observed
            .get(&seen.story_id)
            .is_some_and(|(oid, since)| *oid == seen.oid && since.elapsed() >= ttl);
        seen.is_live(now) && !unchanged_too_long
    }

    /// Takes in the claims a fetch found, keeping when each value was first seen.
    pub(super) fn observe(&mut self, seen: Vec<SeenClaim>) {
        let now = std::time::Instant::now();
        self.observed = seen
            .iter()
            .map(|claim| {
                let since = match self.observed.get(&claim.story_id) {
                    Some((oid, since)) if *oid == claim.oid => *since,
                    _ => now,
                };
                (claim.story_id.clone(), (claim.oid.clone(), since))
            })
            .collect();
        self.seen = seen.into_iter().map(|s| (s.story_id.clone(), s)).collect();
    }
}

/// How a claim attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// This run holds the story, and the board folder has the remote's latest version of it.
    Won,
    /// Another run holds it.
    Elsewhere,
}

/// How a merge's push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivered {
    /// The base is the tested merge plus the story's record, and the claim is released.
    Merged,
    /// Another clone moved the base first: integrate again on its new tip.
    Raced,
    /// Another run took the story over: nothing was merged.
    ClaimLost,
}

/// A board push's outcome.
pub(super) enum Published {
    Done,
    Raced,
    ClaimsLost(Vec<StoryId>),
}

/// The remote a run coordinates through, and what it holds there.
#[derive(Debug)]
pub struct Remote {
    pub(super) place: Place,
    pub(super) claim_ttl: Duration,
    pub(super) poll: Duration,
    pub(super) me: Me,
    /// The base commit the board folder was last brought to. Its lock is also the turn to
    /// push: one board or claim push of this run at a time.
    pub(super) synced: Mutex<String>,
    pub(super) book: Mutex<ClaimBook>,
    pub(super) events: EventSink,
    /// The checkout could not follow the base; said once.
    pub(super) follow_warned: AtomicBool,
    /// When the remote last answered a fetch.
    pub(super) last_fetch: Mutex<std::time::Instant>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Errors worth trying again: the remote gave no answer.
pub(super) fn transient(error: &GitError) -> bool {
    matches!(
        error,
        GitError::RemoteUnreachable { .. }
            | GitError::RemoteTimedOut { .. }
            | GitError::Failed { .. }
            | GitError::Spawn { .. }
    )
}

pub(super) fn host_name() -> String {
    std::env::var("AGENTIC_SDLC_HOST")
        .ok()
        .filter(|h| !h.trim().is_empty())
        .or_else(|| {
            nix::unistd::gethostname()
                .ok()
                .map(|h| h.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "unknown-host".into())
}

impl Remote {
    /// Sets up coordination through the remote `plan` checked: the board folder is taken to
    /// be in step with the base commit it was last brought to (or the checkout's, the first
    /// time).
    pub fn connect(plan: RemotePlan, project: &Project, events: EventSink) -> Result<Remote> {
        let root = project.root.clone();
        let board_dir = project.board_dir();
        let board_rel = board_dir
            .strip_prefix(&root)
            .unwrap_or(&board_dir)
            .to_string_lossy()
            .into_owned();
        let place = Place {
            board_rel: board_rel.clone(),
            board_dir,
            base: plan.base,
            target: plan.target,
            timeout: Duration::from_secs(project.config.remote.timeout_seconds),
            own_paths: vec![board_rel.into(), crate::config::WORKTREES_DIR.into()],
            root,
        };
        let head = git::head_commit(&place.root)?.unwrap_or_default();
        // A run that brought the board further than the checkout could follow left a mark.
        let synced = match git::resolve(&place.root, &place.synced_ref())? {
            Some(mark) if mark != head && git::is_ancestor(&place.root, &head, &mark)? => mark,
            _ => head,
        };
        let remote = &project.config.remote;
        Ok(Remote {
            place,
            claim_ttl: Duration::from_secs(remote.claim_seconds),
            poll: Duration::from_secs(remote.poll_seconds),
            me: Me {
                host: host_name(),
                pid: std::process::id(),
                run_id: OnceLock::new(),
                fallback_run_id: Utc::now().format("%Y%m%dT%H%M%S%3fZ").to_string(),
            },
            synced: Mutex::new(synced),
            book: Mutex::new(ClaimBook::default()),
            events,
            follow_warned: AtomicBool::new(false),
            last_fetch: Mutex::new(std::time::Instant::now()),
        })
    }

    /// Names this run in its claims after the run journal's id.
    pub fn set_run_id(&self, run_id: &str) {
        let _ = self.me.run_id.set(run_id.to_string());
    }

    pub fn name(&self) -> &str {
        &self.place.target.name
    }

    /// The board folder, relative to the repository root.
    pub fn board_folder(&self) -> std::path::PathBuf {
        std::path::PathBuf::from(&self.place.board_rel)
    }

    /// How long a run waiting on other clones' stories sleeps between looks.
    pub fn poll_interval(&self) -> Duration {
        self.poll
    }

    /// How often held claims are renewed: three times per claim period.
    pub fn renew_interval(&self) -> Duration {
        self.claim_ttl / 3
    }

    /// The remote base's tip as this clone last saw it; merges are made on it.
    pub fn synced_tip(&self) -> String {
        lock(&self.synced).clone()
    }

    pub fn holds(&self, story_id: &StoryId) -> bool {
        let book = lock(&self.book);
        book.held.contains_key(story_id) && !book.lost.contains(story_id)
    }

    pub fn lost(&self, story_id: &StoryId) -> bool {
        lock(&self.book).lost.contains(story_id)
    }

    /// Whether another run holds the story, as far as this clone knows.
    pub fn held_elsewhere(&self, story_id: &StoryId) -> bool {
        let book = lock(&self.book);
        if book.held.contains_key(story_id) {
            return false;
        }
        book.refused.contains(story_id)
            || book
                .seen
                .get(story_id)
                .is_some_and(|seen| book.is_live(seen, Utc::now(), self.claim_ttl))
    }

    /// Whether other runs hold live claims on stories that `open` says are still to be done
    /// here: finishing them may unblock stories that depend on them, and a run that died
    /// leaves its stories to be taken over once its claims lapse, so an `--auto` run waits for
    /// them. Not when the remote has not answered for a whole claim period: what this run
    /// knows of the others is too old to wait on.
    pub fn others_hold(&self, open: impl Fn(&str) -> bool) -> bool {
        if lock(&self.last_fetch).elapsed() > self.claim_ttl {
            return false;
        }
        let book = lock(&self.book);
        let now = Utc::now();
        book.seen
            .values()
            .filter(|seen| {
                !book.held.contains_key(&seen.story_id) && book.is_live(seen, now, self.claim_ttl)
            })
            .map(|seen| seen.story_id.as_str())
            .chain(book.refused.iter().map(StoryId::as_str))
            .any(open)
    }

    /// Stories another run holds now: live claims of others, and claims of this run's that
    /// were taken over.
    pub(super) fn others_stories(&self) -> HashSet<StoryId> {
        let book = lock(&self.book);
        let now = Utc::now();
        book.seen
            .values()
            .filter(|seen| {
                book.is_live(seen, now, self.claim_ttl) && !book.held.contains_key(&seen.story_id)
            })
            .map(|seen| seen.story_id.clone())
            .chain(book.lost.iter().cloned())
            .collect()
    }

    /// The stories this run holds.
    pub fn held(&self) -> Vec<StoryId> {
        let book = lock(&self.book);
        book.held
            .keys()
            .filter(|id| !book.lost.contains(*id))
            .cloned()
            .collect()
    }

    pub(super) fn warn(&self, story_id: Option<&str>, message: String) {
        self.events.emit(RunEvent::Warning {
            story_id: story_id.map(StoryId::from),
            message,
        });
    }

    pub(super) fn claim_event(&self, story_id: &StoryId, change: ClaimChange, detail: String) {
        self.events.emit(RunEvent::Claim {
            story_id: StoryId::from(story_id),
            change,
            detail,
        });
    }

    /// Brings the board folder (and, where it can, the checkout) to the remote's latest base.
    pub async fn pull(&self) -> Result<()> {
        blocking(|| {
            let mut synced = lock(&self.synced);
            self.pull_locked(&mut synced)
        })
    }

    pub(super) fn pull_locked(&self, synced: &mut String) -> Result<()> {
        let tip = self.fetch_now()?;
        self.bring_in(synced, &tip)
    }

    pub(super) fn bring_in(&self, synced: &mut String, tip: &str) -> Result<()> {
        if synced.as_str() != tip {
            sync::bring_in(&self.place, synced, tip, &|message| {
                self.warn(None, message)
            })?;
            *synced = tip.to_string();
            git::set_ref(&self.place.root, &self.place.synced_ref(), tip, None)?;
        }
        self.follow(tip);
        Ok(())
    }

    /// Moves the checkout of the base along, when nothing of the user's is in the way.
    pub(super) fn follow(&self, tip: &str) {
        let place = &self.place;
        let own: Vec<&std::path::Path> = place.own_paths.iter().map(|p| p.as_path()).collect();
        let followed = git::follow_checkout(
            &place.root,
            &place.base,
            tip,
            std::path::Path::new(&place.board_rel),
            &own,
        );
        let why = match followed {
            Ok(git::Followed::Moved) | Ok(git::Followed::NotCheckedOut) => return,
            Ok(git::Followed::Blocked(paths)) => format!(
                "uncommitted changes to {} would be overwritten",
                paths.join(", ")
            ),
            Ok(git::Followed::Diverged) => format!("{} has commits of its own", place.base),
            Err(err) => err.to_string(),
        };
        if !self.follow_warned.swap(true, Ordering::Relaxed) {
            self.warn(
                None,
                format!(
                    "the checkout stays behind {}/{} ({why}); the board and the merges go on through the remote",
                    place.target.name, place.base
                ),
            );
        }
    }
}
