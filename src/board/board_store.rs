//! The board as a run holds it: loaded once, kept current by re-reading only what changed.
//!
//! A run used to load the whole board around every action and look every story up by scanning
//! it again, so each story file was opened many times per action. [`BoardStore`] reads every
//! file once and keeps each story's [`StorySummary`] (what the assessor needs), each file's
//! stamp (size, times, inode: one `stat`, never an open) and where each story lives. A later
//! [`BoardStore::refresh`] lists the columns, stats the files and re-reads only the files whose
//! stamp changed, so a person's hand edit during a run is still seen (docs/design.md §11).
//!
//! The stories the run works on are held open ([`StoryFile`]): the first look at a story's
//! text opens its file, and every later look and write goes through that handle, which sees a
//! person's in-place save and notices a file replaced or moved (then the path is opened again).
//! A refresh checks the stories the run wrote through their handles too. So on a large board an
//! action opens the story it works on once, and every other file is opened once per run.

// Keyed by paths and ids of the board itself, hashed 10,000 at a time on a large board:
// foldhash is several times faster than the default SipHash there.
use foldhash::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use xxhash_rust::xxh3::{xxh3_128, Xxh3};

use super::disk::read_path;
use super::reader::{
    has_duplicate_ids, in_parallel, list_columns, read_story_bytes, BoardLock, Read, READ_ATTEMPTS,
};
use super::story::{Story, StoryError};
use super::story_file::StoryFile;
use super::summary::{Listed, StorySummary};
use super::vocabulary::Column;
use super::Board;
use crate::error::Result;

/// How many stories a run keeps open at once; the least recently used is closed beyond that
/// (it is opened again when next needed). Far more than a run works on at a time.
const HELD_FILES: usize = 64;

/// What a `stat` says about a file; a different stamp means the file may hold other text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
    inode: u64,
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        std::fs::metadata(path).ok().map(|meta| Stamp::from(&meta))
    }

    fn from(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
        }
    }
}

/// Reads one file for a refresh: its stamp (taken from the open file before reading, see
/// [`read_path`]), and its summary and digest, or why it is not a story. `None` when the file
/// is gone.
fn read_with_stamp(path: &Path, column: Column) -> Option<(Entry, Seen)> {
    let (read, stamp) = match read_path(path) {
        Ok((bytes, meta)) => (Ok(bytes), Stamp::from(&meta)),
        // A file that cannot be read is kept as broken until its stamp changes.
        Err(err) => (Err(err), Stamp::of(path)?),
    };
    let seen = |digest| Seen { stamp, digest };
    Some(match read_story_bytes(path, column, read) {
        Read::Story(story, bytes) => (Entry::Story(story.into()), seen(Some(xxh3_128(&bytes)))),
        Read::Broken(err) => (Entry::Broken(err), seen(None)),
        Read::Vanished => return None,
    })
}

