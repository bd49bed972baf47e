//! Everything the workflow needs from git and the GitHub CLI (SPEC §4 `git`, §10, §11).
//!
//! Every function runs `git` (or `gh`) as a child process with an argument vector, never
//! through a shell, so slugs, titles and paths cannot be interpreted as shell syntax. The
//! functions are synchronous because each is a quick local command; async callers wrap them in
//! `spawn_blocking`.
//!
//! Two rules run through the module. The user's work is never clobbered: a branch switch is
//! refused while the working tree has changes, and the review diff is built on a temporary index
//! so the user's staging area is untouched. And the files the tool itself keeps rewriting (the
//! board folder, `.agentic-sdlc.json`) are passed in as `ignore` paths, so they neither block a
//! switch nor end up in a diff or a commit.

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::ffi::OsStringExt;
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Story branches live under this prefix so they are easy to find and clean up.
pub const BRANCH_PREFIX: &str = "agentic-sdlc/";
/// Per-branch config key holding the commit a story branch was created from. Git removes the
/// `branch.<name>` section with the branch, so a recreated branch never inherits a stale base.
const BASE_KEY: &str = "agentic-base";
/// Identity used only when the repository has none, so a commit never fails on a fresh machine.
const FALLBACK_IDENTITY: [&str; 4] = [
    "-c",
    "user.name=agentic-sdlc",
    "-c",
    "user.email=agentic-sdlc@localhost",
];
/// Dirty paths a `DirtyTree` message lists before summarising the rest.
const DIRTY_LIST_CAP: usize = 10;
/// Files a cut review diff names as left out.
const CUT_FILES_CAP: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("could not run `{command}`: {source}")]
    Spawn {
        command: String,
        #[source]
        source: io::Error,
    },

    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },

    #[error("{}", dirty_message(.branch, .paths))]
    DirtyTree { branch: String, paths: Vec<String> },

    #[error("the repository at {} has no commits yet, so there is nothing to branch from\nHint: make a first commit (`git commit --allow-empty -m \"Initial commit\"`), or set git.branchPerStory to false", .dir.display())]
    NoCommits { dir: PathBuf },

    #[error("cannot push {branch}: the repository has no `origin` remote\nHint: add one with `git remote add origin <url>`, or set git.createPr to false")]
    NoRemote { branch: String },

    #[error("the GitHub CLI `gh` is not on PATH, so no pull request can be opened\nHint: install it from https://cli.github.com and run `gh auth login`, or set git.createPr to false")]
    GhMissing,

    #[error("`gh pr create` succeeded but printed no pull request URL; its output was: {output}")]
    PrUrlMissing { output: String },

    #[error("cannot use {} as the worktree for {branch}: {reason}\nHint: move or remove that folder, then run again", .path.display())]
    WorktreePathTaken {
        path: PathBuf,
        branch: String,
        reason: String,
    },

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

fn dirty_message(branch: &str, paths: &[String]) -> String {
    let mut message = format!(
        "cannot switch to branch {branch}: the working tree has uncommitted changes in {} path(s):",
        paths.len()
    );
    for path in paths.iter().take(DIRTY_LIST_CAP) {
        message.push_str("\n  ");
        message.push_str(path);
    }
    if paths.len() > DIRTY_LIST_CAP {
        message.push_str(&format!("\n  … and {} more", paths.len() - DIRTY_LIST_CAP));
    }
    message.push_str("\nHint: commit or stash them, or set git.branchPerStory to false");
    message
}

/// A git problem ends the action and leaves the story as it was (SPEC §10).
impl From<GitError> for crate::error::Error {
    fn from(error: GitError) -> Self {
        crate::error::Error::ActionFailed(error.to_string())
    }
}

/// What `ensure_story_branch` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchSwitch {
    pub branch: String,
    /// The branch did not exist and was created from HEAD.
    pub created: bool,
    /// The commit the branch was created from, when it was recorded.
    pub base: Option<String>,
    /// The branch the tree was on before the switch (`None` when it already was on the story
    /// branch, or HEAD was detached), so the caller can go back to it.
    pub previous: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Running commands

/// A command with the environment every git/gh call gets. Stdin is closed so that nothing can
/// ever wait for a person to type: the workflow runs unattended.
fn command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.stdin(Stdio::null());
    #[cfg(test)]
    tests::apply_test_env(&mut cmd);
    cmd
}

fn git(dir: &Path) -> Command {
    let mut cmd = command("git");
    cmd.current_dir(dir);
    cmd
}

/// The command line as a person would type it, for error messages.
fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    for arg in cmd.get_args() {
        let arg = arg.to_string_lossy();
        if arg.is_empty() || arg.contains(char::is_whitespace) {
            parts.push(format!("{arg:?}"));
        } else {
            parts.push(arg.into_owned());
        }
    }
    parts.join(" ")
}

/// Runs to completion; the exit status is left to the caller.
fn run(cmd: &mut Command) -> Result<Output, GitError> {
    cmd.output().map_err(|source| GitError::Spawn {
        command: describe(cmd),
        source,
    })
}

/// Runs and requires success.
fn checked(cmd: &mut Command) -> Result<Output, GitError> {
    let output = run(cmd)?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(failure(cmd, &output))
    }
}

fn failure(cmd: &Command, output: &Output) -> GitError {
    // Some git commands (commit, for one) report on stdout, so fall back to it.
    let stderr = text(&output.stderr);
    let stderr = if stderr.is_empty() {
        text(&output.stdout)
    } else {
        stderr
    };
    GitError::Failed {
        command: describe(cmd),
        status: output.status.to_string(),
        stderr,
    }
}

/// For plumbing that answers "no" with exit 1 (`rev-parse --verify --quiet`, `config --get`,
/// `symbolic-ref --quiet`): exit 1 is `None`, anything else but success is a real error.
fn optional(cmd: &mut Command) -> Result<Option<String>, GitError> {
    let output = run(cmd)?;
    match output.status.code() {
        Some(0) => Ok(Some(text(&output.stdout))),
        Some(1) => Ok(None),
        _ => Err(failure(cmd, &output)),
    }
}

