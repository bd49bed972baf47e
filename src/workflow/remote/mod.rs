//! Past one machine (docs/design.md §20): several clones work one board through the git remote they
//! share, with no server of their own.
//!
//! - **Claims.** Before a run works on a story it creates `refs/agentic-sdlc/claims/<id>` on
//!   the remote with a push that only succeeds if the ref does not exist; the claim records
//!   host, run and expiry ([`claims::Claim`]). A background task renews it every third of
//!   `remote.claimSeconds`. A lapsed claim is taken over with a push naming its old value.
//! - **The board.** Story files reach the remote's base branch by fetch, merge and push
//!   ([`sync`]); a push that lost a race is retried on the new tip.
//! - **Merges.** A story is merged as on one machine (docs/design.md §12), against the
//!   remote's tip, and the tested merge, the story's move to done and the release of its claim
//!   go in one atomic push, so the base never holds the merge without the record, and a run
//!   whose claim lapsed cannot merge.
//!
//! Git round trips per story: the claim, the fetch after it (the story as the remote has it
//! now), then the fetch and the push of the merge itself. Work that only changes the board
//! (refine, research, plan, review) reaches the remote with the merge, when the story is set
//! aside, or when the run ends.

mod claiming;
mod claims;
mod deliver;
mod network;
mod preflight;
mod publishing;
mod sync;
mod turns;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use chrono::Utc;

pub use claiming::adopt;
pub use claims::{remotes_with_claims, seen_claims, Claim, SeenClaim};
pub(crate) use deliver::integrate_through;
pub use preflight::{remote_preflight, RemotePlan};
pub use publishing::done_version;
pub use sync::Side;
pub use turns::{Turn, Turns};

use self::sync::Place;
use super::events::{ClaimChange, EventSink, RunEvent};
use crate::board::StoryId;
use crate::config::Project;
use crate::error::Result;
use crate::vcs::{self as git, GitError};

/// Tries of a fetch or push that got no answer (a dropped connection, a timeout).
const NETWORK_ATTEMPTS: u32 = 4;
/// The wait before the first retry; it doubles after each.
const FIRST_RETRY: Duration = Duration::from_millis(200);
/// Tries of a board push that another clone's push beat to the base.
const PUBLISH_ATTEMPTS: usize = 12;

/// Runs blocking git work from async code without stalling the other tasks of the run.
fn blocking<R>(work: impl FnOnce() -> R) -> R {
    tokio::task::block_in_place(work)
}

/// Who this run is, as its claims say.
#[derive(Debug)]
struct Me {
    host: String,
    pid: u32,
    run_id: OnceLock<String>,
    fallback_run_id: String,
}

impl Me {
    fn run_id(&self) -> &str {
        self.run_id.get().unwrap_or(&self.fallback_run_id)
    }
}

/// A claim this run holds: the commit its ref points at, and what it says.
#[derive(Debug, Clone)]
struct Held {
    oid: String,
    claim: Claim,
}

#[derive(Debug, Default)]
struct ClaimBook {
    held: HashMap<StoryId, Held>,
    /// Every claim on the remote as the last fetch saw it.
    seen: HashMap<StoryId, SeenClaim>,
    /// Stories whose claim push found another claim there since the last fetch.
    refused: HashSet<StoryId>,
    /// Stories another run took over from this one.
    lost: HashSet<StoryId>,
    /// Each claim of another run's as this runner first saw it at its current value, on this
    /// runner's monotonic clock (docs/design.md §22): a claim whose value stays the same for a
    /// whole `remote.claimSeconds` was not renewed, and has lapsed whatever its `expires-at`
    /// says (a clock far ahead, or a hand-written `2099`).
    observed: HashMap<StoryId, (String, std::time::Instant)>,
}

impl ClaimBook {
    /// Whether `seen` holds its story for another run now: readable, not past its own expiry,
    /// and renewed within the last `ttl` as far as this runner has watched it.
    fn is_live(&self, seen: &SeenClaim, now: chrono::DateTime<Utc>, ttl: Duration) -> bool {
        let unchanged_too_long = self
            .observed
            .get(&seen.story_id)
            .is_some_and(|(oid, since)| *oid == seen.oid && since.elapsed() >= ttl);
        seen.is_live(now) && !unchanged_too_long
    }

    /// Takes in the claims a fetch found, keeping when each value was first seen.
    fn observe(&mut self, seen: Vec<SeenClaim>) {
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
enum Published {
    Done,
    Raced,
    ClaimsLost(Vec<StoryId>),
}

/// The remote a run coordinates through, and what it holds there.
#[derive(Debug)]
pub struct Remote {
    place: Place,
    claim_ttl: Duration,
    poll: Duration,
    me: Me,
    /// The base commit the board folder was last brought to. Its lock is also the turn to
    /// push: one board or claim push of this run at a time.
    synced: Mutex<String>,
    book: Mutex<ClaimBook>,
    events: EventSink,
    /// The checkout could not follow the base; said once.
    follow_warned: AtomicBool,
    /// When the remote last answered a fetch.
    last_fetch: Mutex<std::time::Instant>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Errors worth trying again: the remote gave no answer.
fn transient(error: &GitError) -> bool {
    matches!(
        error,
        GitError::RemoteUnreachable { .. }
            | GitError::RemoteTimedOut { .. }
            | GitError::Failed { .. }
            | GitError::Spawn { .. }
    )
}

fn host_name() -> String {
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
    fn others_stories(&self) -> HashSet<StoryId> {
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

    fn warn(&self, story_id: Option<&str>, message: String) {
        self.events.emit(RunEvent::Warning {
            story_id: story_id.map(StoryId::from),
            message,
        });
    }

    fn claim_event(&self, story_id: &StoryId, change: ClaimChange, detail: String) {
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

    fn pull_locked(&self, synced: &mut String) -> Result<()> {
        let tip = self.fetch_now()?;
        self.bring_in(synced, &tip)
    }

    fn bring_in(&self, synced: &mut String, tip: &str) -> Result<()> {
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
    fn follow(&self, tip: &str) {
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
