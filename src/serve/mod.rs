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

mod acts;
mod app;
mod filter;
mod guard;
mod live;
mod pages;
mod patch;
mod streams;
mod view;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::board::watch::{BoardWatcher, Scope};
use crate::config::Project;
use crate::error::{Error, Result};
use crate::front::moving::column_named;
use app::{html, problem, timed, App, Shared};
use filter::BoardQuery;
use pages::board::{FIRST_CARDS, MORE_CARDS};

const STYLE: &str = include_str!("assets/app.css");
const SCRIPT: &str = include_str!("assets/app.js");
const ACTS_SCRIPT: &str = include_str!("assets/acts.js");

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
            work: watch::channel(Arc::new(Vec::new())).0,
        });
        let following = tokio::spawn(streams::follow_work(Arc::clone(&app)));
        let router = Router::new()
            .route("/", get(board_page))
            .route("/fragment/board", get(board_fragment))
            .route("/story/{id}", get(story_page))
            .route("/fragment/column/{column}", get(column_cards))
            .route("/fragment/story/{id}", get(story_fragment))
            .route("/stories", post(acts::add))
            .route("/story/{id}/decide", post(acts::decide))
            .route("/story/{id}/unblock", post(acts::unblock))
            .route("/story/{id}/edit", post(acts::edit))
            .route("/story/{id}/move", post(acts::move_to))
            .route("/events", get(streams::events))
            .route("/events/story/{id}", get(streams::story_tail))
            .route("/assets/app.css", get(style))
            .route("/assets/app.js", get(script))
            .route("/assets/acts.js", get(acts_script))
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
        following.abort();
        result
    }
}

/// The board page; with a search or filter in its address, the board as it filters it.
async fn board_page(State(app): Shared, Query(query): Query<BoardQuery>) -> Response {
    let (board, filter) = match app.board().await.and_then(|b| Ok((b, query.filter()?))) {
        Ok(found) => found,
        Err(err) => return problem(&err),
    };
    let fragment = if query.is_first_view(&filter, FIRST_CARDS) {
        board.fragment.as_str().to_string()
    } else {
        board.board.fragment(&filter, &query.shown(FIRST_CARDS))
    };
    timed(
        html(
            StatusCode::OK,
            pages::board::board_page(
                &board.view,
                &fragment,
                (board.version, board.render),
                &query,
            ),
        ),
        &board,
    )
}

/// The board's fragment, filtered as the page asks: as a patch of the render the page shows
/// when the server still remembers it (JSON), else whole (HTML, with its render number in
/// `X-Board-Render`).
async fn board_fragment(State(app): Shared, Query(query): Query<BoardQuery>) -> Response {
    let (board, filter) = match app.board().await.and_then(|b| Ok((b, query.filter()?))) {
        Ok(found) => found,
        Err(err) => return problem(&err),
    };
    let patch = query.since.and_then(|since| {
        let history = app.history.lock().unwrap_or_else(|p| p.into_inner());
        let patch = history.patch(since, board.render, &board.board, &filter)?;
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
        None if query.is_first_view(&filter, FIRST_CARDS) => {
            html(StatusCode::OK, board.fragment.as_str().to_string())
        }
        None => html(
            StatusCode::OK,
            board.board.fragment(&filter, &query.shown(FIRST_CARDS)),
        ),
    };
    if let Ok(render) = HeaderValue::from_str(&board.render.to_string()) {
        response.headers_mut().insert("x-board-render", render);
    }
    timed(response, &board)
}

#[derive(Deserialize)]
struct MoreQuery {
    /// The last card the page shows in the column.
    after: String,
    #[serde(flatten)]
    board: BoardQuery,
}

/// What unfolding a column brings.
#[derive(Serialize)]
struct MoreCards<'a> {
    /// The cards' markup, in column order.
    cards: &'a str,
    /// How many the column still holds back.
    left: usize,
}

/// The next cards of a folded column after the last one a page shows, filtered as the page is:
/// [`MoreCards`]. 409 when that card is no
/// longer listed in the column: the page then asks for the whole board again.
async fn column_cards(
    State(app): Shared,
    Path(column): Path<String>,
    Query(query): Query<MoreQuery>,
) -> Response {
    let found = app
        .board()
        .await
        .and_then(|board| Ok((board, column_named(&column)?, query.board.filter()?)));
    let (board, column, filter) = match found {
        Ok(found) => found,
        Err(err) => return problem(&err),
    };
    let Some((cards, left)) = board.board.more(column, &query.after, &filter, MORE_CARDS) else {
        return problem(&Error::ActionFailed(format!(
            "{} is no longer listed in {column}; the page asks for the board again",
            query.after
        )));
    };
    let body = serde_json::to_string(&MoreCards {
        cards: &cards,
        left,
    })
    .unwrap_or_default();
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
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

async fn acts_script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        ACTS_SCRIPT,
    )
        .into_response()
}

async fn not_found() -> Response {
    html(
        StatusCode::NOT_FOUND,
        pages::frame::problem_page(404, "Not found", "There is no such page."),
    )
}
