//! Commands in their own user, PID, mount and (by default) network namespaces: the box of
//! docs/security.md, on top of which [`super::lock_in`] adds Landlock and seccomp.
//!
//! One boxed command is three processes:
//!
//! ```text
//! agentic-sdlc ── keeper ── init (pid 1 of a new PID namespace) ── sh -c <command> ── …
//! ```
//!
//! - The keeper stays in the tool's namespaces. It is what the tool spawns, waits for and kills.
//!   It writes the id maps of the new user namespace (only a process outside it may map every id,
//!   which root needs to keep its power over files owned by others), then waits for init and
//!   exits with its status.
//! - Init is pid 1 of the new PID namespace, with a fresh `/proc` mounted in a new mount
//!   namespace and, without `tools.network: "host"`, a network namespace where only loopback is
//!   up. It reaps orphans and exits with the command's status when `sh` ends; the kernel then
//!   kills every process left in the namespace, whatever `setsid` or double fork it did.
//! - The command child makes the mounts of the box (the tree's `.git`, board and config
//!   read-only over themselves; a private `/dev/shm`; without the network, an empty `/run` and
//!   `/tmp/.X11-unix`, which hide the machine's daemon and desktop sockets), then locks itself
//!   in ([`Lock::apply`]) and execs.
//! - Keeper and init die with their parent (`PR_SET_PDEATHSIG`), so killing the keeper, or the
//!   tool dying even by `kill -9`, takes the whole namespace down.
//!
//! Keeper and init are forks of the tool that never exec, so their memory holds what the tool's
//! holds (the API key among it). Both are non-dumpable, like the tool itself: a process in the
//! new user namespace has no capability outside it, so even as root it cannot read their
//! `/proc/<pid>/environ` or memory.
//!
//! Everything here runs between fork and exec of a multi-threaded program, so it only makes
//! system calls: no allocation, no locks, no formatting.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{open, OFlag};
use nix::mount::{mount, MsFlags};
use nix::sched::CloneFlags;
use nix::sys::signal::{signal, SigHandler, Signal};
use nix::sys::stat::Mode;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::{fork, getppid, pipe2, read, write, ForkResult, Pid};

use super::lock_in::Lock;

/// Exit code of a keeper or init that could not set the command up after the point of no
/// return (the shell's own code for "could not run").
const SETUP_FAILED: i32 = 127;

/// A path the box mounts read-only over itself, with the flags its mount already has (a
/// remount inside a user namespace must keep them, or the kernel refuses it).
#[derive(Debug)]
pub(crate) struct ReadOnlyBind {
    path: CString,
    flags: MsFlags,
}

