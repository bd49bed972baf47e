//! Hearing about changes to the board as they happen: story files written by a run, added with
//! `add`, edited or moved by hand, and (for a live page) the run journals and the run lock.
//!
//! The kernel says when a folder changes (inotify on Linux, through the `notify` crate); the
//! watcher only says *that* something changed, after a short quiet spell, and its user reads the
//! board again. Only the board folder, its column folders and `runs/` are watched, each on its
//! own: transcripts under `logs/` change with every model call and matter to neither user.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::vocabulary::Column;
use super::vocabulary::{LOCK_FILE, RUNS_DIR};
use crate::error::{Error, Result};

/// How long the board must stay quiet before a change is reported: a story write is a
/// temporary file, a rename and a folder sync, and one report should cover them all.
const QUIET: Duration = Duration::from_millis(60);
/// The longest a report waits for quiet while changes keep coming (a busy run).
const MOST: Duration = Duration::from_millis(300);

/// What the watcher's user cares about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Story files only: what makes work runnable (`run --watch`).
    Stories,
    /// Story files, the run journals and the run lock: everything a live view of the board
    /// shows (`serve`).
    Everything,
}

/// What the kernel's events amount to.
#[derive(Debug)]
enum Signal {
    Changed,
    /// A folder worth watching appeared (a column made by `init`, `runs/` made by a first run).
    Appeared(PathBuf),
}

/// Watches one board; see the module docs.
pub struct BoardWatcher {
    watcher: Mutex<RecommendedWatcher>,
    /// Counts the changes as the kernel reports them, before any quiet spell: what a cache of
    /// the board compares, so that it is never older than the disk by more than an instant.
    seen: Arc<AtomicU64>,
    signals: mpsc::UnboundedReceiver<Signal>,
    watched: HashSet<PathBuf>,
}

impl BoardWatcher {
    /// Starts watching `board_dir` and the folders in it that exist.
    pub fn start(board_dir: &Path, scope: Scope) -> Result<BoardWatcher> {
        let (sender, signals) = mpsc::unbounded_channel();
        let board = board_dir.to_path_buf();
        let seen = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&seen);
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let signals = match event {
                Ok(event) => classify(&board, scope, &event),
                // Lost events (a full kernel queue): the board is read again all the same.
                Err(_) => vec![Signal::Changed],
            };
            if !signals.is_empty() {
                counter.fetch_add(1, Ordering::SeqCst);
            }
            for signal in signals {
                let _ = sender.send(signal);
            }
        })
        .map_err(|err| Error::Other(format!("cannot watch the board: {err}")))?;
        let mut board_watcher = BoardWatcher {
            watcher: Mutex::new(watcher),
            seen,
            signals,
            watched: HashSet::new(),
        };
        board_watcher.watch(board_dir).map_err(|err| {
            Error::Other(format!("cannot watch {}: {err}", board_dir.display()))
                .with_hint("run `agentic-sdlc init` to create the board")
        })?;
        let mut folders: Vec<PathBuf> = Column::ALL
            .iter()
            .map(|c| board_dir.join(c.name()))
            .collect();
        if scope == Scope::Everything {
            folders.push(board_dir.join(RUNS_DIR));
        }
        for folder in folders.into_iter().filter(|f| f.is_dir()) {
            // A folder that cannot be watched is still read on every other change.
            if let Err(err) = board_watcher.watch(&folder) {
                tracing::warn!("cannot watch {}: {err}", folder.display());
            }
        }
        Ok(board_watcher)
    }

    /// A counter that moves the moment a change is seen (see [`BoardWatcher::changed`] for the
    /// settled report).
    pub fn seen(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.seen)
    }

    fn watch(&mut self, folder: &Path) -> notify::Result<()> {
        if self.watched.contains(folder) {
            return Ok(());
        }
        self.watcher
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .watch(folder, RecursiveMode::NonRecursive)?;
        self.watched.insert(folder.to_path_buf());
        Ok(())
    }

    fn take(&mut self, signal: Signal) {
        if let Signal::Appeared(folder) = signal {
            if let Err(err) = self.watch(&folder) {
                tracing::warn!("cannot watch {}: {err}", folder.display());
            }
        }
    }

    /// Forgets the changes seen so far, e.g. the run's own writes before it goes idle.
    pub fn forget_pending(&mut self) {
        while let Ok(signal) = self.signals.try_recv() {
            self.take(signal);
        }
    }

    /// Waits for the next change, then for the board to be quiet for a moment (at most a few
    /// hundred milliseconds), so that one report covers a whole write.
    pub async fn changed(&mut self) {
        let Some(first) = self.signals.recv().await else {
            // The kernel side is gone; nothing will ever be reported again.
            return std::future::pending().await;
        };
        self.take(first);
        // One timer for the whole wait: while changes keep coming, a timer made afresh on
        // every turn would never get the chance to fire.
        let deadline = tokio::time::Instant::now() + MOST;
        let most = tokio::time::sleep_until(deadline);
        tokio::pin!(most);
        while tokio::time::Instant::now() < deadline {
            tokio::select! {
                signal = self.signals.recv() => match signal {
                    Some(signal) => self.take(signal),
                    None => return,
                },
                _ = tokio::time::sleep(QUIET) => return,
                _ = &mut most => return,
            }
        }
    }
}

