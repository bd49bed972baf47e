use std::path::Path;

use super::BoardStore;
use crate::board::frontmatter::Frontmatter;
use crate::board::{store, Column, Story};

fn new_story(dir: &Path, id: &str, slug: &str, column: Column) -> Story {
    let mut front = Frontmatter::empty();
    front.set("id", &id);
    front.set("title", &"T");
    front.set("status", &column.name());
    let mut story = Story::new(front, "# T\n".into(), column, slug.into()).unwrap();
    store::create(dir, &mut story).unwrap();
    story
}

#[test]
fn reads_each_file_once_and_again_only_when_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let first = new_story(dir.path(), "story-1", "one", Column::Ready);
    new_story(dir.path(), "story-2", "two", Column::Ready);
    let board = BoardStore::load(dir.path()).unwrap();
    assert_eq!(board.files_read(), 2);
    let hash = board.content_hash();

    assert_eq!(board.refresh().unwrap().stories.len(), 2);
    assert_eq!(board.files_read(), 2, "nothing changed, nothing read");
    assert_eq!(board.content_hash(), hash);

    // A person edits a story during the run: only that file is read again, and it is seen.
    let text = fs_err::read_to_string(&first.path).unwrap();
    fs_err::write(
        &first.path,
        text.replace("title: T", "title: By hand, longer"),
    )
    .unwrap();
    let seen = board.refresh().unwrap();
    assert_eq!(board.files_read(), 3);
    assert_eq!(seen.get("story-1").unwrap().meta.title, "By hand, longer");
    assert_ne!(board.content_hash(), hash);
    assert_eq!(
        BoardStore::load(dir.path()).unwrap().content_hash(),
        board.content_hash(),
        "the digest depends on the files, not on how they were read"
    );
}

#[test]
fn writes_follow_the_story_and_are_read_again() {
    let dir = tempfile::tempdir().unwrap();
    new_story(dir.path(), "story-1", "one", Column::Ready);
    new_story(dir.path(), "story-2", "two", Column::Ready);
    let board = BoardStore::load(dir.path()).unwrap();
    let (moved, ()) = board
        .update("story-1", |s| {
            s.set_column(Column::InProgress);
            Ok(())
        })
        .unwrap();
    assert_eq!(moved.path, dir.path().join("in-progress/one.md"));
    assert_eq!(board.locate("story-1").unwrap().path, moved.path);
    let reads = board.files_read();
    let now = board.refresh().unwrap();
    assert_eq!(
        board.files_read(),
        reads + 1,
        "only the moved story is read"
    );
    assert_eq!(now.get("story-1").unwrap().column, Column::InProgress);
    assert_eq!(now.stories.len(), 2);

    // Moved by hand: the stale path falls back to a scan.
    fs_err::rename(&moved.path, dir.path().join("done/one.md"))
        .or_else(|_| {
            fs_err::create_dir_all(dir.path().join("done"))?;
            fs_err::rename(&moved.path, dir.path().join("done/one.md"))
        })
        .unwrap();
    let (found, ()) = board.update("story-1", |_| Ok(())).unwrap();
    assert_eq!(found.path, dir.path().join("done/one.md"));
}

#[test]
fn new_and_removed_files_are_seen() {
    let dir = tempfile::tempdir().unwrap();
    let first = new_story(dir.path(), "story-1", "one", Column::Ready);
    let board = BoardStore::load(dir.path()).unwrap();
    new_story(dir.path(), "story-2", "two", Column::Backlog);
    fs_err::remove_file(&first.path).unwrap();
    fs_err::write(dir.path().join("ready/broken.md"), "---\nid: [\n---\n").unwrap();
    let now = board.refresh().unwrap();
    let ids: Vec<&str> = now.stories.iter().map(|s| s.id()).collect();
    assert_eq!(ids, ["story-2"]);
    assert_eq!(now.broken.len(), 1);
}
