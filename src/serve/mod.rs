//! `serve`: the board as a live web page.
//!
//! One page for the board (columns of cards) and one per story (its keys, a waiting gate, its
//! sections, timeline and transcripts). Each page is a frame around a fragment; the page's
//! script listens to `/events` (server-sent events) and fetches its fragment again when the
//! board changes. Changes are heard from the kernel ([`BoardWatcher`]): a run's writes, its
//! journal, and a person's hand edits alike.
//!
//! The page, its style and its script are compiled into the binary; nothing is fetched from a
//! network and nothing needs building. The server listens on localhost unless told otherwise,
//! and then only with a token that every request must carry.

mod guard;
mod pages;
mod patch;
mod view;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::Deserialize;
use tokio::sync::watch;

use crate::board::watch::{BoardWatcher, Scope};
use crate::board::Phase;
use crate::config::Project;
use crate::error::{Error, Result};
use crate::hint::told;
use crate::workflow::person_decides;
use view::{BoardView, StoryView};

const STYLE: &str = include_str!("assets/app.css");
const SCRIPT: &str = include_str!("assets/app.js");

/// A listening socket, bound before anything else starts so that a port in use is reported
/// at once.
pub struct Listener {
    socket: tokio::net::TcpListener,
    address: SocketAddr,
}

impl Listener {
    /// Binds `address`; a port in use or an address this machine does not have is a usage
    /// error that says which.
    pub async fn bind(address: SocketAddr) -> Result<Listener> {
        let socket = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|err| {
                let why = match err.kind() {
                    std::io::ErrorKind::AddrInUse => {
                        "the port is in use; pick another with --port".to_string()
                    }
                    std::io::ErrorKind::AddrNotAvailable => {
                        "this machine has no such address; check --host".to_string()
                    }
                    std::io::ErrorKind::PermissionDenied => {
                        "permission denied; ports below 1024 need privileges".to_string()
                    }
                    _ => err.to_string(),
                };
                Error::Usage(format!("cannot serve on {address}: {why}"))
            })?;
        let address = socket
            .local_addr()
            .map_err(|err| Error::io("cannot read the address served on", err))?;
        Ok(Listener { socket, address })
    }

    /// The address actually bound (with `--port 0`, the port the system picked).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves the board of `project` until `stop` resolves. Every request must carry `token`
    /// when there is one.
    pub async fn serve(
        self,
        project: Project,
        token: Option<String>,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<()> {
        let board_dir = project.board_dir();
        let (changes, _) = watch::channel(0u64);
        let (stopping, stopped) = watch::channel(false);
        let mut watcher = BoardWatcher::start(&board_dir, Scope::Everything)?;
        let seen = watcher.seen();
        let live = changes.clone();
        let listening = tokio::spawn(async move {
            loop {
                watcher.changed().await;
                live.send_modify(|version| *version += 1);
            }
        });
        let guard = Arc::new(guard::Guard::new(token, self.address.ip().is_loopback()));
        let app = Arc::new(App {
            project,
            board_dir,
            changes,
            seen,
            stopped,
            cached: Mutex::new(None),
            renders: AtomicU64::new(0),
            history: Mutex::new(patch::History::default()),
        });
        let router = Router::new()
            .route("/", get(board_page))
            .route("/fragment/board", get(board_fragment))
            .route("/story/{id}", get(story_page))
            .route("/fragment/story/{id}", get(story_fragment))
            .route("/story/{id}/decide", post(decide))
            .route("/story/{id}/unblock", post(unblock))
            .route("/events", get(events))
            .route("/assets/app.css", get(style))
            .route("/assets/app.js", get(script))
            .fallback(not_found)
            .layer(axum::middleware::from_fn_with_state(guard, guard::check))
            .with_state(app);
        let result = axum::serve(self.socket, router)
            .with_graceful_shutdown(async move {
                stop.await;
                // Open event streams end too, or the shutdown would wait for them for ever.
                let _ = stopping.send(true);
            })
            .await
            .map_err(|err| Error::io("the server stopped", err));
        listening.abort();
        result
    }
}

