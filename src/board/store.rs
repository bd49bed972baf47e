//! Reading the board from disk and writing stories back atomically.
//!
//! Every write goes to a temporary file in the destination folder, is fsynced and renamed over
//! the story, so a crash leaves either the old or the new file, never half of one. A move is a
//! rename. Before each change the story is re-read from disk, so hand edits made while a run is
//! working are kept.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::story::{Story, StoryError};
use super::Column;
use crate::error::{Error, Result};

/// Every story on the board, plus the files that could not be read.
#[derive(Debug, Clone, Default)]
pub struct Board {
    pub dir: PathBuf,
    pub stories: Vec<Story>,
    pub broken: Vec<StoryError>,
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
    files.sort();
    Ok(files)
}

pub fn read_story(path: &Path, column: Column) -> Result<Story, StoryError> {
    let text = std::fs::read_to_string(path).map_err(|err| StoryError {
        path: path.to_path_buf(),
        line: 1,
        message: format!("cannot read: {err}"),
    })?;
    Story::parse(&text, path.to_path_buf(), column)
}

impl Board {
    /// Reads every column. Broken files are collected, not fatal: the rest of the board works.
    pub fn load(dir: &Path) -> Result<Board> {
        Board::read(dir, Ok)
    }

    /// Like [`Board::load`], but keeps only each story's summary ([`Story::into_summary`]):
    /// what `status` and run planning need, at a fraction of the memory.
    pub fn load_summaries(dir: &Path) -> Result<Board> {
        Board::read(dir, |story| Ok(story.into_summary()))
    }

    fn read(dir: &Path, keep: fn(Story) -> Result<Story, StoryError>) -> Result<Board> {
        let mut files = Vec::new();
        for column in Column::ALL {
            files.extend(story_files(dir, column)?.into_iter().map(|p| (p, column)));
        }
        // Parsing dominates on large boards; the files are independent, so read them on every
        // core and keep the original order.
        let workers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let chunk = files.len().div_ceil(workers).max(64);
        let results: Vec<Result<Story, StoryError>> = std::thread::scope(|scope| {
            let handles: Vec<_> = files
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(p, c)| read_story(p, *c).and_then(keep))
                            .collect::<Vec<_>>()
                    })
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
        });
        let mut board = Board {
            dir: dir.to_path_buf(),
            ..Board::default()
        };
        for result in results {
            match result {
                Ok(story) => board.stories.push(story),
                Err(err) => board.broken.push(err),
            }
        }
        Ok(board)
    }

    pub fn get(&self, id: &str) -> Option<&Story> {
        self.stories.iter().find(|s| s.id() == id)
    }

    pub fn in_column(&self, column: Column) -> impl Iterator<Item = &Story> {
        self.stories.iter().filter(move |s| s.column == column)
    }
}

/// A temporary-file builder for files that become board files. tempfile creates private (0600)
/// files; a story or config is an ordinary project file, so it gets the mode the umask gives.
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    #[cfg_attr(not(unix), allow(unused_mut))]
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder
}

/// A fully written and fsynced temporary file in `folder`, ready to be renamed into place.
fn prepared(folder: &Path, text: &str, path: &Path) -> Result<tempfile::NamedTempFile> {
    let mut temp = temp_builder()
        .prefix(".tmp-")
        .suffix(".partial")
        .tempfile_in(folder)
        .map_err(|e| {
            Error::io(
                format!("cannot create a temporary file in {}", folder.display()),
                e,
            )
        })?;
    // The rename replaces the file, so its mode would be the temporary file's; keep the old one.
    if let Ok(existing) = std::fs::metadata(path) {
        temp.as_file()
            .set_permissions(existing.permissions())
            .map_err(|e| Error::io(format!("cannot set the mode of {}", path.display()), e))?;
    }
    temp.write_all(text.as_bytes())
        .and_then(|_| temp.as_file().sync_all())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    Ok(temp)
}

