//! Keeping this clone's board folder in step with the board on the remote's base branch.
//!
//! The clone remembers the base commit its board folder was last brought to (`synced`). What
//! differs from it in the folder is this clone's own change (the run's writes, a person's edits
//! here). Bringing in a newer base commit takes, story by story, the remote's change where this
//! clone changed nothing, and otherwise merges the two ([`crate::board::merge`]). Publishing
//! commits this clone's changes on top of the remote's tip. Every write to a story file is
//! conditional ([`crate::board::swap`]): a story the run or a person saved in the meantime is
//! read again and merged again, never overwritten.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::board::merge::{merge_story, Version};
use crate::board::story_file::StoryFile;
use crate::board::swap::{swap_story_file, Swap};
use crate::board::StoryId;
use crate::board::{Column, Story};
use crate::error::Result;
use crate::vcs::{self as git, RemoteTarget};

/// How often a story that keeps changing under the sync is read and merged again.
const SETTLE_ATTEMPTS: usize = 5;

/// Where the sync works, fixed for a run.
#[derive(Debug, Clone)]
pub struct Place {
    pub root: PathBuf,
    /// The board folder, absolute.
    pub board_dir: PathBuf,
    /// The board folder relative to `root`, `/`-separated, as git names paths.
    pub board_rel: String,
    pub base: crate::names::BranchName,
    pub target: RemoteTarget,
    pub timeout: Duration,
    /// Paths whose uncommitted changes are the tool's own, not the user's work (the board, the
    /// worktrees folder), for the checkout to follow the base past them.
    pub own_paths: Vec<PathBuf>,
}

impl Place {
    /// Pathspecs for the story files: `*.md` directly inside each column folder. Journals,
    /// logs and the checkpoint stay this clone's own.
    pub fn story_specs(&self) -> Vec<String> {
        let folder = glob_escape(&self.board_rel);
        Column::ALL
            .iter()
            .map(|column| format!(":(top,glob){folder}/{}/*.md", column.name()))
            .collect()
    }

    fn absolute(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    fn relative(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// The ref remembering the base commit the board folder was last brought to.
    pub fn synced_ref(&self) -> String {
        format!("refs/agentic-sdlc/remote/{}/synced", self.target.name)
    }
}

fn glob_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

/// A story file as one side holds it: its path relative to the root, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub path: String,
    pub bytes: Vec<u8>,
}

impl Side {
    fn version(&self) -> Version<'_> {
        Version {
            path: Path::new(&self.path),
            bytes: &self.bytes,
        }
    }
}

/// The id a story file declares: from its frontmatter, or its `id:` line when the rest does
/// not parse.
pub fn story_id_of(path: &str, bytes: &[u8]) -> Option<String> {
    let column = Column::of_file(Path::new(path)).unwrap_or(Column::Backlog);
    if let Ok(story) = Story::parse_bytes(bytes, PathBuf::from(path), column) {
        return Some(story.id().to_string()).filter(|id| !id.is_empty());
    }
    String::from_utf8_lossy(bytes).lines().find_map(|line| {
        let value = line.strip_prefix("id:")?.trim().trim_matches(['\'', '"']);
        (!value.is_empty()).then(|| value.to_string())
    })
}

/// This clone's changes to story files since `synced`: each path with its bytes, or `None`
/// when the file was removed (moved away, for a story that changed column).
pub fn local_changes(place: &Place, synced: &str) -> Result<Vec<(String, Option<Vec<u8>>)>> {
    // Git's answer leans on the index, which holds the checkout's commit rather than
    // `synced` when the checkout could not follow; the bytes decide.
    let paths = git::worktree_changes(&place.root, synced, &place.story_specs())?;
    let before = git::read_files(&place.root, synced, &paths)?;
    let mut changes = Vec::with_capacity(paths.len());
    for path in paths {
        let bytes = match std::fs::read(place.absolute(&path)) {
            Ok(bytes) => Some(bytes),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
            Err(err) => return Err(crate::error::Error::io(format!("cannot read {path}"), err)),
        };
        if bytes.as_ref() != before.get(&path) {
            changes.push((path, bytes));
        }
    }
    Ok(changes)
}

/// The story each changed file belongs to: from its bytes, or for a removed file from its
/// version in `synced`.
pub fn story_ids(
    place: &Place,
    synced: &str,
    files: &[(String, Option<Vec<u8>>)],
) -> Result<std::collections::HashMap<String, String>> {
    let removed: Vec<String> = files
        .iter()
        .filter(|(_, bytes)| bytes.is_none())
        .map(|(path, _)| path.clone())
        .collect();
    let before = git::read_files(&place.root, synced, &removed)?;
    Ok(files
        .iter()
        .filter_map(|(path, bytes)| {
            let bytes = bytes.as_ref().or_else(|| before.get(path))?;
            Some((path.clone(), story_id_of(path, bytes)?))
        })
        .collect())
}

