//! The box: the one policy every process an agent can influence runs under (`run_command`,
//! the test command at review and on the integrated tree, command gates, and all they start).
//! docs/security.md describes it for users; docs/design.md §13 and §16 say why.
//!
//! A [`Sandbox`] is built once per run from `tools.*`. Each [`Sandbox::run`]:
//! 1. asks the [`Guard`] what must not change (the board, the config, the tool's refs) and what
//!    inside the tree to mount read-only;
//! 2. makes a private `TMPDIR`, the only place besides the tree (and `tools.writableRoots`)
//!    where the command may write;
//! 3. starts the command in its namespaces, locked into Landlock and seccomp
//!    ([`super::namespaces`], [`super::lock_in`]);
//! 4. after it ended, has the guard compare and put back whatever changed that the box could
//!    have changed, and fails with [`ExecError::Tampered`] if anything did.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::kernel::{self, FsRules};
use super::lock_in::Lock;
use super::namespaces::{Plan, ReadOnlyBind};
use super::process::{self, ExecError, ShellOutput, Tampering};
use crate::config::{NetworkAccess, SandboxMode, ToolsConfig};

/// Where the machine's daemons and desktop keep sockets that would do for a boxed command what
/// the box forbids it (a D-Bus or Docker daemon starting processes outside, an X server typing
/// into a terminal). Without the network they are covered by an empty folder.
const SOCKET_FOLDERS: [&str; 4] = ["/run", "/var/run", "/tmp/.X11-unix", "/tmp/.ICE-unix"];

/// Keeps watch over what no boxed process may change. The workflow implements it; the box only
/// knows paths.
pub trait Guard: Send + Sync + std::fmt::Debug {
    /// Takes what must not change around a process about to run in `tree`.
    fn watch(self: Arc<Self>, tree: &Path) -> Result<Box<dyn Watch>, String>;
}

/// One process's watch, taken before it started.
pub trait Watch: Send {
    /// Paths inside the tree that the box mounts read-only over themselves.
    fn read_only(&self) -> Vec<PathBuf>;
    /// After the process ended: what changed. Changes the box could have made (`reachable`)
    /// are put back; changes it could not have made came from someone else (a person's save)
    /// and are left as they are.
    fn check(self: Box<Self>, reachable: &dyn Fn(&Path) -> bool) -> Vec<Tampering>;
}

/// One command for the box.
#[derive(Debug, Clone, Copy)]
pub struct BoxedCommand<'a> {
    pub command: &'a str,
    /// The story's working tree: where the command runs and what it may write.
    pub tree: &'a Path,
    pub limit: Duration,
    /// Variables set for this command (on top of the scrubbed environment).
    pub env: &'a [(String, String)],
}

/// The box of one run.
#[derive(Debug, Clone)]
pub struct Sandbox {
    mode: SandboxMode,
    network: NetworkAccess,
    /// Variables never passed on: the one holding the API key.
    hidden: Vec<String>,
    /// Secret-looking variables the user chose to pass on (`tools.keepEnv`).
    keep: Vec<String>,
    writable_roots: Vec<PathBuf>,
    guard: Option<Arc<dyn Guard>>,
}

impl Default for Sandbox {
    /// The strictest box, without a guard: what a tool box gets unless the run hands it its own.
    fn default() -> Sandbox {
        Sandbox {
            mode: SandboxMode::Landlock,
            network: NetworkAccess::None,
            hidden: Vec::new(),
            keep: Vec::new(),
            writable_roots: Vec::new(),
            guard: None,
        }
    }
}

impl Sandbox {
    pub fn new(tools: &ToolsConfig, api_key_env: &str) -> Sandbox {
        Sandbox {
            mode: tools.sandbox,
            network: tools.network,
            hidden: vec![api_key_env.to_string()],
            keep: tools.keep_env.clone(),
            writable_roots: tools.writable_roots.clone(),
            guard: None,
        }
    }

