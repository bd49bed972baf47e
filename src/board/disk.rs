//! Reading and writing board files: atomic writes, and reads with as few system calls as a
//! large board allows.
//!
//! Every write goes to a temporary file in the destination folder, is fsynced and renamed over
//! the file, so a crash leaves either the old or the new file, never half of one.
//!
//! `std::fs::read` and `Read::read_to_end` ask the kernel for a file's size and position before
//! reading and read once more to hear the end; on 10,000 stories those calls showed. The
//! readers here take the size from the one `fstat` a caller needs anyway (for a file's stamp)
//! and stop at a short read that holds all of it.

use std::fs::{File, Metadata};
use std::path::{Path, PathBuf};

use crate::atomic_file;
use crate::error::{Error, Result};

/// Opens a story file for reading. Every read of a story goes through here, so tests can count
/// how often a file is opened ([`opens`]).
pub(super) fn open(path: &Path) -> std::io::Result<File> {
    #[cfg(test)]
    opens::record(path);
    File::open(path)
}

/// A file's bytes and its metadata, taken from the open file before reading: a save that lands
/// during the read leaves metadata that is already out of date, never newer than the bytes.
pub(super) fn read_path(path: &Path) -> std::io::Result<(Vec<u8>, Metadata)> {
    let file = open(path)?;
    let meta = file.metadata()?;
    Ok((read_whole(&file, meta.len())?, meta))
}

/// Everything `file` holds now, read from its start whatever its position. `size` is what
/// the caller expects it to hold, to read it in one go; the file may have grown or shrunk since.
///
/// `Read::read_to_end` on a `File` asks the kernel for the file's size and position first, two
/// system calls per story that a board of 10,000 felt; positioned reads need neither.
pub(super) fn read_whole(file: &File, size: u64) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    // One byte more than expected, so that a file of exactly that size ends in the same read.
    let mut bytes = vec![
        0;
        usize::try_from(size)
            .unwrap_or(0)
            .saturating_add(1)
            .max(4096)
    ];
    let mut filled = 0;
    loop {
        if filled == bytes.len() {
            bytes.resize(filled * 2, 0);
        }
        let wanted = bytes.len() - filled;
        match file.read_at(&mut bytes[filled..], filled as u64) {
            Ok(0) => break,
            // A short read of a regular file that holds all we expected is its end; asking
            // again only to hear "nothing more" would cost each story a call.
            Ok(read) if read < wanted && (filled + read) as u64 >= size => {
                filled += read;
                break;
            }
            Ok(read) => filled += read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

/// A fully written and fsynced temporary file in `folder`, ready to be renamed into place; it
/// keeps the mode of `path`, the file it replaces.
pub(super) fn prepared(folder: &Path, text: &str, path: &Path) -> Result<tempfile::NamedTempFile> {
    prepared_bytes(folder, text.as_bytes(), path)
}

/// [`prepared`] with bytes, for a file that came from elsewhere as it is.
pub(super) fn prepared_bytes(
    folder: &Path,
    bytes: &[u8],
    path: &Path,
) -> Result<tempfile::NamedTempFile> {
    atomic_file::prepare(folder, bytes, path)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
}

/// Writes `text` to `path` atomically: temp file in the same folder, fsync, rename.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    atomic_file::write(path, text.as_bytes())
        .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
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

/// How often each file was opened through [`open`], for tests that hold the board to its
/// budget of opens (every story file at most twice per run). Keyed by path, so tests running
/// at once in their own folders do not see each other's.
#[cfg(test)]
pub(super) mod opens {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static OPENS: Mutex<Option<HashMap<PathBuf, usize>>> = Mutex::new(None);

    pub fn record(path: &Path) {
        let mut opens = OPENS.lock().unwrap_or_else(|p| p.into_inner());
        *opens
            .get_or_insert_with(HashMap::new)
            .entry(path.to_path_buf())
            .or_default() += 1;
    }

    pub fn of(path: &Path) -> usize {
        let opens = OPENS.lock().unwrap_or_else(|p| p.into_inner());
        opens
            .as_ref()
            .and_then(|o| o.get(path))
            .copied()
            .unwrap_or(0)
    }
}