/// Writes `text` to `path` atomically: temp file in the same folder, fsync, rename.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let folder = path.parent().unwrap_or(Path::new("."));
    prepared(folder, text, path)?
        .persist(path)
        .map_err(|e| Error::io(format!("cannot replace {}", path.display()), e.error))?;
    Ok(())
}

/// A free file name for `slug` in `folder`: `<slug>.md`, then `<slug>-2.md`, …
pub fn free_path(folder: &Path, slug: &str) -> PathBuf {
    let first = folder.join(format!("{slug}.md"));
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| folder.join(format!("{slug}-{n}.md")))
        .find(|p| !p.exists())
        .expect("a folder holds finitely many files, so some <slug>-<n>.md is free")
}

/// Writes a story back. When its column changed, the new text is written and synced in the
/// destination folder first; then the file is renamed there (a move is a rename) and replaced
/// by the new text at once, so a crash leaves the story whole in one folder and the window in
/// which its `status` lags its folder is two renames wide.
pub fn save(story: &mut Story) -> Result<()> {
    if story.is_summary() {
        return Err(Error::Other(format!(
            "internal error: {} was loaded as a summary and cannot be written",
            story.path.display()
        )));
    }
    let board_dir = story
        .path
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| {
            Error::Other(format!(
                "{} is not inside a board column",
                story.path.display()
            ))
        })?
        .to_path_buf();
    let target_folder = board_dir.join(story.column.name());
    if story.path.parent() == Some(target_folder.as_path()) {
        return write_atomic(&story.path, &story.to_text());
    }
    fs_err::create_dir_all(&target_folder)?;
    let name = story
        .path
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut target = target_folder.join(&name);
    if target.exists() {
        target = free_path(&target_folder, &story.slug);
    }
    // The old file's mode carries over to the moved one.
    let temp = prepared(&target_folder, &story.to_text(), &story.path)?;
    fs_err::rename(&story.path, &target)?;
    temp.persist(&target)
        .map_err(|e| Error::io(format!("cannot replace {}", target.display()), e.error))?;
    story.path = target;
    Ok(())
}

/// Creates a new story file in its column under `board_dir`.
pub fn create(board_dir: &Path, story: &mut Story) -> Result<()> {
    let folder = board_dir.join(story.column.name());
    fs_err::create_dir_all(&folder)?;
    story.path = free_path(&folder, &story.slug);
    // `create_new` semantics: a file that appeared meanwhile is never overwritten.
    let temp = prepared(&folder, &story.to_text(), &story.path)?;
    temp.persist_noclobber(&story.path)
        .map_err(|e| Error::io(format!("cannot create {}", story.path.display()), e.error))?;
    Ok(())
}

