//! Talking to a git remote: the few network commands that `run --remote` needs (docs/design.md
//! §20).
//!
//! Every command here crosses the network, so each is bounded by a timeout (a hung server must
//! not hang a night's run) and never prompts: stdin is closed and `GIT_TERMINAL_PROMPT=0`
//! makes a missing credential an error instead of a question nobody answers.
//!
//! Pushes are compare-and-swap: every ref a push changes names the value it expects to find
//! (`--force-with-lease=<ref>:<expected>`, an empty value meaning "must not exist"), and the
//! server checks it under its ref lock. Several refs go in one `--atomic` push, so a merge and
//! the release of its story's claim land together or not at all.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::command::{checked, describe, git, git_with, optional, text};
use super::error::GitError;

/// Where the claims live on the remote: one ref per story.
pub const CLAIMS_NAMESPACE: &str = "refs/agentic-sdlc/claims/";

/// The local copy of a remote's claims, refreshed (and pruned) by every [`fetch`].
pub fn claims_mirror(remote: &str) -> String {
    format!("refs/agentic-sdlc/remote/{remote}/claims/")
}

/// The remote-tracking ref of the remote's base branch, as `git fetch` would name it.
pub fn tracking_ref(remote: &str, base: &str) -> String {
    format!("refs/remotes/{remote}/{base}")
}

/// A remote as `git remote` knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTarget {
    pub name: String,
    pub url: String,
}

/// The URL of remote `name`, or [`GitError::NoSuchRemote`].
pub fn remote_target(dir: &Path, name: &str) -> Result<RemoteTarget, GitError> {
    let key = format!("remote.{name}.url");
    match optional(git(dir, "config").args(["--get", &key]))? {
        Some(url) if !url.is_empty() => Ok(RemoteTarget {
            name: name.to_string(),
            url,
        }),
        _ => Err(GitError::NoSuchRemote {
            remote: name.to_string(),
        }),
    }
}

/// A network git command: no prompts, no background maintenance after a fetch.
fn network(dir: &Path, subcommand: &str) -> Command {
    let mut cmd = git_with(dir, &["gc.auto=0", "maintenance.auto=false"], subcommand);
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    cmd
}

/// Runs `cmd`, killing its whole process group (git, ssh, a remote helper) once `timeout` has
/// passed.
fn run_bounded(cmd: &mut Command, timeout: Duration) -> Result<Output, GitError> {
    use std::os::unix::process::CommandExt;
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let child = cmd.spawn().map_err(|source| GitError::Spawn {
        command: describe(cmd),
        source,
    })?;
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let expired = matches!(
            finished.recv_timeout(timeout),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        if expired {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
        expired
    });
    let output = child.wait_with_output();
    let _ = done.send(());
    let expired = watchdog.join().unwrap_or(false);
    if expired {
        return Err(GitError::RemoteTimedOut {
            command: describe(cmd),
            seconds: timeout.as_secs(),
        });
    }
    output.map_err(|source| GitError::Spawn {
        command: describe(cmd),
        source,
    })
}

/// Turns a failed network command into what went wrong, read from git's (and ssh's, or the
/// HTTP helper's) own words.
fn network_failure(target: &RemoteTarget, cmd: &Command, output: &Output) -> GitError {
    let stderr = text(&output.stderr);
    let lower = stderr.to_lowercase();
    let detail = first_meaningful_line(&stderr);
    const CREDENTIALS: [&str; 8] = [
        "permission denied",
        "authentication failed",
        "could not read username",
        "could not read password",
        "invalid username or password",
        "the requested url returned error: 401",
        "the requested url returned error: 403",
        "access denied",
    ];
    const UNREACHABLE: [&str; 9] = [
        "could not read from remote repository",
        "does not appear to be a git repository",
        "could not resolve host",
        "connection refused",
        "connection timed out",
        "failed to connect",
        "no route to host",
        "repository not found",
        "the remote end hung up",
    ];
    if CREDENTIALS.iter().any(|needle| lower.contains(needle)) {
        GitError::RemoteCredentials {
            remote: target.name.clone(),
            url: target.url.clone(),
            detail,
        }
    } else if lower.contains("does not support --atomic") {
        GitError::RemoteNotAtomic {
            remote: target.name.clone(),
            url: target.url.clone(),
        }
    } else if UNREACHABLE.iter().any(|needle| lower.contains(needle))
        || output.status.code() == Some(128)
    {
        GitError::RemoteUnreachable {
            remote: target.name.clone(),
            url: target.url.clone(),
            detail,
        }
    } else {
        GitError::Failed {
            command: describe(cmd),
            status: output.status.to_string(),
            stderr,
        }
    }
}

