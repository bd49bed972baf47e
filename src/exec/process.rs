//! Starting a command and seeing it through: its environment scrubbed, its process tree
//! killed at the time limit or with the tool, its output captured in bounded memory. The box
//! around it is [`super::sandbox`]'s.

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::capture::{Capture, OUTPUT_BUDGET};
use super::{lock_in, namespaces, reaper};

/// What a boxed process changed that it must not have, and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tampering {
    /// A file's path or a ref's full name.
    pub target: String,
    pub change: Change,
    /// Whether it was put back as it was before the process ran.
    pub restored: bool,
    /// Where the changed version was kept, so nothing anyone wrote is lost.
    pub kept_at: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Created,
    Modified,
    Removed,
}

impl std::fmt::Display for Tampering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verb = match self.change {
            Change::Created => "created",
            Change::Modified => "changed",
            Change::Removed => "removed",
        };
        write!(
            f,
            "a boxed command {verb} {}, which agents may not change",
            self.target
        )?;
        if self.restored {
            write!(f, "; the change was reverted")?;
        } else {
            write!(f, "; reverting it failed, check it by hand")?;
        }
        if let Some(kept) = &self.kept_at {
            write!(f, " (the changed version is kept at {})", kept.display())?;
        }
        Ok(())
    }
}

/// How long output pipes may stay open after the command ended or was killed: a process stuck
/// in the kernel can hold them, and the call must still return.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// Parts of a variable's name that mark it as a secret a command has no business seeing
/// (matched anywhere in the name, in any case).
pub(crate) const SECRET_NAME_PARTS: [&str; 6] =
    ["KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

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
    /// The box `tools.sandbox` asks for cannot be built here. One line: what is missing, and
    /// the setting that accepts less.
    #[error("{0}")]
    Unavailable(String),
    /// The guard could not take or check its watch.
    #[error("cannot check what the command changed: {0}")]
    Guard(String),
    /// The command changed what no agent may change; it was put back.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Tampered(Vec<Tampering>),
}

/// How commands are isolated; decided by the kernel at the first command of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Isolation {
    /// Own user, PID, mount (and network) namespaces.
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

/// One command to start, with the environment rules that apply to it.
pub(crate) struct Spawn<'a> {
    pub command: &'a str,
    pub dir: &'a Path,
    pub env: &'a [(String, String)],
    pub scrub: Scrub<'a>,
}

/// Which variables of the tool's environment a command must not see.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scrub<'a> {
    /// Never passed on, nor any variable holding the same value (the key exported twice).
    pub hidden: &'a [String],
    /// Passed on although named like a secret.
    pub keep: &'a [String],
}

/// Starts the command in a process group under the reaper, with no box (`tools.sandbox:
/// "off"`).
pub(crate) fn spawn_unboxed(
    spawn: &Spawn,
) -> Result<(tokio::process::Child, Isolation), ExecError> {
    let child = build(spawn, Launch::Reaper(None)).spawn();
    Ok((child.map_err(ExecError::Spawn)?, Isolation::ProcessGroup))
}