/// What this clone publishes onto `parent` (the freshly fetched tip, or a merge made on it),
/// story by story (docs/design.md §22): for each story whose file changed here since
/// `synced`, its version here merged three-way with the version `parent` holds, from its
/// version in `synced`. Never a snapshot of the folder: a story another clone changed or added
/// keeps its version from `parent`.
///
/// A story whose file is gone from this folder while `synced` has it is not published as a
/// deletion: the folder missed it (a sync that could not write it, a move seen halfway), and
/// the remote's version is put back here instead. Stories in `skip` (another run's) are left
/// out. Returns each path with its new bytes, or `None` to remove it.
pub fn publishable(
    place: &Place,
    synced: &str,
    parent: &str,
    skip: &std::collections::HashSet<StoryId>,
    note: &dyn Fn(String),
) -> Result<Vec<(String, Option<Vec<u8>>)>> {
    let changes = local_changes(place, synced)?;
    let ids = story_ids(place, synced, &changes)?;
    let mut files = Vec::new();
    let mut stories: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, bytes) in &changes {
        match ids.get(path) {
            Some(id) => stories.entry(id.clone()).or_default().push(path.clone()),
            // A file that names no story (broken by hand) goes as it is; its removal does not.
            None if bytes.is_some() => files.push((path.clone(), bytes.clone())),
            None => {}
        }
    }
    for (id, changed) in stories {
        if skip.contains(id.as_str()) {
            continue;
        }
        let ours = locate(place, &id, None, true)?;
        let mut candidates = changed;
        candidates.extend(ours.iter().map(|side| side.path.clone()));
        let names: Vec<String> = candidates
            .iter()
            .filter_map(|path| Path::new(path).file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .collect();
        for name in names {
            for column in Column::ALL {
                candidates.push(format!("{}/{}/{name}", place.board_rel, column.name()));
            }
        }
        candidates.sort();
        candidates.dedup();
        let base = version_of(place, synced, &id, &candidates)?;
        let theirs_all = versions_of(place, parent, &id, &candidates)?;
        let theirs = theirs_all.first().cloned();
        let Some(ours) = ours else {
            if base.is_some() {
                note(format!(
                    "{id} was missing from this clone's board folder; its version on the remote was put back here, not deleted there"
                ));
                settle_story(place, &id, None, theirs.as_ref(), note)?;
            }
            continue;
        };
        let merged = if theirs == base || theirs.is_none() {
            ours
        } else {
            let (Some(base), Some(theirs)) = (base.as_ref(), theirs.as_ref()) else {
                // New here and new there under one id: the remote's stands, this one is merged
                // into it by the next sync.
                continue;
            };
            match merge_story(Some(base.version()), ours.version(), theirs.version()) {
                Ok((path, bytes)) => Side {
                    path: place.relative(&place.root.join(path)),
                    bytes,
                },
                Err(_) => {
                    // Brought in (and this clone's version set aside) by the sync.
                    settle_story(place, &id, Some(base), Some(theirs), note)?;
                    continue;
                }
            }
        };
        for other in theirs_all.iter().filter(|side| side.path != merged.path) {
            files.push((other.path.clone(), None));
        }
        files.push((merged.path.clone(), Some(merged.bytes)));
    }
    Ok(files)
}

/// The version of story `id` that commit `rev` holds at one of `paths`, if any.
fn version_of(place: &Place, rev: &str, id: &str, paths: &[String]) -> Result<Option<Side>> {
    Ok(versions_of(place, rev, id, paths)?.into_iter().next())
}

/// Every file of story `id` that commit `rev` holds at one of `paths`.
fn versions_of(place: &Place, rev: &str, id: &str, paths: &[String]) -> Result<Vec<Side>> {
    let files = git::read_files(&place.root, rev, paths)?;
    Ok(paths
        .iter()
        .filter_map(|path| {
            let bytes = files.get(path)?;
            (story_id_of(path, bytes).as_deref() == Some(id)).then(|| Side {
                path: path.clone(),
                bytes: bytes.clone(),
            })
        })
        .collect())
}