/// The line of git's error output that says what happened: ssh's or the server's own message
/// rather than git's generic "fatal: Could not read from remote repository".
fn first_meaningful_line(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let generic = |line: &str| {
        let lower = line.to_lowercase();
        lower.contains("could not read from remote repository")
            || lower.starts_with("please make sure")
            || lower.starts_with("and the repository exists")
            || lower.contains("the remote end hung up")
    };
    lines
        .iter()
        .find(|line| !generic(line))
        .or(lines.first())
        .map(|line| line.trim_start_matches("fatal: ").to_string())
        .unwrap_or_else(|| "no output".to_string())
}

/// Checks, without changing anything on the remote, that it answers, takes this clone's
/// credentials for a push, and supports atomic pushes: a push `--dry-run` talks to the
/// receiving side and stops before sending anything.
pub fn probe_push(
    dir: &Path,
    target: &RemoteTarget,
    commit: &str,
    timeout: Duration,
) -> Result<(), GitError> {
    let probe = format!("{commit}:refs/agentic-sdlc/probe");
    let mut cmd = network(dir, "push");
    cmd.args(["--dry-run", "--atomic", "--porcelain", "--quiet"])
        .arg(&target.name)
        .arg(&probe);
    let output = run_bounded(&mut cmd, timeout)?;
    if output.status.success() {
        return Ok(());
    }
    Err(network_failure(target, &cmd, &output))
}

/// What a fetch of the remote's base and claims found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The remote base branch's tip.
    pub base_tip: String,
}

/// The refspec that mirrors every claim of `remote`, pruned with the fetch.
fn claims_refspec(remote: &str) -> String {
    format!("+{CLAIMS_NAMESPACE}*:{}*", claims_mirror(remote))
}

/// One fetch of `refspecs`, pruning what they mirror; the command's output, successful or not.
fn fetch_refspecs(
    dir: &Path,
    target: &RemoteTarget,
    refspecs: &[String],
    timeout: Duration,
) -> Result<(Command, Output), GitError> {
    let mut cmd = network(dir, "fetch");
    cmd.args([
        "--quiet",
        "--prune",
        "--no-tags",
        "--no-write-fetch-head",
        "--no-recurse-submodules",
    ])
    .arg(&target.name)
    .args(refspecs);
    let output = run_bounded(&mut cmd, timeout)?;
    Ok((cmd, output))
}

/// Fetches the remote's base branch and every claim in one connection. The claims land in
/// [`claims_mirror`], pruned, so a released claim disappears locally too.
pub fn fetch(
    dir: &Path,
    target: &RemoteTarget,
    base: &str,
    timeout: Duration,
) -> Result<Fetched, GitError> {
    let tracking = tracking_ref(&target.name, base);
    let refspecs = [
        format!("+refs/heads/{base}:{tracking}"),
        claims_refspec(&target.name),
    ];
    let (cmd, output) = fetch_refspecs(dir, target, &refspecs, timeout)?;
    if !output.status.success() {
        if text(&output.stderr).contains("couldn't find remote ref") {
            return Err(GitError::RemoteBaseMissing {
                remote: target.name.clone(),
                branch: base.to_string(),
            });
        }
        return Err(network_failure(target, &cmd, &output));
    }
    let tip = checked(git(dir, "rev-parse").args(["--verify", &tracking]))?;
    Ok(Fetched {
        base_tip: text(&tip.stdout),
    })
}

/// Fetches only the claims, for `status --remote`.
pub fn fetch_claims(dir: &Path, target: &RemoteTarget, timeout: Duration) -> Result<(), GitError> {
    let (cmd, output) = fetch_refspecs(dir, target, &[claims_refspec(&target.name)], timeout)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(network_failure(target, &cmd, &output))
    }
}

/// What a ref must hold on the remote for a push to change it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The ref must not exist (a new claim).
    Absent,
    /// The ref must point at this object (a renewal, a takeover, a fast-forward of the base).
    At(String),
}

/// One ref a push changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// The full ref name on the remote.
    pub refname: String,
    /// The new value; `None` deletes the ref.
    pub new: Option<String>,
    pub expect: Expect,
}