/// Runs with `input` on stdin. Fine for the small outputs of the commands that use it: stdin
/// is written in full before stdout is read.
fn with_input(cmd: &mut Command, input: &[u8]) -> io::Result<Output> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        // The child may exit before reading (bad flags, no auth); its own error then says why.
        let _ = stdin.write_all(input);
    }
    child.wait_with_output()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end().to_string()
}

// ---------------------------------------------------------------------------------------------
// Repository facts

/// Whether `dir` is inside a git working tree (a bare repository or `.git` itself is not).
pub fn is_repo(dir: &Path) -> bool {
    run(git(dir).args(["rev-parse", "--is-inside-work-tree"]))
        .is_ok_and(|output| output.status.success() && text(&output.stdout) == "true")
}

/// The root of the working tree that holds `dir`.
pub fn toplevel(dir: &Path) -> Result<PathBuf, GitError> {
    let output = checked(git(dir).args(["rev-parse", "--show-toplevel"]))?;
    // Raw bytes: a repository path need not be UTF-8.
    let mut raw = output.stdout;
    while raw.last() == Some(&b'\n') {
        raw.pop();
    }
    Ok(PathBuf::from(OsString::from_vec(raw)))
}

/// The checked-out branch, `None` when HEAD is detached.
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    // The full ref, not `--short`: a tag of the same name would make the short form ambiguous.
    let head = optional(git(dir).args(["symbolic-ref", "--quiet", "HEAD"]))?;
    Ok(head.map(|name| name.trim_start_matches("refs/heads/").to_string()))
}

/// The commit HEAD points at, `None` on an unborn branch (a repository without commits).
pub fn head_commit(dir: &Path) -> Result<Option<String>, GitError> {
    optional(git(dir).args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]))
}

fn commit_exists(dir: &Path, rev: &str) -> Result<bool, GitError> {
    let rev = format!("{rev}^{{commit}}");
    Ok(optional(git(dir).args(["rev-parse", "--verify", "--quiet", &rev]))?.is_some())
}

fn branch_exists(dir: &Path, branch: &str) -> Result<bool, GitError> {
    let reference = format!("refs/heads/{branch}");
    Ok(optional(git(dir).args(["rev-parse", "--verify", "--quiet", &reference]))?.is_some())
}

/// The base recorded when the story branch was created.
pub fn recorded_base(dir: &Path, branch: &str) -> Result<Option<String>, GitError> {
    let key = format!("branch.{branch}.{BASE_KEY}");
    optional(git(dir).args(["config", "--get", &key]))
}

