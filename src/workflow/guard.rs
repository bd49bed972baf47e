//! The guard around every boxed process (docs/design.md §16, "checked after every boxed
//! process"): the board's story files, every `.agentic-sdlc.json` and the refs the tool owns are
//! taken before the process runs and compared after it, whatever the box says.
//!
//! A difference the tool made itself meanwhile (for another story running in parallel) is
//! recognised by [`crate::own_writes`]. A difference the box could have made is put back, the
//! changed version is kept under `<board>/logs/tampered/`, and the action fails naming it. A
//! difference the box could not have made (the kernel kept it out) came from someone else, a
//! person saving a story, and is left alone.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::board::Column;
use crate::config::CONFIG_FILE;
use crate::exec::{Change, Guard, Tampering, Watch};
use crate::own_writes::{self, Mark};
use crate::vcs;

use crate::config::WORKTREES_DIR;

/// What identifies a file's version without reading it: a write changes the change time (which
/// no program can set back), a rename the inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    len: u64,
    changed_ns: i64,
    modified_ns: i64,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp {
            inode: meta.ino(),
            len: meta.len(),
            changed_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
            modified_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
        }
    }
}

/// A watched file as it was: its stamp and bytes.
#[derive(Debug, Clone)]
struct Version {
    stamp: Stamp,
    bytes: Arc<Vec<u8>>,
}

/// The guard of one run.
#[derive(Debug)]
pub struct BoardGuard {
    board_dir: PathBuf,
    /// The board folder relative to a working tree (the same as to the repository root).
    board_in_tree: Option<PathBuf>,
    config_file: PathBuf,
    root: PathBuf,
    /// `git.baseBranch`, and the branch checked out when the run started (read then: once a
    /// story's branch is checked out in the root, the base is no longer what HEAD names).
    bases: Vec<String>,
    /// The repository's shared git folder, where its refs live; `None` outside git.
    git: OnceLock<Option<GitSide>>,
    /// Bytes of the watched files by stamp: a file read once is read again only once it
    /// changes, so a large board costs a `stat` per story and command.
    versions: Mutex<BTreeMap<PathBuf, Version>>,
}

#[derive(Debug, Clone)]
struct GitSide {
    repo: PathBuf,
    common_dir: PathBuf,
    /// The branches work is merged into, besides the story branches.
    bases: Vec<String>,
}

impl BoardGuard {
    pub fn new(root: &Path, board_dir: &Path, configured_base: Option<&str>) -> BoardGuard {
        BoardGuard {
            board_dir: board_dir.to_path_buf(),
            board_in_tree: board_dir.strip_prefix(root).ok().map(Path::to_path_buf),
            config_file: root.join(CONFIG_FILE),
            root: root.to_path_buf(),
            bases: bases_at_start(root, configured_base),
            git: OnceLock::new(),
            versions: Mutex::new(BTreeMap::new()),
        }
    }

    /// The repository side, asked of git on the first process watched: a run that boxes
    /// nothing (most runs on a large board) spawns no more git for it.
    fn git(&self) -> Option<&GitSide> {
        self.git
            .get_or_init(|| {
                let common_dir = vcs::common_dir(&self.root).ok()?;
                Some(GitSide {
                    repo: self.root.clone(),
                    common_dir,
                    bases: self.bases.clone(),
                })
            })
            .as_ref()
    }

    /// Every file watched around a process in `tree`, and the nested repositories there.
    fn scan(&self, tree: &Path) -> (BTreeSet<PathBuf>, BTreeSet<PathBuf>) {
        let mut files = BTreeSet::new();
        let mut boards = vec![self.board_dir.clone()];
        if let Some(relative) = &self.board_in_tree {
            let in_tree = tree.join(relative);
            if in_tree != self.board_dir {
                boards.push(in_tree);
            }
        }
        for board in boards {
            for column in Column::ALL.iter().copied() {
                let Ok(entries) = std::fs::read_dir(board.join(column.name())) else {
                    continue;
                };
                for entry in entries.flatten() {
                    // The tool's own temporary files start with a dot and are never stories.
                    if !entry.file_name().as_encoded_bytes().starts_with(b".") {
                        files.insert(entry.path());
                    }
                }
            }
        }
        files.insert(self.config_file.clone());
        let walked = walk_tree(tree, self.board_in_tree.as_deref());
        files.extend(walked.configs);
        (files, walked.nested_repositories)
    }