/// What every request handler shares.
struct App {
    project: Project,
    board_dir: PathBuf,
    /// Bumped whenever the board changes; pages compare it with the version they show.
    changes: watch::Sender<u64>,
    /// The board watcher's count of changes seen (see [`BoardWatcher::seen`]).
    seen: Arc<AtomicU64>,
    /// Flips to `true` when the server shuts down.
    stopped: watch::Receiver<bool>,
    /// The board as last read, with its fragment, for the version it was read at.
    cached: Mutex<Option<Cached>>,
    /// The number of the latest render of the board.
    renders: AtomicU64,
    /// What the last few renders showed, to send open pages only what changed since.
    history: Mutex<patch::History>,
}

#[derive(Clone)]
struct Cached {
    /// How long reading the board and writing its fragment took; zero when it came from the
    /// cache. Pages report it in a `Server-Timing` header.
    took: Duration,
    /// The watcher's count of changes when the board was read: a newer count means the board
    /// changed since, even before the change is announced.
    seen: u64,
    version: u64,
    /// The render's number, which pages send back to be brought up to date.
    render: u64,
    view: Arc<BoardView>,
    board: Arc<pages::BoardRender>,
    fragment: Arc<String>,
}

type Shared = State<Arc<App>>;

impl App {
    fn version(&self) -> u64 {
        *self.changes.borrow()
    }

    /// The board at the current version: read once per change, however many pages ask.
    async fn board(&self) -> Result<Cached> {
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
            let board = pages::board_render(&view);
            let fragment = board.fragment();
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

    async fn story(&self, id: String) -> Result<(u64, StoryView)> {
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
fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        Html(body),
    )
        .into_response()
}

/// An error as a page: unknown stories are 404, bad input 400, a decision with nothing to
/// decide 409, anything else 500.
fn problem(err: &Error) -> Response {
    let (status, title) = match err.unhinted() {
        Error::StoryNotFound { .. } | Error::AmbiguousStory { .. } => {
            (StatusCode::NOT_FOUND, "No such story")
        }
        Error::Usage(_) => (StatusCode::BAD_REQUEST, "Not understood"),
        Error::ActionFailed(_) => (StatusCode::CONFLICT, "Not possible now"),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "Something went wrong"),
    };
    if status == StatusCode::INTERNAL_SERVER_ERROR {
        tracing::warn!("serve: {err}");
    }
    html(
        status,
        pages::problem_page(status.as_u16(), title, &told(err)),
    )
}

async fn board_page(State(app): Shared) -> Response {
    match app.board().await {
        Ok(board) => timed(
            html(
                StatusCode::OK,
                pages::board_page(&board.view, &board.fragment, board.version, board.render),
            ),
            &board,
        ),
        Err(err) => problem(&err),
    }
}

#[derive(Deserialize)]
struct FragmentQuery {
    /// The render the asking page shows.
    since: Option<u64>,
}

/// The board's fragment: as a patch of the render the page shows when the server still
/// remembers it (JSON), else whole (HTML, with its render number in `X-Board-Render`).
async fn board_fragment(State(app): Shared, Query(query): Query<FragmentQuery>) -> Response {
    let board = match app.board().await {
        Ok(board) => board,
        Err(err) => return problem(&err),
    };
    let patch = query.since.and_then(|since| {
        let history = app.history.lock().unwrap_or_else(|p| p.into_inner());
        let patch = history.patch(since, board.render, &board.board)?;
        serde_json::to_string(&patch).ok()
    });
    let mut response = match patch {
        Some(json) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            json,
        )
            .into_response(),
        None => html(StatusCode::OK, board.fragment.as_str().to_string()),
    };
    if let Ok(render) = HeaderValue::from_str(&board.render.to_string()) {
        response.headers_mut().insert("x-board-render", render);
    }
    timed(response, &board)
}

