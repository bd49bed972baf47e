//! Every command the tool starts goes through here: an agent's `run_command`, the review's test
//! command and command gates. One place applies one policy (SPEC §13 "Processes"):
//!
//! - **Environment:** the key variable, any variable holding the same value, and variables
//!   whose names say they hold a secret (`…_KEY`, `…_TOKEN`, `…_SECRET`, `…_PASSWORD`) are
//!   removed; nothing waits for a person (no pager, no credential prompt).
//! - **Isolation:** the command runs in its own user, PID and mount namespaces (see
//!   [`sandbox`]), so it cannot see the tool's processes and everything it started dies when it
//!   ends. Where the kernel refuses namespaces, the tool says so once and runs commands under a
//!   keeper that is their child subreaper instead (see [`reaper`]): it still ends the whole
//!   tree, but cannot hide the tool's `/proc` from a command run as root.
//! - **Time:** at the limit the whole tree is killed; it also dies with the tool, even on
//!   `kill -9`, and dropping the future (Ctrl-C) kills it at once.
//! - **Output:** stdout and stderr as one stream, cut to its head and tail in bounded memory.

mod capture;
mod reaper;
mod sandbox;

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

pub(crate) use capture::floor_char_boundary;
use capture::Capture;
pub use capture::{head_tail, OUTPUT_BUDGET};

/// How long output pipes may stay open after the command ended or was killed: a process stuck
/// in the kernel can hold them, and the call must still return.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// Name parts that mark a variable as a secret a command has no business seeing.
const SECRET_NAME_PARTS: [&str; 7] = [
    "KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIALS",
];

/// Environment changes for one command: variables to set, and variables (such as the one
/// holding the API key) that it must never see.
#[derive(Debug, Clone, Default)]
pub struct CommandEnv {
    pub set: Vec<(String, String)>,
    pub hidden: Vec<String>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    /// `None` when it timed out or was killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when one did (outside a namespace; inside one, a signal shows
    /// as exit code 128 + the signal, as shells report it).
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// stdout and stderr together, cut to head and tail.
    pub output: String,
}