fn is_column_folder(name: &str) -> bool {
    Column::ALL.iter().any(|c| c.name() == name)
}

/// What an event in or under the board means for a watcher of `scope`.
fn classify(board: &Path, scope: Scope, event: &notify::Event) -> Vec<Signal> {
    if matches!(event.kind, EventKind::Access(_)) {
        return Vec::new();
    }
    let mut signals = Vec::new();
    for path in &event.paths {
        let Some(parent) = path.parent() else {
            continue;
        };
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if parent == board {
            let folder = is_column_folder(name) || (scope == Scope::Everything && name == RUNS_DIR);
            if folder {
                if matches!(event.kind, EventKind::Create(_)) || path.is_dir() {
                    signals.push(Signal::Appeared(path.clone()));
                }
                signals.push(Signal::Changed);
            } else if scope == Scope::Everything && name == LOCK_FILE {
                signals.push(Signal::Changed);
            }
            continue;
        }
        let in_column = parent.parent() == Some(board)
            && parent
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(is_column_folder);
        let in_runs = scope == Scope::Everything && parent == board.join(RUNS_DIR);
        if in_column || in_runs {
            signals.push(Signal::Changed);
        }
    }
    signals
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn reported(watcher: &mut BoardWatcher) -> bool {
        tokio::time::timeout(Duration::from_secs(2), watcher.changed())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_hand_edit_is_reported_and_transcripts_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().join("board");
        std::fs::create_dir_all(board.join("backlog")).unwrap();
        std::fs::create_dir_all(board.join("logs/story-1")).unwrap();
        let mut watcher = BoardWatcher::start(&board, Scope::Stories).unwrap();

        std::fs::write(board.join("logs/story-1/t.jsonl"), "{}\n").unwrap();
        std::fs::write(board.join(".workflow-state.json"), "{}").unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(400), watcher.changed())
                .await
                .is_err(),
            "transcripts and the checkpoint are not the board's stories"
        );

        std::fs::write(board.join("backlog/a.md"), "---\nid: a\n---\n").unwrap();
        assert!(reported(&mut watcher).await);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn changes_that_keep_coming_are_still_reported() {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().to_path_buf();
        std::fs::create_dir(board.join("ready")).unwrap();
        let mut watcher = BoardWatcher::start(&board, Scope::Stories).unwrap();
        let file = board.join("ready/busy.md");
        let writer = std::thread::spawn(move || {
            for i in 0..150 {
                std::fs::write(&file, format!("write {i}")).unwrap();
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        for _ in 0..3 {
            assert!(
                tokio::time::timeout(Duration::from_secs(1), watcher.changed())
                    .await
                    .is_ok(),
                "a busy board must not silence the watcher"
            );
        }
        writer.join().unwrap();
    }

    #[tokio::test]
    async fn a_column_made_later_is_watched_too() {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().to_path_buf();
        let mut watcher = BoardWatcher::start(&board, Scope::Everything).unwrap();

        std::fs::create_dir(board.join("ready")).unwrap();
        assert!(reported(&mut watcher).await);
        std::fs::write(board.join("ready/b.md"), "x").unwrap();
        assert!(reported(&mut watcher).await, "a file in the new column");

        std::fs::create_dir(board.join(RUNS_DIR)).unwrap();
        assert!(reported(&mut watcher).await);
        std::fs::write(board.join(RUNS_DIR).join("r.jsonl"), "{}\n").unwrap();
        assert!(
            reported(&mut watcher).await,
            "a journal line, for a live page"
        );
    }
}