/// Removes temporary files a killed process left in the columns. They are hidden and never read
/// as stories; this only keeps the folders tidy. Call it while holding the board lock.
pub fn sweep_temporary_files(board_dir: &Path) {
    let old_enough = std::time::Duration::from_secs(60);
    for column in Column::ALL {
        let Ok(entries) = std::fs::read_dir(board_dir.join(column.name())) else {
            continue;
        };
        for entry in entries.filter_map(|e| e.ok()) {
            let name = entry.file_name();
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > old_enough);
            if name.to_string_lossy().starts_with(".tmp-") && stale {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Finds the current file of the story `id`: at `hint` if it is still there, else anywhere on
/// the board (a person may have moved it by hand).
pub fn locate(board_dir: &Path, id: &str, hint: Option<&Path>) -> Result<Story> {
    if let Some(hint) = hint {
        let column = hint
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .and_then(Column::parse);
        if let (Some(column), true) = (column, hint.is_file()) {
            if let Ok(story) = read_story(hint, column) {
                if story.id() == id {
                    return Ok(story);
                }
            }
        }
    }
    let board = Board::load(board_dir)?;
    if let Some(story) = board.stories.into_iter().find(|s| s.id() == id) {
        return Ok(story);
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

/// Whether a story file's text has the line `id: <id>` (quoted or not), even when the rest of
/// its frontmatter does not parse.
fn declares_id(text: &str, id: &str) -> bool {
    text.lines().any(|line| {
        line.strip_prefix("id:")
            .is_some_and(|value| value.trim().trim_matches(['\'', '"']) == id)
    })
}

/// Re-reads a story, applies `change` and writes it back atomically, stamping `updated`.
/// When `change` fails nothing is written.
pub fn update<R>(
    board_dir: &Path,
    id: &str,
    hint: Option<&Path>,
    change: impl FnOnce(&mut Story) -> Result<R>,
) -> Result<(Story, R)> {
    let mut story = locate(board_dir, id, hint)?;
    let before = story.to_text();
    let before_column = story.column;
    let result = change(&mut story)?;
    if story.to_text() != before || story.column != before_column {
        story.set("updated", &today());
        save(&mut story)?;
    }
    Ok((story, result))
}

pub fn today() -> String {
    chrono::Local::now().format("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::frontmatter::Frontmatter;

    fn new_story(dir: &Path, id: &str, column: Column) -> Story {
        let mut front = Frontmatter::empty();
        front.set("id", &id);
        front.set("title", &"T");
        front.set("status", &column.name());
        let mut story = Story::new(front, "# T\n".into(), column, "t".into()).unwrap();
        create(dir, &mut story).unwrap();
        story
    }

    #[test]
    fn create_update_and_move() {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", Column::Backlog);
        assert_eq!(story.path, dir.path().join("backlog/t.md"));
        let second = new_story(dir.path(), "story-2", Column::Backlog);
        assert_eq!(second.path, dir.path().join("backlog/t-2.md"));

        let (moved, ()) = update(dir.path(), "story-1", Some(&story.path), |s| {
            s.set_column(Column::Ready);
            Ok(())
        })
        .unwrap();
        assert_eq!(moved.path, dir.path().join("ready/t.md"));
        assert!(!story.path.exists());
        let text = fs_err::read_to_string(&moved.path).unwrap();
        assert!(text.contains("status: ready"), "{text}");

        // A stale hint (the file moved by hand) is found by scanning the board.
        let (found, ()) = update(dir.path(), "story-1", Some(&story.path), |_| Ok(())).unwrap();
        assert_eq!(found.path, moved.path);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("ready"))
            .unwrap()
            .collect();
        assert_eq!(leftovers.len(), 1, "no temporary files left behind");
    }

    #[test]
    fn failed_change_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", Column::Backlog);
        let before = fs_err::read_to_string(&story.path).unwrap();
        let result = update(dir.path(), "story-1", None, |s| -> Result<()> {
            s.set("title", &"Changed");
            Err(Error::Other("agent failed".into()))
        });
        assert!(result.is_err());
        assert_eq!(fs_err::read_to_string(&story.path).unwrap(), before);
    }

    #[test]
    fn a_story_broken_by_hand_is_its_parse_error_not_a_missing_story() {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", Column::Ready);
        new_story(dir.path(), "story-2", Column::Ready);
        let text = fs_err::read_to_string(&story.path).unwrap();
        fs_err::write(&story.path, text.replace("title: T", "title: [T")).unwrap();
        match locate(dir.path(), "story-1", None) {
            Err(Error::StoryParse { path, .. }) => assert_eq!(path, story.path),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            locate(dir.path(), "story-3", None),
            Err(Error::StoryNotFound { .. })
        ));
    }

    #[test]
    fn broken_files_do_not_hide_the_board() {
        let dir = tempfile::tempdir().unwrap();
        new_story(dir.path(), "story-1", Column::Ready);
        fs_err::write(dir.path().join("ready/broken.md"), "---\nid: [\n---\n").unwrap();
        let board = Board::load(dir.path()).unwrap();
        assert_eq!(board.stories.len(), 1);
        assert_eq!(board.broken.len(), 1);
        assert_eq!(board.broken[0].line, 2);
    }
}