/// Starts the command in its namespaces, unless the kernel refused them before; then under the
/// reaper, still locked into Landlock and seccomp. A refusal is detected before the command
/// runs (the setup fails before exec), so starting it again never runs it twice.
pub(crate) fn spawn_boxed(
    spawn: &Spawn,
    plan: impl FnOnce() -> Result<namespaces::Plan, ExecError>,
    fallback: impl Fn() -> Result<lock_in::Lock, ExecError>,
) -> Result<(tokio::process::Child, Isolation), ExecError> {
    let in_group = |lock| -> Result<_, ExecError> {
        let child = build(spawn, Launch::Reaper(Some(lock))).spawn();
        Ok((child.map_err(ExecError::Spawn)?, Isolation::ProcessGroup))
    };
    if ISOLATION.load(Ordering::Relaxed) == PROCESS_GROUP {
        return in_group(fallback()?);
    }
    let refused = match build(spawn, Launch::Namespaces(plan()?)).spawn() {
        Ok(child) => {
            ISOLATION.store(NAMESPACES, Ordering::Relaxed);
            return Ok((child, Isolation::Namespaces));
        }
        Err(err) => err,
    };
    let started = in_group(fallback()?)?;
    // The boxed start without namespaces worked, so the namespaces were what failed.
    if ISOLATION.swap(PROCESS_GROUP, Ordering::Relaxed) != PROCESS_GROUP {
        tracing::warn!(
            "the kernel refused namespaces for commands ({refused}); they run without them: \
             Landlock and seccomp still confine them, but they share the machine's network \
             namespace (TCP and other network sockets are refused instead) and cannot have \
             read-only mounts"
        );
    }
    Ok(started)
}

/// How the process that becomes the command gets there.
pub(super) enum Launch {
    Namespaces(namespaces::Plan),
    /// Under the reaper, locked in when a lock is given.
    Reaper(Option<lock_in::Lock>),
}

pub(super) fn build(spawn: &Spawn, launch: Launch) -> tokio::process::Command {
    let mut builder = tokio::process::Command::new("sh");
    for name in scrubbed_names(&spawn.scrub, std::env::vars_os()) {
        builder.env_remove(name);
    }
    // One stream, in the order it was written: with two pipes read side by side, a last
    // error line on stderr can be read before the stdout that preceded it and end up in the
    // cut middle instead of the tail that callers keep.
    builder
        .arg("-c")
        .arg(format!("exec 2>&1; {}", spawn.command))
        .current_dir(spawn.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Nothing may wait for a person: no pager, no credential prompt.
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(spawn.env.iter().map(|(k, v)| (k, v)))
        .kill_on_drop(true);
    // A session of its own, so no controlling terminal (docs/design.md §22): `/dev/tty` is
    // nobody's, and the person's terminal cannot be typed into. It also makes the command a
    // process group of its own, which is what a timeout kills.
    // SAFETY: setsid is one system call, as code between fork and exec must be.
    unsafe {
        builder.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    match launch {
        Launch::Namespaces(plan) => {
            // SAFETY: `namespaces::enter` only makes system calls (no allocation, no locks),
            // as code between fork and exec must.
            unsafe {
                builder.pre_exec(move || namespaces::enter(&plan));
            }
        }
        Launch::Reaper(lock) => {
            let tool = nix::unistd::getpid();
            // The keeper sweeps the tree on SIGTERM; SIGKILL from tokio would kill it first.
            builder.kill_on_drop(false);
            // SAFETY: `reaper::enter` only makes system calls, as code between fork and exec
            // must.
            unsafe {
                builder.pre_exec(move || reaper::enter(tool, lock.as_ref()));
            }
        }
    }
    builder
}

/// The variables a command must not see: the hidden ones, any other holding a hidden one's
/// value (the same key exported under a second name), and those named like secrets unless
/// kept.
pub(super) fn scrubbed_names(
    scrub: &Scrub,
    current: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<std::ffi::OsString> {
    let current: Vec<_> = current.collect();
    let is_hidden = |name: &std::ffi::OsString| scrub.hidden.iter().any(|h| name == h.as_str());
    let hidden_values: Vec<&std::ffi::OsString> = current
        .iter()
        .filter(|(name, value)| is_hidden(name) && value.len() >= 8)
        .map(|(_, value)| value)
        .collect();
    current
        .iter()
        .filter(|(name, value)| {
            let kept = scrub.keep.iter().any(|k| name == k.as_str());
            is_hidden(name)
                || hidden_values.contains(&value)
                || (named_like_secret(&name.to_string_lossy()) && !kept)
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// Whether a variable's name marks it as a secret: boxed commands and notifiers never get it.
pub(crate) fn named_like_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
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