    /// The box with its guard: every process is checked against it afterwards.
    pub fn with_guard(mut self, guard: Arc<dyn Guard>) -> Sandbox {
        self.guard = Some(guard);
        self
    }

    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// Whether this machine can build the box `tools.sandbox` asks for: one line naming what
    /// is missing and the setting that accepts less, if not. It really starts a boxed `true`
    /// in `tree`, so whatever the kernel refuses shows here, before anything is spent.
    pub async fn check(&self, tree: &Path) -> Result<(), ExecError> {
        if self.mode == SandboxMode::Landlock && kernel::landlock_abi() < 1 {
            return Err(ExecError::Unavailable(
                "this kernel has no Landlock (it needs Linux 5.13 or newer with landlock in its \
                 lsm= list), so agent commands cannot be boxed; set tools.sandbox to \
                 \"namespaces\" to box them without file-system rules"
                    .to_string(),
            ));
        }
        let probe = BoxedCommand {
            command: "true",
            tree,
            limit: Duration::from_secs(30),
            env: &[],
        };
        let output = self.run_unguarded(probe).await?;
        if output.exit_code != Some(0) {
            return Err(ExecError::Unavailable(format!(
                "a boxed `true` failed ({}): {}; set tools.sandbox to \"off\" to run agent \
                 commands without a box",
                output.describe_status(),
                output.output.trim()
            )));
        }
        Ok(())
    }

    /// Runs one command in the box, then checks what it changed.
    pub async fn run(&self, command: BoxedCommand<'_>) -> Result<ShellOutput, ExecError> {
        let watch = match &self.guard {
            Some(guard) => {
                let (guard, tree) = (Arc::clone(guard), command.tree.to_path_buf());
                let taken = tokio::task::spawn_blocking(move || guard.watch(&tree))
                    .await
                    .map_err(|err| ExecError::Guard(err.to_string()))?;
                Some(taken.map_err(ExecError::Guard)?)
            }
            None => None,
        };
        let read_only = watch.as_ref().map(|w| w.read_only()).unwrap_or_default();
        let (output, confinement) = self.spawn_and_wait(command, &read_only).await?;
        let Some(watch) = watch else {
            return Ok(output);
        };
        let tampered = tokio::task::spawn_blocking(move || {
            watch.check(&|path: &Path| confinement.could_write(path))
        })
        .await
        .map_err(|err| ExecError::Guard(err.to_string()))?;
        if tampered.is_empty() {
            Ok(output)
        } else {
            Err(ExecError::Tampered(tampered))
        }
    }

    async fn run_unguarded(&self, command: BoxedCommand<'_>) -> Result<ShellOutput, ExecError> {
        Ok(self.spawn_and_wait(command, &[]).await?.0)
    }

    async fn spawn_and_wait(
        &self,
        command: BoxedCommand<'_>,
        read_only: &[PathBuf],
    ) -> Result<(ShellOutput, Confinement), ExecError> {
        let temp = crate::private_temp::box_folder().map_err(ExecError::Spawn)?;
        let tree = std::fs::canonicalize(command.tree).map_err(ExecError::Spawn)?;
        let mut writable = vec![tree, temp.path().to_path_buf()];
        writable.extend(self.writable_roots.iter().cloned());
        let mut env: Vec<(String, String)> = command.env.to_vec();
        let temp_dir = temp.path().display().to_string();
        for name in ["TMPDIR", "TMP", "TEMP"] {
            env.push((name.to_string(), temp_dir.clone()));
        }
        let policy = process::Spawn {
            command: command.command,
            dir: command.tree,
            env: &env,
            scrub: process::Scrub {
                hidden: &self.hidden,
                keep: &self.keep,
            },
        };
        let (child, isolation) = match self.mode {
            SandboxMode::Off => process::spawn_unboxed(&policy)?,
            SandboxMode::Landlock | SandboxMode::Namespaces => process::spawn_boxed(
                &policy,
                || self.namespace_plan(&writable, read_only),
                || self.fallback_lock(&writable),
            )?,
        };
        let confinement = Confinement {
            file_rules: self.mode == SandboxMode::Landlock,
            mounts: isolation == process::Isolation::Namespaces,
            writable,
            read_only: read_only.to_vec(),
        };
        let output = process::supervise(child, isolation, command.limit)
            .await
            .map_err(ExecError::Wait)?;
        drop(temp);
        Ok((output, confinement))
    }

