//! Whether an implement round changed anything (docs/design.md §21). A 1.5B model, told to
//! write each file it fixes out whole, answered "Changed: `inventory/cart.py` … Notes: Updated
//! `inventory/cart.py` to raise a `ValueError`" three rounds in a row and wrote no file; each
//! round it heard only the failing tests, as though its change had been made and was wrong (the
//! inventory benchmark, 2026-11-29). The round's feedback now says first that nothing changed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::phase_output::TreeFingerprint;

/// The tree as the last round left it.
pub struct RoundTrees {
    dir: PathBuf,
    /// What the fingerprints leave out: the board, the config, the worktrees.
    ignore: Vec<PathBuf>,
    last: Mutex<TreeFingerprint>,
}

impl RoundTrees {
    /// Starts from the tree as it is before the first round's reply.
    pub fn new(dir: &Path, ignore: Vec<PathBuf>) -> RoundTrees {
        let last = Mutex::new(TreeFingerprint::take(dir, &ignore));
        RoundTrees {
            dir: dir.to_path_buf(),
            ignore,
            last,
        }
    }

    /// Whether the tree is as the last round (or the start) left it; the tree as it is now
    /// becomes the last.
    pub fn unchanged(&self) -> bool {
        let now = TreeFingerprint::take(&self.dir, &self.ignore);
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let unchanged = !last.changed(&now);
        *last = now;
        unchanged
    }

    /// Takes the tree as it is now as the last round's: after the tool's own writes (its mends).
    pub fn settle(&self) {
        let now = TreeFingerprint::take(&self.dir, &self.ignore);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = now;
    }
}

/// What a round's feedback says first when the reply changed no file: `how` is how files are
/// changed under the edit format.
pub fn nothing_changed(how: &str) -> String {
    format!(
        "Your last reply changed no file: saying a file changed does not change it. Change it \
         now: {how}."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_that_writes_nothing_is_unchanged_and_one_that_writes_is_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cart.py"), "class Cart:\n    pass\n").unwrap();
        let trees = RoundTrees::new(dir.path(), Vec::new());
        assert!(trees.unchanged(), "no reply wrote anything yet");
        std::fs::write(dir.path().join("cart.py"), "class Cart:\n    items = {}\n").unwrap();
        assert!(!trees.unchanged());
        assert!(trees.unchanged());
        std::fs::write(dir.path().join("new.py"), "x = 1\n").unwrap();
        assert!(!trees.unchanged());
    }
}
