//! Writing stories back atomically (reading the board is [`super::reader`]).
//!
//! Every write goes to a temporary file in the destination folder, is fsynced and renamed over
//! the story, so a crash leaves either the old or the new file, never half of one. A move is a
//! rename. Before each change the story is re-read from disk, and right before the rename the
//! file is compared with what the change was computed from: a hand edit made in between is kept,
//! and the change is made again on top of it ([`update`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::commit::{replace_if_unchanged, Commit, Expected};
use super::reader::BoardLock;
pub use super::reader::{read_story, Board};
use super::story::Story;
use super::story_file::StoryFile;
use super::Column;
use crate::error::{Error, Result};

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

/// Tests widen the moment between preparing a write and committing it, to put a hand edit
/// exactly there (debug builds only).
fn pause_before_commit() {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("AGENTIC_SDLC_TEST_PAUSE_BEFORE_COMMIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
}

/// Writes a story back if its file still holds `expected`, the bytes the story was read from.
/// The new text is written and synced first, then it replaces the file only if the file is
/// unchanged ([`replace_if_unchanged`]). When the column changed, the file is renamed into the
/// new folder (a move is a rename) and replaced there at once, under the board lock, so a crash
/// leaves the story whole in one folder and readers never see it in two or none.
pub(super) fn save_if_unchanged(story: &mut Story, expected: &Expected) -> Result<Commit> {
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
    let text = story.to_text();
    if story.path.parent() == Some(target_folder.as_path()) {
        let temp = prepared(&target_folder, &text, &story.path)?;
        pause_before_commit();
        return replace_if_unchanged(temp, &story.path, text.as_bytes(), expected);
    }
    fs_err::create_dir_all(&target_folder)?;
    // The old file's mode carries over to the moved one.
    let temp = prepared(&target_folder, &text, &story.path)?;
    pause_before_commit();
    let _lock = BoardLock::exclusive(&board_dir);
    let name = story
        .path
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_default();
    let mut target = target_folder.join(&name);
    if target.exists() {
        target = free_path(&target_folder, &story.slug);
    }
    // The file moves with whatever it holds; the replacement then checks it in the new folder.
    match std::fs::rename(&story.path, &target) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Commit::Gone),
        Err(err) => {
            return Err(Error::io(
                format!(
                    "cannot move {} to {}",
                    story.path.display(),
                    target.display()
                ),
                err,
            ))
        }
    }
    story.path = target;
    replace_if_unchanged(temp, &story.path, text.as_bytes(), expected)
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
            // The name first: a `stat` of every story on a large board costs more than the rest.
            if !entry.file_name().as_encoded_bytes().starts_with(b".tmp-") {
                continue;
            }
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > old_enough);
            if stale {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Finds the current file of the story `id`: at `hint` if it is still there, else anywhere on
/// the board (a person may have moved it by hand).
pub fn locate(board_dir: &Path, id: &str, hint: Option<&Path>) -> Result<Story> {
    StoryFile::locate(board_dir, id, hint).map(StoryFile::into_story)
}

/// The column a story file sits in, by its folder.
pub(super) fn column_of(path: &Path) -> Option<Column> {
    path.parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(Column::parse)
}

/// Reads a story, applies `change` and writes it back atomically, stamping `updated`; see
/// [`StoryFile::update`], which keeps a hand edit made in between. When `change` fails nothing
/// is written.
pub fn update<R>(
    board_dir: &Path,
    id: &str,
    hint: Option<&Path>,
    change: impl FnOnce(&mut Story) -> Result<R>,
) -> Result<(Story, R)> {
    let mut file = StoryFile::locate(board_dir, id, hint)?;
    let result = file.update(board_dir, change)?;
    Ok((file.into_story(), result))
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
    fn a_hand_edit_made_during_a_write_is_kept_and_the_change_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", Column::Backlog);
        let (moved, ()) = update(dir.path(), "story-1", None, |s| {
            // A person saves the file between the tool's read and its write.
            let text = fs_err::read_to_string(&story.path).unwrap();
            fs_err::write(
                &story.path,
                text.replace("title: T", "title: By hand\nowner: ann"),
            )
            .unwrap();
            s.set("priority", &3);
            s.set_section("Summary", "From the tool.");
            s.set_column(Column::Ready);
            Ok(())
        })
        .unwrap();
        let text = fs_err::read_to_string(&moved.path).unwrap();
        assert_eq!(moved.path, dir.path().join("ready/t.md"));
        for kept in [
            "title: By hand",
            "owner: ann",
            "priority: 3",
            "status: ready",
            "From the tool.",
        ] {
            assert!(text.contains(kept), "{kept}:\n{text}");
        }
        assert!(!story.path.exists());
    }

    #[test]
    fn a_hand_edit_that_breaks_the_story_during_a_write_stands() {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", Column::Ready);
        let result = update(dir.path(), "story-1", None, |s| {
            fs_err::write(&story.path, "---\nid: story-1\ntitle: [\n---\n").unwrap();
            s.set("priority", &3);
            Ok(())
        });
        assert!(
            matches!(result, Err(Error::StoryParse { line: 3, .. })),
            "{result:?}"
        );
        assert_eq!(
            fs_err::read_to_string(&story.path).unwrap(),
            "---\nid: story-1\ntitle: [\n---\n"
        );
    }

    #[test]
    fn no_hand_edit_is_lost_to_writes_running_at_the_same_time() {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", Column::Ready);
        const EDITS: usize = 300;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for n in 0..EDITS {
                    let result = update(dir.path(), "story-1", None, |s| {
                        s.set("priority", &n);
                        Ok(())
                    });
                    // Given up after too many hand edits in a row: the hand edits stand.
                    assert!(
                        matches!(result, Ok(_) | Err(Error::StoryKeptChanging { .. })),
                        "{result:?}"
                    );
                }
            });
            scope.spawn(|| {
                // A person saving again and again, the way editors do: a whole new file renamed
                // over the story.
                for n in 0..EDITS {
                    let text = fs_err::read_to_string(&story.path).unwrap();
                    let temp = dir.path().join("ready/.editor-save");
                    fs_err::write(&temp, format!("{text}hand-{n}\n")).unwrap();
                    fs_err::rename(&temp, &story.path).unwrap();
                }
            });
        });
        let text = fs_err::read_to_string(&story.path).unwrap();
        let lost: Vec<usize> = (0..EDITS)
            .filter(|n| !text.contains(&format!("hand-{n}\n")))
            .collect();
        assert!(
            lost.is_empty(),
            "{} of {EDITS} hand edits lost: {lost:?}",
            lost.len()
        );
    }

    #[test]
    fn readers_see_every_story_exactly_once_while_stories_move() {
        let dir = tempfile::tempdir().unwrap();
        for n in 0..6 {
            new_story(dir.path(), &format!("story-{n}"), Column::Ready);
        }
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // Back and forth across the reading order: ready is listed before in-progress.
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let column = if n % 2 == 0 {
                        Column::InProgress
                    } else {
                        Column::Ready
                    };
                    for id in 0..6 {
                        update(dir.path(), &format!("story-{id}"), None, |s| {
                            s.set_column(column);
                            Ok(())
                        })
                        .unwrap();
                    }
                    n += 1;
                }
            });
            for _ in 0..300 {
                let board = Board::load(dir.path()).unwrap();
                let mut ids: Vec<&str> = board.stories.iter().map(|s| s.id()).collect();
                ids.sort();
                assert_eq!(ids.len(), 6, "{ids:?} {:?}", board.broken);
                ids.dedup();
                assert_eq!(ids.len(), 6, "a story was seen twice");
                assert!(board.broken.is_empty(), "{:?}", board.broken);
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
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
