//! The tool's own folders, made before any box runs (docs/design.md §22): the worktrees folder
//! and the board's runs folder. A boxed command may create a path where one of them belongs
//! (with worktrees off, the story's tree is the repository itself), and a link planted there
//! would make a later story's writable tree, or the tool's journal, some other folder. A link
//! or a file where a folder belongs is removed, said, and the folder made.

use std::path::{Path, PathBuf};

use crate::board::RUNS_DIR;
use crate::config::{Project, WORKTREES_DIR};

/// Makes the folders and returns one warning per link or file removed. Box folders left by a
/// run that was killed are swept too.
pub fn prepare(project: &Project) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut folders = vec![project.board_dir().join(RUNS_DIR)];
    if crate::vcs::may_be_in_repo(&project.root) {
        folders.push(project.root.join(WORKTREES_DIR));
    }
    for folder in folders {
        if let Some(warning) = ensure_real_folder(&folder) {
            warnings.push(warning);
        }
    }
    let swept = crate::private_temp::sweep_box_folders();
    if swept > 0 {
        tracing::info!("removed {swept} temporary box folder(s) left by a run that was killed");
    }
    warnings
}

/// Makes `folder` unless it is a real folder already; what stands in its way and is not one (a
/// link, a file) is removed first. The folder's parent is the caller's (the repository root,
/// the board), never a link the agent made.
pub fn ensure_real_folder(folder: &Path) -> Option<String> {
    let mut warning = None;
    if let Ok(meta) = std::fs::symlink_metadata(folder) {
        if meta.is_dir() {
            return None;
        }
        let what = if meta.file_type().is_symlink() {
            format!(
                "a link to {}",
                std::fs::read_link(folder)
                    .unwrap_or_else(|_| PathBuf::from("?"))
                    .display()
            )
        } else {
            "a file".to_string()
        };
        let removed = std::fs::remove_file(folder).is_ok();
        warning = Some(format!(
            "{} was {what}, not the tool's own folder; {}",
            folder.display(),
            if removed {
                "it was removed and the folder made"
            } else {
                "it could not be removed"
            }
        ));
    }
    if let Err(err) = std::fs::create_dir_all(folder) {
        tracing::warn!("could not make {}: {err}", folder.display());
    }
    warning
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_where_the_folder_belongs_is_removed_and_the_folder_made() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("keep.txt"), "mine").unwrap();
        let folder = dir.path().join(WORKTREES_DIR);
        std::os::unix::fs::symlink(&elsewhere, &folder).unwrap();
        let warning = ensure_real_folder(&folder).expect("a warning");
        assert!(warning.contains("a link to"), "{warning}");
        let meta = std::fs::symlink_metadata(&folder).unwrap();
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("keep.txt")).unwrap(),
            "mine"
        );
        assert_eq!(ensure_real_folder(&folder), None);
    }
}
