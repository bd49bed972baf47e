//! Path confinement: every path a model gives resolves inside the repository root, never into
//! `.git` or the board, and never onto a file the tool owns for writing.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use super::toolbox::{ToolBox, ToolError};
use crate::config::CONFIG_FILE;

impl ToolBox {
    /// Resolves a path the model gave to a real path inside the repository, or says why not.
    ///
    /// Relative paths resolve against the root; an empty path means the root. The path is
    /// checked twice: lexically (so `..` and absolute paths cannot leave the root) and after
    /// resolving symbolic links in its deepest existing ancestor (so a link cannot lead out of
    /// it). With `for_write` false the path must exist; with `for_write` it may be new, and
    /// its missing parent folders are then created inside the checked ancestor.
    ///
    /// The error message has no `Error: ` prefix; `call` adds it.
    pub fn resolve(&self, path: &str, for_write: bool) -> Result<PathBuf, String> {
        let requested = Path::new(if path.trim().is_empty() { "." } else { path });
        let joined = self.root.join(requested);
        let outside = || format!("path '{path}' is outside the repository");
        let lexical = normalize(&joined).ok_or_else(outside)?;
        let relative = self.relative_to_root(&lexical).ok_or_else(outside)?;
        self.check_allowed(path, relative, &lexical)?;
        let lexical = self.root.join(as_the_tree_spells(&self.root, relative));

        let real = canonicalize_lenient(&lexical).map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => format!("path '{path}' is a broken symbolic link"),
            _ => format!("cannot resolve path '{path}': {err}"),
        })?;
        let real_relative = real.strip_prefix(&self.canon_root).map_err(|_| {
            format!("path '{path}' leads outside the repository through a symbolic link")
        })?;
        self.check_allowed(path, real_relative, &real)?;

        if !for_write && fs::symlink_metadata(&real).is_err() {
            return Err(format!("path '{path}' does not exist"));
        }
        Ok(real)
    }

    fn relative_to_root<'a>(&self, lexical: &'a Path) -> Option<&'a Path> {
        // The model may quote the root as given or as it appears with links resolved.
        lexical
            .strip_prefix(&self.root)
            .or_else(|_| lexical.strip_prefix(&self.canon_root))
            .ok()
    }

    fn check_allowed(&self, shown: &str, relative: &Path, full: &Path) -> Result<(), String> {
        if relative
            .components()
            .any(|part| is_git_dir(part.as_os_str()))
        {
            return Err(format!(
                "path '{shown}' is inside .git, which agents may not touch; agentic-sdlc commits the work itself"
            ));
        }
        if self.in_board(full) {
            return Err(format!(
                "path '{shown}' is inside the board folder, which only agentic-sdlc itself may change"
            ));
        }
        Ok(())
    }

    pub(super) fn in_board(&self, path: &Path) -> bool {
        path.starts_with(&self.board_dir)
            || path.starts_with(&self.canon_board)
            || self.protected_dirs.iter().any(|dir| path.starts_with(dir))
    }

    /// The path as the model should quote it: relative to the root, `/`-separated.
    pub(super) fn display(&self, real: &Path) -> String {
        let relative = real.strip_prefix(&self.canon_root).unwrap_or(real);
        let text = relative.to_string_lossy();
        if text.is_empty() {
            ".".to_string()
        } else {
            text.into_owned()
        }
    }

    /// Refuses a write to a file the tool owns: `.agentic-sdlc.json` decides where the key is
    /// sent and which commands run, so an agent that could change it could take both over.
    /// `real` is the resolved path, so a link to the config is refused too.
    pub(super) fn check_writable(&self, shown: &str, real: &Path) -> Result<(), ToolError> {
        let real_text = real.to_string_lossy().to_lowercase();
        // Any file of that name, at any depth: a config planted in a subfolder would take over
        // a run started there.
        let named_like_config = real
            .file_name()
            .is_some_and(|name| name.eq_ignore_ascii_case(CONFIG_FILE));
        if named_like_config
            || self
                .protected
                .iter()
                .any(|file| file.to_string_lossy().to_lowercase() == real_text)
        {
            return Err(format!(
                "path '{shown}' is the agentic-sdlc config ({CONFIG_FILE}), which agents may read but not change"
            )
            .into());
        }
        if self.fixed.iter().any(|file| file == real) {
            return Err(ToolError::FixedTest(format!(
                "path '{shown}' is one of the story's acceptance tests, which are fixed: change the code so that they pass, not the tests"
            )));
        }
        Ok(())
    }
}