    /// The current version of `path`, read only when its stamp changed since last time.
    fn version(&self, path: &Path) -> Option<Version> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        let stamp = Stamp::of(&meta);
        let mut versions = self.versions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = versions.get(path).filter(|v| v.stamp == stamp) {
            return Some(known.clone());
        }
        let bytes = if meta.is_file() {
            std::fs::read(path).ok()?
        } else {
            // A link or folder where a story or config belongs: what it names is its content.
            std::fs::read_link(path)
                .map(|target| target.into_os_string().into_encoded_bytes())
                .unwrap_or_default()
        };
        let version = Version {
            stamp,
            bytes: Arc::new(bytes),
        };
        versions.insert(path.to_path_buf(), version.clone());
        Some(version)
    }

    fn refs(&self) -> BTreeMap<String, String> {
        self.git()
            .and_then(|git| vcs::tool_refs(&git.repo, &git.common_dir, &git.bases).ok())
            .map(|values| values.into_iter().collect())
            .unwrap_or_default()
    }

    /// Where the changed version of `path` is kept.
    fn keep_aside(&self, path: &Path, bytes: &[u8]) -> Option<PathBuf> {
        let folder = self.board_dir.join("logs").join("tampered");
        std::fs::create_dir_all(&folder).ok()?;
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into());
        let kept = folder.join(format!("{stamp}-{name}"));
        std::fs::write(&kept, bytes).ok()?;
        Some(kept)
    }
}

impl Guard for BoardGuard {
    fn watch(self: Arc<Self>, tree: &Path) -> Result<Box<dyn Watch>, String> {
        let tree = std::fs::canonicalize(tree)
            .map_err(|err| format!("cannot resolve {}: {err}", tree.display()))?;
        let since = own_writes::mark();
        let (files, nested) = self.scan(&tree);
        let files = files
            .into_iter()
            .map(|path| {
                let version = self.version(&path);
                (path, version)
            })
            .collect();
        let refs = self.refs();
        Ok(Box::new(BoardWatch {
            guard: self,
            tree,
            since,
            files,
            nested,
            refs,
        }))
    }
}

/// One process's watch.
struct BoardWatch {
    guard: Arc<BoardGuard>,
    tree: PathBuf,
    since: Mark,
    files: BTreeMap<PathBuf, Option<Version>>,
    /// The nested repositories that were there before the process ran (a person's own, or a
    /// submodule's checkout): left alone.
    nested: BTreeSet<PathBuf>,
    refs: BTreeMap<String, String>,
}

impl Watch for BoardWatch {
    fn read_only(&self) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> = [Path::new(".git"), Path::new(WORKTREES_DIR)]
            .into_iter()
            .chain(self.guard.board_in_tree.as_deref())
            .map(|relative| self.tree.join(relative))
            .filter(|path| path.symlink_metadata().is_ok())
            .collect();
        paths.extend(
            self.files
                .keys()
                .filter(|path| path.starts_with(&self.tree) && is_config(path))
                .cloned(),
        );
        paths
    }

    fn check(self: Box<Self>, reachable: &dyn Fn(&Path) -> bool) -> Vec<Tampering> {
        // No ref moves while comparing: what is seen is settled.
        let _quiet = own_writes::quiet();
        let guard = &self.guard;
        let mut tampered = Vec::new();
        let (mut now_files, now_nested) = guard.scan(&self.tree);
        now_files.extend(self.files.keys().cloned());
        tampered.extend(
            now_nested
                .difference(&self.nested)
                .map(|nested| remove_nested_repository(nested)),
        );
        for path in now_files {
            let before = self.files.get(&path).cloned().flatten();
            let now = guard.version(&path);
            let change = match (&before, &now) {
                (None, None) => continue,
                (Some(b), Some(n)) if b.stamp == n.stamp || b.bytes == n.bytes => continue,
                (None, Some(_)) => Change::Created,
                (Some(_), None) => Change::Removed,
                (Some(_), Some(_)) => Change::Modified,
            };
            let now_bytes = now.as_ref().map(|v| v.bytes.as_slice());
            if own_writes::is_own_file(&path, now_bytes, self.since) {
                continue;
            }
            if !reachable(&path) {
                tracing::info!(
                    "{} changed while a boxed command ran, out of its reach; kept as it is",
                    path.display()
                );
                continue;
            }
            let kept_at = now_bytes.and_then(|bytes| guard.keep_aside(&path, bytes));
            let restored = match &before {
                Some(version) => restore_file(&path, &version.bytes),
                None => std::fs::remove_file(&path).is_ok(),
            };
            tampered.push(Tampering {
                target: path.display().to_string(),
                change,
                restored,
                kept_at,
            });
        }
        if let Some(git) = guard.git() {
            tampered.extend(self.check_refs(git, reachable));
        }
        tampered
    }
}

