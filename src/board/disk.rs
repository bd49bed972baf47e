//! Reading story files with as few system calls as a large board allows.
//!
//! `std::fs::read` and `Read::read_to_end` ask the kernel for a file's size and position before
//! reading and read once more to hear the end; on 10,000 stories those calls showed. The
//! readers here take the size from the one `fstat` a caller needs anyway (for a file's stamp)
//! and stop at a short read that holds all of it.

use std::fs::{File, Metadata};
use std::path::Path;

/// A file's bytes and its metadata, taken from the open file before reading: a save that lands
/// during the read leaves metadata that is already out of date, never newer than the bytes.
pub(super) fn read_path(path: &Path) -> std::io::Result<(Vec<u8>, Metadata)> {
    let file = File::open(path)?;
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
