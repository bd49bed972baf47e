//! The file I/O the file tools share.
//!
//! Reads stream: a file is never read whole, only up to the lines and the bytes a call returns
//! (plus a bounded look-ahead to count its lines). Only regular files are opened, and they are
//! opened without blocking, so a FIFO or a device cannot hang a call.

use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use super::confine::open_regular;
use crate::exec::floor_char_boundary;

/// Bytes read past the returned lines to tell the model how many lines the file has.
const LINE_COUNT_LOOKAHEAD: u64 = 8 * 1024 * 1024;
/// Bytes looked at to tell a binary file from a text file.
const BINARY_SNIFF: usize = 8 * 1024;
/// Files larger than this cannot be changed with edit_file, which holds them in memory.
const EDIT_SIZE_CAP: u64 = 16 * 1024 * 1024;

/// Which lines a read returns.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub(super) offset: usize,
    pub(super) limit: usize,
    pub(super) max_bytes: usize,
}

/// Lines `[offset, offset + limit)` of the file, raw, cut at `max_bytes`, with a note on how
/// to read on when anything was left out. Memory stays within `max_bytes` plus a buffer, however
/// large the file or its lines.
pub(super) fn read_lines(file: fs::File, window: Window, shown: &str) -> Result<String, String> {
    let size = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let failed = |err: io::Error| format!("cannot read '{shown}': {err}");
    let head = reader.fill_buf().map_err(failed)?;
    if head.is_empty() {
        // Some OpenAI-compatible servers reject an empty tool message.
        return Ok("(empty file)".to_string());
    }
    if head[..head.len().min(BINARY_SNIFF)].contains(&0) {
        return Err(format!(
            "'{shown}' is a binary file; only text files can be read"
        ));
    }
    for skipped in 0..window.offset {
        if skip_line(&mut reader).map_err(failed)? == 0 {
            return Err(format!(
                "offset {} is past the end of '{shown}', which has {skipped} lines",
                window.offset
            ));
        }
    }
    let mut out = Vec::new();
    let mut end = window.offset;
    let mut line = Vec::new();
    let mut cut_line = false;
    while end - window.offset < window.limit {
        let room = window.max_bytes.saturating_sub(out.len());
        line.clear();
        let complete = read_line_capped(&mut reader, &mut line, room).map_err(failed)?;
        if line.is_empty() {
            break;
        }
        if !complete {
            if out.is_empty() {
                // A single enormous line (minified code): show its start rather than nothing.
                out.extend_from_slice(&line);
                skip_line(&mut reader).map_err(failed)?;
                end += 1;
                cut_line = true;
            }
            break;
        }
        out.extend_from_slice(&line);
        end += 1;
    }
    if end == window.offset && window.offset > 0 {
        return Err(format!(
            "offset {} is past the end of '{shown}', which has {} lines",
            window.offset, window.offset
        ));
    }
    if out.contains(&0) {
        return Err(format!(
            "'{shown}' is a binary file; only text files can be read"
        ));
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    let at_end = reader.fill_buf().map_err(failed)?.is_empty();
    if cut_line {
        text.truncate(floor_char_boundary(&text, window.max_bytes));
        text.push_str(&format!(
            "\n[cut: line {end} is longer than {} bytes (tools.maxReadBytes); showed its start]",
            window.max_bytes
        ));
        if !at_end {
            text.push_str(&format!("\n[read on with offset={end}]"));
        }
    } else if !at_end {
        text.truncate(floor_char_boundary(&text, window.max_bytes));
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let total = count_remaining_lines(&mut reader).map(|rest| end + rest);
        let of = match total {
            Some(total) => format!("of {total}"),
            None => format!("of a {size}-byte file"),
        };
        text.push_str(&format!(
            "[cut: showed lines {}-{end} {of}; read on with offset={end}]",
            window.offset + 1
        ));
    }
    Ok(text)
}

/// Consumes one line without keeping it; returns the bytes consumed (0 at the end).
fn skip_line(reader: &mut impl BufRead) -> io::Result<usize> {
    let mut consumed = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(consumed);
        }
        match buf.iter().position(|byte| *byte == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(consumed + at + 1);
            }
            None => {
                let len = buf.len();
                reader.consume(len);
                consumed += len;
            }
        }
    }
}

/// Appends one line (with its newline) to `out` if it fits in `room` bytes; returns whether it
/// did. A line that does not fit leaves its first `room` bytes in `out`, the rest unread.
fn read_line_capped(reader: &mut impl BufRead, out: &mut Vec<u8>, room: usize) -> io::Result<bool> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let (take, done) = match buf.iter().position(|byte| *byte == b'\n') {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        if out.len() + take > room {
            let fits = room - out.len();
            out.extend_from_slice(&buf[..fits]);
            reader.consume(fits);
            return Ok(false);
        }
        out.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if done {
            return Ok(true);
        }
    }
}

/// The lines left after the reader's position, if the end comes within the look-ahead.
fn count_remaining_lines(reader: &mut impl BufRead) -> Option<usize> {
    let mut lines = 0;
    let mut seen: u64 = 0;
    let mut ends_with_newline = true;
    loop {
        let buf = reader.fill_buf().ok()?;
        if buf.is_empty() {
            return Some(lines + usize::from(!ends_with_newline));
        }
        if seen > LINE_COUNT_LOOKAHEAD {
            return None;
        }
        lines += buf.iter().filter(|byte| **byte == b'\n').count();
        ends_with_newline = buf.last() == Some(&b'\n');
        let len = buf.len();
        seen += len as u64;
        reader.consume(len);
    }
}

/// Writes through [`crate::atomic_file`], so a crash or a cancelled call never leaves a
/// half-written file behind; the agent may write into a folder that does not exist yet.
pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::other("the path has no parent folder"))?;
    fs::create_dir_all(parent)?;
    crate::atomic_file::write(path, bytes)
}

/// The text of a file to edit, or `None` when it does not exist yet.
pub(super) fn read_for_edit(real: &Path, shown: &str) -> Result<Option<String>, String> {
    match fs::symlink_metadata(real) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let file = open_regular(real, shown)?;
    let size = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    if size > EDIT_SIZE_CAP {
        return Err(format!(
            "'{shown}' is {size} bytes, too large to edit; use run_command (sed, a patch) instead"
        ));
    }
    let mut bytes = Vec::new();
    file.take(EDIT_SIZE_CAP + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| format!("cannot read '{shown}': {err}"))?;
    if bytes.contains(&0) {
        return Err(format!(
            "'{shown}' is a binary file; only text files can be edited"
        ));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("'{shown}' is not valid UTF-8; use write_file to replace it whole"))
}