/// The config files of a tool root, as given and with links resolved.
pub(super) fn protected_files(root: &Path, canon_root: &Path) -> Vec<PathBuf> {
    vec![root.join(CONFIG_FILE), canon_root.join(CONFIG_FILE)]
}

/// Makes a path absolute against the current folder and removes `.` and `..` lexically.
pub(super) fn absolute_normalized(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    normalize(&absolute).unwrap_or(absolute)
}

/// Removes `.` and `..` without touching the file system; `None` when `..` climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// `relative` (to `root`) with each part that does not exist but names exactly one entry of
/// its folder in other letter case spelt as that entry: a 1.5B model headed its file
/// `# Inventory/money.py` for a story about `inventory/money.py`, and the right code went into
/// a new folder no test imported, for every round (inventory `format-price`, 2026-12-05). The
/// parts after the first that matches nothing are left as given.
fn as_the_tree_spells(root: &Path, relative: &Path) -> PathBuf {
    let mut spelt = PathBuf::new();
    let mut parts = relative.components();
    for part in parts.by_ref() {
        let name = part.as_os_str();
        let folder = root.join(&spelt);
        if fs::symlink_metadata(folder.join(name)).is_ok() {
            spelt.push(name);
            continue;
        }
        let wanted = name.to_string_lossy();
        let mut alike = fs::read_dir(&folder)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.file_name())
            .filter(|entry| entry.to_string_lossy().eq_ignore_ascii_case(&wanted));
        match (alike.next(), alike.next()) {
            (Some(entry), None) => spelt.push(entry),
            _ => {
                spelt.push(name);
                break;
            }
        }
    }
    spelt.extend(parts);
    spelt
}

/// Resolves symbolic links in the deepest existing ancestor of `path` and appends the rest:
/// the real location a new file would get. Fails on a broken link.
pub(super) fn canonicalize_lenient(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path;
    let mut missing = Vec::new();
    while let Err(err) = fs::symlink_metadata(existing) {
        let (Some(name), Some(parent)) = (existing.file_name(), existing.parent()) else {
            return Err(err);
        };
        if err.kind() != io::ErrorKind::NotFound {
            return Err(err);
        }
        missing.push(name);
        existing = parent;
    }
    let mut real = fs::canonicalize(existing)?;
    real.extend(missing.iter().rev());
    Ok(real)
}

pub(super) fn is_git_dir(name: &std::ffi::OsStr) -> bool {
    // Case-insensitive file systems treat `.GIT` as `.git`.
    name.to_str()
        .is_some_and(|name| name.eq_ignore_ascii_case(".git"))
}

/// Opens a file for reading if it is a regular file. The open does not block (a FIFO without a
/// writer would wait forever), and the type is checked on the opened file, so a path swapped
/// for a FIFO after a check is refused too.
pub(super) fn open_regular(real: &Path, shown: &str) -> Result<fs::File, String> {
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(real)
        .map_err(|err| format!("cannot read '{shown}': {err}"))?;
    let kind = file
        .metadata()
        .map_err(|err| format!("cannot read '{shown}': {err}"))?
        .file_type();
    if kind.is_dir() {
        return Err(format!(
            "'{shown}' is a folder; use list_files to see its entries"
        ));
    }
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_block_device() || kind.is_char_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(format!(
            "'{shown}' is {what}; only regular files can be read"
        ));
    }
    Ok(file)
}
