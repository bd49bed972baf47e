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
fn writes_follow_the_story_and_are_checked_through_the_open_file() {
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
        reads,
        "the moved story is checked through its open file, not read again"
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
    let ids: Vec<&str> = now.stories.iter().map(|s| s.id().as_str()).collect();
    assert_eq!(ids, ["story-2"]);
    assert_eq!(now.broken.len(), 1);
}

/// Edits a story file by hand, in place (same inode) or by saving a new file over it.
fn edit_by_hand(path: &Path, from: &str, to: &str, in_place: bool) {
    let text = fs_err::read_to_string(path).unwrap().replace(from, to);
    if in_place {
        use std::io::Write;
        let mut file = fs_err::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(path)
            .unwrap();
        file.write_all(text.as_bytes()).unwrap();
    } else {
        let temp = path.with_extension("saving");
        fs_err::write(&temp, text).unwrap();
        fs_err::rename(&temp, path).unwrap();
    }
}

#[test]
fn a_hand_edit_to_a_story_the_run_holds_is_seen_and_kept() {
    for in_place in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let story = new_story(dir.path(), "story-1", "one", Column::Ready);
        let board = BoardStore::load(dir.path()).unwrap();
        board
            .update("story-1", |s| {
                s.set("priority", &5);
                Ok(())
            })
            .unwrap();

        // The run holds the file it wrote; a person saves over it before the next look.
        edit_by_hand(&story.path, "title: T", "title: By hand", in_place);
        let now = board.refresh().unwrap();
        assert_eq!(
            now.get("story-1").unwrap().meta.title,
            "By hand",
            "in place: {in_place}"
        );
        assert_eq!(board.locate("story-1").unwrap().meta.title, "By hand");

        // And the person edits again right before the run's next write: both changes stay.
        edit_by_hand(&story.path, "title: By hand", "title: Again", in_place);
        let (written, ()) = board
            .update("story-1", |s| {
                assert_eq!(s.meta.title, "Again", "the change sees the latest save");
                s.set("priority", &7);
                Ok(())
            })
            .unwrap();
        let text = fs_err::read_to_string(&written.path).unwrap();
        assert!(
            text.contains("title: Again") && text.contains("priority: 7"),
            "{text}"
        );
        assert_eq!(
            BoardStore::load(dir.path()).unwrap().content_hash(),
            {
                board.refresh().unwrap();
                board.content_hash()
            },
            "what the store believes is what the files hold"
        );
    }
}

#[test]
fn a_run_keeps_a_bounded_number_of_stories_open() {
    let dir = tempfile::tempdir().unwrap();
    let count = super::HELD_FILES + 6;
    for n in 0..count {
        new_story(
            dir.path(),
            &format!("story-{n}"),
            &format!("s{n}"),
            Column::Ready,
        );
    }
    let board = BoardStore::load(dir.path()).unwrap();
    for n in 0..count {
        board.locate(&format!("story-{n}")).unwrap();
    }
    assert_eq!(board.state().held.len(), super::HELD_FILES);
    assert!(
        !board.state().held.contains_key("story-0"),
        "the least recently used is closed first"
    );
    // A closed one is simply opened again.
    assert_eq!(board.locate("story-0").unwrap().id(), "story-0");
}

#[test]
fn a_refresh_after_a_write_takes_the_written_story_without_reading_it() {
    let dir = tempfile::tempdir().unwrap();
    new_story(dir.path(), "story-1", "one", Column::Ready);
    new_story(dir.path(), "story-2", "two", Column::Ready);
    let board = BoardStore::load(dir.path()).unwrap();
    let before = board.content_hash();
    board
        .update("story-1", |s| {
            s.set("research_complete", &true);
            Ok(())
        })
        .unwrap();
    let reads = board.files_read();
    let now = board.refresh().unwrap();
    assert_eq!(board.files_read(), reads, "checked through its open file");
    assert!(now
        .get("story-1")
        .unwrap()
        .meta
        .completed
        .contains(crate::board::Phase::Research));
    assert!(!now
        .get("story-2")
        .unwrap()
        .meta
        .completed
        .contains(crate::board::Phase::Research));
    assert_ne!(board.content_hash(), before);
    assert_eq!(
        board.content_hash(),
        BoardStore::load(dir.path()).unwrap().content_hash(),
        "the digest is the written file's"
    );
}

/// What a research action does to the board, end to end: the run loads the board, looks at the
/// story, writes its section, then its flag (two writes), and refreshes. The story is opened
/// twice (the load and the first look), every other file once (the budget of the architecture
/// step: at most twice).
#[test]
fn an_action_opens_its_story_twice_and_every_other_story_once() {
    use crate::board::disk::opens;
    let dir = tempfile::tempdir().unwrap();
    let acted = new_story(dir.path(), "story-1", "one", Column::Ready);
    let others = [
        new_story(dir.path(), "story-2", "two", Column::Ready),
        new_story(dir.path(), "story-3", "three", Column::Done),
    ];
    let board = BoardStore::load(dir.path()).unwrap();
    board.content_hash();
    board.locate("story-1").unwrap();
    board
        .update("story-1", |s| {
            s.set_section("Research", "Findings.");
            Ok(())
        })
        .unwrap();
    board
        .update("story-1", |s| {
            s.set_phase_flag(crate::board::Phase::Research, true);
            Ok(())
        })
        .unwrap();
    let now = board.refresh().unwrap();
    board.content_hash();

    assert!(now
        .get("story-1")
        .unwrap()
        .meta
        .completed
        .contains(crate::board::Phase::Research));
    assert_eq!(opens::of(&acted.path), 2, "the story acted on");
    for other in &others {
        assert_eq!(opens::of(&other.path), 1, "{}", other.path.display());
    }
}