/// Runs a story's file I/O (a read, or a write and its fsync) without holding up the other
/// actions of a run: on tokio's multi-threaded runtime the worker hands its other tasks to
/// another thread first (`block_in_place`). `spawn_blocking` would need every change closure to
/// own what it captures, and most borrow their caller's state. Elsewhere (one-off commands,
/// a current-thread runtime) the work simply runs.
fn blocking<R>(work: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// What the store knows of one listed file besides its story: the stamp it was read at and,
/// for a story, a digest of its bytes. XXH3-128 tells a changed file from an unchanged one as
/// surely as a cryptographic hash would (nobody forges stories against their own checkpoint)
/// at a small fraction of the cost on a large board, and its output is fixed by its
/// specification, so a checkpoint written by one build compares with the next.
#[derive(Debug, Clone, Copy)]
struct Seen {
    stamp: Stamp,
    digest: Option<u128>,
}

/// A file as read by a refresh.
// Most entries are stories; boxing them would add an allocation per file (as in the reader).
#[allow(clippy::large_enum_variant)]
enum Entry {
    Story(StorySummary),
    Broken(StoryError),
}

#[derive(Debug, Default)]
struct State {
    /// The board of the last refresh, shared with the caller that asked for it; the next refresh
    /// takes its stories back instead of copying them when nobody holds it any more.
    board: Arc<Board>,
    /// Every file of `board` (story or broken), by path. Paths are keyed by their bytes: hashing
    /// and comparing a `PathBuf` goes component by component, which showed on large boards.
    seen: HashMap<OsString, Seen>,
    /// Where each story was last seen or written; a write that moves a story moves its entry.
    paths: HashMap<String, PathBuf>,
    /// Files the run wrote since the last refresh: checked again whatever their stamp says.
    touched: HashSet<OsString>,
    /// The stories the run works on, open, by id, with when each was last used.
    held: HashMap<String, (u64, StoryFile)>,
    /// Counts uses of held files, to close the least recently used.
    uses: u64,
    /// The files of the last refresh, in order: when a refresh lists the same, only their
    /// stamps are compared ([`BoardStore::refresh_in_place`]).
    listed: Vec<(PathBuf, Column)>,
    /// [`BoardStore::content_hash`] of the board as it is, until a refresh changes it.
    content_hash: Option<String>,
    /// How many story files refreshes read from disk, for tests.
    reads: usize,
}

impl State {
    fn hold(&mut self, id: String, file: StoryFile) {
        self.uses += 1;
        self.held.insert(id, (self.uses, file));
        if self.held.len() > HELD_FILES {
            let oldest = self
                .held
                .iter()
                .min_by_key(|(_, (used, _))| *used)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                self.held.remove(&oldest);
            }
        }
    }

    /// A held story whose file is at `path` and still holds what the run last read or wrote:
    /// its summary and digest, known without opening the file.
    fn held_unchanged(&self, path: &Path) -> Option<(StorySummary, u128)> {
        let (_, file) = self
            .held
            .values()
            .find(|(_, file)| file.story().path == path)?;
        file.is_current()
            .then(|| (file.story().into(), xxh3_128(file.bytes())))
    }
}

/// The board of one run (see the module docs).
#[derive(Debug)]
pub struct BoardStore {
    dir: PathBuf,
    state: Mutex<State>,
}

impl BoardStore {
    /// Reads every story file of the board once.
    pub fn load(dir: &Path) -> Result<BoardStore> {
        let store = BoardStore::unloaded(dir);
        store.refresh()?;
        Ok(store)
    }

