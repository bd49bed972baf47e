//! The tool's own temporary folder, `<tmp>/agentic-sdlc-<uid>` (docs/design.md §22, "The
//! tool's own folders"): git's empty hooks folder and the box's private `TMPDIR`s live there.
//!
//! The shared temporary folder is writable by everyone, so the name is only used when what is
//! there is a real folder of this user's that nobody else can write, as ssh-agent and tmux check
//! their socket folders. A link or someone else's folder is never used; the caller then falls
//! back to a fresh folder made by `tempfile`. A folder a killed run left is swept by the next.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Prefix of a box's temporary folder: `box-<pid of the tool>-<random>`.
const BOX_PREFIX: &str = "box-";

/// The private folder, made on first use; `None` when the name is taken by something that is
/// not this user's private folder.
pub(crate) fn root() -> Option<&'static Path> {
    static ROOT: OnceLock<Option<PathBuf>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let uid = nix::unistd::getuid().as_raw();
        let path = std::env::temp_dir().join(format!("agentic-sdlc-{uid}"));
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&path);
        is_private_dir(&path, uid).then_some(path)
    })
    .as_deref()
}

/// A real folder (not a link), owned by `uid`, that no group or other user may write or enter.
pub(crate) fn is_private_dir(path: &Path, uid: u32) -> bool {
    std::fs::symlink_metadata(path)
        .is_ok_and(|meta| meta.is_dir() && meta.uid() == uid && meta.mode() & 0o077 == 0)
}

/// A new temporary folder for one boxed process, removed on drop. Its name carries this
/// process's id, so that the next run can tell a killed run's folder from a live one's.
pub(crate) fn box_folder() -> std::io::Result<tempfile::TempDir> {
    let prefix = format!("{BOX_PREFIX}{}-", std::process::id());
    match root() {
        Some(root) => tempfile::Builder::new().prefix(&prefix).tempdir_in(root),
        None => tempfile::Builder::new()
            .prefix(&format!("agentic-sdlc-{prefix}"))
            .tempdir(),
    }
}

/// Removes the box folders whose tool process is gone (a run killed by `kill -9` never
/// removed its own). Returns how many were removed.
pub(crate) fn sweep_box_folders() -> usize {
    let Some(root) = root() else {
        return 0;
    };
    let Ok(entries) = std::fs::read_dir(root) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix(BOX_PREFIX))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if pid as u32 == std::process::id() || process_alive(pid) {
            continue;
        }
        if std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn process_alive(pid: i32) -> bool {
    // Signal 0 checks existence only; EPERM means it exists under another user.
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(errno) => errno == nix::errno::Errno::EPERM,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_runs_box_folder_is_swept_and_a_live_ones_is_kept() {
        let root = root().expect("a private temporary folder");
        // A pid that cannot be a live process: above the kernel's maximum.
        let dead = root.join(format!("{BOX_PREFIX}2147483646-test"));
        std::fs::create_dir_all(dead.join("inside")).unwrap();
        let live = box_folder().unwrap();
        assert!(sweep_box_folders() >= 1);
        assert!(!dead.exists());
        assert!(live.path().exists());
    }

    #[test]
    fn a_link_or_an_open_folder_is_not_private() {
        let dir = tempfile::tempdir().unwrap();
        let uid = nix::unistd::getuid().as_raw();
        let open = dir.path().join("open");
        std::fs::DirBuilder::new()
            .mode(0o777)
            .create(&open)
            .unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777))
            .unwrap();
        assert!(!is_private_dir(&open, uid));
        let private = dir.path().join("private");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&private)
            .unwrap();
        assert!(is_private_dir(&private, uid));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(!is_private_dir(&link, uid));
    }
}
