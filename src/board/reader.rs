//! Reading the board from disk: every column, each story exactly once, even while a run moves
//! stories (see [`read`]).

use std::path::{Path, PathBuf};

use super::story::{Story, StoryError};
use super::summary::{Listed, StorySummary};
use super::vocabulary::Column;
use crate::error::{Error, Result};

/// Every story on the board, as a [`StorySummary`] unless a command needs each one whole, plus
/// the files that could not be read.
#[derive(Debug, Clone)]
pub struct Board<S = StorySummary> {
    pub dir: PathBuf,
    pub stories: Vec<S>,
    pub broken: Vec<StoryError>,
}

impl<S> Default for Board<S> {
    fn default() -> Self {
        Board {
            dir: PathBuf::new(),
            stories: Vec::new(),
            broken: Vec::new(),
        }
    }
}

/// The story files of one column folder, sorted by name for stable output.
fn story_files(dir: &Path, column: Column) -> Result<Vec<PathBuf>> {
    let folder = dir.join(column.name());
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(Error::io(format!("cannot list {}", folder.display()), err)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "md")
                && !p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    // By bytes: the paths share their folder, so this is the order of the file names, without
    // comparing component by component (which showed on large boards).
    files.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    Ok(files)
}

pub fn read_story(path: &Path, column: Column) -> Result<Story, StoryError> {
    match read_story_file(path, column) {
        Read::Story(story, _) => Ok(story),
        Read::Broken(err) => Err(err),
        Read::Vanished => Err(StoryError {
            path: path.to_path_buf(),
            line: 1,
            message: "cannot read: the file is gone (moved or deleted)".into(),
        }),
    }
}

/// A story file as read: the story and the bytes it was parsed from, a file that is not a
/// story, or a file that was listed but is gone (a story that moved in between).
// Each value is moved into the board at once; boxing the story would add an allocation per file.
#[allow(clippy::large_enum_variant)]
pub(super) enum Read {
    Story(Story, Vec<u8>),
    Broken(StoryError),
    Vanished,
}

pub(super) fn read_story_file(path: &Path, column: Column) -> Read {
    read_story_bytes(
        path,
        column,
        super::disk::read_path(path).map(|(bytes, _)| bytes),
    )
}

/// What reading the story file at `path` gave, as a [`Read`].
pub(super) fn read_story_bytes(
    path: &Path,
    column: Column,
    read: std::io::Result<Vec<u8>>,
) -> Read {
    match read {
        Ok(bytes) => match Story::parse_bytes(&bytes, path.to_path_buf(), column) {
            Ok(story) => Read::Story(story, bytes),
            Err(err) => Read::Broken(err),
        },
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Read::Vanished,
        Err(err) => Read::Broken(StoryError {
            path: path.to_path_buf(),
            line: 1,
            message: format!("cannot read: {err}"),
        }),
    }
}

/// An advisory lock (flock) on the board folder itself, which orders the tool's moves with
/// board-wide reads: a move holds it exclusively for its renames, a reader shares it while it
/// lists the columns. Where the file system cannot lock a folder, the tool goes on without it
/// (a reader then relies on its re-scan alone).
pub(super) struct BoardLock {
    _folder: std::fs::File,
}

impl BoardLock {
    pub(super) fn shared(board_dir: &Path) -> Option<BoardLock> {
        let folder = std::fs::File::open(board_dir).ok()?;
        folder.lock_shared().ok()?;
        Some(BoardLock { _folder: folder })
    }

    pub(super) fn exclusive(board_dir: &Path) -> Option<BoardLock> {
        let folder = std::fs::File::open(board_dir).ok()?;
        folder.lock().ok()?;
        Some(BoardLock { _folder: folder })
    }
}

/// How often a board-wide read starts again when stories moved under it; the last attempt holds
/// the board lock for the whole read.
pub(super) const READ_ATTEMPTS: usize = 3;

impl Board {
    /// Reads every column and keeps each story's summary: what `status`, run planning and a
    /// run's assessment need, at a fraction of the memory. Broken files are collected, not
    /// fatal: the rest of the board works.
    pub fn load(dir: &Path) -> Result<Board> {
        read(dir, StorySummary::from)
    }
}

impl Board<Story> {
    /// Like [`Board::load`], but keeps every story whole, for `validate`, which checks every
    /// key of every story.
    pub fn load_stories(dir: &Path) -> Result<Board<Story>> {
        read(dir, |story| story)
    }
}