    /// A store that has read nothing yet: lookups scan the board the first time and remember
    /// where each story was found. For one-off commands that already hold the story's path.
    pub fn unloaded(dir: &Path) -> BoardStore {
        BoardStore {
            dir: dir.to_path_buf(),
            state: Mutex::new(State::default()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // The state is replaced whole or updated by single inserts, so a panic elsewhere
        // cannot leave it half written; keep using it.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Remembers where a story lives, e.g. one a command found in its own board read.
    pub fn remember(&self, story: &impl Listed) {
        self.state()
            .paths
            .insert(story.id().to_string(), story.path().to_path_buf());
    }

    fn hint(&self, id: &str) -> Option<PathBuf> {
        self.state().paths.get(id).cloned()
    }

    /// The story `id`, open and up to date with its file: the held one when there is one
    /// (checked through its handle), else opened at the path this store knows, or found by a
    /// scan when it moved. The caller gives it back with [`BoardStore::put_back`].
    fn take(&self, id: &str) -> Result<StoryFile> {
        let (held, hint) = {
            let mut state = self.state();
            let held = state.held.remove(id).map(|(_, file)| file);
            (held, state.paths.get(id).cloned())
        };
        match held {
            Some(mut file) => {
                file.sync(&self.dir)?;
                Ok(file)
            }
            None => StoryFile::locate(&self.dir, id, hint.as_deref()),
        }
    }

    fn put_back(&self, id: &str, file: StoryFile) {
        let mut state = self.state();
        state
            .paths
            .insert(id.to_string(), file.story().path.clone());
        state.hold(id.to_string(), file);
    }

    /// The current text of story `id` (see [`BoardStore::take`]).
    pub fn locate(&self, id: &str) -> Result<Story> {
        blocking(|| {
            let file = self.take(id)?;
            let story = file.story().clone();
            self.put_back(id, file);
            Ok(story)
        })
    }

    /// Changes story `id` and writes it ([`StoryFile::update`]) through its held file; the next
    /// [`BoardStore::refresh`] checks it through that file too.
    pub fn update<R>(
        &self,
        id: &str,
        change: impl FnOnce(&mut Story) -> Result<R>,
    ) -> Result<(Story, R)> {
        let hint = self.hint(id);
        let written = blocking(|| {
            let mut file = self.take(id)?;
            let result = file.update(&self.dir, change);
            let story = file.story().clone();
            self.put_back(id, file);
            Ok((story, result?))
        });
        let mut state = self.state();
        // Even a failed write may have moved the file or found it elsewhere.
        state.touched.extend(hint.map(PathBuf::into_os_string));
        if let Ok((story, _)) = &written {
            state.touched.insert(story.path.clone().into_os_string());
        }
        written
    }

    /// The board as last read, without touching the disk.
    pub fn board(&self) -> Arc<Board> {
        Arc::clone(&self.state().board)
    }

    /// Brings the store up to date with the disk and returns the board: the columns are listed
    /// and every known file stat'ed; only new files, files whose stamp changed and files this
    /// store wrote (unless their held handle shows them unchanged) are read. Like
    /// [`Board::load`], each story is seen exactly once even while stories move: a listed file
    /// that is gone or an id seen twice makes it list again, and the last attempt holds the
    /// board lock throughout.
    pub fn refresh(&self) -> Result<Arc<Board>> {
        for attempt in 1..=READ_ATTEMPTS {
            let last = attempt == READ_ATTEMPTS;
            let mut lock = BoardLock::shared(&self.dir);
            let listed = list_columns(&self.dir)?;
            if !last {
                lock = None;
            }
            let vanished = !self.refresh_in_place(&listed) && self.reread(&listed);
            drop(lock);
            let board = self.board();
            if last || (!vanished && !has_duplicate_ids(&board)) {
                return Ok(board);
            }
            tracing::debug!(
                attempt,
                "stories moved during a board refresh; listing again"
            );
        }
        unreachable!("the last attempt returns")
    }

    /// The refresh after most actions: the same files listed as last time, none changed on disk
    /// except those the run wrote, and those still holding what the run wrote (checked through
    /// their held handles). Their summaries are replaced where they stand and nothing else is
    /// rebuilt; the files are only stat'ed, on every core. Says whether that was the case.
    fn refresh_in_place(&self, listed: &[(PathBuf, Column)]) -> bool {
        if self.state().listed != listed {
            return false;
        }
        let stamps = in_parallel(listed, |path, _| Stamp::of(path));
        let mut state = self.state();
        let mut written = Vec::new();
        for ((path, _), stamp) in listed.iter().zip(stamps) {
            let key = path.as_os_str();
            let Some(stamp) = stamp else {
                return false;
            };
            if state.touched.contains(key) {
                let Some((summary, digest)) = state.held_unchanged(path) else {
                    return false;
                };
                let Some(at) = state.board.stories.iter().position(|s| s.path == *path) else {
                    return false;
                };
                written.push((at, stamp, summary, digest));
            } else if state.seen.get(key).map(|seen| seen.stamp) != Some(stamp) {
                return false;
            }
        }
        if !written.is_empty() {
            state.content_hash = None;
        }
        state.touched.clear();
        for (at, stamp, summary, digest) in written {
            let seen = Seen {
                stamp,
                digest: Some(digest),
            };
            state
                .seen
                .insert(summary.path.clone().into_os_string(), seen);
            state
                .paths
                .insert(summary.id().to_string(), summary.path.clone());
            Arc::make_mut(&mut state.board).stories[at] = summary;
        }
        true
    }

    /// Rebuilds the board from the listed files, each kept when its stamp is unchanged and the
    /// run did not write it, else read; says whether a listed file was gone.
    fn reread(&self, listed: &[(PathBuf, Column)]) -> bool {
        let (mut known, mut seen, touched) = {
            let mut state = self.state();
            let touched = std::mem::take(&mut state.touched);
            let board = std::mem::take(&mut state.board);
            let board = Arc::try_unwrap(board).unwrap_or_else(|shared| (*shared).clone());
            let mut seen = std::mem::take(&mut state.seen);
            // A file the run wrote is checked through its held handle, or else read again.
            seen.retain(|path, _| !touched.contains(path));
            let touched: HashMap<OsString, (StorySummary, u128)> = touched
                .into_iter()
                .filter_map(|path| {
                    let held = state.held_unchanged(Path::new(&path))?;
                    Some((path, held))
                })
                .collect();
            let known: HashMap<OsString, Entry> = board
                .stories
                .into_iter()
                .map(|s| (s.path.clone().into_os_string(), Entry::Story(s)))
                .chain(
                    board
                        .broken
                        .into_iter()
                        .map(|e| (e.path.clone().into_os_string(), Entry::Broken(e))),
                )
                .collect();
            (known, seen, touched)
        };
        let mut to_read = Vec::new();
        let mut kept: Vec<Option<(Entry, Seen)>> = Vec::with_capacity(listed.len());
        for (path, column) in listed {
            let key = path.as_os_str();
            let old = seen.remove(key).zip(known.remove(key));
            // A file seen before is stat'ed; one never seen is read at once (its stamp comes
            // from the open file, without a second lookup of its path).
            let stamp = match (&old, touched.get(key)) {
                (None, None) => None,
                _ => Stamp::of(path),
            };
            match (old, stamp) {
                (Some((old, entry)), Some(stamp)) if old.stamp == stamp => {
                    kept.push(Some((entry, old)))
                }
                (_, Some(stamp)) if touched.contains_key(key) => {
                    let (summary, digest) = touched[key].clone();
                    let seen = Seen {
                        stamp,
                        digest: Some(digest),
                    };
                    kept.push(Some((Entry::Story(summary), seen)));
                }
                _ => {
                    kept.push(None);
                    to_read.push((path.clone(), *column));
                }
            }
        }
        let fresh = in_parallel(&to_read, read_with_stamp);
        let reads = fresh.len();
        let mut fresh = fresh.into_iter();
        let mut vanished = false;
        let mut board = Board {
            dir: self.dir.clone(),
            ..Board::default()
        };
        seen.clear();
        for ((path, _), kept) in listed.iter().zip(kept) {
            let Some((entry, file)) = kept.or_else(|| fresh.next().flatten()) else {
                vanished = true;
                continue;
            };
            seen.insert(path.clone().into_os_string(), file);
            match entry {
                Entry::Story(story) => board.stories.push(story),
                Entry::Broken(err) => board.broken.push(err),
            }
        }
        let mut state = self.state();
        state.reads += reads;
        state.paths = board
            .stories
            .iter()
            .map(|s| (s.id().to_string(), s.path.clone()))
            .rev() // the first of duplicate ids wins, as in `Board::get`
            .collect();
        state.board = Arc::new(board);
        state.seen = seen;
        state.listed = listed.to_vec();
        state.content_hash = None;
        vanished
    }

    /// A digest of every story as last read, to tell whether stories changed since a
    /// checkpoint (docs/design.md §11). It combines per-story digests kept since each file was
    /// read, so only the stories re-read since the last refresh were hashed again.
    pub fn content_hash(&self) -> String {
        let mut state = self.state();
        if let Some(hash) = &state.content_hash {
            return hash.clone();
        }
        let mut stories: Vec<(&str, u128)> = state
            .board
            .stories
            .iter()
            .filter_map(|story| {
                let digest = state.seen.get(story.path.as_os_str())?.digest?;
                Some((story.id().as_str(), digest))
            })
            .collect();
        stories.sort_unstable();
        let mut hasher = Xxh3::new();
        for (id, digest) in stories {
            hasher.update(id.as_bytes());
            hasher.update(&[0]);
            hasher.update(&digest.to_le_bytes());
        }
        let hash = format!("{:032x}", hasher.digest128());
        state.content_hash = Some(hash.clone());
        hash
    }

    /// How many story files [`BoardStore::refresh`] has read from disk so far.
    #[cfg(test)]
    pub fn files_read(&self) -> usize {
        self.state().reads
    }
}

#[cfg(test)]
mod tests;
