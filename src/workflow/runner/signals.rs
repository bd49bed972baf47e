//! What ends or wakes a run from outside: Ctrl-C and SIGTERM, remote turns, and stamps of the
//! story files a person may change under `--watch`.

use std::collections::{HashMap, HashSet};

use crate::board::Board;
use crate::board::StoryId;
use crate::workflow::remote::{Turn, Turns};

/// The next claim or release of a remote run to finish.
pub(super) async fn next_turn(turns: &mut Option<Turns>) -> (StoryId, Turn) {
    match turns {
        Some(turns) => turns.join_next().await,
        None => std::future::pending().await,
    }
}

/// The signals that end a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

/// Where each of `ids` is on `board` and its file's stamp, to tell later whether someone
/// changed it.
pub(super) fn stamps(board: &Board, ids: &HashSet<StoryId>) -> HashMap<StoryId, FileStamp> {
    ids.iter()
        .filter_map(|id| {
            let path = &board.get(id)?.path;
            let meta = std::fs::metadata(path).ok()?;
            Some((id.clone(), (path.clone(), meta.modified().ok(), meta.len())))
        })
        .collect()
}

pub(super) type FileStamp = (std::path::PathBuf, Option<std::time::SystemTime>, u64);

/// Resolves on Ctrl-C or SIGTERM, saying which. The handlers are in place as soon as this is
/// called, so a signal that comes before the first poll still counts.
pub(crate) fn interrupted() -> impl std::future::Future<Output = Signal> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    let mut terminate = signal(SignalKind::terminate()).ok();
    async move {
        tokio::select! {
            () = received(interrupt.as_mut()) => Signal::Interrupt,
            () = received(terminate.as_mut()) => Signal::Terminate,
        }
    }
}

/// Resolves when `signal` arrives; never, when its handler could not be installed.
pub(super) async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}