/// Says in a `Server-Timing` header (shown by browsers' developer tools) how long the board
/// took to read and render, or that it came from the cache.
fn timed(mut response: Response, board: &Cached) -> Response {
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

#[derive(Deserialize)]
struct StoryQuery {
    /// What a decision just did, shown once above the story.
    notice: Option<String>,
}

async fn story_page(
    State(app): Shared,
    Path(id): Path<String>,
    Query(query): Query<StoryQuery>,
) -> Response {
    match app.story(id).await {
        Ok((version, view)) => {
            let fragment = pages::story::story_fragment(&view);
            html(
                StatusCode::OK,
                pages::story::story_page(&view, &fragment, version, query.notice.as_deref()),
            )
        }
        Err(err) => problem(&err),
    }
}

async fn story_fragment(State(app): Shared, Path(id): Path<String>) -> Response {
    match app.story(id).await {
        Ok((_, view)) => html(StatusCode::OK, pages::story::story_fragment(&view)),
        Err(err) => problem(&err),
    }
}

#[derive(Deserialize)]
struct DecisionForm {
    /// APPROVE, RETRY, REJECT or `RETRY_PREDECESSOR <phase>`: the button pressed.
    decision: String,
    /// The feedback of a retry, or the reason of a rejection.
    #[serde(default)]
    feedback: String,
}

impl DecisionForm {
    /// The decision as `decide` reads it.
    fn text(&self) -> Option<String> {
        let feedback = self.feedback.trim();
        match self.decision.trim().split_once(' ') {
            None => match self.decision.trim() {
                "APPROVE" => Some("APPROVE".to_string()),
                word @ ("RETRY" | "REJECT") => Some(format!("{word}: {feedback}")),
                _ => None,
            },
            Some(("RETRY_PREDECESSOR", phase)) => {
                let phase = Phase::parse(phase)?;
                Some(format!("RETRY_PREDECESSOR {phase}: {feedback}"))
            }
            Some(_) => None,
        }
    }
}

/// A decision from the story page: the same path as `decide`, then back to the story.
async fn decide(
    State(app): Shared,
    Path(id): Path<String>,
    Form(form): Form<DecisionForm>,
) -> Response {
    let Some(text) = form.text() else {
        return problem(&Error::Usage(format!(
            "`{}` is not a decision; use {}",
            form.decision,
            person_decides::DECISION_FORMS
        )));
    };
    let board_dir = app.board_dir.clone();
    let decided = crate::workflow::blocking::off_the_runtime(move || {
        person_decides::decide(
            &board_dir,
            &id,
            &text,
            crate::board::records::DecidedBy::Web,
        )
    })
    .await;
    match decided {
        Ok(decided) => Redirect::to(&format!(
            "/story/{}?notice={}",
            guard::percent_encode(&decided.story_id),
            guard::percent_encode(&format!("{}: {}", decided.decision, decided.message))
        ))
        .into_response(),
        Err(err) => problem(&err),
    }
}

/// Unblocking from the page: the same path as `unblock`, then back to the board.
async fn unblock(State(app): Shared, Path(id): Path<String>) -> Response {
    let board_dir = app.board_dir.clone();
    let moved = crate::workflow::blocking::off_the_runtime(move || {
        crate::front::moving::unblock(&board_dir, &id, false)
    })
    .await;
    match moved {
        Ok(_) => Redirect::to("/").into_response(),
        Err(err) => problem(&err),
    }
}

/// The board's changes as server-sent events: `change` with the board's version, first the
/// current one, then one per change; a comment every few seconds keeps proxies from closing
/// the stream.
async fn events(
    State(app): Shared,
) -> Sse<impl futures::Stream<Item = std::result::Result<Event, Infallible>>> {
    let changes = app.changes.subscribe();
    let stopped = app.stopped.clone();
    let stream = futures::stream::unfold(
        (changes, stopped, true),
        |(mut changes, mut stopped, first)| async move {
            if !first {
                tokio::select! {
                    changed = changes.changed() => changed.ok()?,
                    _ = stopped.wait_for(|s| *s) => return None,
                }
            }
            let version = *changes.borrow_and_update();
            let event = Event::default().event("change").data(version.to_string());
            Some((Ok(event), (changes, stopped, false)))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

async fn not_found() -> Response {
    html(
        StatusCode::NOT_FOUND,
        pages::problem_page(404, "Not found", "There is no such page."),
    )
}
