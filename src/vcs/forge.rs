//! The forge: pushing a story branch and opening its pull request with the GitHub CLI.

use std::io;
use std::path::Path;
use std::process::Stdio;

use super::command::{checked, command, describe, failure, git, text, with_input};
use super::error::GitError;

/// Pushes `branch` to `origin` and makes it the upstream.
pub fn push_branch(dir: &Path, branch: &str) -> Result<(), GitError> {
    let remotes = checked(&mut git(dir, "remote"))?;
    if !text(&remotes.stdout).lines().any(|name| name == "origin") {
        return Err(GitError::NoRemote {
            branch: branch.to_string(),
        });
    }
    // The full refspec: a tag with the branch's name must not be pushed instead.
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    // No credential prompt: nobody may be watching, and a prompt would hang the run.
    checked(git(dir, "push").env("GIT_TERMINAL_PROMPT", "0").args([
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
    base: Option<&str>,
    title: &str,
    body: &str,
) -> Result<String, GitError> {
    let mut cmd = command("gh");
    cmd.current_dir(dir)
        .env("GH_PROMPT_DISABLED", "1")
        .args(["pr", "create", "--head", branch]);
    if let Some(base) = base {
        cmd.args(["--base", base]);
    }
    cmd.args(["--title", title]).args(["--body-file", "-"]);
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
pub(super) fn pull_request_url(stdout: &[u8]) -> Result<String, GitError> {
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
    use crate::hint::Hint;
    use crate::vcs::test_support::*;
    use crate::vcs::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn push_without_origin_is_a_clear_error() {
        let dir = repo();
        let error = push_branch(dir.path(), "main").unwrap_err();
        assert!(matches!(error, GitError::NoRemote { .. }), "{error:?}");
        assert!(
            error.hint().unwrap().contains("git remote add origin"),
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
        ensure_story_branch(
            dir.path(),
            "agentic-sdlc/dark-mode",
            "story-test",
            "main",
            &board(),
        )
        .unwrap();
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
            create_pull_request(dir.path(), "agentic-sdlc/x", None, "Title", "Body")
        })
        .unwrap_err();
        assert!(matches!(error, GitError::GhMissing), "{error:?}");
        assert!(error.hint().unwrap().contains("cli.github.com"), "{error}");
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
                create_pull_request(dir.path(), "agentic-sdlc/x", None, "Add it", body)
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
