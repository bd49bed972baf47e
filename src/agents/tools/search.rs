//! search: a literal substring, line by line, over the repository's text files.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::args::Args;
use super::confine::is_git_dir;
use super::confine::open_regular;
use super::{ToolBox, ToolError};
use crate::exec::floor_char_boundary;

/// Matches `search` reports at most.
pub(super) const SEARCH_MATCH_CAP: usize = 200;
/// Bytes of one matching line `search` shows; minified files have enormous lines.
const SEARCH_LINE_CAP: usize = 300;
/// Files larger than this are skipped by `search`; they are almost never source code.
const SEARCH_FILE_SIZE_CAP: u64 = 8 * 1024 * 1024;
/// Folders `search` does not descend into: VCS data and build or dependency output.
const SEARCH_SKIP_DIRS: &[&str] = &[".git", "target", "node_modules"];

/// How far a walk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    /// Every file below, for search.
    Recursive,
    /// A folder's own entries, for list_files.
    Entries,
}

/// The matches found so far, within the caps of one result.
struct Matches {
    lines: Vec<String>,
    bytes: usize,
    max_bytes: usize,
    /// Why the search stopped early, if it did.
    stopped: Option<String>,
}

impl Matches {
    /// Adds one match; false once a cap is reached.
    fn push(&mut self, line: String) -> bool {
        if self.lines.len() == SEARCH_MATCH_CAP {
            self.stopped = Some(format!("stopped at {SEARCH_MATCH_CAP} matches"));
            return false;
        }
        if self.bytes + line.len() + 1 > self.max_bytes {
            self.stopped = Some(format!(
                "stopped at {} bytes (tools.maxReadBytes)",
                self.max_bytes
            ));
            return false;
        }
        self.bytes += line.len() + 1;
        self.lines.push(line);
        true
    }
}

impl ToolBox {
    pub(super) fn search(&self, args: &Args) -> Result<String, ToolError> {
        let pattern = args.string("pattern")?;
        if pattern.is_empty() {
            return Err("pattern must not be empty".to_string().into());
        }
        if pattern.contains('\n') {
            return Err("pattern must be a single line; search matches line by line"
                .to_string()
                .into());
        }
        let path = args.opt_string("path")?.unwrap_or(".");
        let real = self.resolve(path, false)?;
        let mut files = Vec::new();
        let meta = fs::metadata(&real).map_err(|err| format!("cannot read '{path}': {err}"))?;
        if meta.is_dir() {
            self.collect_files(&real, &mut files);
        } else {
            // Refuses a FIFO, socket or device at once instead of skipping it silently.
            drop(open_regular(&real, path)?);
            files.push(real);
        }
        let mut matches = Matches {
            lines: Vec::new(),
            bytes: 0,
            max_bytes: self.limits.max_read_bytes,
            stopped: None,
        };
        for file in &files {
            if !search_file(file, pattern, &self.display(file), &mut matches) {
                break;
            }
        }
        Ok(search_report(pattern, path, &matches))
    }

    /// Collects the files under `path` in sorted order, skipping what `.gitignore` ignores, VCS
    /// data, build output, the board, symbolic links (which could lead outside the root or loop)
    /// and anything that is not a regular file.
    fn collect_files(&self, path: &Path, out: &mut Vec<PathBuf>) {
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
                    && SEARCH_SKIP_DIRS.iter().any(|skip| name == *skip);
                !(is_git_dir(name) || this.in_board(entry.path()) || build_output)
            })
            .build()
    }
}

/// Adds the matches of one file; false once a cap is reached. Unreadable and binary files are
/// skipped silently: a search is a best-effort overview.
fn search_file(file: &Path, pattern: &str, shown: &str, matches: &mut Matches) -> bool {
    let Ok(handle) = open_regular(file, shown) else {
        return true;
    };
    let mut bytes = Vec::new();
    if handle
        .take(SEARCH_FILE_SIZE_CAP)
        .read_to_end(&mut bytes)
        .is_err()
        || bytes.contains(&0)
    {
        return true;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (index, line) in text.lines().enumerate() {
        if line.contains(pattern)
            && !matches.push(format!("{shown}:{}: {}", index + 1, clip_line(line)))
        {
            return false;
        }
    }
    true
}

fn clip_line(line: &str) -> String {
    if line.len() <= SEARCH_LINE_CAP {
        return line.to_string();
    }
    format!("{} …", &line[..floor_char_boundary(line, SEARCH_LINE_CAP)])
}

fn search_report(pattern: &str, path: &str, matches: &Matches) -> String {
    if matches.lines.is_empty() && matches.stopped.is_none() {
        return format!("No matches for '{pattern}' in '{path}'.");
    }
    let mut out = matches.lines.join("\n");
    if let Some(why) = &matches.stopped {
        out.push_str(&format!("\n[cut: {why}; narrow the pattern or the path]"));
    }
    out
}
