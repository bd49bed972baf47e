//! What every request handler shares: the project, the board as last read and rendered (once
//! per change, however many pages ask), and how an answer or a refusal is written.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use tokio::sync::watch;

use super::live::Work;
use super::view::{BoardView, StoryView};
use super::{filter, pages, patch};
use crate::config::Project;
use crate::error::{Error, Result};
use crate::hint::told;

/// What every request handler shares.
pub(super) struct App {
    pub(super) project: Project,
    pub(super) board_dir: PathBuf,
    /// Bumped whenever the board changes; pages compare it with the version they show.
    pub(super) changes: watch::Sender<u64>,
    /// The board watcher's count of changes seen (see [`crate::board::watch::BoardWatcher::seen`]).
    pub(super) seen: Arc<AtomicU64>,
    /// Flips to `true` when the server shuts down.
    pub(super) stopped: watch::Receiver<bool>,
    /// The board as last read, with its fragment, for the version it was read at.
    pub(super) cached: Mutex<Option<Cached>>,
    /// The number of the latest render of the board.
    pub(super) renders: AtomicU64,
    /// What the last few renders showed, to send open pages only what changed since.
    pub(super) history: Mutex<patch::History>,
    /// What each running story is doing, as its card shows it; sent to open pages as it
    /// changes.
    pub(super) work: watch::Sender<Arc<Vec<Work>>>,
}

#[derive(Clone)]
pub(super) struct Cached {
    /// How long reading the board and writing its fragment took; zero when it came from the
    /// cache. Pages report it in a `Server-Timing` header.
    pub(super) took: Duration,
    /// The watcher's count of changes when the board was read: a newer count means the board
    /// changed since, even before the change is announced.
    pub(super) seen: u64,
    pub(super) version: u64,
    /// The render's number, which pages send back to be brought up to date.
    pub(super) render: u64,
    pub(super) view: Arc<BoardView>,
    pub(super) board: Arc<pages::board::BoardRender>,
    pub(super) fragment: Arc<String>,
}

pub(super) type Shared = State<Arc<App>>;

impl App {
    pub(super) fn version(&self) -> u64 {
        *self.changes.borrow()
    }

    /// The board at the current version: read once per change, however many pages ask.
    pub(super) async fn board(&self) -> Result<Cached> {
        let version = self.version();
        let seen = self.seen.load(Ordering::SeqCst);
        let cached = self
            .cached
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(cached) = cached.filter(|c| c.seen == seen && c.version == version) {
            return Ok(Cached {
                took: Duration::ZERO,
                ..cached
            });
        }
        let started = std::time::Instant::now();
        let project = self.project.clone();
        let (view, board, fragment) = crate::workflow::blocking::off_the_runtime(move || {
            let view = BoardView::load(&project)?;
            let board = pages::board::board_render(&view);
            let first = [pages::board::FIRST_CARDS; crate::board::Column::ALL.len()];
            let fragment = board.fragment(&filter::Filter::default(), &first);
            Ok((view, board, fragment))
        })
        .await?;
        let render = self.renders.fetch_add(1, Ordering::SeqCst) + 1;
        self.history
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remember(render, &board);
        let fresh = Cached {
            took: started.elapsed(),
            seen,
            version,
            render,
            view: Arc::new(view),
            board: Arc::new(board),
            fragment: Arc::new(fragment),
        };
        *self.cached.lock().unwrap_or_else(|p| p.into_inner()) = Some(fresh.clone());
        Ok(fresh)
    }

    pub(super) async fn story(&self, id: String) -> Result<(u64, StoryView)> {
        let board = self.board().await?;
        let project = self.project.clone();
        let view = crate::workflow::blocking::off_the_runtime(move || {
            StoryView::load(&project, &board.view, &id)
        })
        .await?;
        Ok((board.version, view))
    }
}

/// HTML that the browser must not keep: the board changes under it.
pub(super) fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        Html(body),
    )
        .into_response()
}

/// How a refusal is answered: unknown stories are 404, bad input 400, something the board's
/// state does not allow now (nothing to decide, not blocked) 409, anything else 500.
pub(super) fn problem_status(err: &Error) -> (StatusCode, &'static str) {
    match err.unhinted() {
        Error::StoryNotFound { .. } | Error::AmbiguousStory { .. } => {
            (StatusCode::NOT_FOUND, "No such story")
        }
        Error::Usage(_) => (StatusCode::BAD_REQUEST, "Not understood"),
        Error::ActionFailed(_) => (StatusCode::CONFLICT, "Not possible now"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong"),
    }
}

/// An error as a page that says what went wrong and what to do (see [`problem_status`]).
pub(super) fn problem(err: &Error) -> Response {
    let (status, title) = problem_status(err);
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        tracing::warn!("serve: {err}");
    }
    html(
        status,
        pages::frame::problem_page(status.as_u16(), title, &told(err)),
    )
}

/// Says in a `Server-Timing` header (shown by browsers' developer tools) how long the board
/// took to read and render, or that it came from the cache.
pub(super) fn timed(mut response: Response, board: &Cached) -> Response {
    let value = if board.took.is_zero() {
        "board;desc=\"cached\";dur=0".to_string()
    } else {
        format!("board;dur={:.1}", board.took.as_secs_f64() * 1000.0)
    };
    if let Ok(value) = HeaderValue::from_str(&value) {
        response.headers_mut().insert("server-timing", value);
    }
    response
}
