//! `<sdlcFolder>/.lock`: one `run` at a time per board (docs/design.md §11).
//!
//! The file carries the holder's pid for the message a second run prints; exclusion itself is
//! an OS file lock, which the kernel drops when the holder dies, so a killed run's lock is taken
//! over without guessing whether a pid is still alive.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

use crate::board::LOCK_FILE;

#[derive(Debug)]
pub struct BoardLock {
    file: File,
    path: PathBuf,
}

impl BoardLock {
    pub fn acquire(board_dir: &Path) -> Result<BoardLock> {
        let path = board_dir.join(LOCK_FILE);
        loop {
            let mut file = open(&path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut holder = String::new();
                    let _ = file.read_to_string(&mut holder);
                    let pid = holder.trim();
                    return Err(Error::LockHeld {
                        pid: if pid.is_empty() {
                            "unknown".into()
                        } else {
                            pid.to_string()
                        },
                        path,
                    });
                }
                Err(TryLockError::Error(err)) => {
                    return Err(Error::io(format!("cannot lock {}", path.display()), err))
                }
            }
            // A holder that just finished deletes the file before unlocking it; if we locked
            // that deleted file, the lock protects nothing. Start over with the current file.
            if !same_file(&file, &path) {
                continue;
            }
            file.set_len(0)
                .and_then(|_| file.seek(SeekFrom::Start(0)))
                .and_then(|_| writeln!(file, "{}", std::process::id()))
                .and_then(|_| file.sync_all())
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
            return Ok(BoardLock { file, path });
        }
    }
}

/// Whether a run holds the board now, without touching the lock (taking it even for a moment
/// would make a run that starts at that instant fail).
pub fn held(board_dir: &Path) -> bool {
    match std::fs::read_to_string(board_dir.join(LOCK_FILE)) {
        // An empty file is being written this very moment: a run is starting.
        Ok(text) if text.trim().is_empty() => true,
        Ok(_) => holder(board_dir).is_some(),
        Err(_) => false,
    }
}

/// The pid of the run that holds the board, when that process is alive. A file left by a
/// killed run names a dead pid.
pub fn holder(board_dir: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(board_dir.join(LOCK_FILE)).ok()?;
    let pid = text.trim().parse::<libc::pid_t>().ok().filter(|p| *p > 0)?;
    // SAFETY: signal 0 checks that the process exists and sends nothing.
    let alive = unsafe { libc::kill(pid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    alive.then_some(pid as u32)
}

fn open(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))
}

/// Whether `path` still names the file we hold open.
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(held), Ok(current)) => held.dev() == current.dev() && held.ino() == current.ino(),
        _ => false,
    }
}

impl Drop for BoardLock {
    fn drop(&mut self) {
        // Remove the file while still holding the lock, so no one reads our stale pid.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_with_the_pid() {
        let dir = tempfile::tempdir().unwrap();
        let lock = BoardLock::acquire(dir.path()).unwrap();
        match BoardLock::acquire(dir.path()) {
            Err(Error::LockHeld { pid, .. }) => assert_eq!(pid, std::process::id().to_string()),
            other => panic!("{other:?}"),
        }
        drop(lock);
        assert!(!dir.path().join(LOCK_FILE).exists());
        let _again = BoardLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_leftover_file_without_a_holder_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), "999999\n").unwrap();
        let _lock = BoardLock::acquire(dir.path()).unwrap();
        let pid = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(pid.trim(), std::process::id().to_string());
    }
}
