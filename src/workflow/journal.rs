//! The run journal `<sdlcFolder>/runs/<run-id>.jsonl` (docs/design.md §14): the events of `run
//! --json`, one per line, each with its time, and for actions their start, duration, tokens and
//! cost. Every line is flushed as it is written, so a run that is killed leaves a journal that
//! `report` still reads.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, SecondsFormat, Utc};

use super::budget::Spending;
use super::checkpoint::RunOptions;
use super::events::{EventRecord, RunEvent};
use crate::board::records::Usage;
use crate::board::StoryId;
use crate::protocol::{JournalLine, NoStory, Spent};

use crate::board::RUNS_DIR;

pub struct Journal {
    run_id: String,
    path: PathBuf,
    spending: Arc<Spending>,
    started: Instant,
    inner: Mutex<Inner>,
}

struct Inner {
    file: io::BufWriter<fs_err::File>,
    /// When each story's action in flight started.
    actions: HashMap<StoryId, (DateTime<Utc>, Instant)>,
    failed: bool,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// Where the journal is written; only tests need to know.
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run's id, the journal's file name.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Creates a new journal named after the current time and writes its first line.
    pub fn create(
        board_dir: &Path,
        spending: Arc<Spending>,
        options: &RunOptions,
    ) -> io::Result<Journal> {
        let dir = board_dir.join(RUNS_DIR);
        fs_err::create_dir_all(&dir)?;
        let now = Utc::now();
        let stamp = now.format("%Y%m%dT%H%M%S%3fZ").to_string();
        let mut attempt = 1u32;
        let (run_id, file) = loop {
            let run_id = match attempt {
                1 => stamp.clone(),
                n => format!("{stamp}-{n}"),
            };
            match fs_err::OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(dir.join(format!("{run_id}.jsonl")))
            {
                Ok(file) => break (run_id, file),
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => {
                    attempt += 1
                }
                Err(err) => return Err(err),
            }
        };
        let journal = Journal {
            path: dir.join(format!("{run_id}.jsonl")),
            run_id,
            started: Instant::now(),
            inner: Mutex::new(Inner {
                file: io::BufWriter::new(file),
                actions: HashMap::new(),
                failed: false,
            }),
            spending,
        };
        // The first line: what the run was asked to do, and with which model.
        journal.write(&JournalLine {
            event: RunEvent::RunStarted {
                story_id: NoStory,
                run_id: journal.run_id.clone(),
                pid: std::process::id(),
                model: journal.spending.model().to_string(),
                price: journal.spending.price(),
                options: options.clone(),
            },
            timestamp: stamp_of(now),
            started_at: None,
            duration_ms: None,
            spent: None,
        });
        Ok(journal)
    }

    /// Appends one event with its time, and for an action's end its duration, tokens and cost.
    pub fn append(&self, event: &RunEvent) {
        let now = Utc::now();
        let mut line = JournalLine {
            event: event.clone(),
            timestamp: stamp_of(now),
            started_at: None,
            duration_ms: None,
            spent: None,
        };
        let mut inner = self.lock();
        match event {
            RunEvent::ActionStarted { story_id, .. } => {
                inner
                    .actions
                    .insert(story_id.clone(), (now, Instant::now()));
            }
            RunEvent::ActionCompleted { story_id, .. }
            | RunEvent::ActionFailed { story_id, .. }
            | RunEvent::ActionStopped { story_id, .. } => {
                if let Some((started_at, started)) = inner.actions.remove(story_id) {
                    line.started_at = Some(stamp_of(started_at));
                    line.duration_ms = Some(millis(started));
                }
                line.spent = Some(self.spent(&self.spending.action_usage(story_id)));
            }
            // An action that blocks its story or leaves it waiting ends with that event.
            RunEvent::StoryBlocked { story_id, .. } | RunEvent::StoryWaiting { story_id, .. } => {
                if let Some((started_at, started)) = inner.actions.remove(story_id) {
                    line.started_at = Some(stamp_of(started_at));
                    line.duration_ms = Some(millis(started));
                    line.spent = Some(self.spent(&self.spending.action_usage(story_id)));
                }
            }
            RunEvent::RunFinished { .. } => {
                line.duration_ms = Some(millis(self.started));
                line.spent = Some(self.spent(&self.spending.run_usage()));
            }
            _ => {}
        }
        drop(inner);
        self.write(&line);
    }

    /// Tokens, requests and cost; with a price, an action that made no call cost 0, not null.
    fn spent(&self, usage: &Usage) -> Spent {
        Spent {
            tokens: usage.into(),
            requests: usage.requests,
            cost_usd: match self.spending.price() {
                Some(_) => Some(usage.cost_usd.unwrap_or(0.0)),
                None => usage.cost_usd,
            },
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self, line: &JournalLine) {
        let mut inner = self.lock();
        let mut text = serde_json::to_string(line).unwrap_or_default();
        text.push('\n');
        let written = inner
            .file
            .write_all(text.as_bytes())
            .and_then(|()| inner.file.flush());
        if let Err(err) = written {
            // Once, not per event: a full disk would otherwise repeat itself all night.
            if !inner.failed {
                inner.failed = true;
                tracing::warn!(
                    "could not write the run journal {}: {err}",
                    self.path.display()
                );
            }
        }
    }
}

impl EventRecord for Journal {
    fn append(&self, event: &RunEvent) {
        Journal::append(self, event);
    }
}

fn stamp_of(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The journals of a board, oldest first (their names sort by time).
pub fn list(board_dir: &Path) -> io::Result<Vec<PathBuf>> {
    let dir = board_dir.join(RUNS_DIR);
    let mut paths: Vec<PathBuf> = match fs_err::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect(),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(err) => return Err(err),
    };
    paths.sort_by_key(|p| run_id_of(p).map(sort_key));
    Ok(paths)
}

/// A journal's run id: its file name without `.jsonl`.
pub fn run_id_of(path: &Path) -> Option<String> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_string)
}

/// `<stamp>` and `<stamp>-N` in creation order.
fn sort_key(run_id: String) -> (String, u32) {
    match run_id.split_once('-') {
        Some((stamp, n)) => (stamp.to_string(), n.parse().unwrap_or(0)),
        None => (run_id, 1),
    }
}