/// Brings the remote's changes between base commits `old` and `new` into the board folder.
/// `note` hears about stories whose two versions could not be merged.
pub fn bring_in(place: &Place, old: &str, new: &str, note: &dyn Fn(String)) -> Result<()> {
    let specs = place.story_specs();
    let changed = git::changed_paths(&place.root, old, new, &specs)?;
    if changed.is_empty() {
        return Ok(());
    }
    let before = git::read_files(&place.root, old, &changed)?;
    let after = git::read_files(&place.root, new, &changed)?;
    let mut stories: BTreeMap<String, (Option<Side>, Option<Side>)> = BTreeMap::new();
    for path in &changed {
        for (files, after_side) in [(&before, false), (&after, true)] {
            let Some(bytes) = files.get(path) else {
                continue;
            };
            let Some(id) = story_id_of(path, bytes) else {
                continue;
            };
            let side = Side {
                path: path.clone(),
                bytes: bytes.clone(),
            };
            let entry = stories.entry(id).or_default();
            if after_side {
                entry.1 = Some(side);
            } else {
                entry.0 = Some(side);
            }
        }
    }
    for (id, (base, theirs)) in stories {
        settle_story(place, &id, base.as_ref(), theirs.as_ref(), note)?;
    }
    Ok(())
}

/// Makes the board folder's copy of story `id` take in `theirs`, a version made elsewhere from
/// `base`: replaced when this clone changed nothing since `base`, merged when it did (its own
/// change made again on `theirs`), left alone when it already holds it. A copy saved while this
/// runs is read again and merged again.
pub fn settle_story(
    place: &Place,
    id: &str,
    base: Option<&Side>,
    theirs: Option<&Side>,
    note: &dyn Fn(String),
) -> Result<()> {
    let hint = base.or(theirs).map(|side| place.absolute(&side.path));
    for _ in 0..SETTLE_ATTEMPTS {
        // A story new to this clone can only be at the path it comes with (ids are random),
        // so the board is not searched for it.
        let local = locate(place, id, hint.as_deref(), base.is_some())?;
        let Some(target) = decide(place, id, base, local.as_ref(), theirs, note) else {
            return Ok(());
        };
        if local.as_ref() == target.as_ref() {
            return Ok(());
        }
        let target = target.map(|side| free_of_other_stories(place, local.as_ref(), side));
        let from = local
            .as_ref()
            .map(|side| (place.absolute(&side.path), side.bytes.as_slice()));
        let to = target
            .as_ref()
            .map(|side| (place.absolute(&side.path), side.bytes.as_slice()));
        let swapped = swap_story_file(
            &place.board_dir,
            from.as_ref().map(|(path, bytes)| (path.as_path(), *bytes)),
            to.as_ref().map(|(path, bytes)| (path.as_path(), *bytes)),
        )?;
        if let Swap::Done(_) = swapped {
            return Ok(());
        }
        tracing::debug!(story = id, "story saved during the sync; merging again");
    }
    note(format!(
        "{id} kept changing while the remote's version was merged into it; it is left as it is here and will be merged at the next sync"
    ));
    Ok(())
}

/// `side`, moved to a free name when another story's file already stands at its path (two
/// clones gave new stories the same slug).
fn free_of_other_stories(place: &Place, local: Option<&Side>, side: Side) -> Side {
    let path = place.absolute(&side.path);
    let ours = local.is_some_and(|local| local.path == side.path);
    if ours || !path.exists() {
        return side;
    }
    let folder = path.parent().unwrap_or(&place.board_dir);
    let slug = crate::board::story::slug_from_path(&path);
    let free = crate::board::store::free_path(folder, &slug);
    Side {
        path: place.relative(&free),
        bytes: side.bytes,
    }
}

/// The board folder's copy of story `id`, if it has one: at `hint`, or (with `search`)
/// wherever it moved.
fn locate(place: &Place, id: &str, hint: Option<&Path>, search: bool) -> Result<Option<Side>> {
    if !search {
        let found = hint.and_then(|path| Some((path, std::fs::read(path).ok()?)));
        return Ok(found.and_then(|(path, bytes)| {
            let relative = place.relative(path);
            (story_id_of(&relative, &bytes).as_deref() == Some(id)).then_some(Side {
                path: relative,
                bytes,
            })
        }));
    }
    match StoryFile::locate(&place.board_dir, id, hint) {
        Ok(file) => Ok(Some(Side {
            path: place.relative(&file.story().path),
            bytes: file.bytes().to_vec(),
        })),
        Err(crate::error::Error::StoryNotFound { .. }) => Ok(None),
        // A copy broken by hand here: read as it is, so the remote's version does not
        // silently replace a person's work in progress.
        Err(crate::error::Error::StoryParse { path, .. }) => {
            Ok(std::fs::read(&path).ok().map(|bytes| Side {
                path: place.relative(&path),
                bytes,
            }))
        }
        Err(err) => Err(err),
    }
}