impl ReadOnlyBind {
    /// `None` when the path does not exist or cannot be named to the kernel.
    pub(crate) fn new(path: &Path) -> Option<ReadOnlyBind> {
        use std::os::unix::ffi::OsStrExt;
        let stat = nix::sys::statvfs::statvfs(path).ok()?;
        let kept = [
            (nix::sys::statvfs::FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
            (nix::sys::statvfs::FsFlags::ST_NODEV, MsFlags::MS_NODEV),
            (nix::sys::statvfs::FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
            (nix::sys::statvfs::FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
            (
                nix::sys::statvfs::FsFlags::ST_NODIRATIME,
                MsFlags::MS_NODIRATIME,
            ),
            (
                nix::sys::statvfs::FsFlags::ST_RELATIME,
                MsFlags::MS_RELATIME,
            ),
        ];
        let flags = kept
            .into_iter()
            .filter(|(has, _)| stat.flags().contains(*has))
            .fold(MsFlags::empty(), |all, (_, flag)| all | flag);
        Some(ReadOnlyBind {
            path: CString::new(path.as_os_str().as_bytes()).ok()?,
            flags,
        })
    }
}

/// What the keeper, init and the command child need, prepared before the fork.
#[derive(Debug)]
pub(crate) struct Plan {
    tool_pid: Pid,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// An unprivileged user may map its own group only once `setgroups` is denied.
    deny_setgroups: bool,
    /// A network namespace of its own, with loopback only.
    new_network: bool,
    /// Folders covered with an empty tmpfs: where the machine's daemons and desktop keep their
    /// sockets (`/run`: D-Bus, Docker, systemd; `/tmp/.X11-unix`), which a command could
    /// otherwise ask to do what the box forbids.
    hidden: Vec<CString>,
    /// A private `/dev/shm`, the one place besides the tree that shared-memory users write.
    private_shm: bool,
    read_only: Vec<ReadOnlyBind>,
    lock: Lock,
}

impl Plan {
    pub(crate) fn new(
        new_network: bool,
        hidden: Vec<CString>,
        private_shm: bool,
        read_only: Vec<ReadOnlyBind>,
        lock: Lock,
    ) -> Plan {
        let uid = nix::unistd::geteuid().as_raw();
        let gid = nix::unistd::getegid().as_raw();
        let privileged = uid == 0;
        let map = |id: u32| {
            if privileged {
                // Every id maps to itself, so files keep their owners inside. The box's root
                // has no capability left when the command runs (see `Lock`), so this root
                // owns files, nothing more.
                b"0 0 4294967295\n".to_vec()
            } else {
                format!("{id} {id} 1\n").into_bytes()
            }
        };
        Plan {
            tool_pid: nix::unistd::getpid(),
            uid_map: map(uid),
            gid_map: map(gid),
            deny_setgroups: !privileged,
            new_network,
            hidden,
            private_shm,
            read_only,
            lock,
        }
    }
}

/// The body of the `pre_exec` hook: returns `Ok` only in the process that goes on to exec the
/// command (inside the namespaces), and an error when the kernel refuses the namespaces, so the
/// caller can fall back. The keeper and init never return.
pub(crate) fn enter(plan: &Plan) -> io::Result<()> {
    die_with_parent(plan.tool_pid, Signal::SIGKILL)?;
    // Init's /proc files (its id maps among them) belong to its user only while it is
    // dumpable; a non-dumpable one's belong to root, and an unprivileged keeper could not map
    // it. So init is born dumpable and turns non-dumpable once mapped, before anything
    // untrusted runs; the keeper turns non-dumpable right after the clone.
    nix::sys::prctl::set_dumpable(true).map_err(os)?;
    let (report_read, report_write) = pipe2(OFlag::O_CLOEXEC).map_err(os)?;
    let (go_read, go_write) = pipe2(OFlag::O_CLOEXEC).map_err(os)?;
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWPID | CloneFlags::CLONE_NEWNS;
    if plan.new_network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    // SAFETY: a raw clone without CLONE_VM and with no new stack behaves like fork: the child
    // gets a copy-on-write copy of this single thread. Both sides only make system calls.
    let cloned = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::c_long::from(flags.bits()) | libc::c_long::from(libc::SIGCHLD),
            0,
            0,
            0,
            0,
        )
    };
    match cloned {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            drop((report_read, go_write));
            init(plan, report_write, go_read)
        }
        child => {
            nix::sys::prctl::set_dumpable(false).map_err(os)?;
            drop((report_write, go_read));
            let init_pid = Pid::from_raw(child as libc::pid_t);
            keep(plan, init_pid, report_read, go_write)
        }
    }
}

/// The keeper: maps the ids, lets init go on, waits for the report, then mirrors init's end.
fn keep(plan: &Plan, init: Pid, report: OwnedFd, go: OwnedFd) -> io::Result<()> {
    let setup = map_ids(plan, init).and_then(|()| write_byte(&go, b'k'));
    if let Err(err) = setup {
        let _ = nix::sys::signal::kill(init, Signal::SIGKILL);
        let _ = waitpid(init, None);
        return Err(err);
    }
    let mut message = [0u8; 5];
    let got = read_full(&report, &mut message);
    if got != message.len() || message[0] != b'r' {
        let _ = waitpid(init, None);
        let errno = if got == message.len() && message[0] == b'e' {
            i32::from_ne_bytes([message[1], message[2], message[3], message[4]])
        } else {
            libc::EIO
        };
        return Err(io::Error::from_raw_os_error(errno));
    }
    drop((report, go));
    close_all_files();
    default_signals();
    loop {
        match waitpid(init, None) {
            Ok(status) => {
                if let Some(code) = exit_code_of(status) {
                    exit(code);
                }
            }
            Err(Errno::EINTR) => {}
            Err(_) => exit(SETUP_FAILED),
        }
    }
}