impl ShellOutput {
    /// `exit code: N`, the first line of a `run_command` result.
    pub fn describe_status(&self) -> String {
        match (self.exit_code, self.signal) {
            (Some(code), _) => format!("exit code: {code}"),
            (None, Some(signal)) => format!("exit code: none (killed by signal {signal})"),
            (None, None) => "exit code: unknown".to_string(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start sh: {0}")]
    Spawn(#[source] io::Error),
    #[error("waiting for the command failed: {0}")]
    Wait(#[source] io::Error),
}

/// How commands are isolated; decided by the kernel at the first command of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// Own user, PID and mount namespaces.
    Namespaces,
    /// A process group of its own under a subreaper keeper that sweeps the tree.
    ProcessGroup,
}

const UNTRIED: u8 = 0;
const NAMESPACES: u8 = 1;
const PROCESS_GROUP: u8 = 2;
static ISOLATION: AtomicU8 = AtomicU8::new(UNTRIED);

/// Makes this process non-dumpable (as ssh-agent does): its `/proc/<pid>/environ` and memory,
/// which hold the API key, are then closed to other processes of the same user. With commands in
/// a user namespace of their own this holds even when the tool runs as root; without one, root's
/// commands could still read them. Call it before any agent runs.
pub fn protect_tool_process() {
    if let Err(err) = nix::sys::prctl::set_dumpable(false) {
        tracing::warn!("cannot make agentic-sdlc non-dumpable: {err}");
    }
}

/// Runs `sh -c command` in `dir` under the policy above.
pub async fn run_shell_command(
    command: &str,
    dir: &Path,
    limit: Duration,
    env: &CommandEnv,
) -> Result<ShellOutput, ExecError> {
    let (child, isolation) = spawn(command, dir, env)?;
    Ok(supervise(child, isolation, limit).await?)
}

/// Starts the command, in namespaces unless the kernel refused them before. A refusal is
/// detected before the command runs (the sandbox fails before exec), so retrying it in a
/// process group never runs it twice.
fn spawn(
    command: &str,
    dir: &Path,
    env: &CommandEnv,
) -> Result<(tokio::process::Child, Isolation), ExecError> {
    if ISOLATION.load(Ordering::Relaxed) == PROCESS_GROUP {
        let child = build(command, dir, env, Isolation::ProcessGroup).spawn();
        return Ok((child.map_err(ExecError::Spawn)?, Isolation::ProcessGroup));
    }
    let refused = match build(command, dir, env, Isolation::Namespaces).spawn() {
        Ok(child) => {
            ISOLATION.store(NAMESPACES, Ordering::Relaxed);
            return Ok((child, Isolation::Namespaces));
        }
        Err(err) => err,
    };
    let child = build(command, dir, env, Isolation::ProcessGroup)
        .spawn()
        .map_err(ExecError::Spawn)?;
    // The plain spawn worked, so the namespaces were what failed.
    if ISOLATION.swap(PROCESS_GROUP, Ordering::Relaxed) != PROCESS_GROUP {
        tracing::warn!(
            "the kernel refused a PID namespace for commands ({refused}); they run without one, \
             where a command run as root could read the API key from the tool's /proc entry"
        );
    }
    Ok((child, Isolation::ProcessGroup))
}

pub(crate) fn build(
    command: &str,
    dir: &Path,
    env: &CommandEnv,
    isolation: Isolation,
) -> tokio::process::Command {
    let mut builder = tokio::process::Command::new("sh");
    for name in scrubbed_names(env, std::env::vars_os()) {
        builder.env_remove(name);
    }
    // One stream, in the order it was written: with two pipes read side by side, a last
    // error line on stderr can be read before the stdout that preceded it and end up in the
    // cut middle instead of the tail that callers keep.
    builder
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Nothing may wait for a person: no pager, no credential prompt.
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(env.set.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .kill_on_drop(true);
    match isolation {
        Isolation::Namespaces => {
            let plan = sandbox_plan().clone();
            // SAFETY: `sandbox::enter` only makes system calls (no allocation, no locks), as
            // code between fork and exec must.
            unsafe {
                builder.pre_exec(move || sandbox::enter(&plan));
            }
        }
        Isolation::ProcessGroup => {
            let tool = nix::unistd::getpid();
            // The keeper sweeps the tree on SIGTERM; SIGKILL from tokio would kill it first.
            builder.kill_on_drop(false);
            // SAFETY: `reaper::enter` only makes system calls, as code between fork and exec
            // must.
            unsafe {
                builder.pre_exec(move || reaper::enter(tool));
            }
        }
    }
    builder
}

fn sandbox_plan() -> &'static sandbox::Plan {
    static PLAN: OnceLock<sandbox::Plan> = OnceLock::new();
    PLAN.get_or_init(sandbox::Plan::new)
}

/// The variables a command must not see: the hidden ones, any other holding a hidden one's
/// value (the same key exported under a second name), and those named like secrets.
fn scrubbed_names(
    env: &CommandEnv,
    current: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<std::ffi::OsString> {
    let current: Vec<_> = current.collect();
    let hidden_values: Vec<&std::ffi::OsString> = current
        .iter()
        .filter(|(name, value)| {
            env.hidden.iter().any(|hidden| name == hidden.as_str()) && value.len() >= 8
        })
        .map(|(_, value)| value)
        .collect();
    current
        .iter()
        .filter(|(name, value)| {
            env.hidden.iter().any(|hidden| name == hidden.as_str())
                || hidden_values.contains(&value)
                || named_like_secret(&name.to_string_lossy())
        })
        .map(|(name, _)| name.clone())
        .collect()
}

fn named_like_secret(name: &str) -> bool {
    name.to_ascii_uppercase()
        .split(['_', '-', '.'])
        .any(|part| SECRET_NAME_PARTS.contains(&part))
}

/// Waits for the command within `limit`, then kills whatever is left of its tree and collects
/// its output.
pub(crate) async fn supervise(
    mut child: tokio::process::Child,
    isolation: Isolation,
    limit: Duration,
) -> io::Result<ShellOutput> {
    let mut group = TreeKiller::new(child.id(), isolation);
    let capture = Arc::new(Mutex::new(Capture::new(OUTPUT_BUDGET)));
    let readers = [
        child.stdout.take().map(|out| spawn_pump(out, &capture)),
        child.stderr.take().map(|err| spawn_pump(err, &capture)),
    ];

    let status = tokio::time::timeout(limit, child.wait()).await;
    if status.is_ok() {
        // The keeper ended (after its own sweep, without namespaces) and was reaped: its pid
        // may belong to someone else now.
        group.keeper_reaped();
    }
    // In namespaces this kills the keeper, whose death takes the namespace down; without, it
    // asks the keeper to sweep the tree.
    group.stop();
    if status.is_err() {
        // Reap the stopped command; bounded in case it is stuck in the kernel.
        let _ = tokio::time::timeout(PIPE_GRACE, child.wait()).await;
    }
    group.kill_group();
    drain(readers.into_iter().flatten()).await;

    let output = lock(&capture).render();
    let status: Option<ExitStatus> = match status {
        Ok(Ok(status)) => Some(status),
        Ok(Err(err)) => return Err(err),
        Err(_) => None,
    };
    tracing::debug!(?isolation, ?status, "command ended");
    Ok(ShellOutput {
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out: status.is_none(),
        output,
    })
}

impl From<io::Error> for ExecError {
    fn from(err: io::Error) -> Self {
        ExecError::Wait(err)
    }
}

/// Ends a command's tree once, explicitly or when dropped (a cancelled call, Ctrl-C).
struct TreeKiller {
    /// The keeper: what the tool spawned, leader of the process group.
    keeper: Option<nix::unistd::Pid>,
    isolation: Isolation,
    reaped: bool,
}

impl TreeKiller {
    fn new(pid: Option<u32>, isolation: Isolation) -> Self {
        Self {
            keeper: pid
                .and_then(|pid| libc::pid_t::try_from(pid).ok())
                .map(nix::unistd::Pid::from_raw),
            isolation,
            reaped: false,
        }
    }

    fn keeper_reaped(&mut self) {
        self.reaped = true;
    }

    /// In namespaces, SIGKILL to the group: the keeper's death ends the namespace. Without,
    /// SIGTERM to the keeper, which sweeps the tree, setsid children included.
    fn stop(&mut self) {
        let Some(keeper) = self.keeper else { return };
        match self.isolation {
            Isolation::Namespaces => self.kill_group(),
            Isolation::ProcessGroup if !self.reaped => {
                let _ = nix::sys::signal::kill(keeper, nix::sys::signal::Signal::SIGTERM);
            }
            Isolation::ProcessGroup => {}
        }
    }

    /// SIGKILL to the whole process group, once: the backstop.
    fn kill_group(&mut self) {
        if let Some(group) = self.keeper.take() {
            // The group id is the keeper's pid, which cannot be reused while the keeper is
            // unreaped or any member of its group is alive; an empty group just yields ESRCH.
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

impl Drop for TreeKiller {
    fn drop(&mut self) {
        // Dropped mid-command: without namespaces the keeper needs a moment to sweep, and a
        // SIGKILL to its group now would kill it first; it ends on its own after the sweep.
        if self.isolation == Isolation::ProcessGroup && !self.reaped {
            self.stop();
            self.keeper = None;
        }
        self.kill_group();
    }
}

fn spawn_pump<R>(reader: R, capture: &Arc<Mutex<Capture>>) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let capture = Arc::clone(capture);
    tokio::spawn(pump(reader, capture))
}

/// Copies a pipe into the shared capture until it closes; both pipes feed one capture so the
/// output keeps roughly the order it was written in.
async fn pump<R: AsyncRead + Unpin>(mut reader: R, capture: Arc<Mutex<Capture>>) {
    let mut buf = [0u8; 8192];
    while let Ok(read @ 1..) = reader.read(&mut buf).await {
        lock(&capture).push(&buf[..read]);
    }
}

/// Waits a short while for the pipes to close, then gives up on them: a process that escaped
/// the group must not keep the call hanging.
async fn drain(readers: impl Iterator<Item = JoinHandle<()>>) {
    let deadline = Instant::now() + PIPE_GRACE;
    for mut reader in readers {
        if tokio::time::timeout_at(deadline, &mut reader)
            .await
            .is_err()
        {
            reader.abort();
        }
    }
}

fn lock(capture: &Mutex<Capture>) -> std::sync::MutexGuard<'_, Capture> {
    // A panicking pump leaves plain bytes behind; they are still worth showing.
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
pub(crate) mod tests;
