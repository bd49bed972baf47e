//! What the server pushes to open pages (server-sent events), behind the same guard as every
//! request: the board's changes and each running story's live work on `/events`, and a story's
//! transcript lines as they are written on `/events/story/{id}`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use serde::Deserialize;

use super::app::{problem, App, Shared};
use super::live::{Tail, TailLine, Tracker};
use crate::board::lookup;

/// How often the transcripts of running stories are looked at while a page is open. A run
/// writes a line per model call or tool call, seconds apart; the elapsed time on a card is
/// counted by the page itself.
const WORK_EVERY: Duration = Duration::from_millis(500);
/// How often a story page's transcripts are looked at for new lines.
const TAIL_EVERY: Duration = Duration::from_millis(300);
/// A comment this often keeps proxies from closing a quiet stream.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// A stream of events as a response that keeps itself alive.
fn events_of(stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response()
}

/// Keeps [`App::work`] up to date while a page listens: every [`WORK_EVERY`], the running
/// actions of the latest run (from its journal, as the board shows it) and what their
/// transcripts came to. The transcripts are not watched by the board's watcher on purpose
/// (they change with every model call); they are read here, and only from where the last look
/// stopped.
pub(super) async fn follow_work(app: Arc<App>) {
    let mut tracker = Tracker::default();
    let mut ticks = tokio::time::interval(WORK_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        // Nobody listens: nothing to read for.
        if app.work.receiver_count() == 0 {
            continue;
        }
        let Ok(board) = app.board().await else {
            continue;
        };
        let running = board.view.running_actions();
        if running.is_empty() && app.work.borrow().is_empty() {
            continue;
        }
        let board_dir = app.board_dir.clone();
        let looked = tokio::task::spawn_blocking(move || {
            let works = tracker.look(&board_dir, &running);
            (tracker, works)
        })
        .await;
        let Ok((kept, works)) = looked else {
            // The look panicked: start again from nothing rather than stop following.
            tracker = Tracker::default();
            continue;
        };
        tracker = kept;
        app.work.send_if_modified(|now| {
            if **now == works {
                return false;
            }
            *now = Arc::new(works);
            true
        });
    }
}

/// Where an `/events` stream is.
#[derive(Clone, Copy)]
enum Step {
    /// About to send the board's version as it is now.
    Start,
    /// About to send the running stories' work as it is now.
    Started,
    /// Waiting for whichever changes next.
    Waiting,
}

/// What an `/events` stream sends next.
enum Next {
    Version,
    Work,
}

/// The board's changes and the live work as server-sent events: `change` with the board's
/// version (first the current one, then one per change), and `work` with each running story's
/// [`super::live::Work`] as a JSON list (first as it is, then whenever it changes).
pub(super) async fn events(State(app): Shared) -> Response {
    let changes = app.changes.subscribe();
    let work = app.work.subscribe();
    let stopped = app.stopped.clone();
    let stream = futures::stream::unfold(
        (changes, work, stopped, Step::Start),
        |(mut changes, mut work, mut stopped, step)| async move {
            let (next, then) = match step {
                Step::Start => (Next::Version, Step::Started),
                Step::Started => (Next::Work, Step::Waiting),
                Step::Waiting => tokio::select! {
                    changed = changes.changed() => { changed.ok()?; (Next::Version, Step::Waiting) }
                    changed = work.changed() => { changed.ok()?; (Next::Work, Step::Waiting) }
                    _ = stopped.wait_for(|s| *s) => return None,
                },
            };
            let event = match next {
                Next::Version => {
                    let version = *changes.borrow_and_update();
                    Event::default().event("change").data(version.to_string())
                }
                Next::Work => {
                    let works = Arc::clone(&work.borrow_and_update());
                    let json = serde_json::to_string(&*works).unwrap_or_else(|_| "[]".into());
                    Event::default().event("work").data(json)
                }
            };
            Some((Ok(event), (changes, work, stopped, then)))
        },
    );
    events_of(stream)
}

#[derive(Deserialize)]
pub(super) struct TailQuery {
    /// The newest transcript the page shows and where its lines end there, as
    /// `<file name>:<bytes>`; none when it shows none.
    from: Option<String>,
}

/// A story's transcripts as they grow, for its page: `lines` events, each a JSON list of
/// [`TailLine`]s (the lines written since the last look, oldest first), from where the page's
/// newest transcript ends, and every newer transcript from its start.
pub(super) async fn story_tail(
    State(app): Shared,
    Path(id): Path<String>,
    Query(query): Query<TailQuery>,
) -> Response {
    let story = match app.board().await.and_then(|board| {
        lookup::find_on_board(&board.view.board, &id).map(|story| story.id().clone())
    }) {
        Ok(story) => story,
        Err(err) => return problem(&err),
    };
    let from = query.from.as_deref().and_then(|from| {
        let (file, end) = from.rsplit_once(':')?;
        Some((file.to_string(), end.parse().ok()?))
    });
    let tail = Tail::new(app.board_dir.clone(), story, from);
    let stopped = app.stopped.clone();
    let mut ticks = tokio::time::interval(TAIL_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let stream = futures::stream::unfold(
        (Some(tail), stopped, ticks),
        |(mut tail, mut stopped, mut ticks)| async move {
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    _ = stopped.wait_for(|s| *s) => return None,
                }
                let mut following = tail.take()?;
                let looked = tokio::task::spawn_blocking(move || {
                    let lines: Vec<TailLine> = following.look();
                    (following, lines)
                })
                .await;
                let (following, lines) = looked.ok()?;
                tail = Some(following);
                if lines.is_empty() {
                    continue;
                }
                let json = serde_json::to_string(&lines).unwrap_or_else(|_| "[]".into());
                let event = Event::default().event("lines").data(json);
                return Some((Ok(event), (tail, stopped, ticks)));
            }
        },
    );
    events_of(stream)
}
