//! Changing a story file only if it still holds what the change was computed from, for
//! changes that come from elsewhere (another clone's, through the remote; docs/design.md §20).
//!
//! The same guarantee as the tool's own writes ([`super::commit`]): a save made by a person or
//! by this run between the read and the write is never overwritten. The caller reads the file
//! again and computes its change anew.

use std::path::{Path, PathBuf};

use super::commit::{replace_if_unchanged, Commit, Expected};
use super::disk::{free_path, prepared_bytes as prepared};
use super::reader::BoardLock;
use super::story::slug_from_path;
use crate::error::{Error, Result};

/// What a conditional change found.
#[derive(Debug, PartialEq, Eq)]
pub enum Swap {
    /// The file holds the new text (at this path), or is gone as asked.
    Done(Option<PathBuf>),
    /// The file no longer held what was expected (or something now stands where a new file was
    /// to go); nothing was changed.
    Changed,
}

fn folder_of(path: &Path) -> Result<&Path> {
    path.parent()
        .ok_or_else(|| Error::Other(format!("{} has no folder", path.display())))
}

/// Replaces the story file `from` (which must still hold its expected bytes) with `to`: the same
/// path, or another column's folder (a move, a rename as every move on the board). Without
/// `from`, `to` is a new file and must not exist yet; without `to`, `from` is removed.
pub fn swap_story_file(
    board_dir: &Path,
    from: Option<(&Path, &[u8])>,
    to: Option<(&Path, &[u8])>,
) -> Result<Swap> {
    match (from, to) {
        (None, None) => Ok(Swap::Done(None)),
        (None, Some((path, bytes))) => create(path, bytes),
        (Some((path, expected)), None) => remove(board_dir, path, expected),
        (Some((from, expected)), Some((to, bytes))) if from == to => {
            let temp = prepared(folder_of(to)?, bytes, to)?;
            let expected = Expected {
                bytes: expected,
                file: None,
            };
            Ok(match replace_if_unchanged(temp, to, bytes, &expected)? {
                Commit::Written(_) => Swap::Done(Some(to.to_path_buf())),
                Commit::Changed(_) | Commit::Gone => Swap::Changed,
            })
        }
        (Some((from, expected)), Some((to, bytes))) => {
            move_to(board_dir, from, expected, to, bytes)
        }
    }
}

fn create(path: &Path, bytes: &[u8]) -> Result<Swap> {
    let folder = folder_of(path)?;
    fs_err::create_dir_all(folder)?;
    let temp = prepared(folder, bytes, path)?;
    match temp.persist_noclobber(path) {
        Ok(_) => Ok(Swap::Done(Some(path.to_path_buf()))),
        Err(err) if err.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(Swap::Changed),
        Err(err) => Err(Error::io(
            format!("cannot write {}", path.display()),
            err.error,
        )),
    }
}

fn remove(board_dir: &Path, path: &Path, expected: &[u8]) -> Result<Swap> {
    let _lock = BoardLock::exclusive(board_dir);
    // Moved aside first, so what is compared is exactly what goes.
    let aside = folder_of(path)?.join(format!(
        ".tmp-removed-{}-{}",
        std::process::id(),
        slug_from_path(path)
    ));
    match std::fs::rename(path, &aside) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Swap::Changed),
        Err(err) => return Err(Error::io(format!("cannot remove {}", path.display()), err)),
    }
    let held = fs_err::read(&aside)?;
    if held == expected {
        fs_err::remove_file(&aside)?;
        return Ok(Swap::Done(None));
    }
    fs_err::rename(&aside, path)?;
    Ok(Swap::Changed)
}

fn move_to(
    board_dir: &Path,
    from: &Path,
    expected: &[u8],
    to: &Path,
    bytes: &[u8],
) -> Result<Swap> {
    let folder = folder_of(to)?;
    fs_err::create_dir_all(folder)?;
    let temp = prepared(folder, bytes, from)?;
    let lock = BoardLock::exclusive(board_dir);
    let mut target = to.to_path_buf();
    if target.exists() {
        target = free_path(folder, &slug_from_path(to));
    }
    match std::fs::rename(from, &target) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Swap::Changed),
        Err(err) => {
            return Err(Error::io(
                format!("cannot move {} to {}", from.display(), target.display()),
                err,
            ))
        }
    }
    drop(lock);
    let expected = Expected {
        bytes: expected,
        file: None,
    };
    Ok(
        match replace_if_unchanged(temp, &target, bytes, &expected)? {
            Commit::Written(_) => Swap::Done(Some(target)),
            // The file moved with whatever a save put in it; the caller reads it there again.
            Commit::Changed(_) | Commit::Gone => Swap::Changed,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let board = dir.path().join("board");
        for column in ["ready", "done"] {
            fs_err::create_dir_all(board.join(column)).unwrap();
        }
        (dir, board)
    }

    #[test]
    fn a_file_is_replaced_moved_created_and_removed_only_as_expected() {
        let (_dir, board) = board();
        let ready = board.join("ready/a.md");
        let done = board.join("done/a.md");
        assert_eq!(
            swap_story_file(&board, None, Some((&ready, b"one"))).unwrap(),
            Swap::Done(Some(ready.clone()))
        );
        assert_eq!(
            swap_story_file(&board, None, Some((&ready, b"again"))).unwrap(),
            Swap::Changed,
            "a new file never replaces one that is there"
        );
        assert_eq!(
            swap_story_file(&board, Some((&ready, b"stale")), Some((&ready, b"two"))).unwrap(),
            Swap::Changed
        );
        assert_eq!(fs_err::read(&ready).unwrap(), b"one");
        assert_eq!(
            swap_story_file(&board, Some((&ready, b"one")), Some((&done, b"two"))).unwrap(),
            Swap::Done(Some(done.clone()))
        );
        assert!(!ready.exists());
        assert_eq!(fs_err::read(&done).unwrap(), b"two");
        assert_eq!(
            swap_story_file(&board, Some((&done, b"one")), None).unwrap(),
            Swap::Changed
        );
        assert!(done.exists(), "a removal of a file that changed is refused");
        assert_eq!(
            swap_story_file(&board, Some((&done, b"two")), None).unwrap(),
            Swap::Done(None)
        );
        assert!(!done.exists());
        let left: Vec<_> = fs_err::read_dir(board.join("done")).unwrap().collect();
        assert!(left.is_empty(), "no temporary file is left behind");
    }
}