    /// Everything the namespace path needs, built before the fork.
    fn namespace_plan(
        &self,
        writable: &[PathBuf],
        read_only: &[PathBuf],
    ) -> Result<Plan, ExecError> {
        let new_network = self.network == NetworkAccess::None;
        // Landlock rules are tied to files, not names: a tmpfs mounted inside over /dev/shm
        // is reached through /dev/shm's own directory, which the rule names.
        let private_shm = Path::new("/dev/shm").is_dir();
        let hidden = if new_network {
            SOCKET_FOLDERS
                .iter()
                .map(Path::new)
                .filter(|folder| {
                    folder.symlink_metadata().is_ok_and(|m| m.is_dir())
                        && !writable.iter().any(|path| path.starts_with(folder))
                })
                .filter_map(|folder| {
                    std::ffi::CString::new(folder.as_os_str().as_encoded_bytes()).ok()
                })
                .collect()
        } else {
            Vec::new()
        };
        let landlock = self.landlock(FsRules {
            writable: writable.to_vec(),
            private_shm,
            deny_tcp: false,
            unix_sockets_anywhere: !new_network,
        })?;
        let seccomp = kernel::seccomp_programs(false).map_err(ExecError::Unavailable)?;
        let binds = read_only
            .iter()
            .filter_map(|path| ReadOnlyBind::new(path))
            .collect();
        Ok(Plan::new(
            new_network,
            hidden,
            private_shm,
            binds,
            Lock::new(landlock, seccomp),
        ))
    }

    /// Where the kernel refuses namespaces: Landlock and seccomp alone, with TCP and other
    /// network sockets closed by them instead of by a network namespace.
    fn fallback_lock(&self, writable: &[PathBuf]) -> Result<Lock, ExecError> {
        let deny_network = self.network == NetworkAccess::None;
        let landlock = self.landlock(FsRules {
            writable: writable.to_vec(),
            private_shm: false,
            deny_tcp: deny_network,
            unix_sockets_anywhere: !deny_network,
        })?;
        let seccomp = kernel::seccomp_programs(deny_network).map_err(ExecError::Unavailable)?;
        Ok(Lock::new(landlock, seccomp))
    }

    fn landlock(&self, rules: FsRules) -> Result<Option<std::os::fd::OwnedFd>, ExecError> {
        if self.mode != SandboxMode::Landlock {
            return Ok(None);
        }
        kernel::landlock_ruleset(&rules)
            .map(Some)
            .map_err(ExecError::Unavailable)
    }
}

/// What the kernel kept a process from writing, for the guard's verdict afterwards.
#[derive(Debug, Clone)]
struct Confinement {
    /// Landlock confined writes to `writable`.
    file_rules: bool,
    /// The read-only mounts were made (the process had namespaces of its own).
    mounts: bool,
    writable: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
}

impl Confinement {
    fn could_write(&self, path: &Path) -> bool {
        let resolved = resolve_existing_prefix(path);
        if self.mounts && self.read_only.iter().any(|ro| resolved.starts_with(ro)) {
            return false;
        }
        if self.file_rules {
            return self.writable.iter().any(|w| resolved.starts_with(w));
        }
        true
    }
}

/// `path` with its longest existing prefix resolved (a removed file's folder still resolves).
fn resolve_existing_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut current = path;
    loop {
        if let Ok(real) = std::fs::canonicalize(current) {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}
