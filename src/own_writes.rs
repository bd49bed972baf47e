//! What this process itself wrote to the board and the refs, so that the guard around a boxed
//! command (workflow/guard.rs) can tell the tool's own writes, made for other stories while the
//! command ran, from the command's.
//!
//! A board write is recorded before its rename, with the digest of the bytes it puts in place:
//! by the time the file shows them, the record is there. A ref move is recorded after the git
//! command that made it, so ref moves hold [`moving_refs`]'s shared lock until recorded, and the
//! guard compares under [`quiet`], the exclusive side.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{
    LazyLock, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
};

/// How many of its latest writes are kept per file or ref; a boxed command is compared with
/// the writes made while it ran, which are few for any one path.
const KEPT_PER_PATH: usize = 8;

/// A point in the sequence of recorded writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mark(u64);

/// A ref of one repository: (its common git folder, its full name).
type RefKey = (PathBuf, String);

#[derive(Default)]
struct Ledger {
    next: u64,
    /// Path → (when, digest of the bytes put there; `None` for a removal).
    files: HashMap<PathBuf, Vec<(u64, Option<u128>)>>,
    /// (repository, ref) → (when, the object it was moved to; `None` for a deletion).
    refs: HashMap<RefKey, Vec<(u64, Option<String>)>>,
}

static LEDGER: LazyLock<Mutex<Ledger>> = LazyLock::new(Mutex::default);

/// Held shared while the tool moves refs and records them; taken exclusively to compare.
static REF_MOVES: RwLock<()> = RwLock::new(());

fn ledger() -> MutexGuard<'static, Ledger> {
    LEDGER.lock().unwrap_or_else(PoisonError::into_inner)
}

fn push<T>(entries: &mut Vec<(u64, T)>, when: u64, value: T) {
    if entries.len() == KEPT_PER_PATH {
        entries.remove(0);
    }
    entries.push((when, value));
}

impl Ledger {
    fn tick(&mut self) -> u64 {
        self.next += 1;
        self.next
    }
}

/// Now, in the sequence of writes: what a watch compares from.
pub fn mark() -> Mark {
    Mark(ledger().next)
}

pub fn digest(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// Records that the tool is about to put `bytes` at `path`.
pub fn file_written(path: &Path, bytes: &[u8]) {
    let mut ledger = ledger();
    let when = ledger.tick();
    push(
        ledger.files.entry(path.to_path_buf()).or_default(),
        when,
        Some(digest(bytes)),
    );
}

/// Records that the tool is about to remove (or move away) the file at `path`.
pub fn file_removed(path: &Path) {
    let mut ledger = ledger();
    let when = ledger.tick();
    push(
        ledger.files.entry(path.to_path_buf()).or_default(),
        when,
        None,
    );
}

/// Whether the tool itself, since `since`, put exactly `now` at `path` (`None`: removed it).
pub fn is_own_file(path: &Path, now: Option<&[u8]>, since: Mark) -> bool {
    let now = now.map(digest);
    ledger()
        .files
        .get(path)
        .is_some_and(|writes| writes.iter().any(|(when, d)| *when > since.0 && *d == now))
}

/// Whether `now` (`None`: no file) is not what the tool itself last left at `path`: someone
/// else changed the file since. `None` when the tool never wrote there in this process.
pub fn changed_since_own_write(path: &Path, now: Option<&[u8]>) -> Option<bool> {
    let now = now.map(digest);
    ledger()
        .files
        .get(path)
        .and_then(|writes| writes.last())
        .map(|(_, written)| *written != now)
}

/// Runs a git operation that moves refs of `repo`, then records where `refs` point (the
/// values `read` returns). The guard does not compare while this runs.
pub fn moving_refs<T, E>(
    repo: &Path,
    operation: impl FnOnce() -> Result<T, E>,
    read: impl FnOnce() -> Vec<(String, Option<String>)>,
) -> Result<T, E> {
    let _moving: RwLockReadGuard<'_, ()> = REF_MOVES.read().unwrap_or_else(PoisonError::into_inner);
    let result = operation();
    let values = read();
    let mut ledger = ledger();
    let when = ledger.tick();
    for (name, value) in values {
        push(
            ledger.refs.entry((repo.to_path_buf(), name)).or_default(),
            when,
            value,
        );
    }
    result
}

/// Whether the tool itself, since `since`, moved `name` in `repo` to `now`.
pub fn is_own_ref(repo: &Path, name: &str, now: Option<&str>, since: Mark) -> bool {
    ledger()
        .refs
        .get(&(repo.to_path_buf(), name.to_string()))
        .is_some_and(|moves| {
            moves
                .iter()
                .any(|(when, value)| *when > since.0 && value.as_deref() == now)
        })
}

/// While held, the tool moves no ref: what the guard sees is settled.
pub fn quiet() -> RwLockWriteGuard<'static, ()> {
    REF_MOVES.write().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_counts_as_the_tools_only_after_the_mark_and_for_its_bytes() {
        let path = Path::new("/board/ready/own-writes-test.md");
        file_written(path, b"before");
        let since = mark();
        assert!(!is_own_file(path, Some(b"before"), since));
        file_written(path, b"after");
        assert!(is_own_file(path, Some(b"after"), since));
        assert!(!is_own_file(path, Some(b"tampered"), since));
        file_removed(path);
        assert!(is_own_file(path, None, since));
    }

    #[test]
    fn ref_moves_are_recorded_after_the_operation() {
        let repo = Path::new("/repo-own-writes-test");
        let since = mark();
        let done: Result<(), ()> = moving_refs(
            repo,
            || Ok(()),
            || vec![("refs/heads/agentic-sdlc/x".to_string(), Some("abc".into()))],
        );
        assert!(done.is_ok());
        assert!(is_own_ref(
            repo,
            "refs/heads/agentic-sdlc/x",
            Some("abc"),
            since
        ));
        assert!(!is_own_ref(
            repo,
            "refs/heads/agentic-sdlc/x",
            Some("def"),
            since
        ));
    }
}