/// What the board folder's copy of a story should become; `None` to leave it.
fn decide(
    place: &Place,
    id: &str,
    base: Option<&Side>,
    local: Option<&Side>,
    theirs: Option<&Side>,
    note: &dyn Fn(String),
) -> Option<Option<Side>> {
    if local == theirs {
        return None;
    }
    if local == base {
        return Some(theirs.cloned());
    }
    match (local, theirs) {
        // Removed here, changed there: the change is kept.
        (None, Some(theirs)) => Some(Some(theirs.clone())),
        // Removed there, changed here: this clone's change is kept.
        (Some(_), None) | (None, None) => None,
        (Some(local), Some(theirs)) => {
            match merge_story(base.map(Side::version), local.version(), theirs.version()) {
                Ok((path, bytes)) => Some(Some(Side {
                    path: place.relative(&place.root.join(path)),
                    bytes,
                })),
                Err(err) => {
                    let kept = keep_aside(place, id, local);
                    note(format!(
                        "{id}: this clone's version and the remote's could not be merged ({err}); the remote's stands{}",
                        kept.map(|path| format!(" and this clone's is saved in {}", path.display()))
                            .unwrap_or_default()
                    ));
                    Some(Some(theirs.clone()))
                }
            }
        }
    }
}

/// Puts story `id` back to its version in base commit `synced` (or removes it, when the base
/// has none), setting this clone's copy aside first.
pub fn give_up_story(place: &Place, id: &str, synced: &str, note: &dyn Fn(String)) -> Result<()> {
    let Some(local) = locate(place, id, None, true)? else {
        return Ok(());
    };
    let name = Path::new(&local.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let candidates: Vec<String> = Column::ALL
        .iter()
        .map(|column| format!("{}/{}/{name}", place.board_rel, column.name()))
        .collect();
    let files = git::read_files(&place.root, synced, &candidates)?;
    let theirs = candidates.into_iter().find_map(|path| {
        let bytes = files.get(&path)?;
        (story_id_of(&path, bytes).as_deref() == Some(id)).then(|| Side {
            path,
            bytes: bytes.clone(),
        })
    });
    if theirs.as_ref() == Some(&local) {
        return Ok(());
    }
    if let Some(kept) = keep_aside(place, id, &local) {
        note(format!(
            "this run's changes to {id} are set aside in {}",
            kept.display()
        ));
    }
    settle_story(place, id, Some(&local), theirs.as_ref(), note)
}

/// Saves a version of a story that gives way, beside the story's transcripts.
fn keep_aside(place: &Place, id: &str, side: &Side) -> Option<PathBuf> {
    let folder = place.board_dir.join("logs").join(id);
    std::fs::create_dir_all(&folder).ok()?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let path = folder.join(format!("set-aside-{stamp}.md"));
    std::fs::write(&path, &side.bytes).ok()?;
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn story_files_are_matched_by_glob_with_the_folder_escaped() {
        let place = Place {
            root: PathBuf::from("/r"),
            board_dir: PathBuf::from("/r/b[1]"),
            board_rel: "b[1]".into(),
            base: "main".into(),
            target: RemoteTarget {
                name: "origin".into(),
                url: "u".into(),
            },
            timeout: Duration::from_secs(1),
            own_paths: Vec::new(),
        };
        let specs = place.story_specs();
        assert_eq!(specs.len(), 5);
        assert_eq!(specs[0], ":(top,glob)b\\[1\\]/backlog/*.md");
    }

    use crate::vcs::test_support::{repo, sh, write};

    fn story(id: &str, status: &str, extra: &str) -> String {
        format!("---\nid: {id}\ntitle: Story {id}\npriority: 10\nstatus: {status}\n{extra}---\n# Story {id}\n\n## Summary\nAs written.\n\n## Research\n")
    }

    fn place_of(root: &Path) -> Place {
        let root = fs_err::canonicalize(root).unwrap();
        Place {
            board_dir: root.join(".agentic-sdlc"),
            board_rel: ".agentic-sdlc".into(),
            base: "main".into(),
            target: RemoteTarget {
                name: "origin".into(),
                url: "unused".into(),
            },
            timeout: Duration::from_secs(5),
            own_paths: vec![PathBuf::from(".agentic-sdlc")],
            root,
        }
    }

    #[test]
    fn the_remotes_changes_come_in_and_this_clones_are_kept() {
        let dir = repo();
        let root = dir.path();
        write(root, ".agentic-sdlc/ready/a.md", &story("a", "ready", ""));
        write(root, ".agentic-sdlc/ready/b.md", &story("b", "ready", ""));
        write(
            root,
            ".agentic-sdlc/backlog/c.md",
            &story("c", "backlog", ""),
        );
        write(
            root,
            ".agentic-sdlc/backlog/k.md",
            &story("k", "backlog", ""),
        );
        sh(root, &["add", "-A"]);
        sh(root, &["commit", "-q", "-m", "board"]);
        let old = sh(root, &["rev-parse", "HEAD"]);
        let place = place_of(root);
        // Elsewhere: a person reprioritises a and rewrites its summary; another clone moves b
        // on; c and k are deleted; d is new.
        let remote_a = story("a", "ready", "").replace("priority: 10", "priority: 1");
        let remote_a = remote_a.replace("As written.", "Rewritten by a person.");
        let remote_b = story("b", "in-progress", "research_complete: true\n");
        let files = vec![
            (
                ".agentic-sdlc/ready/a.md".to_string(),
                Some(remote_a.into_bytes()),
            ),
            (".agentic-sdlc/ready/b.md".to_string(), None),
            (
                ".agentic-sdlc/in-progress/b.md".to_string(),
                Some(remote_b.clone().into_bytes()),
            ),
            (".agentic-sdlc/backlog/c.md".to_string(), None),
            (".agentic-sdlc/backlog/k.md".to_string(), None),
            (
                ".agentic-sdlc/backlog/d.md".to_string(),
                Some(story("d", "backlog", "").into_bytes()),
            ),
        ];
        let new = git::commit_files(root, &old, &files, "elsewhere").unwrap();
        // Here: the run researched a, and a person edited k; e is new here.
        let local_a = story("a", "ready", "research_complete: true\n")
            .replace("## Research\n", "## Research\nFound it.\n");
        write(root, ".agentic-sdlc/ready/a.md", &local_a);
        write(
            root,
            ".agentic-sdlc/backlog/k.md",
            &story("k", "backlog", "owner: me\n"),
        );
        write(
            root,
            ".agentic-sdlc/backlog/e.md",
            &story("e", "backlog", ""),
        );

        let notes = std::cell::RefCell::new(Vec::new());
        bring_in(&place, &old, &new, &|n| notes.borrow_mut().push(n)).unwrap();
        assert!(notes.borrow().is_empty(), "{:?}", notes.borrow());

        let read = |path: &str| fs_err::read_to_string(root.join(path)).ok();
        let a = read(".agentic-sdlc/ready/a.md").unwrap();
        for needle in [
            "priority: 1\n",
            "Rewritten by a person.",
            "research_complete: true",
            "Found it.",
        ] {
            assert!(a.contains(needle), "{needle:?} missing in:\n{a}");
        }
        assert_eq!(read(".agentic-sdlc/ready/b.md"), None);
        assert_eq!(read(".agentic-sdlc/in-progress/b.md"), Some(remote_b));
        assert_eq!(
            read(".agentic-sdlc/backlog/c.md"),
            None,
            "unchanged here: removed"
        );
        let k = read(".agentic-sdlc/backlog/k.md").expect("changed here: kept");
        assert!(k.contains("owner: me"));
        assert!(read(".agentic-sdlc/backlog/d.md").is_some());
        assert!(read(".agentic-sdlc/backlog/e.md").is_some());

        // What is left to publish is exactly this clone's own work.
        let mut changed: Vec<String> = local_changes(&place, &new)
            .unwrap()
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        changed.sort();
        assert_eq!(
            changed,
            [
                ".agentic-sdlc/backlog/e.md",
                ".agentic-sdlc/backlog/k.md",
                ".agentic-sdlc/ready/a.md"
            ]
        );
    }

    #[test]
    fn a_story_id_is_read_even_from_a_broken_file() {
        let good = b"---\nid: story-a\ntitle: A\n---\n# A\n";
        assert_eq!(
            story_id_of("b/ready/a.md", good).as_deref(),
            Some("story-a")
        );
        let broken = b"---\nid: 'story-b'\ntitle: [unclosed\n---\n";
        assert_eq!(
            story_id_of("b/ready/b.md", broken).as_deref(),
            Some("story-b")
        );
        assert_eq!(story_id_of("b/ready/c.md", b"no frontmatter"), None);
    }
}