impl<S: Listed + Send> Board<S> {
    /// Like [`Board::load`], keeping of each story what `keep` makes of it: for a view that
    /// needs a little more of every story than its summary.
    pub fn load_with(dir: &Path, keep: fn(Story) -> S) -> Result<Board<S>> {
        read(dir, keep)
    }
}

impl<S: Listed> Board<S> {
    pub fn get(&self, id: &str) -> Option<&S> {
        self.stories.iter().find(|s| s.id() == id)
    }

    pub fn in_column(&self, column: Column) -> impl Iterator<Item = &S> {
        self.stories.iter().filter(move |s| s.column() == column)
    }
}

/// Reads the board so that each story is seen exactly once, even while a run moves stories
/// between columns. A move is a rename from one folder to another, and no listing of five
/// folders is atomic: a reader could list the target before a move and the source after it,
/// and miss the story, or the other way round and see it twice.
///
/// The tool's moves hold the board lock exclusively ([`save`]) and the columns are listed
/// under the shared lock, so a listing holds each story in exactly one folder. The files are
/// read after the lock is released, so that reading a large board does not hold up the
/// run's moves. A story that moves in between shows up as a listed file that is gone, or
/// (when another story took its file name) as an id read twice; either makes the reader
/// start again, and the last attempt keeps the lock until every file is read, so it always
/// ends with an exact answer. Duplicate ids that a person made by copying a file survive
/// every attempt, as they should (`validate` reports them). A move made by hand (`mv`)
/// cannot take the lock; a listed file that it takes away still triggers the re-scan.
fn read<S: Listed + Send>(dir: &Path, keep: fn(Story) -> S) -> Result<Board<S>> {
    for attempt in 1..=READ_ATTEMPTS {
        let last = attempt == READ_ATTEMPTS;
        let mut lock = BoardLock::shared(dir);
        let files = list_columns(dir)?;
        if !last {
            lock = None;
        }
        let (board, vanished) = read_files(dir, &files, keep);
        drop(lock);
        if last || (!vanished && !has_duplicate_ids(&board)) {
            return Ok(board);
        }
        tracing::debug!(attempt, "stories moved during a board read; reading again");
    }
    unreachable!("the last attempt returns")
}

pub(super) fn list_columns(dir: &Path) -> Result<Vec<(PathBuf, Column)>> {
    let mut files = Vec::new();
    for column in Column::ALL.iter().copied() {
        files.extend(story_files(dir, column)?.into_iter().map(|p| (p, column)));
    }
    Ok(files)
}

pub(super) fn has_duplicate_ids<S: Listed>(board: &Board<S>) -> bool {
    let mut seen =
        foldhash::HashSet::with_capacity_and_hasher(board.stories.len(), Default::default());
    !board.stories.iter().all(|s| seen.insert(s.id()))
}

/// Reads and parses `files`; the flag says whether a listed file was gone.
fn read_files<S: Send>(
    dir: &Path,
    files: &[(PathBuf, Column)],
    keep: fn(Story) -> S,
) -> (Board<S>, bool) {
    let results = in_parallel(files, |path, column| match read_story_file(path, column) {
        Read::Story(story, _) => Ok(Some(keep(story))),
        Read::Broken(err) => Err(err),
        Read::Vanished => Ok(None),
    });
    let mut board = Board {
        dir: dir.to_path_buf(),
        ..Board::default()
    };
    let mut vanished = false;
    for result in results {
        match result {
            Ok(Some(story)) => board.stories.push(story),
            Ok(None) => vanished = true,
            Err(err) => board.broken.push(err),
        }
    }
    (board, vanished)
}

/// `each` applied to every file, on every core, in the original order. Parsing dominates on
/// large boards and the files are independent.
pub(super) fn in_parallel<T: Send>(
    files: &[(PathBuf, Column)],
    each: impl Fn(&Path, Column) -> T + Sync,
) -> Vec<T> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let chunk = files.len().div_ceil(workers).max(64);
    let each = &each;
    std::thread::scope(|scope| {
        let handles: Vec<_> = files
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || part.iter().map(|(p, c)| each(p, *c)).collect::<Vec<_>>())
            })
            .collect();
        handles
            .into_iter()
            // A reader returns its errors; a panic there is a bug, raised again as it was.
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}
