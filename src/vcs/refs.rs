//! The refs the tool owns: every story branch (`refs/heads/agentic-sdlc/…`) and the branches
//! work is merged into. The guard around boxed commands compares them before and after
//! (workflow/guard.rs); every operation of the tool that moves one records where it left it
//! ([`crate::own_writes`]), so its own moves are never mistaken for a command's.

use std::path::{Path, PathBuf};

use super::branches::BRANCH_PREFIX;
use super::command::{checked, git, run, text};
use super::GitError;

/// Full ref name → object it points at.
pub type RefValues = Vec<(String, String)>;

/// Where the refs of the tool's story branches and of `bases` point in `repo`.
pub fn tool_refs(repo: &Path, bases: &[String]) -> Result<RefValues, GitError> {
    let mut patterns = vec![format!("refs/heads/{BRANCH_PREFIX}")];
    patterns.extend(bases.iter().map(|base| format!("refs/heads/{base}")));
    let output = checked(
        git(repo)
            .args(["for-each-ref", "--format=%(refname) %(objectname)"])
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
        Some(value) => checked(git(repo).args(["update-ref", name, value]))?,
        None => checked(git(repo).args(["update-ref", "-d", name]))?,
    };
    Ok(())
}

/// The folder shared by all checkouts of `repo`, where its refs live.
pub fn common_dir(repo: &Path) -> Result<PathBuf, GitError> {
    let output =
        checked(git(repo).args(["rev-parse", "--path-format=absolute", "--git-common-dir"]))?;
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
    let name = format!("refs/heads/{branch}");
    crate::own_writes::moving_refs(dir_key(repo).as_path(), operation, || {
        vec![(name.clone(), ref_value(repo, &name))]
    })
}

/// The key the ledger files refs of `dir` under: its common git folder, the same for every
/// checkout of one repository.
pub fn dir_key(dir: &Path) -> PathBuf {
    common_dir(dir).unwrap_or_else(|_| dir.to_path_buf())
}

fn head_value(dir: &Path) -> Vec<(String, Option<String>)> {
    let Ok(output) = run(git(dir).args(["symbolic-ref", "--quiet", "HEAD"])) else {
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
    let output = run(git(repo).args(["rev-parse", "--verify", "--quiet", name])).ok()?;
    output.status.success().then(|| text(&output.stdout))
}
