//! Replacing a story file only if it still holds the text a change was computed from.
//!
//! A person may save a story at any moment while the tool writes it. The file is compared with
//! the expected text right before it is replaced. Where the kernel can swap two names
//! atomically (`renameat2` with `RENAME_EXCHANGE`: Linux, on ext4, xfs, btrfs, tmpfs and most
//! local file systems), the replacement is such a swap, and what it swapped out is checked
//! too: it is exactly what was replaced, so even a save in the microseconds between comparison
//! and swap is seen, and put back at once. Elsewhere a plain rename follows the comparison.

use std::path::Path;

use crate::error::{Error, Result};

/// What a conditional write found.
#[derive(Debug)]
pub(super) enum Commit {
    Written,
    /// The file no longer holds the text the change was computed from; these are its bytes,
    /// and the file holds them again.
    Changed(Vec<u8>),
    /// The file is gone from its path (moved or deleted by hand).
    Gone,
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| Error::io(format!("cannot read {}", path.display()), e))
}

/// Whether the file at `path` still holds `expected`.
fn compare(path: &Path, expected: &[u8]) -> Result<Option<Commit>> {
    match std::fs::read(path) {
        Ok(now) if now == expected => Ok(None),
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
    expected: &[u8],
) -> Result<Commit> {
    let swap_error = |e| Error::io(format!("cannot replace {}", path.display()), e);
    // Compare first: a file that already changed is left alone, so our version never shows. (A
    // swap alone would show it for a moment before swapping back, and a script that re-reads
    // the file at once would build on it: 13 to 26 of 300 rapid edits were lost that way.)
    if let Some(found) = compare(path, expected)? {
        return Ok(found);
    }
    match exchange(temp.path(), path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Commit::Gone),
        Err(_) => {
            if let Some(found) = compare(path, expected)? {
                return Ok(found);
            }
            temp.persist(path).map_err(|e| swap_error(e.error))?;
            return Ok(Commit::Written);
        }
    }
    // The old file now sits at the temporary name and goes when `temp` is dropped.
    let swapped_out = read(temp.path())?;
    if swapped_out == expected {
        return Ok(Commit::Written);
    }
    // A newer version was replaced: put it back before anyone reads ours.
    exchange(temp.path(), path).map_err(swap_error)?;
    let back = read(temp.path())?;
    if back != written {
        // Yet another save landed while ours stood there; it is the newest, so it stays.
        exchange(temp.path(), path).map_err(swap_error)?;
        return Ok(Commit::Changed(back));
    }
    Ok(Commit::Changed(swapped_out))
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
        let commit = replace_if_unchanged(temp_with(dir.path(), "new"), &path, b"new", b"old");
        assert!(matches!(commit, Ok(Commit::Written)), "{commit:?}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");

        std::fs::write(&path, "by hand").unwrap();
        let commit = replace_if_unchanged(temp_with(dir.path(), "ours"), &path, b"ours", b"new");
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
        let commit = replace_if_unchanged(temp_with(dir.path(), "x"), &path, b"x", b"by hand");
        assert!(matches!(commit, Ok(Commit::Gone)), "{commit:?}");
        assert!(!path.exists());
    }
}