impl BoardWatch {
    fn check_refs(&self, git: &GitSide, reachable: &dyn Fn(&Path) -> bool) -> Vec<Tampering> {
        let now = self.guard.refs();
        let names: BTreeSet<&String> = self.refs.keys().chain(now.keys()).collect();
        let key = &git.common_dir;
        let mut tampered = Vec::new();
        for name in names {
            let (before, after) = (self.refs.get(name), now.get(name));
            if before == after
                || own_writes::is_own_ref(key, name, after.map(String::as_str), self.since)
            {
                continue;
            }
            if !reachable(&git.common_dir.join(name)) {
                tracing::info!("{name} moved while a boxed command ran, out of its reach");
                continue;
            }
            let change = match (before, after) {
                (None, _) => Change::Created,
                (_, None) => Change::Removed,
                _ => Change::Modified,
            };
            let restored = vcs::restore_ref(&git.repo, name, before.map(String::as_str)).is_ok();
            tampered.push(Tampering {
                target: name.clone(),
                change,
                restored,
                kept_at: None,
            });
        }
        tampered
    }
}

/// `git.baseBranch` and the branch checked out now, unless that is a story's branch (a run
/// interrupted there). Outside git, none.
fn bases_at_start(root: &Path, configured: Option<&str>) -> Vec<String> {
    let mut bases: Vec<String> = configured.iter().map(|base| base.to_string()).collect();
    if !vcs::may_be_in_repo(root) {
        return bases;
    }
    if let Ok(Some(current)) = vcs::current_branch(root) {
        if !current.starts_with(vcs::BRANCH_PREFIX) && !bases.contains(&current) {
            bases.push(current);
        }
    }
    bases
}

fn is_config(path: &Path) -> bool {
    path.file_name().is_some_and(|name| name == CONFIG_FILE)
}

/// A boxed process made a git repository inside the tree: git would run its settings (an
/// fsmonitor, say) outside the box, and a commit would carry it as a gitlink (docs/design.md
/// §22). It is removed, and the action fails.
fn remove_nested_repository(git_dir: &Path) -> Tampering {
    let removed = match git_dir.symlink_metadata() {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(git_dir).is_ok(),
        Ok(_) => std::fs::remove_file(git_dir).is_ok(),
        Err(_) => true,
    };
    Tampering {
        target: format!("{} (a nested git repository)", git_dir.display()),
        change: Change::Created,
        restored: removed,
        kept_at: None,
    }
}

/// What one walk of a tree finds.
struct TreeWalk {
    /// Every `.agentic-sdlc.json` at any depth.
    configs: Vec<PathBuf>,
    /// Every `.git` below the tree's own.
    nested_repositories: BTreeSet<PathBuf>,
}

/// Walks `tree` once (skipping what `.gitignore` files ignore, which git neither stages nor
/// looks into, the tree's `.git`, the worktrees folder and the board).
fn walk_tree(tree: &Path, board: Option<&Path>) -> TreeWalk {
    let skipped: Vec<PathBuf> = [
        Some(Path::new(".git")),
        Some(Path::new(WORKTREES_DIR)),
        board,
    ]
    .into_iter()
    .flatten()
    .map(|relative| tree.join(relative))
    .collect();
    let walker = ignore::WalkBuilder::new(tree)
        .hidden(false)
        .git_global(false)
        .filter_entry(move |entry| !skipped.iter().any(|s| entry.path() == s))
        .build();
    let mut walk = TreeWalk {
        configs: Vec::new(),
        nested_repositories: BTreeSet::new(),
    };
    for entry in walker.flatten() {
        if entry.file_name() == CONFIG_FILE {
            walk.configs.push(entry.into_path());
        } else if entry.file_name() == ".git" {
            walk.nested_repositories.insert(entry.into_path());
        }
    }
    walk
}

/// Writes `bytes` back atomically; true when it worked.
fn restore_file(path: &Path, bytes: &[u8]) -> bool {
    // Marked first: the rename must never look like somebody else's change.
    own_writes::file_written(path, bytes);
    crate::atomic_file::write(path, bytes).is_ok()
}
