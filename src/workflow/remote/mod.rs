//! Past one machine (SPEC §20): several clones work one board through the git remote they
//! share, with no server of their own.
//!
//! - **Claims.** Before a run works on a story it creates `refs/agentic-sdlc/claims/<id>` on
//!   the remote with a push that only succeeds if the ref does not exist; the claim records
//!   host, run and expiry ([`claims::Claim`]). A background task renews it every third of
//!   `remote.claimSeconds`. A lapsed claim is taken over with a push naming its old value.
//! - **The board.** Story files reach the remote's base branch by fetch, merge and push
//!   ([`sync`]); a push that lost a race is retried on the new tip.
//! - **Merges.** A story is merged as on one machine (SPEC §12), against the remote's tip, and
//!   the tested merge, the story's move to done and the release of its claim go in one atomic
//!   push, so the base never holds the merge without the record, and a run whose claim lapsed
//!   cannot merge.
//!
//! Git round trips per story: the claim, the fetch after it (the story as the remote has it
//! now), then the fetch and the push of the merge itself. Work that only changes the board
//! (refine, research, plan, review) reaches the remote with the merge, when the story is set
//! aside, or when the run ends.

mod claims;
mod deliver;
mod preflight;
mod sync;
mod turns;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use chrono::Utc;

pub use claims::{remotes_with_claims, seen_claims, Claim, SeenClaim};
pub(crate) use deliver::integrate_through;
pub use preflight::{remote_preflight, RemotePlan};
pub use sync::Side;
pub use turns::{Turn, Turns};