/// Init: pid 1 of the new namespace. Mounts a `/proc` of its own, starts the command and
/// reaps everything until the command ends.
fn init(plan: &Plan, report: OwnedFd, go: OwnedFd) -> io::Result<()> {
    let fail = |errno: Errno| -> ! {
        let code = (errno as i32).to_ne_bytes();
        let _ = write(&report, &[b'e', code[0], code[1], code[2], code[3]]);
        exit(SETUP_FAILED)
    };
    // Set before waiting, so a keeper killed from here on takes init along; a keeper that died
    // earlier never says go, and the read below sees the pipe close.
    if let Err(errno) = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL) {
        fail(errno);
    }
    let mut go_byte = [0u8; 1];
    if read_full(&go, &mut go_byte) != 1 || go_byte[0] != b'k' {
        exit(SETUP_FAILED);
    }
    if let Err(errno) = nix::sys::prctl::set_dumpable(false) {
        fail(errno);
    }
    let none: Option<&str> = None;
    if let Err(errno) = mount(none, "/", none, MsFlags::MS_REC | MsFlags::MS_PRIVATE, none) {
        fail(errno);
    }
    let proc_flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC;
    if let Err(errno) = mount(Some("proc"), "/proc", Some("proc"), proc_flags, none) {
        fail(errno);
    }
    if plan.new_network {
        if let Err(errno) = loopback_up() {
            fail(errno);
        }
    }
    // SAFETY: this process has a single thread (it was cloned from one), and both sides of the
    // fork only make system calls before the child execs.
    let command = match unsafe { fork() } {
        Ok(ForkResult::Child) => {
            // The command dies with init; everything else in the namespace dies with it too.
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(os)?;
            // Root inside the namespace could unmount the new /proc and see the machine's
            // processes under it (the user's shell, with a key it exported), or undo the
            // read-only mounts. The lock empties the bounding set, so no exec gets
            // CAP_SYS_ADMIN back and nothing inside can mount or unmount; a nested user
            // namespace gets its mounts locked by the kernel.
            make_mounts(plan)?;
            plan.lock.apply()?;
            return Ok(());
        }
        Ok(ForkResult::Parent { child }) => child,
        Err(errno) => fail(errno),
    };
    let _ = write(&report, &[b'r', 0, 0, 0, 0]);
    drop((report, go));
    close_all_files();
    default_signals();
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(status) if status.pid() == Some(command) => {
                if let Some(code) = exit_code_of(status) {
                    exit(code);
                }
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => exit(SETUP_FAILED),
        }
    }
}

/// The box's own mounts, made while the command child still has its capabilities inside the
/// namespace.
fn make_mounts(plan: &Plan) -> io::Result<()> {
    let none: Option<&str> = None;
    let tmpfs_flags = MsFlags::MS_NOSUID | MsFlags::MS_NODEV;
    if plan.private_shm {
        mount(
            Some("tmpfs"),
            "/dev/shm",
            Some("tmpfs"),
            tmpfs_flags,
            Some("mode=1777"),
        )
        .map_err(os)?;
    }
    for folder in &plan.hidden {
        mount(
            Some("tmpfs"),
            folder.as_c_str(),
            Some("tmpfs"),
            tmpfs_flags | MsFlags::MS_NOEXEC,
            Some("mode=755"),
        )
        .map_err(os)?;
    }
    for bind in &plan.read_only {
        let path = bind.path.as_c_str();
        mount(
            Some(path),
            path,
            none,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            none,
        )
        .map_err(os)?;
        let read_only = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY | bind.flags;
        mount(none, path, none, read_only, none).map_err(os)?;
    }
    Ok(())
}

/// Brings loopback up in the new network namespace (it starts down), so a command can still
/// talk to servers it starts itself.
fn loopback_up() -> Result<(), Errno> {
    // SAFETY: socket only takes integers.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if socket < 0 {
        return Err(Errno::last());
    }
    // SAFETY: an all-zero ifreq is a valid value of this plain C structure.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo") {
        *slot = *byte as libc::c_char;
    }
    // SAFETY: both ioctls read and write the ifreq on this stack, which outlives them.
    let result = unsafe {
        if libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request) != 0 {
            Err(Errno::last())
        } else {
            request.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
            if libc::ioctl(socket, libc::SIOCSIFFLAGS, &request) != 0 {
                Err(Errno::last())
            } else {
                Ok(())
            }
        }
    };
    // SAFETY: closes the socket made above.
    unsafe { libc::close(socket) };
    result
}

/// Writes init's id maps from outside its user namespace.
fn map_ids(plan: &Plan, init: Pid) -> io::Result<()> {
    let mut path = ProcPath::new(init);
    if plan.deny_setgroups {
        write_file(path.file(b"setgroups"), b"deny")?;
    }
    write_file(path.file(b"gid_map"), &plan.gid_map)?;
    write_file(path.file(b"uid_map"), &plan.uid_map)
}

