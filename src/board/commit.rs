//! Replacing a story file only if it still holds the text a change was computed from.
//!
//! A person may save a story at any moment while the tool writes it. The file is compared with
//! the expected text right before it is replaced. Where the kernel can swap two names
//! atomically (`renameat2` with `RENAME_EXCHANGE`: Linux, on ext4, xfs, btrfs, tmpfs and most
//! local file systems), the replacement is such a swap, and what it swapped out is checked
//! too: it is exactly what was replaced, so even a save in the microseconds between comparison
//! and swap is seen, and put back at once. Elsewhere a plain rename follows the comparison.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::disk::{free_path, prepared, read_path, read_whole};
use super::reader::BoardLock;
use super::story::Story;
use crate::error::{Error, Result};

/// What a conditional write found.
#[derive(Debug)]
pub(super) enum Commit {
    /// The new text is in place; this is its file, open.
    Written(File),
    /// The file no longer holds the text the change was computed from; these are its bytes,
    /// and the file holds them again.
    Changed(Vec<u8>),
    /// The file is gone from its path (moved or deleted by hand).
    Gone,
}

/// What a conditional write expects to find at the story's path.
pub(super) struct Expected<'a> {
    /// The bytes the change was computed from.
    pub bytes: &'a [u8],
    /// The open file `bytes` came from, if the caller kept it: while the path still names that
    /// file, it is read through this handle rather than opened again.
    pub file: Option<&'a File>,
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
}

/// Whether `path` names `file` (the same inode on the same device); `None` when nothing is
/// at `path`.
pub(super) fn names(path: &Path, file: &File) -> std::io::Result<Option<bool>> {
    use std::os::unix::fs::MetadataExt;
    let at_path = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err),
    };
    let held = file.metadata()?;
    Ok(Some(
        at_path.dev() == held.dev() && at_path.ino() == held.ino(),
    ))
}

/// What the file at `path` holds now: through `held` when `path` still names it (a person who
/// writes the file in place writes that very inode), else read from the path.
fn current_bytes(path: &Path, held: Option<&File>) -> std::io::Result<Vec<u8>> {
    if let Some(file) = held {
        match names(path, file)? {
            Some(true) => return read_whole(file, file.metadata()?.len()),
            None => return Err(std::io::ErrorKind::NotFound.into()),
            Some(false) => {}
        }
    }
    read_path(path).map(|(bytes, _)| bytes)
}

/// Whether the file at `path` still holds what `expected` says.
fn compare(path: &Path, expected: &Expected) -> Result<Option<Commit>> {
    match current_bytes(path, expected.file) {
        Ok(now) if now == expected.bytes => Ok(None),
        Ok(now) => Ok(Some(Commit::Changed(now))),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Some(Commit::Gone)),
        Err(err) => Err(Error::io(format!("cannot read {}", path.display()), err)),
    }
}

/// Puts the prepared `temp` (holding `written`) at `path` if `path` still holds `expected`.
pub(super) fn replace_if_unchanged(
    temp: tempfile::NamedTempFile,
    path: &Path,
    written: &[u8],
    expected: &Expected,
) -> Result<Commit> {
    let swap_error = |e| Error::io(format!("cannot replace {}", path.display()), e);
    // Compare first: a file that already changed is left alone, so our version never shows. (A
    // swap alone would show it for a moment before swapping back, and a script that re-reads
    // the file at once would build on it: 13 to 26 of 300 rapid edits were lost that way.)
    if let Some(found) = compare(path, expected)? {
        return Ok(found);
    }
    crate::own_writes::file_written(path, written);
    // The handle stays open as the story's file once it is in place; the name goes on drop.
    let (file, temp) = temp.into_parts();
    match exchange(&temp, path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Commit::Gone),
        Err(_) => {
            if let Some(found) = compare(path, expected)? {
                return Ok(found);
            }
            temp.persist(path).map_err(|e| swap_error(e.error))?;
            return Ok(Commit::Written(file));
        }
    }
    // The old file now sits at the temporary name and goes when `temp` is dropped.
    let swapped_out = read(&temp)?;
    if swapped_out == expected.bytes {
        return Ok(Commit::Written(file));
    }
    // A newer version was replaced: put it back before anyone reads ours.
    exchange(&temp, path).map_err(swap_error)?;
    let back = read(&temp)?;
    if back != written {
        // Yet another save landed while ours stood there; it is the newest, so it stays.
        exchange(&temp, path).map_err(swap_error)?;
        return Ok(Commit::Changed(back));
    }
    Ok(Commit::Changed(swapped_out))
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
    crate::own_writes::file_removed(&story.path);
    if let Ok(moving) = std::fs::read(&story.path) {
        crate::own_writes::file_written(&target, &moving);
    }
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

#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both paths are valid NUL-terminated strings that outlive the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn bytes(bytes: &[u8]) -> Expected<'_> {
        Expected { bytes, file: None }
    }

    fn temp_with(dir: &Path, text: &str) -> tempfile::NamedTempFile {
        let mut temp = tempfile::NamedTempFile::new_in(dir).unwrap();
        temp.write_all(text.as_bytes()).unwrap();
        temp
    }

    #[test]
    fn replaces_an_unchanged_file_and_keeps_a_changed_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.md");
        std::fs::write(&path, "old").unwrap();
        let commit =
            replace_if_unchanged(temp_with(dir.path(), "new"), &path, b"new", &bytes(b"old"));
        assert!(matches!(commit, Ok(Commit::Written(_))), "{commit:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");

        std::fs::write(&path, "by hand").unwrap();
        let commit = replace_if_unchanged(
            temp_with(dir.path(), "ours"),
            &path,
            b"ours",
            &bytes(b"new"),
        );
        match commit {
            Ok(Commit::Changed(bytes)) => assert_eq!(bytes, b"by hand"),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "by hand");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no leftovers"
        );

        std::fs::remove_file(&path).unwrap();
        let commit =
            replace_if_unchanged(temp_with(dir.path(), "x"), &path, b"x", &bytes(b"by hand"));
        assert!(matches!(commit, Ok(Commit::Gone)), "{commit:?}");
        assert!(!path.exists());
    }
}
