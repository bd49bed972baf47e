//! One story held open while the tool works on it: the story, the bytes it was read from (or
//! last written as), and the open file those bytes live in.
//!
//! A write must build on what the file holds right before it (docs/design.md §11), so the tool used
//! to open the story again before each change and once more right before each rename. Holding the
//! file open gives the same certainty without opening the path: while the path still names the held
//! inode (one `stat`), reading through the handle reads what a person's in-place save wrote; a save
//! that replaced the file shows up as another inode at the path, and only then is the path opened
//! again. After a write, the handle is the new file's.

use std::fs::File;
use std::path::Path;

use super::commit::save_if_unchanged;
use super::commit::{names, Commit, Expected};
use super::disk::{self, read_whole};
use super::reader::Board;
use super::story::{Story, StoryError};
use super::vocabulary::{today, Column};
use crate::error::{Error, Result};

/// How often a write is computed again on a story that keeps being edited by hand.
const WRITE_ATTEMPTS: usize = 8;

/// A story and the open file it came from (see the module docs).
#[derive(Debug)]
pub struct StoryFile {
    story: Story,
    bytes: Vec<u8>,
    file: File,
}

/// The story at `path`, open; `None` when the file is gone or is not a story.
fn open(path: &Path, column: super::vocabulary::Column) -> Option<StoryFile> {
    let file = disk::open(path).ok()?;
    let bytes = read_whole(&file, file.metadata().ok()?.len()).ok()?;
    let story = Story::parse_bytes(&bytes, path.to_path_buf(), column).ok()?;
    Some(StoryFile { story, bytes, file })
}

impl StoryFile {
    /// Opens the current file of the story `id`: at `hint` if it is still there, else wherever
    /// on the board it is now (a person may have moved it by hand).
    pub fn locate(board_dir: &Path, id: &str, hint: Option<&Path>) -> Result<StoryFile> {
        if let Some((hint, column)) = hint.and_then(|hint| Some((hint, Column::of_file(hint)?))) {
            if let Some(found) = open(hint, column) {
                if found.story.id() == id {
                    return Ok(found);
                }
            }
        }
        let board = Board::load(board_dir)?;
        if let Some(listed) = board.stories.iter().find(|s| s.id() == id) {
            // Open it for the exact bytes; the story may have moved again since the listing.
            if let Some(found) = open(&listed.path, listed.column) {
                if found.story.id() == id {
                    return Ok(found);
                }
            }
            return StoryFile::locate(board_dir, id, None);
        }
        // A story someone broke by hand is that file's parse error, not a missing story: the run
        // looks stories up by id alone, so recognise the file by its `id:` line.
        let is_the_story = |err: &StoryError| {
            hint.is_some_and(|h| err.path == h)
                || std::fs::read_to_string(&err.path).is_ok_and(|text| declares_id(&text, id))
        };
        if let Some(err) = board.broken.into_iter().find(is_the_story) {
            return Err(err.into());
        }
        Err(Error::StoryNotFound {
            query: id.to_string(),
            close_matches: Vec::new(),
        })
    }

    pub fn story(&self) -> &Story {
        &self.story
    }

    pub fn into_story(self) -> Story {
        self.story
    }

    /// The bytes the story was parsed from, as the file held them when last read or written.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether the story's path still names the held file and it holds what was last read or
    /// written, checked with one `stat` and a read through the handle.
    pub fn is_current(&self) -> bool {
        matches!(names(&self.story.path, &self.file), Ok(Some(true)))
            && read_whole(&self.file, self.bytes.len() as u64).is_ok_and(|now| now == self.bytes)
    }

    /// Brings the story up to date with its file, so a change is computed on what a person last
    /// saved. Reads through the handle while the path names it; otherwise opens the story
    /// again, wherever it is now.
    pub fn sync(&mut self, board_dir: &Path) -> Result<()> {
        let path = self.story.path.clone();
        if matches!(names(&path, &self.file), Ok(Some(true))) {
            let now = read_whole(&self.file, self.bytes.len() as u64)
                .map_err(|e| Error::io(format!("cannot read {}", path.display()), e))?;
            if now != self.bytes {
                self.story = Story::parse_bytes(&now, path, self.story.column)?;
                self.bytes = now;
            }
            return Ok(());
        }
        let id = self.story.id().to_string();
        *self = StoryFile::locate(board_dir, &id, Some(&path))?;
        Ok(())
    }

    /// Applies `change` to the story and writes it back atomically, stamping `updated`. When
    /// `change` fails, nothing is written and the story is as it was.
    ///
    /// A person may edit the file between the read and the write. The file is compared with
    /// what the change was computed from right before the rename; if it changed, the change's
    /// recorded edits ([`Story::changes`]) are made again on the fresh text and the write is
    /// tried again, so the hand edit is kept. If the fresh text no longer parses, nothing is
    /// written and the error names the file: the person's version stands.
    pub fn update<R>(
        &mut self,
        board_dir: &Path,
        change: impl FnOnce(&mut Story) -> Result<R>,
    ) -> Result<R> {
        let mut story = self.story.clone();
        let before_column = story.column;
        let result = change(&mut story)?;
        if story.changes().is_empty()
            || (story.to_text() == self.story.to_text() && story.column == before_column)
        {
            return Ok(result);
        }
        story.set("updated", &today());
        let changes = story.changes().to_vec();
        let id = story.id().to_string();
        let mut expected = self.bytes.clone();
        // The handle is used to compare while the path still names it.
        let mut held = Some(&self.file);
        for _ in 0..WRITE_ATTEMPTS {
            let written = story.to_text();
            let commit = save_if_unchanged(
                &mut story,
                &Expected {
                    bytes: &expected,
                    file: held,
                },
            )?;
            let fresh = match commit {
                Commit::Written(file) => {
                    story.mark_written();
                    *self = StoryFile {
                        story,
                        bytes: written.into_bytes(),
                        file,
                    };
                    return Ok(result);
                }
                Commit::Changed(bytes) => {
                    // A move may already have taken the file to its new folder.
                    let file_column = Column::of_file(&story.path).unwrap_or(before_column);
                    let fresh = Story::parse_bytes(&bytes, story.path.clone(), file_column)?;
                    if held.is_some_and(|file| !matches!(names(&story.path, file), Ok(Some(true))))
                    {
                        held = None;
                    }
                    expected = bytes;
                    fresh
                }
                Commit::Gone => {
                    // Moved or replaced by hand: compare by reading its new path from now on.
                    let found = StoryFile::locate(board_dir, &id, None)?;
                    expected = found.bytes;
                    held = None;
                    found.story
                }
            };
            tracing::debug!(path = %fresh.path.display(), "edited during the write; applying the change again");
            story = fresh;
            story.replay(&changes)?;
        }
        Err(Error::StoryKeptChanging {
            path: story.path,
            attempts: WRITE_ATTEMPTS,
        })
    }
}

/// Whether a story file's text has the line `id: <id>` (quoted or not), even when the rest of
/// its frontmatter does not parse.
fn declares_id(text: &str, id: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix("id:")
            .is_some_and(|value| value.trim().trim_matches(['\'', '"']) == id)
    })
}
