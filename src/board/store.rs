//! The board's one-off operations on story files: create one, find one, change one, tidy up
//! (a run goes through [`super::board_store::BoardStore`]; reading the board is
//! [`super::reader`]).
//!
//! Every write is atomic ([`write_atomic`]); a move is a rename. A change is computed on the
//! story as it is on disk, and right before the rename the file is compared with what the
//! change was computed from: a hand edit made in between is kept, and the change is made again
//! on top of it ([`update`]).

use std::path::Path;

use super::disk::prepared;
pub use super::disk::{free_path, write_atomic};
pub use super::reader::Board;
use super::story::Story;
use super::story_file::StoryFile;
use super::vocabulary::Column;
use crate::error::{Error, Result};
use crate::names::Slug;

/// Creates a new story file in its column under `board_dir`, under a slug no other story
/// has: `story.slug` if it is free, else `<slug>-2`, `<slug>-3`, … Slugs in `taken` (every
/// story's on the board, and those of existing branches) are skipped; a file that another
/// process creates meanwhile is never overwritten, and the next name is tried instead, so
/// `add`s running at once each get their own slug.
pub fn create_unique(
    board_dir: &Path,
    story: &mut Story,
    taken: &std::collections::HashSet<Slug>,
) -> Result<()> {
    let folder = board_dir.join(story.column.name());
    fs_err::create_dir_all(&folder)?;
    let base = story.slug.clone();
    let mut number = 1;
    loop {
        let slug = match number {
            1 => base.clone(),
            n => Slug::from(format!("{base}-{n}")),
        };
        number += 1;
        let path = folder.join(format!("{slug}.md"));
        if taken.contains(&slug) || path.exists() {
            continue;
        }
        story.slug = slug;
        story.path = path;
        let temp = prepared(&folder, &story.to_text(), &story.path)?;
        match temp.persist_noclobber(&story.path) {
            Ok(_) => return Ok(()),
            Err(err) if err.error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => {
                return Err(Error::io(
                    format!("cannot create {}", story.path.display()),
                    err.error,
                ))
            }
        }
    }
}

/// Creates a new story file in its column under `board_dir`.
#[cfg(test)]
pub fn create(board_dir: &Path, story: &mut Story) -> Result<()> {
    let folder = board_dir.join(story.column.name());
    fs_err::create_dir_all(&folder)?;
    story.path = free_path(&folder, &story.slug);
    // `create_new` semantics: a file that appeared meanwhile is never overwritten.
    let text = story.to_text();
    let temp = prepared(&folder, &text, &story.path)?;
    crate::own_writes::file_written(&story.path, text.as_bytes());
    temp.persist_noclobber(&story.path)
        .map_err(|e| Error::io(format!("cannot create {}", story.path.display()), e.error))?;
    Ok(())
}

/// Removes temporary files a killed process left in the columns. They are hidden and never read
/// as stories; this only keeps the folders tidy. Call it while holding the board lock.
pub fn sweep_temporary_files(board_dir: &Path) {
    let old_enough = std::time::Duration::from_secs(60);
    for column in Column::ALL.iter().copied() {
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
    fn a_new_story_skips_taken_slugs_and_existing_files() {
        let dir = tempfile::tempdir().unwrap();
        new_story(dir.path(), "story-1", Column::Backlog);
        let taken: std::collections::HashSet<Slug> = [Slug::from("t-2"), Slug::from("t-3")].into();
        let mut front = Frontmatter::empty();
        front.set("id", &"story-2");
        front.set("title", &"T");
        let mut story = Story::new(front, "# T\n".into(), Column::Backlog, "t".into()).unwrap();
        create_unique(dir.path(), &mut story, &taken).unwrap();
        assert_eq!(story.slug, "t-4");
        assert_eq!(story.path, dir.path().join("backlog/t-4.md"));
        assert!(story.path.exists());
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
                let mut ids: Vec<&str> = board.stories.iter().map(|s| s.id().as_str()).collect();
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
