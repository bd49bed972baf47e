//! An exclusive lock on a file of the cache, so two runs never pull one model or start one
//! server at the same time. The kernel drops it when its process ends, even on `kill -9`.

use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

use super::error::ModelError;

/// Held until dropped.
pub struct CacheLock {
    _lock: Flock<std::fs::File>,
}

impl CacheLock {
    /// Waits for the lock on `path` (made if missing).
    pub fn wait(path: &Path) -> Result<CacheLock, ModelError> {
        if let Some(parent) = path.parent() {
            fs_err::create_dir_all(parent).map_err(|err| ModelError::io(parent, err))?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|err| ModelError::io(path, err))?;
        let lock = Flock::lock(file, FlockArg::LockExclusive)
            .map_err(|(_, errno)| ModelError::io(path, std::io::Error::from(errno)))?;
        Ok(CacheLock { _lock: lock })
    }
}
