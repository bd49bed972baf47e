//! The refs the tool owns: every story branch (`refs/heads/agentic-sdlc/…`) and the branches
//! work is merged into. The guard around boxed commands compares them before and after
//! (workflow/guard.rs); every operation of the tool that moves one records where it left it
//! ([`crate::own_writes`]), so its own moves are never mistaken for a command's.

use std::path::{Path, PathBuf};

use super::command::{checked, git, optional, run, text};
use super::error::GitError;

/// Story branches live under this prefix so they are easy to find and clean up.
pub const BRANCH_PREFIX: &str = "agentic-sdlc/";

/// The commit a branch points at.
pub fn branch_tip(dir: &Path, branch: &str) -> Result<Option<String>, GitError> {
    let reference = format!("refs/heads/{branch}^{{commit}}");
    optional(git(dir, "rev-parse").args(["--verify", "--quiet", &reference]))
}

/// Full ref name → object it points at.
pub type RefValues = Vec<(String, String)>;

/// Where the refs of the tool's story branches and of `bases` point in the repository whose
/// shared git folder is `common_dir` (the guard reads them around every boxed command, so they
/// are read from the files git keeps them in, without starting git, unless the repository keeps
/// them in a reftable).
pub fn tool_refs(repo: &Path, common_dir: &Path, bases: &[String]) -> Result<RefValues, GitError> {
    if common_dir.join("reftable").exists() {
        return tool_refs_by_git(repo, bases);
    }
    let wanted = |name: &str| {
        name.strip_prefix("refs/heads/").is_some_and(|branch| {
            branch.starts_with(BRANCH_PREFIX) || bases.iter().any(|base| base == branch)
        })
    };
    let mut values: std::collections::BTreeMap<String, String> = Default::default();
    if let Ok(packed) = std::fs::read_to_string(common_dir.join("packed-refs")) {
        for line in packed.lines() {
            if let Some((value, name)) = line.split_once(' ') {
                if !line.starts_with(['#', '^']) && wanted(name) {
                    values.insert(name.to_string(), value.to_string());
                }
            }
        }
    }
    // Loose refs win over packed ones.
    let mut folders = vec![common_dir
        .join("refs/heads")
        .join(BRANCH_PREFIX.trim_end_matches('/'))];
    for base in bases {
        let loose = common_dir.join("refs/heads").join(base);
        if let Ok(value) = std::fs::read_to_string(&loose) {
            values.insert(format!("refs/heads/{base}"), value.trim().to_string());
        }
    }
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(value) = std::fs::read_to_string(&path) {
                let value = value.trim();
                // A lock file mid-update or a symbolic ref is not a branch tip.
                if path.extension().is_some_and(|e| e == "lock") || value.starts_with("ref:") {
                    continue;
                }
                if let Ok(relative) = path.strip_prefix(common_dir) {
                    values.insert(relative.to_string_lossy().into_owned(), value.to_string());
                }
            }
        }
    }
    Ok(values.into_iter().collect())
}

fn tool_refs_by_git(repo: &Path, bases: &[String]) -> Result<RefValues, GitError> {
    let mut patterns = vec![format!("refs/heads/{BRANCH_PREFIX}")];
    patterns.extend(bases.iter().map(|base| format!("refs/heads/{base}")));
    let output = checked(
        git(repo, "for-each-ref")
            .args(["--format=%(refname) %(objectname)"])
            .args(&patterns),
    )?;
    Ok(text(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect())
}

/// Puts `name` back at `value`, or deletes it when it did not exist before.
pub fn restore_ref(repo: &Path, name: &str, value: Option<&str>) -> Result<(), GitError> {
    match value {
        Some(value) => checked(git(repo, "update-ref").args([name, value]))?,
        None => checked(git(repo, "update-ref").args(["-d", name]))?,
    };
    Ok(())
}

/// The folder shared by all checkouts of `repo`, where its refs live.
pub fn common_dir(repo: &Path) -> Result<PathBuf, GitError> {
    let output =
        checked(git(repo, "rev-parse").args(["--path-format=absolute", "--git-common-dir"]))?;
    Ok(PathBuf::from(text(&output.stdout)))
}

/// Runs a git operation in `dir` that may move the branch checked out there (a commit, a
/// merge), and records where that branch is left.
pub(super) fn moving_head<T, E>(
    dir: &Path,
    operation: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    crate::own_writes::moving_refs(dir_key(dir).as_path(), operation, || head_value(dir))
}

/// Runs a git operation in `repo` that moves `branch`, and records where it is left.
pub(super) fn moving_branch<T, E>(
    repo: &Path,
    branch: &str,
    operation: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    moving_ref(repo, &format!("refs/heads/{branch}"), operation)
}

/// Runs a git operation in `repo` that moves the ref `name` (in full), and records where it
/// is left.
pub(super) fn moving_ref<T, E>(
    repo: &Path,
    name: &str,
    operation: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    crate::own_writes::moving_refs(dir_key(repo).as_path(), operation, || {
        vec![(name.to_string(), ref_value(repo, name))]
    })
}

/// The key the ledger files refs of `dir` under: its common git folder, the same for every
/// checkout of one repository.
pub fn dir_key(dir: &Path) -> PathBuf {
    common_dir(dir).unwrap_or_else(|_| dir.to_path_buf())
}

fn head_value(dir: &Path) -> Vec<(String, Option<String>)> {
    let Ok(output) = run(git(dir, "symbolic-ref").args(["--quiet", "HEAD"])) else {
        return Vec::new();
    };
    if !output.status.success() {
        return Vec::new();
    }
    let name = text(&output.stdout);
    let value = ref_value(dir, &name);
    vec![(name, value)]
}

fn ref_value(repo: &Path, name: &str) -> Option<String> {
    let output = run(git(repo, "rev-parse").args(["--verify", "--quiet", name])).ok()?;
    output.status.success().then(|| text(&output.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;

    #[test]
    fn refs_read_from_files_match_what_git_lists_packed_or_loose() {
        let dir = repo();
        let root = dir.path();
        sh(root, &["branch", "agentic-sdlc/packed"]);
        sh(root, &["pack-refs", "--all"]);
        sh(root, &["branch", "agentic-sdlc/deep/loose"]);
        sh(root, &["commit", "--quiet", "--allow-empty", "-m", "moved"]);
        sh(root, &["branch", "unrelated"]);
        let bases = ["main".to_string()];
        let common = common_dir(root).unwrap();
        let from_files = tool_refs(root, &common, &bases).unwrap();
        let from_git = tool_refs_by_git(root, &bases).unwrap();
        assert_eq!(from_files, from_git);
        let names: Vec<&str> = from_files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "refs/heads/agentic-sdlc/deep/loose",
                "refs/heads/agentic-sdlc/packed",
                "refs/heads/main"
            ]
        );
    }
}