use self::sync::Place;
use super::context::Workflow;
use super::events::{ClaimChange, EventSink, RunEvent};
use crate::board::{today, Column, Story};
use crate::config::Project;
use crate::error::{Error, Result};
use crate::vcs::{self as git, Expect, GitError, RefOutcome, RefUpdate};

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
    held: HashMap<String, Held>,
    /// Every claim on the remote as the last fetch saw it.
    seen: HashMap<String, SeenClaim>,
    /// Stories whose claim push found another claim there since the last fetch.
    refused: HashSet<String>,
    /// Stories another run took over from this one.
    lost: HashSet<String>,
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
    ClaimsLost(Vec<String>),
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
            own_paths: vec![board_rel.into(), super::context::WORKTREES_DIR.into()],
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

    pub fn holds(&self, story_id: &str) -> bool {
        let book = lock(&self.book);
        book.held.contains_key(story_id) && !book.lost.contains(story_id)
    }

    pub fn lost(&self, story_id: &str) -> bool {
        lock(&self.book).lost.contains(story_id)
    }

    /// Whether another run holds the story, as far as this clone knows.
    pub fn held_elsewhere(&self, story_id: &str) -> bool {
        let book = lock(&self.book);
        if book.held.contains_key(story_id) {
            return false;
        }
        book.refused.contains(story_id)
            || book
                .seen
                .get(story_id)
                .is_some_and(|seen| seen.is_live(Utc::now()))
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
            .filter(|seen| !book.held.contains_key(&seen.story_id) && seen.is_live(now))
            .map(|seen| seen.story_id.as_str())
            .chain(book.refused.iter().map(String::as_str))
            .any(open)
    }

    /// Stories another run holds now: live claims of others, and claims of this run's that
    /// were taken over.
    fn others_stories(&self) -> HashSet<String> {
        let book = lock(&self.book);
        let now = Utc::now();
        book.seen
            .values()
            .filter(|seen| seen.is_live(now) && !book.held.contains_key(&seen.story_id))
            .map(|seen| seen.story_id.clone())
            .chain(book.lost.iter().cloned())
            .collect()
    }

    /// The stories this run holds.
    pub fn held(&self) -> Vec<String> {
        let book = lock(&self.book);
        book.held
            .keys()
            .filter(|id| !book.lost.contains(*id))
            .cloned()
            .collect()
    }

    fn warn(&self, story_id: Option<&str>, message: String) {
        self.events.emit(RunEvent::Warning {
            story_id: story_id.map(str::to_string),
            message,
        });
    }

    fn claim_event(&self, story_id: &str, change: ClaimChange, detail: String) {
        self.events.emit(RunEvent::Claim {
            story_id: story_id.to_string(),
            change,
            detail,
        });
    }

    /// Runs a network command, trying again (with a growing pause) when it got no answer.
    fn network<T>(
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
    fn fetch_now(&self) -> Result<String> {
        let tip = self.fetch_quietly()?;
        self.notice_taken_claims();
        Ok(tip)
    }

    /// [`Remote::fetch_now`] without concluding that a claim that changed was taken over: for
    /// a look at what a push without an answer did, which may have been this run's own change.
    fn fetch_quietly(&self) -> Result<String> {
        let place = &self.place;
        let fetched = self.network("fetching from the remote", || {
            git::fetch(&place.root, &place.target, &place.base, place.timeout)
        })?;
        *lock(&self.last_fetch) = std::time::Instant::now();
        self.refresh_seen()?;
        Ok(fetched.base_tip)
    }

    /// Reads the claims the last fetch mirrored.
    fn refresh_seen(&self) -> Result<()> {
        let seen = seen_claims(&self.place.root, &self.place.target.name)?;
        let mut book = lock(&self.book);
        book.seen = seen.into_iter().map(|s| (s.story_id.clone(), s)).collect();
        book.refused.clear();
        Ok(())
    }

    /// A claim of this run's that the remote no longer holds as this run left it was taken
    /// over. A fetch is the first to show it when the push that would have said so was
    /// refused as a whole.
    fn notice_taken_claims(&self) {
        let taken: Vec<String> = {
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

    /// Pushes `updates` with compare-and-swap. When a push gets no answer it may still have
    /// landed: before trying again, a fetch shows what the remote holds, so a claim or a merge
    /// that did land is known as such and never pushed twice or left behind half known.
    fn push_cas(&self, updates: &[RefUpdate], atomic: bool) -> Result<HashMap<String, RefOutcome>> {
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
    fn observe(&self, update: &RefUpdate) -> Result<Option<RefOutcome>> {
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

    fn claim_ref(story_id: &str) -> String {
        format!("{}{story_id}", git::CLAIMS_NAMESPACE)
    }

    /// Claims a story for this run: a new claim if none is there, a takeover if the one there
    /// has lapsed. On success the board folder is brought to the remote's latest base, so the
    /// story is worked on as the remote has it now (another clone may have finished it the
    /// moment before).
    pub async fn claim(&self, story_id: &str) -> Result<Claimed> {
        blocking(|| self.claim_now(story_id))
    }

    fn claim_now(&self, story_id: &str) -> Result<Claimed> {
        if self.holds(story_id) {
            return Ok(Claimed::Won);
        }
        let mut synced = lock(&self.synced);
        let now = Utc::now();
        let seen = lock(&self.book).seen.get(story_id).cloned();
        if seen.as_ref().is_some_and(|seen| seen.is_live(now)) {
            return Ok(Claimed::Elsewhere);
        }
        let claim = Claim {
            story_id: story_id.to_string(),
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
            lock(&self.book).refused.insert(story_id.to_string());
            return Ok(Claimed::Elsewhere);
        }
        git::mirror_claim(&self.place.root, self.name(), story_id, Some(&oid))?;
        {
            let mut book = lock(&self.book);
            book.held.insert(
                story_id.to_string(),
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

    fn renew_now(&self) -> Result<()> {
        let _turn = lock(&self.synced);
        let held: Vec<(String, Held)> = {
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

    fn mark_lost(&self, story_id: &str) {
        let newly = lock(&self.book).lost.insert(story_id.to_string());
        if newly {
            self.claim_event(
                story_id,
                ClaimChange::Lost,
                "another run took the story over; this run stops working on it".into(),
            );
        }
    }

    /// Releases a story this run holds (done, blocked, or set aside), pushing the board's
    /// changes with it.
    pub async fn release(&self, story_id: &str) -> Result<()> {
        blocking(|| self.release_now(&[story_id.to_string()]))
    }

    fn release_now(&self, stories: &[String]) -> Result<()> {
        let mut stories: Vec<String> = stories
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
        story_id: &str,
        parent: &str,
        from: Side,
        to: Side,
    ) -> Result<Delivered> {
        blocking(|| {
            let mut synced = lock(&self.synced);
            let release = if self.holds(story_id) {
                vec![story_id.to_string()]
            } else {
                Vec::new()
            };
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
    fn publish(
        &self,
        synced: &mut String,
        code: Option<&str>,
        overrides: &[(String, Side, Side)],
        release: &[String],
        message: &str,
    ) -> Result<Published> {
        let place = &self.place;
        let mut files = sync::local_changes(place, synced)?;
        let others = self.others_stories();
        if !others.is_empty() {
            // Stories another run holds are its to publish; what this clone did to them (a
            // lapsed claim's late work) stays here, to be set aside.
            let ids = sync::story_ids(place, synced, &files)?;
            files.retain(|(path, _)| ids.get(path).is_none_or(|id| !others.contains(id)));
        }
        for (_, from, to) in overrides {
            files.retain(|(path, _)| *path != from.path && *path != to.path);
            if from.path != to.path {
                files.push((from.path.clone(), None));
            }
            files.push((to.path.clone(), Some(to.bytes.clone())));
        }
        let parent = code.unwrap_or(synced.as_str()).to_string();
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
        let held: Vec<(String, String)> = {
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
            let lost: Vec<String> = held
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
    pub fn forget(&self, story_id: &str) -> Result<()> {
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
fn race_pause(attempt: usize) -> Duration {
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
    crate::workflow::delivery::record_done(&mut done, Some((merged, base)));
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

/// After a claim is won: a story another clone had started implementing records a branch
/// that only that clone has. Its implementation starts again here, from the base.
pub fn adopt(wf: &Workflow, story_id: &str) -> Result<()> {
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
        story_id: Some(story_id.to_string()),
        message: format!(
            "{branch} was made on another clone and is not here; the story is implemented again from the base"
        ),
    });
    Ok(())
}
