//! Walking the repository the way ripgrep does, for list_files and search.

use std::path::{Path, PathBuf};

use super::confine::is_git_dir;
use super::toolbox::ToolBox;

/// Files larger than this are skipped by `search`; they are almost never source code.
pub(super) const SEARCH_FILE_SIZE_CAP: u64 = 8 * 1024 * 1024;
/// Folders a recursive walk does not descend into: VCS data and build or dependency output.
const SKIP_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// How far a walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    /// Every file below, for search.
    Recursive,
    /// A folder's own entries, for list_files.
    Entries,
}

impl ToolBox {
    /// Collects the files under `path` in sorted order, skipping what `.gitignore` ignores, VCS
    /// data, build output, the board, symbolic links (which could lead outside the root or loop)
    /// and anything that is not a regular file.
    pub(super) fn collect_files(&self, path: &Path, out: &mut Vec<PathBuf>) {
        for entry in self.walk(path, Walk::Recursive).flatten() {
            let is_file = entry.file_type().is_some_and(|kind| kind.is_file());
            let small = entry
                .metadata()
                .is_ok_and(|meta| meta.len() <= SEARCH_FILE_SIZE_CAP);
            if is_file && small {
                out.push(entry.into_path());
            }
        }
    }

    /// Walks `path` the way ripgrep does (the `ignore` crate): `.gitignore`, `.ignore` and
    /// `.git/info/exclude` are honoured, also outside a git repository, and links are not
    /// followed. Hidden files are kept (`.github/` matters), but never `.git` or the board; a
    /// recursive walk also never enters build and dependency folders, ignored or not.
    pub(super) fn walk(&self, path: &Path, how: Walk) -> ignore::Walk {
        let this = self.clone();
        let (depth, skip_build) = match how {
            Walk::Recursive => (None, true),
            Walk::Entries => (Some(1), false),
        };
        ignore::WalkBuilder::new(path)
            .hidden(false)
            .require_git(false)
            .follow_links(false)
            .max_depth(depth)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(move |entry| {
                let name = entry.file_name();
                let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
                let build_output = skip_build
                    && is_dir
                    && entry.depth() > 0
                    && SKIP_DIRS.iter().any(|skip| name == *skip);
                !(is_git_dir(name) || this.in_board(entry.path()) || build_output)
            })
            .build()
    }
}
