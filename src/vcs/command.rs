//! Running `git` and `gh`: one place that builds every command, so they all get the same
//! policy (no stdin, argument vectors, never a shell) and the same error reporting.

use std::io::{self, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use super::GitError;

// Running commands

/// A command with the environment every git/gh call gets. Stdin is closed so that nothing can
/// ever wait for a person to type: the workflow runs unattended.
pub(super) fn command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.stdin(Stdio::null());
    #[cfg(test)]
    super::test_support::apply_test_env(&mut cmd);
    cmd
}

pub(super) fn git(dir: &Path) -> Command {
    let mut cmd = command("git");
    // No hooks: they are files of the repository, which an agent may have written (a hooks
    // folder in the tree, say), and the tool runs outside the box with the key in its memory.
    // Checks belong in review.testCommand, which runs in the box.
    cmd.args(NO_HOOKS).current_dir(dir);
    cmd
}

const NO_HOOKS: [&str; 2] = ["-c", "core.hooksPath=/dev/null"];

/// The command line as a person would type it, for error messages (without the setting that
/// every git call gets).
pub(super) fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    let args: Vec<_> = cmd.get_args().collect();
    let args = match args.strip_prefix(&NO_HOOKS.map(std::ffi::OsStr::new)[..]) {
        Some(rest) => rest,
        None => &args[..],
    };
    for arg in args {
        let arg = arg.to_string_lossy();
        if arg.is_empty() || arg.contains(char::is_whitespace) {
            parts.push(format!("{arg:?}"));
        } else {
            parts.push(arg.into_owned());
        }
    }
    parts.join(" ")
}

/// Sets a key in the repository's config (`git config <args>`), one writer at a time: git
/// does not wait for the config file's lock, it fails at once, and parallel stories write
/// their branches' keys. A lock another program holds is waited out a little.
pub(super) fn config_set(dir: &Path, args: &[&str]) -> Result<(), GitError> {
    config_write(dir, args, true)
}

/// Removes a key from the repository's config; a key that is not there is fine.
pub(super) fn config_unset(dir: &Path, args: &[&str]) -> Result<(), GitError> {
    config_write(dir, args, false)
}

fn config_write(dir: &Path, args: &[&str], must_succeed: bool) -> Result<(), GitError> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    const TRIES: u64 = 5;
    for attempt in 1..=TRIES {
        let mut cmd = git(dir);
        cmd.arg("config").args(args);
        let output = run(&mut cmd)?;
        if output.status.success() {
            return Ok(());
        }
        let locked = text(&output.stderr).contains("could not lock config file");
        if !locked || attempt == TRIES {
            return if must_succeed {
                Err(failure(&cmd, &output))
            } else {
                Ok(())
            };
        }
        std::thread::sleep(std::time::Duration::from_millis(40 * attempt));
    }
    Ok(())
}

/// Runs to completion; the exit status is left to the caller.
pub(super) fn run(cmd: &mut Command) -> Result<Output, GitError> {
    cmd.output().map_err(|source| GitError::Spawn {
        command: describe(cmd),
        source,
    })
}

/// Runs and requires success.
pub(super) fn checked(cmd: &mut Command) -> Result<Output, GitError> {
    let output = run(cmd)?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(failure(cmd, &output))
    }
}

pub(super) fn failure(cmd: &Command, output: &Output) -> GitError {
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
pub(super) fn optional(cmd: &mut Command) -> Result<Option<String>, GitError> {
    let output = run(cmd)?;
    match output.status.code() {
        Some(0) => Ok(Some(text(&output.stdout))),
        Some(1) => Ok(None),
        _ => Err(failure(cmd, &output)),
    }
}

/// Runs with `input` on stdin. Fine for the small outputs of the commands that use it: stdin
/// is written in full before stdout is read.
pub(super) fn with_input(cmd: &mut Command, input: &[u8]) -> io::Result<Output> {
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

/// [`with_input`] that requires success.
pub(super) fn checked_with_input(cmd: &mut Command, input: &[u8]) -> Result<Output, GitError> {
    let output = with_input(cmd, input).map_err(|source| GitError::Spawn {
        command: describe(cmd),
        source,
    })?;
    if output.status.success() {
        Ok(output)
    } else {
        Err(failure(cmd, &output))
    }
}

pub(super) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim_end().to_string()
}
