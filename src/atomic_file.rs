//! Whole-file writes that never leave half a file (docs/design.md §4, "every write is atomic").
//!
//! The bytes go to a temporary file in the destination folder (`.tmp-*.partial`, which the
//! board's sweep removes after a crash), are fsynced, and the file is renamed over its
//! destination: a reader sees the old file or the new one, never a mix. Stories, the board's
//! records, files the agents write and files the guard puts back all come through here.

use std::io::{self, Write};
use std::path::Path;

/// A fully written and fsynced temporary file in `folder`, ready to be renamed into place (with
/// [`tempfile::NamedTempFile::persist`]). Kept apart from [`write`] for callers that rename
/// several files together, or move a file to another folder as they rewrite it.
///
/// The new file gets the mode `replacing` has when it exists, otherwise the mode the umask
/// gives an ordinary file (tempfile alone would make it private, 0600).
pub fn prepare(
    folder: &Path,
    bytes: &[u8],
    replacing: &Path,
) -> io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    let mut temp = tempfile::Builder::new()
        .prefix(".tmp-")
        .suffix(".partial")
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(folder)?;
    // The rename replaces the file, so its mode would be the temporary file's; keep the old one.
    if let Ok(existing) = std::fs::metadata(replacing) {
        temp.as_file().set_permissions(existing.permissions())?;
    }
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    Ok(temp)
}

/// Writes `bytes` to `destination` atomically. The folder must exist.
pub fn write(destination: &Path, bytes: &[u8]) -> io::Result<()> {
    prepare(folder_of(destination), bytes, destination)?
        .persist(destination)
        .map_err(|err| err.error)?;
    Ok(())
}

fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn replaces_the_file_and_keeps_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();

        write(&path, b"new").unwrap();

        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(left.len(), 1, "no temporary file is left beside it");
    }

    #[test]
    fn a_new_file_is_not_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("story.md");
        write(&path, b"text").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_ne!(mode & 0o044, 0, "readable beyond its owner (mode {mode:o})");
    }

    #[test]
    fn a_missing_folder_is_an_error_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent").join("file");
        assert!(write(&path, b"text").is_err());
        assert!(!path.exists());
    }
}