/// How the remote answered for one ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefOutcome {
    Updated,
    /// The ref did not hold the expected value (someone else moved it), or the server refused.
    Rejected(String),
    /// Refused only because a ref of the same atomic push was (when the server refuses an
    /// atomic push, every ref says so and none says which).
    NotAttempted,
}

/// Pushes `updates` in one connection. With `atomic`, the server applies all of them or none.
/// Every update is a compare-and-swap on its expected value. A rejection is an answer, not an
/// error; an error means the push did not get an answer (and may or may not have landed).
pub fn push(
    dir: &Path,
    target: &RemoteTarget,
    updates: &[RefUpdate],
    atomic: bool,
    timeout: Duration,
) -> Result<HashMap<String, RefOutcome>, GitError> {
    let mut cmd = network(dir, "push");
    cmd.args(["--porcelain", "--no-verify", "--no-signed"]);
    if atomic {
        cmd.arg("--atomic");
    }
    for update in updates {
        let expected = match &update.expect {
            Expect::Absent => String::new(),
            Expect::At(oid) => oid.clone(),
        };
        cmd.arg(format!("--force-with-lease={}:{expected}", update.refname));
    }
    cmd.arg(&target.name);
    for update in updates {
        // No `+`: it would override the lease. A matching lease alone lets a claim be replaced
        // by an unrelated commit.
        match &update.new {
            Some(new) => cmd.arg(format!("{new}:{}", update.refname)),
            None => cmd.arg(format!(":{}", update.refname)),
        };
    }
    let output = run_bounded(&mut cmd, timeout)?;
    let outcomes = parse_porcelain(&String::from_utf8_lossy(&output.stdout));
    let answered = updates.iter().all(|u| outcomes.contains_key(&u.refname));
    if !answered {
        return Err(network_failure(target, &cmd, &output));
    }
    Ok(outcomes)
}

/// Reads `git push --porcelain`: one `<flag>\t<from>:<to>\t<summary>` line per ref.
fn parse_porcelain(stdout: &str) -> HashMap<String, RefOutcome> {
    let mut outcomes = HashMap::new();
    for line in stdout.lines() {
        let mut fields = line.splitn(3, '\t');
        let (Some(flag), Some(refs), summary) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let Some((_, to)) = refs.rsplit_once(':') else {
            continue;
        };
        let summary = summary.unwrap_or_default().trim();
        let outcome = match flag {
            " " | "+" | "-" | "*" | "=" => RefOutcome::Updated,
            // Refused because another ref of the atomic push was: by the client ("atomic push
            // failed", naming the culprit on its own line), or by the server ("atomic
            // transaction failed", on every line, naming none).
            "!" if summary.contains("atomic push failed")
                || summary.contains("atomic transaction failed") =>
            {
                RefOutcome::NotAttempted
            }
            "!" => RefOutcome::Rejected(summary.to_string()),
            _ => continue,
        };
        outcomes.insert(to.to_string(), outcome);
    }
    outcomes
}

/// The claims the last fetch saw: `(story id, commit, message)` for each.
pub fn mirrored_claims(
    dir: &Path,
    remote: &str,
) -> Result<Vec<(String, String, String)>, GitError> {
    let prefix = claims_mirror(remote);
    // NUL-free separators: a record ends with a line holding only the marker.
    const END: &str = "%00%00";
    let format = format!("%(refname)%00%(objectname)%00%(contents){END}");
    let output = checked(git(dir, "for-each-ref").args([&format!("--format={format}"), &prefix]))?;
    let listing = String::from_utf8_lossy(&output.stdout);
    let mut claims = Vec::new();
    for record in listing.split("\0\0") {
        let record = record.trim_start_matches('\n');
        let mut parts = record.splitn(3, '\0');
        let (Some(refname), Some(oid), Some(message)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some(story) = refname.strip_prefix(&prefix) else {
            continue;
        };
        claims.push((story.to_string(), oid.to_string(), message.to_string()));
    }
    Ok(claims)
}

/// Every remote whose claims this clone mirrors (it ran `run --remote` with it).
pub fn remotes_with_claims(dir: &Path) -> Result<Vec<String>, GitError> {
    let output = checked(
        git(dir, "for-each-ref").args(["--format=%(refname)", "refs/agentic-sdlc/remote/"]),
    )?;
    let mut remotes: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|name| name.strip_prefix("refs/agentic-sdlc/remote/"))
        .filter_map(|rest| {
            rest.rsplit_once("/claims/")
                .map(|(remote, _)| remote.to_string())
        })
        .collect();
    remotes.sort();
    remotes.dedup();
    Ok(remotes)
}