fn record_base(dir: &Path, branch: &str, base: &str) -> Result<(), GitError> {
    let key = format!("branch.{branch}.{BASE_KEY}");
    checked(git(dir).args(["config", &key, base]))?;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Ignore paths

/// Ignore paths as repository-relative, `/`-separated strings, the form `git status` prints.
/// Absolute paths are accepted too and made relative to the working tree root.
fn normalize_ignore(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    let mut root = None;
    let mut normalized = Vec::new();
    for path in ignore {
        let relative = if path.is_absolute() {
            if root.is_none() {
                root = Some(toplevel(dir)?);
            }
            match strip_root(path, root.as_deref().unwrap_or(Path::new("/"))) {
                Some(relative) => relative,
                None => continue, // outside the repository: nothing there to ignore
            }
        } else {
            path.to_path_buf()
        };
        let parts: Vec<_> = relative
            .components()
            .filter_map(|part| match part {
                Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if !parts.is_empty() {
            normalized.push(parts.join("/"));
        }
    }
    Ok(normalized)
}

fn strip_root(path: &Path, root: &Path) -> Option<PathBuf> {
    if let Ok(relative) = path.strip_prefix(root) {
        return Some(relative.to_path_buf());
    }
    // git reports the real path; the caller may have given one through a symlink.
    let real = fs_err::canonicalize(path).ok()?;
    real.strip_prefix(root).ok().map(Path::to_path_buf)
}

fn is_ignored(path: &str, ignored: &[String]) -> bool {
    let path = path.trim_end_matches('/');
    ignored.iter().any(|ignore| {
        path == ignore
            || path
                .strip_prefix(ignore.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    })
}

/// Pathspecs for "the whole repository except the ignore paths". `top` makes them independent
/// of the folder git runs in; `literal` keeps a `*` in a name from acting as a glob.
fn whole_repo_pathspecs(ignored: &[String]) -> Vec<String> {
    let mut specs = vec![":/".to_string()];
    specs.extend(
        ignored
            .iter()
            .map(|path| format!(":(top,exclude,literal){path}")),
    );
    specs
}

// ---------------------------------------------------------------------------------------------
// Working tree state

/// Paths with uncommitted changes (staged, unstaged or untracked), relative to the repository
/// root, leaving out those under `ignore`. A rename reports both its new and its old path.
pub fn dirty_paths(dir: &Path, ignore: &[&Path]) -> Result<Vec<String>, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    // No optional locks: a status check must not fight the user's own git over index.lock.
    let output = checked(git(dir).env("GIT_OPTIONAL_LOCKS", "0").args([
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
    ]))?;
    Ok(parse_porcelain(&output.stdout)
        .into_iter()
        .filter(|path| !is_ignored(path, &ignored))
        .collect())
}

/// Reads `git status --porcelain=v1 -z`: entries `XY <path>`, NUL-terminated; a rename or copy
/// is followed by one more NUL-terminated field holding the source path.
fn parse_porcelain(raw: &[u8]) -> Vec<String> {
    let mut fields = raw
        .split(|byte| *byte == 0)
        .filter(|field| !field.is_empty());
    let mut paths = Vec::new();
    while let Some(entry) = fields.next() {
        if entry.len() < 4 {
            continue;
        }
        let (status, path) = (&entry[..2], &entry[3..]);
        paths.push(String::from_utf8_lossy(path).into_owned());
        if status.iter().any(|code| matches!(code, b'R' | b'C')) {
            let source = fields.next();
            // A rename changes its source; a copy leaves it as it was.
            if status.contains(&b'R') {
                paths.extend(source.map(|raw| String::from_utf8_lossy(raw).into_owned()));
            }
        }
    }
    paths
}

// ---------------------------------------------------------------------------------------------
// Story branches

pub fn story_branch(slug: &str) -> String {
    format!("{BRANCH_PREFIX}{slug}")
}

/// Puts the working tree on `agentic-sdlc/<slug>`, creating it from HEAD when missing.
///
/// A switch is refused while there are changes outside `ignore`, because checking out another
/// branch could carry or clobber the user's unfinished work.
pub fn ensure_story_branch(
    dir: &Path,
    slug: &str,
    ignore: &[&Path],
) -> Result<BranchSwitch, GitError> {
    let branch = story_branch(slug);
    let previous = current_branch(dir)?;
    if previous.as_deref() == Some(branch.as_str()) {
        let base = recorded_base(dir, &branch)?;
        return Ok(BranchSwitch {
            branch,
            created: false,
            base,
            previous: None,
        });
    }
    let head = head_commit(dir)?.ok_or_else(|| GitError::NoCommits {
        dir: dir.to_path_buf(),
    })?;
    let paths = dirty_paths(dir, ignore)?;
    if !paths.is_empty() {
        return Err(GitError::DirtyTree { branch, paths });
    }
    let created = create_branch_if_missing(dir, &branch, &head)?;
    checkout(dir, &branch)?;
    let base = recorded_base(dir, &branch)?;
    Ok(BranchSwitch {
        branch,
        created,
        base,
        previous,
    })
}

/// Checks out an existing branch. Changes outside the tool's own files must have been committed
/// first; git itself refuses a checkout that would overwrite them.
pub fn checkout(dir: &Path, branch: &str) -> Result<(), GitError> {
    checked(git(dir).args(["checkout", "--quiet", branch, "--"]))?;
    Ok(())
}

/// Creates `branch` at `head` and records `head` as its base, so the story's diff keeps its
/// starting point across restarts. Returns whether it was created.
fn create_branch_if_missing(dir: &Path, branch: &str, head: &str) -> Result<bool, GitError> {
    if branch_exists(dir, branch)? {
        return Ok(false);
    }
    checked(git(dir).args(["branch", "--quiet", branch, head]))?;
    record_base(dir, branch, head)?;
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// Review diff

/// The work of a story as one patch, for the reviewers.
///
/// With a recorded base for `branch` it is everything since that base (commits and uncommitted
/// changes); otherwise the uncommitted changes against HEAD. Untracked files are included as new
/// files. Paths under `ignore` are left out, and the text is cut to `max_bytes` with a note.
pub fn diff_for_review(
    dir: &Path,
    branch: Option<&str>,
    ignore: &[&Path],
    max_bytes: usize,
) -> Result<String, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    let pathspecs = whole_repo_pathspecs(&ignored);
    let base = review_base(dir, branch)?;
    let index = TempIndex::copy_of(dir)?;
    mark_untracked_as_new(dir, &index, &pathspecs)?;
    let output = checked(
        git(dir)
            .env("GIT_INDEX_FILE", index.path())
            .args([
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--find-renames",
                &base,
                "--",
            ])
            .args(&pathspecs),
    )?;
    Ok(cap_diff(
        &String::from_utf8_lossy(&output.stdout),
        max_bytes,
    ))
}

/// The commit (or, in a repository without commits, the empty tree) the diff starts from.
fn review_base(dir: &Path, branch: Option<&str>) -> Result<String, GitError> {
    if let Some(branch) = branch {
        if let Some(base) = recorded_base(dir, branch)? {
            // A base lost to history rewriting falls back to HEAD rather than failing.
            if commit_exists(dir, &base)? {
                return Ok(base);
            }
        }
    }
    match head_commit(dir)? {
        Some(head) => Ok(head),
        // Asked of git, not hard-coded: SHA-256 repositories have a different empty tree.
        None => Ok(text(
            &checked(git(dir).args(["hash-object", "-t", "tree", "/dev/null"]))?.stdout,
        )),
    }
}

/// Intent-to-add entries make `git diff` show untracked files as new files. They go into a copy
/// of the index so the user's staging area stays exactly as it was. Only untracked files are
/// named: `add --all -N` would also hash every modified file into the object store.
fn mark_untracked_as_new(
    dir: &Path,
    index: &TempIndex,
    pathspecs: &[String],
) -> Result<(), GitError> {
    let untracked = checked(
        git(dir)
            .args(["ls-files", "-z", "--others", "--exclude-standard", "--"])
            .args(pathspecs),
    )?;
    if untracked.stdout.is_empty() {
        return Ok(());
    }
    // The names go through stdin (no argument-length limit) and are taken literally, so a `*`
    // in a file name is not a glob.
    let mut add = git(dir);
    add.env("GIT_INDEX_FILE", index.path()).args([
        "--literal-pathspecs",
        "add",
        "--intent-to-add",
        "--pathspec-from-file=-",
        "--pathspec-file-nul",
    ]);
    let output = with_input(&mut add, &untracked.stdout).map_err(|source| GitError::Spawn {
        command: describe(&add),
        source,
    })?;
    if !output.status.success() {
        return Err(failure(&add, &output));
    }
    Ok(())
}

/// A private copy of the repository's index, deleted on drop.
struct TempIndex {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl TempIndex {
    fn copy_of(dir: &Path) -> Result<Self, GitError> {
        let real = PathBuf::from(text(
            &checked(git(dir).args(["rev-parse", "--git-path", "index"]))?.stdout,
        ));
        let real = dir.join(real); // --git-path answers relative to the working folder
        let temp = tempfile::tempdir().map_err(|source| GitError::Io {
            context: "could not create a temporary folder for the review index".into(),
            source,
        })?;
        let path = temp.path().join("index");
        // A repository that never staged anything has no index; git then starts a fresh one.
        if real.exists() {
            fs_err::copy(&real, &path).map_err(|source| GitError::Io {
                context: "could not copy the git index".into(),
                source,
            })?;
        }
        Ok(Self { _dir: temp, path })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Cuts a patch to `max_bytes` at a line end and says which files were left out, so reviewers
/// know the diff is partial rather than judging a truncated file.
fn cap_diff(diff: &str, max_bytes: usize) -> String {
    if diff.len() <= max_bytes {
        return diff.to_string();
    }
    let mut cut = max_bytes;
    while !diff.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(newline) = diff[..cut].rfind('\n') {
        cut = newline + 1;
    }
    let (shown, rest) = diff.split_at(cut);
    let left_out: Vec<&str> = rest
        .lines()
        .filter_map(|line| line.strip_prefix("diff --git a/"))
        .filter_map(|names| names.split(" b/").next())
        .collect();
    let mut note = format!(
        "\n[diff cut: showing {cut} of {} bytes to fit the review budget",
        diff.len()
    );
    if !left_out.is_empty() {
        let named: Vec<&str> = left_out.iter().take(CUT_FILES_CAP).copied().collect();
        note.push_str(&format!("; files not shown: {}", named.join(", ")));
        if left_out.len() > CUT_FILES_CAP {
            note.push_str(&format!(" and {} more", left_out.len() - CUT_FILES_CAP));
        }
    }
    note.push_str("]\n");
    format!("{shown}{note}")
}

// ---------------------------------------------------------------------------------------------
// Commits

/// Stages every change outside `ignore` and commits it. Returns the new commit, or `None` when
/// there was nothing to commit. Changes the user staged under `ignore` themselves stay staged and
/// are committed with the rest; the tool only never stages them on its own.
pub fn commit_all(dir: &Path, message: &str, ignore: &[&Path]) -> Result<Option<String>, GitError> {
    let ignored = normalize_ignore(dir, ignore)?;
    let pathspecs = whole_repo_pathspecs(&ignored);
    checked(git(dir).args(["add", "--all", "--"]).args(&pathspecs))?;
    let staged = run(git(dir)
        .args(["diff", "--cached", "--quiet", "--"])
        .args(&pathspecs))?;
    if staged.status.success() {
        return Ok(None);
    }
    let mut commit = git(dir);
    if !identity_configured(dir)? {
        commit.args(FALLBACK_IDENTITY);
    }
    // Hooks run: a repository's pre-commit policy applies to the tool as to anyone.
    checked(commit.args(["commit", "--quiet", "-m", message]))?;
    head_commit(dir)
}

fn identity_configured(dir: &Path) -> Result<bool, GitError> {
    for key in ["user.name", "user.email"] {
        let value = optional(git(dir).args(["config", "--get", key]))?;
        if value.is_none_or(|value| value.is_empty()) {
            return Ok(false);
        }
    }
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// Worktrees

/// A working tree of the repository as `git worktree list --porcelain` describes it.
struct WorktreeEntry {
    path: PathBuf,
    branch: Option<String>,
}

/// Gives the story its own working tree at `<worktrees_dir>/<slug>` on `agentic-sdlc/<slug>`,
/// so parallel implement actions do not share files. A relative `worktrees_dir` is taken from
/// `repo`. An existing worktree of this repository on that branch is reused.
pub fn ensure_worktree(repo: &Path, worktrees_dir: &Path, slug: &str) -> Result<PathBuf, GitError> {
    let branch = story_branch(slug);
    let path = absolute(&repo.join(worktrees_dir).join(slug))?;
    if path.exists() {
        return reuse_worktree(repo, path, branch);
    }
    let head = head_commit(repo)?.ok_or_else(|| GitError::NoCommits {
        dir: repo.to_path_buf(),
    })?;
    // A worktree folder deleted by hand stays registered and would block `worktree add`.
    checked(git(repo).args(["worktree", "prune"]))?;
    create_branch_if_missing(repo, &branch, &head)?;
    checked(
        git(repo)
            .args(["worktree", "add", "--quiet"])
            .arg(&path)
            .arg(&branch),
    )?;
    Ok(path)
}

fn reuse_worktree(repo: &Path, path: PathBuf, branch: String) -> Result<PathBuf, GitError> {
    let real = fs_err::canonicalize(&path).map_err(|source| GitError::Io {
        context: "could not resolve the worktree path".into(),
        source,
    })?;
    let registered = worktree_entries(repo)?
        .into_iter()
        .find(|entry| fs_err::canonicalize(&entry.path).is_ok_and(|p| p == real));
    let reason = match registered {
        Some(entry) if entry.branch.as_deref() == Some(branch.as_str()) && is_repo(&path) => {
            return Ok(path)
        }
        Some(entry) => match entry.branch {
            Some(other) if other != branch => format!("it is a worktree on branch {other}"),
            _ => "it is a worktree that is broken or not on a branch".to_string(),
        },
        None => "the folder exists and is not a worktree of this repository".to_string(),
    };
    Err(GitError::WorktreePathTaken {
        path,
        branch,
        reason,
    })
}

fn absolute(path: &Path) -> Result<PathBuf, GitError> {
    std::path::absolute(path).map_err(|source| GitError::Io {
        context: format!("could not make {} absolute", path.display()),
        source,
    })
}

/// Removes a story's worktree, changes and all (its commits stay on the branch), and forgets
/// worktrees whose folders are gone. A path that no longer exists is not an error.
pub fn remove_worktree(repo: &Path, path: &Path) -> Result<(), GitError> {
    if path.exists() {
        checked(git(repo).args(["worktree", "remove", "--force"]).arg(path))?;
    }
    checked(git(repo).args(["worktree", "prune"]))?;
    Ok(())
}

/// Every working tree of the repository, the main one first (git's order).
pub fn list_worktrees(repo: &Path) -> Result<Vec<PathBuf>, GitError> {
    Ok(worktree_entries(repo)?
        .into_iter()
        .map(|entry| entry.path)
        .collect())
}

fn worktree_entries(repo: &Path) -> Result<Vec<WorktreeEntry>, GitError> {
    let output = checked(git(repo).args(["worktree", "list", "--porcelain"]))?;
    let mut entries: Vec<WorktreeEntry> = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            entries.push(WorktreeEntry {
                path: PathBuf::from(path),
                branch: None,
            });
        } else if let (Some(reference), Some(entry)) =
            (line.strip_prefix("branch "), entries.last_mut())
        {
            entry.branch = Some(reference.trim_start_matches("refs/heads/").to_string());
        }
    }
    Ok(entries)
}

// ---------------------------------------------------------------------------------------------
// Pull requests

/// Pushes `branch` to `origin` and makes it the upstream.
pub fn push_branch(dir: &Path, branch: &str) -> Result<(), GitError> {
    let remotes = checked(git(dir).arg("remote"))?;
    if !text(&remotes.stdout).lines().any(|name| name == "origin") {
        return Err(GitError::NoRemote {
            branch: branch.to_string(),
        });
    }
    // The full refspec: a tag with the branch's name must not be pushed instead.
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    // No credential prompt: nobody may be watching, and a prompt would hang the run.
    checked(git(dir).env("GIT_TERMINAL_PROMPT", "0").args([
        "push",
        "--quiet",
        "--set-upstream",
        "origin",
        &refspec,
    ]))?;
    Ok(())
}

/// Whether the GitHub CLI can be started.
pub fn gh_available() -> bool {
    command("gh")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Opens a pull request for `branch` with `gh pr create` and returns its URL. The body goes
/// through stdin, so its size and characters do not matter.
pub fn create_pull_request(
    dir: &Path,
    branch: &str,
    title: &str,
    body: &str,
) -> Result<String, GitError> {
    let mut cmd = command("gh");
    cmd.current_dir(dir)
        .env("GH_PROMPT_DISABLED", "1")
        .args(["pr", "create", "--head", branch, "--title", title])
        .args(["--body-file", "-"]);
    let output = match with_input(&mut cmd, body.as_bytes()) {
        // A missing working folder is also NotFound; only blame gh when the folder is there.
        Err(source) if source.kind() == io::ErrorKind::NotFound && dir.is_dir() => {
            return Err(GitError::GhMissing)
        }
        Err(source) => {
            return Err(GitError::Spawn {
                command: describe(&cmd),
                source,
            })
        }
        Ok(output) => output,
    };
    if !output.status.success() {
        return Err(failure(&cmd, &output));
    }
    pull_request_url(&output.stdout)
}

/// gh prints progress lines before the URL; the URL is the last line starting with http.
fn pull_request_url(stdout: &[u8]) -> Result<String, GitError> {
    let output = text(stdout);
    let url = output
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| line.starts_with("http"))
        .map(str::to_string);
    url.ok_or(GitError::PrUrlMissing { output })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::os::unix::fs::PermissionsExt;
    use tempfile::TempDir;

    thread_local! {
        /// Extra environment for the commands this test thread spawns; the process environment
        /// is never touched, so tests running in parallel cannot see each other's settings.
        static EXTRA_ENV: RefCell<Vec<(OsString, OsString)>> = const { RefCell::new(Vec::new()) };
    }

    /// Isolates every spawned git from the machine's global and system config, so a user's
    /// aliases, hooks path or default branch cannot change what the tests see.
    pub(super) fn apply_test_env(cmd: &mut Command) {
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1");
        // Running inside a git hook or with an identity exported would redirect or rename
        // everything the tests do.
        for key in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "EMAIL",
        ] {
            cmd.env_remove(key);
        }
        EXTRA_ENV.with(|extra| {
            for (key, value) in extra.borrow().iter() {
                cmd.env(key, value);
            }
        });
    }

    fn with_env<T>(key: &str, value: impl Into<OsString>, body: impl FnOnce() -> T) -> T {
        EXTRA_ENV.with(|extra| extra.borrow_mut().push((key.into(), value.into())));
        let result = body();
        EXTRA_ENV.with(|extra| extra.borrow_mut().clear());
        result
    }

    const BOARD: &str = ".agentic-sdlc";
    const CONFIG: &str = ".agentic-sdlc.json";

    fn board() -> [&'static Path; 2] {
        [Path::new(BOARD), Path::new(CONFIG)]
    }

    fn sh(dir: &Path, args: &[&str]) -> String {
        let output = checked(git(dir).args(args)).unwrap_or_else(|e| panic!("{e}"));
        text(&output.stdout)
    }

    fn write(dir: &Path, path: &str, content: &str) {
        let path = dir.join(path);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, content).unwrap();
    }

    /// An empty repository with a local identity and no commits.
    fn unborn_repo() -> TempDir {
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), &["init", "-q", "-b", "main"]);
        sh(dir.path(), &["config", "user.name", "Test Person"]);
        sh(dir.path(), &["config", "user.email", "test@example.com"]);
        dir
    }

    /// A repository with one commit holding a source file, a story and the config.
    fn repo() -> TempDir {
        let dir = unborn_repo();
        write(dir.path(), "src/lib.rs", "fn one() {}\n");
        write(dir.path(), ".agentic-sdlc/backlog/story.md", "# Story\n");
        write(dir.path(), CONFIG, "{}\n");
        sh(dir.path(), &["add", "-A"]);
        sh(dir.path(), &["commit", "-q", "-m", "initial"]);
        dir
    }

    #[test]
    fn repository_facts() {
        let dir = repo();
        let plain = tempfile::tempdir().unwrap();
        assert!(is_repo(dir.path()));
        assert!(!is_repo(plain.path()));
        let root = fs_err::canonicalize(dir.path()).unwrap();
        assert_eq!(toplevel(&dir.path().join("src")).unwrap(), root);
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));
        let head = head_commit(dir.path()).unwrap().unwrap();
        assert_eq!(head.len(), 40);
        sh(dir.path(), &["checkout", "-q", "--detach"]);
        assert_eq!(current_branch(dir.path()).unwrap(), None);
        assert!(toplevel(plain.path()).is_err());
    }

    #[test]
    fn head_commit_is_none_on_an_unborn_branch() {
        let dir = unborn_repo();
        assert_eq!(head_commit(dir.path()).unwrap(), None);
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));
    }

    #[test]
    fn porcelain_entries_are_parsed() {
        let cases: &[(&[u8], &[&str])] = &[
            (b"", &[]),
            (b" M src/a.rs\0", &["src/a.rs"]),
            (b"?? new file.txt\0", &["new file.txt"]),
            (b"R  new.rs\0old.rs\0?? x\0", &["new.rs", "old.rs", "x"]),
            (b"C  copy.rs\0orig.rs\0 D gone\0", &["copy.rs", "gone"]),
            (b"RM moved\0from\0", &["moved", "from"]),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                parse_porcelain(raw),
                *expected,
                "{:?}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn ignore_matches_whole_path_components() {
        let ignored = vec![BOARD.to_string(), CONFIG.to_string()];
        assert!(is_ignored(".agentic-sdlc", &ignored));
        assert!(is_ignored(".agentic-sdlc/ready/a.md", &ignored));
        assert!(is_ignored(".agentic-sdlc/", &ignored));
        assert!(is_ignored(".agentic-sdlc.json", &ignored));
        assert!(!is_ignored(".agentic-sdlc.json.bak", &ignored));
        assert!(!is_ignored(".agentic-sdlcx/a", &ignored));
    }

    #[test]
    fn dirty_paths_leave_out_the_board_and_config() {
        let dir = repo();
        assert!(dirty_paths(dir.path(), &board()).unwrap().is_empty());
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nedited\n",
        );
        write(dir.path(), ".agentic-sdlc/ready/new.md", "# New\n");
        write(dir.path(), CONFIG, "{\"concurrency\": 2}\n");
        assert!(dirty_paths(dir.path(), &board()).unwrap().is_empty());
        write(dir.path(), "src/lib.rs", "fn two() {}\n");
        write(dir.path(), "docs/deep/note.md", "note\n");
        let mut paths = dirty_paths(dir.path(), &board()).unwrap();
        paths.sort();
        assert_eq!(paths, ["docs/deep/note.md", "src/lib.rs"]);
        // Without ignore paths the board shows up, proving the filter is what hides it.
        assert_eq!(dirty_paths(dir.path(), &[]).unwrap().len(), 5);
    }

    #[test]
    fn dirty_paths_accept_absolute_ignore_paths_and_run_from_subfolders() {
        let dir = repo();
        write(dir.path(), ".agentic-sdlc/backlog/story.md", "changed\n");
        let absolute = dir.path().join(BOARD);
        let paths = dirty_paths(&dir.path().join("src"), &[absolute.as_path()]).unwrap();
        assert!(paths.is_empty(), "{paths:?}");
    }

    #[test]
    fn dirty_paths_report_both_sides_of_a_rename() {
        let dir = repo();
        sh(dir.path(), &["mv", "src/lib.rs", "src/main.rs"]);
        sh(
            dir.path(),
            &[
                "mv",
                ".agentic-sdlc/backlog/story.md",
                ".agentic-sdlc/story.md",
            ],
        );
        let mut paths = dirty_paths(dir.path(), &board()).unwrap();
        paths.sort();
        assert_eq!(paths, ["src/lib.rs", "src/main.rs"]);
    }

    #[test]
    fn story_branch_is_created_from_head_with_its_base_recorded() {
        let dir = repo();
        let head = head_commit(dir.path()).unwrap();
        let switch = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert_eq!(
            switch,
            BranchSwitch {
                branch: "agentic-sdlc/dark-mode".into(),
                created: true,
                base: head.clone(),
                previous: Some("main".into()),
            }
        );
        assert_eq!(
            current_branch(dir.path()).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
        // Already on it: nothing happens, and the base survives (it lives in git config).
        let again = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert!(!again.created);
        assert_eq!(again.base, head);
        // Back from another branch: the existing branch is checked out, not recreated.
        sh(dir.path(), &["checkout", "-q", "main"]);
        let back = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert!(!back.created);
        assert_eq!(back.base, head);
        assert_eq!(
            current_branch(dir.path()).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
    }

    #[test]
    fn story_branch_is_refused_on_a_dirty_tree() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn unsaved_work() {}\n");
        let error = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap_err();
        assert!(
            matches!(&error, GitError::DirtyTree { paths, .. } if paths == &["src/lib.rs"]),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("agentic-sdlc/dark-mode"), "{message}");
        assert!(message.contains("src/lib.rs"), "{message}");
        assert!(message.contains("commit or stash them"), "{message}");
        assert!(message.contains("git.branchPerStory to false"), "{message}");
        // The user's work is where it was.
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));
        let content = fs_err::read_to_string(dir.path().join("src/lib.rs")).unwrap();
        assert_eq!(content, "fn unsaved_work() {}\n");
    }

    #[test]
    fn dirty_tree_message_lists_at_most_ten_paths() {
        let paths: Vec<String> = (0..13).map(|n| format!("file{n}")).collect();
        let message = dirty_message("agentic-sdlc/x", &paths);
        assert!(message.contains("13 path(s)"));
        assert!(message.contains("file9"));
        assert!(!message.contains("file10"));
        assert!(message.contains("… and 3 more"));
    }

    #[test]
    fn board_changes_do_not_block_the_story_branch() {
        let dir = repo();
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nstatus\n",
        );
        write(
            dir.path(),
            ".agentic-sdlc/in-progress/other.md",
            "# Other\n",
        );
        write(dir.path(), CONFIG, "{\"theme\": \"dark\"}\n");
        let switch = ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        assert!(switch.created);
        // The board edits came along untouched.
        let story = fs_err::read_to_string(dir.path().join(".agentic-sdlc/backlog/story.md"));
        assert_eq!(story.unwrap(), "# Story\nstatus\n");
    }

    #[test]
    fn story_branch_needs_a_first_commit() {
        let dir = unborn_repo();
        let error = ensure_story_branch(dir.path(), "x", &board()).unwrap_err();
        assert!(matches!(error, GitError::NoCommits { .. }), "{error:?}");
        assert!(error.to_string().contains("no commits yet"));
    }

    #[test]
    fn review_diff_covers_the_story_since_its_base_without_the_board() {
        let dir = repo();
        ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        write(dir.path(), "src/committed.rs", "fn committed() {}\n");
        commit_all(dir.path(), "first step", &board()).unwrap();
        write(dir.path(), "src/lib.rs", "fn one() {}\nfn modified() {}\n");
        write(dir.path(), "src/untracked.rs", "fn brand_new() {}\n");
        write(dir.path(), "src/star*.rs", "fn starred() {}\n");
        write(dir.path(), ".agentic-sdlc/ready/new.md", "# New story\n");
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nboard edit\n",
        );
        write(dir.path(), CONFIG, "{\"theme\": \"dark\"}\n");
        let branch = story_branch("dark-mode");
        let diff = diff_for_review(dir.path(), Some(&branch), &board(), 1 << 20).unwrap();
        assert!(diff.contains("fn committed()"), "{diff}");
        assert!(diff.contains("+fn modified()"), "{diff}");
        assert!(diff.contains("b/src/untracked.rs"), "{diff}");
        assert!(diff.contains("+fn brand_new()"), "{diff}");
        assert!(diff.contains("+fn starred()"), "{diff}");
        assert!(!diff.contains("board edit"), "{diff}");
        assert!(!diff.contains("New story"), "{diff}");
        assert!(!diff.contains(CONFIG), "{diff}");
        // The user's index is untouched: nothing staged, the new file still untracked.
        assert_eq!(sh(dir.path(), &["diff", "--cached", "--name-only"]), "");
        let untracked = sh(dir.path(), &["ls-files", "--others", "--exclude-standard"]);
        assert!(untracked.contains("src/untracked.rs"), "{untracked}");
    }

    #[test]
    fn review_diff_without_a_base_is_the_uncommitted_work() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        write(dir.path(), "notes.txt", "new\n");
        write(dir.path(), "gone.txt", "old\n");
        sh(dir.path(), &["add", "gone.txt"]);
        sh(dir.path(), &["commit", "-q", "-m", "gone"]);
        fs_err::remove_file(dir.path().join("gone.txt")).unwrap();
        fs_err::remove_file(dir.path().join(".agentic-sdlc/backlog/story.md")).unwrap();
        let diff = diff_for_review(dir.path(), None, &board(), 1 << 20).unwrap();
        assert!(diff.contains("+fn changed()"), "{diff}");
        assert!(diff.contains("+new"), "{diff}");
        assert!(diff.contains("deleted file mode"), "{diff}");
        assert!(diff.contains("-old"), "{diff}");
        assert!(!diff.contains("story.md"), "{diff}");
        // Unknown branch: no recorded base, so the same uncommitted view.
        let unknown = diff_for_review(dir.path(), Some("agentic-sdlc/nope"), &board(), 1 << 20);
        assert_eq!(unknown.unwrap(), diff);
    }

    #[test]
    fn review_diff_works_before_the_first_commit() {
        let dir = unborn_repo();
        write(dir.path(), "a.txt", "hello\n");
        let diff = diff_for_review(dir.path(), None, &board(), 1 << 20).unwrap();
        assert!(diff.contains("+hello"), "{diff}");
    }

    #[test]
    fn review_diff_is_cut_to_the_budget_with_a_note() {
        let dir = repo();
        for n in 0..5 {
            write(dir.path(), &format!("file{n}.txt"), &"line\n".repeat(100));
        }
        let diff = diff_for_review(dir.path(), None, &board(), 800).unwrap();
        let (shown, note) = diff.split_once("\n[diff cut: ").expect("a cut note");
        assert!(shown.len() <= 800);
        assert!(note.contains("files not shown: "), "{note}");
        assert!(note.contains("file4.txt"), "{note}");
    }

    #[test]
    fn cap_diff_respects_character_boundaries() {
        let diff = "é".repeat(10);
        let cut = cap_diff(&diff, 5);
        assert!(
            cut.starts_with("éé\n[diff cut: showing 4 of 20 bytes"),
            "{cut}"
        );
        assert_eq!(cap_diff("short", 100), "short");
    }

    #[test]
    fn commit_all_commits_everything_but_the_board() {
        let dir = repo();
        write(dir.path(), "src/lib.rs", "fn changed() {}\n");
        write(dir.path(), "src/new.rs", "fn new() {}\n");
        write(
            dir.path(),
            ".agentic-sdlc/backlog/story.md",
            "# Story\nboard\n",
        );
        let sha = commit_all(dir.path(), "Implement the story", &board()).unwrap();
        assert_eq!(sha, head_commit(dir.path()).unwrap());
        let files = sh(
            dir.path(),
            &["show", "--name-only", "--format=%an|%s", "HEAD"],
        );
        assert_eq!(
            files,
            "Test Person|Implement the story\n\nsrc/lib.rs\nsrc/new.rs"
        );
        assert_eq!(
            dirty_paths(dir.path(), &[]).unwrap(),
            [".agentic-sdlc/backlog/story.md"]
        );
        assert_eq!(commit_all(dir.path(), "again", &board()).unwrap(), None);
    }

    #[test]
    fn commit_all_falls_back_to_its_own_identity() {
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), &["init", "-q", "-b", "main"]);
        write(dir.path(), "a.txt", "a\n");
        let sha = commit_all(dir.path(), "first", &[]).unwrap();
        assert!(sha.is_some());
        let author = sh(dir.path(), &["log", "-1", "--format=%an <%ae>"]);
        assert_eq!(author, "agentic-sdlc <agentic-sdlc@localhost>");
    }

    #[test]
    fn worktrees_are_created_reused_listed_and_removed() {
        let dir = repo();
        let trees = tempfile::tempdir().unwrap();
        let path = ensure_worktree(dir.path(), trees.path(), "dark-mode").unwrap();
        assert_eq!(path, trees.path().join("dark-mode"));
        assert!(path.join("src/lib.rs").exists());
        assert_eq!(
            current_branch(&path).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
        let base = recorded_base(dir.path(), "agentic-sdlc/dark-mode").unwrap();
        assert_eq!(base, head_commit(dir.path()).unwrap());
        // The main working tree stays on its branch.
        assert_eq!(current_branch(dir.path()).unwrap().as_deref(), Some("main"));

        write(&path, "src/wip.rs", "work in progress\n");
        let reused = ensure_worktree(dir.path(), trees.path(), "dark-mode").unwrap();
        assert_eq!(reused, path);
        assert!(path.join("src/wip.rs").exists(), "reuse must keep the work");

        let listed: Vec<PathBuf> = list_worktrees(dir.path())
            .unwrap()
            .iter()
            .map(|p| fs_err::canonicalize(p).unwrap())
            .collect();
        assert_eq!(listed.len(), 2);
        assert!(listed.contains(&fs_err::canonicalize(&path).unwrap()));

        remove_worktree(dir.path(), &path).unwrap();
        assert!(!path.exists());
        assert_eq!(list_worktrees(dir.path()).unwrap().len(), 1);
        remove_worktree(dir.path(), &path).unwrap(); // already gone: fine
                                                     // The branch, and so the committed work, is kept; a new worktree picks it up again.
        let again = ensure_worktree(dir.path(), trees.path(), "dark-mode").unwrap();
        assert_eq!(
            current_branch(&again).unwrap().as_deref(),
            Some("agentic-sdlc/dark-mode")
        );
    }

    #[test]
    fn worktree_folder_deleted_by_hand_is_recreated() {
        let dir = repo();
        let trees = tempfile::tempdir().unwrap();
        let path = ensure_worktree(dir.path(), trees.path(), "a").unwrap();
        fs_err::remove_dir_all(&path).unwrap();
        let again = ensure_worktree(dir.path(), trees.path(), "a").unwrap();
        assert!(is_repo(&again));
    }

    #[test]
    fn worktree_path_holding_something_else_is_refused() {
        let dir = repo();
        let trees = tempfile::tempdir().unwrap();
        write(trees.path(), "taken/file.txt", "mine\n");
        let error = ensure_worktree(dir.path(), trees.path(), "taken").unwrap_err();
        assert!(
            matches!(error, GitError::WorktreePathTaken { .. }),
            "{error:?}"
        );
        assert!(error.to_string().contains("not a worktree"), "{error}");
        assert!(trees.path().join("taken/file.txt").exists());
    }

    #[test]
    fn push_without_origin_is_a_clear_error() {
        let dir = repo();
        let error = push_branch(dir.path(), "main").unwrap_err();
        assert!(matches!(error, GitError::NoRemote { .. }), "{error:?}");
        assert!(
            error.to_string().contains("git remote add origin"),
            "{error}"
        );
    }

    #[test]
    fn push_to_a_bare_origin_sets_the_upstream() {
        let dir = repo();
        let origin = tempfile::tempdir().unwrap();
        sh(origin.path(), &["init", "-q", "--bare"]);
        let url = origin.path().to_string_lossy().into_owned();
        sh(dir.path(), &["remote", "add", "origin", &url]);
        ensure_story_branch(dir.path(), "dark-mode", &board()).unwrap();
        push_branch(dir.path(), "agentic-sdlc/dark-mode").unwrap();
        let pushed = sh(
            origin.path(),
            &["rev-parse", "refs/heads/agentic-sdlc/dark-mode"],
        );
        assert_eq!(Some(pushed), head_commit(dir.path()).unwrap());
        let upstream = sh(dir.path(), &["rev-parse", "--abbrev-ref", "@{upstream}"]);
        assert_eq!(upstream, "origin/agentic-sdlc/dark-mode");
    }

    #[test]
    fn missing_gh_is_a_clear_error() {
        let dir = repo();
        let empty = tempfile::tempdir().unwrap();
        let path = empty.path().as_os_str().to_owned();
        assert!(!with_env("PATH", path.clone(), gh_available));
        let error = with_env("PATH", path, || {
            create_pull_request(dir.path(), "agentic-sdlc/x", "Title", "Body")
        })
        .unwrap_err();
        assert!(matches!(error, GitError::GhMissing), "{error:?}");
        assert!(error.to_string().contains("cli.github.com"), "{error}");
    }

    #[test]
    fn pull_request_goes_through_gh_with_the_body_on_stdin() {
        let dir = repo();
        let bin = tempfile::tempdir().unwrap();
        let record = bin.path().join("record");
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}.args'\ncat > '{0}.body'\n\
             echo 'Creating pull request for agentic-sdlc/x into main'\n\
             echo 'https://github.com/o/r/pull/7'\n",
            record.display()
        );
        let gh = bin.path().join("gh");
        fs_err::write(&gh, script).unwrap();
        fs_err::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = format!("{}:/usr/bin:/bin", bin.path().display());
        let body = "## Summary\nIt's \"quoted\" & $(not run)\n";
        let url = with_env("PATH", path, || {
            retry_text_file_busy(|| {
                create_pull_request(dir.path(), "agentic-sdlc/x", "Add it", body)
            })
        })
        .unwrap();
        assert_eq!(url, "https://github.com/o/r/pull/7");
        let args = fs_err::read_to_string(bin.path().join("record.args")).unwrap();
        assert_eq!(
            args,
            "pr\ncreate\n--head\nagentic-sdlc/x\n--title\nAdd it\n--body-file\n-\n"
        );
        let sent = fs_err::read_to_string(bin.path().join("record.body")).unwrap();
        assert_eq!(sent, body);
    }

    /// A script written by this process can be briefly held open by a child another test thread
    /// forked, and exec then fails with ETXTBSY; that is the test harness, not the code.
    fn retry_text_file_busy<T>(call: impl Fn() -> Result<T, GitError>) -> Result<T, GitError> {
        for _ in 0..20 {
            match call() {
                Err(GitError::Spawn { source, .. })
                    if source.kind() == io::ErrorKind::ExecutableFileBusy =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                other => return other,
            }
        }
        call()
    }

    #[test]
    fn pull_request_url_is_the_last_http_line() {
        let url = pull_request_url(b"Warning: 1 uncommitted change\nhttps://x/pull/1\n").unwrap();
        assert_eq!(url, "https://x/pull/1");
        let error = pull_request_url(b"nothing useful\n").unwrap_err();
        assert!(matches!(error, GitError::PrUrlMissing { .. }));
    }
}