/// `PR_SET_PDEATHSIG`, then a check that the parent did not die before it took effect.
pub(super) fn die_with_parent(parent: Pid, signal: Signal) -> io::Result<()> {
    nix::sys::prctl::set_pdeathsig(signal).map_err(os)?;
    if getppid() != parent {
        exit(SETUP_FAILED);
    }
    Ok(())
}

/// The code the keeper and init exit with: the command's own, or 128 + the signal that
/// killed it, as shells report it.
pub(super) fn exit_code_of(status: WaitStatus) -> Option<i32> {
    match status {
        WaitStatus::Exited(_, code) => Some(code),
        WaitStatus::Signaled(_, signal, _) => Some(128 + signal as i32),
        _ => None,
    }
}

/// Restores default dispositions for the signals the tool's runtime handles: a keeper or init
/// must not run the tool's handlers, which write to the tool's own descriptors.
pub(super) fn default_signals() {
    for sig in [
        Signal::SIGINT,
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGCHLD,
    ] {
        // SAFETY: SIG_DFL installs no handler of ours.
        let _ = unsafe { signal(sig, SigHandler::SigDfl) };
    }
}

/// Closes every descriptor, including std's pipe that reports a failed exec: the tool's
/// `spawn` waits until every copy of it is closed.
pub(super) fn close_all_files() {
    // SAFETY: close_range only takes integers.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) };
    if closed != 0 {
        for fd in 0..4096 {
            // SAFETY: closing a descriptor number this process may not hold is harmless.
            unsafe { libc::close(fd) };
        }
    }
}

fn read_full(fd: &OwnedFd, buf: &mut [u8]) -> usize {
    let mut filled = 0;
    while filled < buf.len() {
        match read(fd.as_fd(), &mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(Errno::EINTR) => {}
            Err(_) => break,
        }
    }
    filled
}

fn write_byte(fd: &OwnedFd, byte: u8) -> io::Result<()> {
    write(fd, &[byte]).map(drop).map_err(os)
}

fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    let fd = open(path, OFlag::O_WRONLY | OFlag::O_CLOEXEC, Mode::empty()).map_err(os)?;
    let written = write(&fd, bytes).map_err(os)?;
    if written != bytes.len() {
        return Err(io::Error::from_raw_os_error(libc::EIO));
    }
    Ok(())
}

pub(super) fn os(errno: Errno) -> io::Error {
    io::Error::from_raw_os_error(errno as i32)
}

pub(super) fn exit(code: i32) -> ! {
    // SAFETY: _exit ends this process without running the tool's atexit handlers or
    // flushing its buffers, which belong to the parent.
    unsafe { libc::_exit(code) }
}

/// `/proc/<pid>/<file>` built in a stack buffer: nothing may allocate after the fork.
struct ProcPath {
    buf: [u8; 64],
    prefix_len: usize,
}

impl ProcPath {
    fn new(pid: Pid) -> ProcPath {
        let mut buf = [0u8; 64];
        buf[..6].copy_from_slice(b"/proc/");
        let mut len = 6;
        let mut digits = [0u8; 12];
        let mut count = 0;
        let mut value = pid.as_raw().unsigned_abs();
        loop {
            digits[count] = b'0' + (value % 10) as u8;
            count += 1;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        for digit in digits[..count].iter().rev() {
            buf[len] = *digit;
            len += 1;
        }
        buf[len] = b'/';
        ProcPath {
            buf,
            prefix_len: len + 1,
        }
    }

    fn file(&mut self, name: &[u8]) -> &std::ffi::CStr {
        let end = self.prefix_len + name.len();
        self.buf[self.prefix_len..end].copy_from_slice(name);
        self.buf[end] = 0;
        std::ffi::CStr::from_bytes_until_nul(&self.buf[..=end]).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_paths_are_built_without_allocating() {
        let mut path = ProcPath::new(Pid::from_raw(40213));
        assert_eq!(path.file(b"uid_map").to_bytes(), b"/proc/40213/uid_map");
        assert_eq!(path.file(b"gid_map").to_bytes(), b"/proc/40213/gid_map");
        let mut one = ProcPath::new(Pid::from_raw(1));
        assert_eq!(one.file(b"setgroups").to_bytes(), b"/proc/1/setgroups");
    }

    #[test]
    fn statuses_become_shell_exit_codes() {
        let pid = Pid::from_raw(7);
        assert_eq!(exit_code_of(WaitStatus::Exited(pid, 3)), Some(3));
        assert_eq!(
            exit_code_of(WaitStatus::Signaled(pid, Signal::SIGKILL, false)),
            Some(137)
        );
        assert_eq!(exit_code_of(WaitStatus::StillAlive), None);
    }
}