/// Points the local mirror of one claim at `oid`, or removes it, so that what this clone knows
/// of its own claims is current between fetches.
pub fn mirror_claim(
    dir: &Path,
    remote: &str,
    story: &str,
    oid: Option<&str>,
) -> Result<(), GitError> {
    let refname = format!("{}{story}", claims_mirror(remote));
    match oid {
        Some(oid) => checked(git(dir, "update-ref").args([&refname, oid]))?,
        None => checked(git(dir, "update-ref").args(["-d", &refname]))?,
    };
    Ok(())
}

/// Writes a claim: a commit with an empty tree whose message is the claim's record. A commit
/// (not a bare blob) so that any git host stores and serves it like any other ref.
pub fn claim_commit(dir: &Path, message: &str) -> Result<String, GitError> {
    let empty_tree = checked(git(dir, "hash-object").args(["-t", "tree", "-w", "--stdin"]))?;
    let tree = text(&empty_tree.stdout);
    let mut commit = git_with(dir, &super::branches::FALLBACK_IDENTITY, "commit-tree");
    let output = checked(commit.args([&tree, "-m", message]))?;
    Ok(text(&output.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::*;

    const SECOND: Duration = Duration::from_secs(20);

    /// A bare repository with `main`, and a clone of it whose `origin` points there.
    fn remote_and_clone() -> (tempfile::TempDir, tempfile::TempDir, RemoteTarget) {
        let bare = tempfile::tempdir().unwrap();
        sh(bare.path(), &["init", "-q", "--bare", "-b", "main"]);
        let clone = repo();
        let url = bare.path().display().to_string();
        sh(clone.path(), &["remote", "add", "origin", &url]);
        sh(clone.path(), &["push", "-q", "origin", "main"]);
        let target = remote_target(clone.path(), "origin").unwrap();
        (bare, clone, target)
    }

    fn claim(refname: &str, new: Option<&str>, expect: Expect) -> RefUpdate {
        RefUpdate {
            refname: refname.to_string(),
            new: new.map(str::to_string),
            expect,
        }
    }

    #[test]
    fn a_claim_is_created_once_swapped_by_value_and_deleted_by_value() {
        let (_bare, clone, target) = remote_and_clone();
        let dir = clone.path();
        let reference = format!("{CLAIMS_NAMESPACE}story-a");
        let first = claim_commit(dir, "first").unwrap();
        let second = claim_commit(dir, "second").unwrap();
        let created = push(
            dir,
            &target,
            &[claim(&reference, Some(&first), Expect::Absent)],
            true,
            SECOND,
        )
        .unwrap();
        assert_eq!(created[&reference], RefOutcome::Updated);
        // A second creation finds it there.
        let again = push(
            dir,
            &target,
            &[claim(&reference, Some(&second), Expect::Absent)],
            true,
            SECOND,
        )
        .unwrap();
        assert!(
            matches!(again[&reference], RefOutcome::Rejected(_)),
            "{again:?}"
        );
        // A swap naming a wrong old value is refused; naming the right one goes through.
        let wrong = push(
            dir,
            &target,
            &[claim(&reference, Some(&second), Expect::At(second.clone()))],
            true,
            SECOND,
        )
        .unwrap();
        assert!(matches!(wrong[&reference], RefOutcome::Rejected(_)));
        let swapped = push(
            dir,
            &target,
            &[claim(&reference, Some(&second), Expect::At(first.clone()))],
            true,
            SECOND,
        )
        .unwrap();
        assert_eq!(swapped[&reference], RefOutcome::Updated);
        fetch(dir, &target, "main", SECOND).unwrap();
        let claims = mirrored_claims(dir, "origin").unwrap();
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].0, "story-a");
        assert_eq!(claims[0].1, second);
        assert_eq!(claims[0].2.trim(), "second");
        let deleted = push(
            dir,
            &target,
            &[claim(&reference, None, Expect::At(second))],
            true,
            SECOND,
        )
        .unwrap();
        assert_eq!(deleted[&reference], RefOutcome::Updated);
        fetch(dir, &target, "main", SECOND).unwrap();
        assert!(mirrored_claims(dir, "origin").unwrap().is_empty(), "pruned");
    }

    #[test]
    fn an_atomic_push_lands_whole_or_not_at_all() {
        let (bare, clone, target) = remote_and_clone();
        let dir = clone.path();
        let tip = sh(dir, &["rev-parse", "main"]);
        write(dir, "src/next.rs", "fn next() {}\n");
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "next"]);
        let next = sh(dir, &["rev-parse", "main"]);
        let taken = format!("{CLAIMS_NAMESPACE}story-b");
        let other = claim_commit(dir, "someone else").unwrap();
        push(
            dir,
            &target,
            &[claim(&taken, Some(&other), Expect::Absent)],
            true,
            SECOND,
        )
        .unwrap();
        let mine = claim_commit(dir, "mine").unwrap();
        let outcome = push(
            dir,
            &target,
            &[
                claim("refs/heads/main", Some(&next), Expect::At(tip.clone())),
                claim(&taken, None, Expect::At(mine)),
            ],
            true,
            SECOND,
        )
        .unwrap();
        assert!(
            matches!(outcome[&taken], RefOutcome::Rejected(_)),
            "{outcome:?}"
        );
        assert_eq!(outcome["refs/heads/main"], RefOutcome::NotAttempted);
        assert_eq!(
            sh(bare.path(), &["rev-parse", "main"]),
            tip,
            "nothing landed"
        );
    }

    #[test]
    fn failures_say_what_is_wrong_in_one_line() {
        let (bare, clone, target) = remote_and_clone();
        let dir = clone.path();
        let missing = fetch(dir, &target, "develop", SECOND).unwrap_err();
        assert!(
            matches!(missing, GitError::RemoteBaseMissing { .. }),
            "{missing:?}"
        );
        assert_eq!(missing.to_string().lines().count(), 1, "{missing}");

        let head = sh(dir, &["rev-parse", "HEAD"]);
        probe_push(dir, &target, &head, SECOND).unwrap();
        sh(bare.path(), &["config", "receive.advertiseAtomic", "false"]);
        let not_atomic = probe_push(dir, &target, &head, SECOND).unwrap_err();
        assert!(
            matches!(not_atomic, GitError::RemoteNotAtomic { .. }),
            "{not_atomic:?}"
        );

        sh(
            dir,
            &[
                "remote",
                "set-url",
                "origin",
                "/nonexistent/agentic-sdlc.git",
            ],
        );
        let gone = remote_target(dir, "origin").unwrap();
        let unreachable = fetch(dir, &gone, "main", SECOND).unwrap_err();
        assert!(
            matches!(unreachable, GitError::RemoteUnreachable { .. }),
            "{unreachable:?}"
        );
        assert_eq!(unreachable.to_string().lines().count(), 1, "{unreachable}");
        let no_remote = remote_target(dir, "upstream").unwrap_err();
        assert!(matches!(no_remote, GitError::NoSuchRemote { .. }));
    }

    #[test]
    fn a_hung_remote_is_stopped_at_the_timeout() {
        let (_bare, clone, _) = remote_and_clone();
        let dir = clone.path();
        let script = dir.join("hang.sh");
        fs_err::write(&script, "#!/bin/sh\nsleep 30\n").unwrap();
        sh(
            dir,
            &[
                "config",
                "core.sshCommand",
                &format!("sh {}", script.display()),
            ],
        );
        sh(
            dir,
            &["remote", "set-url", "origin", "ssh://nowhere/repo.git"],
        );
        let target = remote_target(dir, "origin").unwrap();
        let started = std::time::Instant::now();
        let error = fetch(dir, &target, "main", Duration::from_millis(300)).unwrap_err();
        assert!(
            matches!(error, GitError::RemoteTimedOut { .. }),
            "{error:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn porcelain_lines_are_read_per_ref() {
        let stdout = "To ../bare.git\n*\tabc:refs/agentic-sdlc/claims/a\t[new reference]\n!\t(delete):refs/agentic-sdlc/claims/b\t[rejected] (stale info)\n!\tdef:refs/heads/main\t[rejected] (atomic push failed)\n!\t:refs/agentic-sdlc/claims/c\t[remote rejected] (atomic transaction failed)\nDone\n";
        let outcomes = parse_porcelain(stdout);
        assert_eq!(outcomes["refs/agentic-sdlc/claims/a"], RefOutcome::Updated);
        assert_eq!(
            outcomes["refs/agentic-sdlc/claims/b"],
            RefOutcome::Rejected("[rejected] (stale info)".into())
        );
        assert_eq!(outcomes["refs/heads/main"], RefOutcome::NotAttempted);
        assert_eq!(
            outcomes["refs/agentic-sdlc/claims/c"],
            RefOutcome::NotAttempted
        );
    }
}
