//! Running `git` and `gh`: one place that builds every command, so they all get the same
//! policy (no stdin, argument vectors, never a shell) and the same error reporting.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};

use super::error::GitError;

// Running commands

/// A command with the environment every git/gh call gets: stdin closed, so that nothing can
/// ever wait for a person to type (the workflow runs unattended), and no API key.
pub(super) fn command(program: &str) -> Command {
    let mut cmd = Command::new(program);
    cmd.stdin(Stdio::null());
    for variable in withheld_variables() {
        cmd.env_remove(variable);
    }
    #[cfg(test)]
    super::test_support::apply_test_env(&mut cmd);
    cmd
}

/// The one place a git command is built (docs/design.md §22): `git <overrides> <subcommand>
/// <subcommand's own safety flags>`, run in `dir`, with no API key in its environment. The
/// caller adds the rest of the arguments.
///
/// Git runs programs that its configuration and the tree name: hooks, an fsmonitor, an
/// external diff, textconv and filter drivers, a nested repository's own settings. The tool
/// runs git outside the box, with the key in its memory, so none of them may come from a file
/// an agent could have written.
pub(super) fn git(dir: &Path, subcommand: &str) -> Command {
    git_with(dir, &[], subcommand)
}

/// [`git`] with extra `-c` settings (`name=value`) placed before the subcommand.
pub(super) fn git_with(dir: &Path, settings: &[&str], subcommand: &str) -> Command {
    let mut cmd = command("git");
    cmd.current_dir(dir);
    cmd.args(overrides());
    for setting in settings {
        cmd.args(["-c", setting]);
    }
    cmd.arg(subcommand).args(subcommand_flags(subcommand));
    cmd
}

/// The settings every git call gets, whatever the repository's, a nested repository's or the
/// user's configuration says: no fsmonitor, no hooks (an empty folder of the tool's own), no
/// external diff program, no submodule recursion.
fn overrides() -> &'static [String] {
    static OVERRIDES: OnceLock<Vec<String>> = OnceLock::new();
    OVERRIDES.get_or_init(|| {
        let hooks = format!("core.hooksPath={}", empty_hooks_dir().display());
        [
            "core.fsmonitor=false",
            hooks.as_str(),
            "diff.external=",
            "submodule.recurse=false",
            "protocol.ext.allow=never",
        ]
        .iter()
        .flat_map(|setting| ["-c".to_string(), setting.to_string()])
        .collect()
    })
}

/// What a subcommand gets right after its name: nothing that shows a diff runs a program, and
/// nothing that compares the tree looks inside a nested repository (where its own
/// configuration would run).
fn subcommand_flags(subcommand: &str) -> &'static [&'static str] {
    match subcommand {
        "diff" => &["--no-ext-diff", "--no-textconv", "--ignore-submodules=all"],
        "show" | "log" => &["--no-ext-diff", "--no-textconv"],
        "status" => &["--ignore-submodules=all"],
        _ => &[],
    }
}

/// An empty folder for `core.hooksPath`, private to this user: `no-hooks` in the tool's own
/// temporary folder when that is there and the folder is empty, a fresh private temporary
/// folder otherwise.
fn empty_hooks_dir() -> PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(root) = crate::private_temp::root() {
        let hooks = root.join("no-hooks");
        let _ = std::fs::DirBuilder::new().mode(0o700).create(&hooks);
        let uid = nix::unistd::getuid().as_raw();
        let empty = std::fs::read_dir(&hooks).is_ok_and(|mut entries| entries.next().is_none());
        if crate::private_temp::is_private_dir(&hooks, uid) && empty {
            return hooks;
        }
    }
    // Kept for the life of the process: every git call names it.
    tempfile::Builder::new()
        .prefix("agentic-sdlc-no-hooks-")
        .tempdir()
        .map(tempfile::TempDir::keep)
        .unwrap_or_else(|_| PathBuf::from("/dev/null"))
}

/// Variables git never sees: the one `llm.apiKeyEnv` names (registered by
/// [`withhold_from_git`]; `OPENAI_API_KEY` always) and every other variable holding the same
/// value, so that a copy under another name does not reach git or what git starts.
fn withheld_variables() -> Vec<std::ffi::OsString> {
    let mut names = WITHHELD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    names.push(DEFAULT_KEY_VARIABLE.to_string());
    let secrets: Vec<std::ffi::OsString> = names
        .iter()
        .filter_map(std::env::var_os)
        .filter(|value| !value.is_empty())
        .collect();
    let mut withheld: Vec<std::ffi::OsString> = names.iter().map(Into::into).collect();
    withheld.extend(
        std::env::vars_os()
            .filter(|(_, value)| secrets.contains(value))
            .map(|(name, _)| name),
    );
    withheld
}

static WITHHELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps the variable `name` (the one `llm.apiKeyEnv` names), and any variable with its value,
/// out of every git command from now on.
pub(crate) fn withhold_from_git(name: &str) {
    let mut names = WITHHELD.lock().unwrap_or_else(PoisonError::into_inner);
    if !names.iter().any(|known| known == name) {
        names.push(name.to_string());
    }
}

const DEFAULT_KEY_VARIABLE: &str = "OPENAI_API_KEY";

/// The command line as a person would type it, for error messages (without the settings that
/// every git call gets).
pub(super) fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    let args: Vec<_> = cmd.get_args().collect();
    let skip = if cmd.get_program() == "git" {
        overrides().len()
    } else {
        0
    };
    for arg in args.iter().skip(skip) {
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
        let mut cmd = git(dir, "config");
        cmd.args(args);
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
