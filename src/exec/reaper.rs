//! The fallback where the kernel refuses namespaces: a keeper that is the command's child
//! subreaper (docs/design.md §13 "Processes").
//!
//! ```text
//! agentic-sdlc ── keeper (subreaper) ── sh -c <command> ── …
//! ```
//!
//! Every process the command leaves behind, whether it called `setsid` or forked twice, is
//! reparented to the keeper when its parent dies. When the command ends, or the keeper gets
//! SIGTERM (the tool's timeout, Ctrl-C, or the tool's death through `PR_SET_PDEATHSIG`, even
//! by `kill -9`), the keeper kills its children until none is left: each kill hands the victim's
//! own children to the keeper, so the sweep reaches the whole tree.
//!
//! Like [`super::namespaces`], this runs between fork and exec: system calls only.

use std::io;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::fcntl::{open, OFlag};
use nix::sys::signal::{kill, sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::stat::Mode;
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, read, ForkResult, Pid};

use super::lock_in::Lock;
use super::namespaces::{
    close_all_files, default_signals, die_with_parent, exit, exit_code_of, os,
};

/// Set by SIGTERM: the keeper is to end the command's tree now.
static TERMINATE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_terminate(_: libc::c_int) {
    TERMINATE.store(true, Ordering::SeqCst);
}

/// How long the keeper sleeps between looks at its children; SIGTERM cuts the sleep short.
const POLL: libc::timespec = libc::timespec {
    tv_sec: 0,
    tv_nsec: 20_000_000,
};

/// The body of the `pre_exec` hook: returns `Ok` in the process that goes on to exec the
/// command; the keeper never returns.
pub(crate) fn enter(tool: Pid, lock: Option<&Lock>) -> io::Result<()> {
    // SIGTERM, not SIGKILL: the keeper must live long enough to sweep.
    die_with_parent(tool, Signal::SIGTERM)?;
    nix::sys::prctl::set_child_subreaper(true).map_err(os)?;
    let handler = SigAction::new(
        SigHandler::Handler(on_terminate),
        SaFlags::empty(),
        SigSet::empty(),
    );
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { sigaction(Signal::SIGTERM, &handler) }.map_err(os)?;
    // SAFETY: single-threaded after the fork that made this process; both sides only make
    // system calls before the child execs.
    let command = match unsafe { fork() }.map_err(os)? {
        ForkResult::Child => {
            let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
            // SAFETY: restores the default disposition; no handler of ours is involved.
            unsafe { sigaction(Signal::SIGTERM, &default) }.map_err(os)?;
            nix::sys::prctl::set_child_subreaper(false).map_err(os)?;
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(os)?;
            if let Some(lock) = lock {
                lock.apply()?;
            }
            return Ok(());
        }
        ForkResult::Parent { child } => child,
    };
    close_all_files();
    keep(command)
}

fn keep(command: Pid) -> ! {
    let mut code = None;
    loop {
        if TERMINATE.load(Ordering::SeqCst) {
            sweep();
            exit(code.unwrap_or(128 + Signal::SIGKILL as i32));
        }
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => {
                // SAFETY: nanosleep only reads the timespec; a signal ends it early.
                unsafe { libc::nanosleep(&POLL, std::ptr::null_mut()) };
            }
            Ok(status) if status.pid() == Some(command) => {
                code = exit_code_of(status);
                if code.is_some() {
                    sweep();
                    exit(code.unwrap_or(0));
                }
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => exit(code.unwrap_or(127)),
        }
    }
}

/// Kills every child until none is left, reaping as it goes.
fn sweep() {
    default_signals();
    loop {
        let killed = kill_children();
        let mut reaped = false;
        loop {
            match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::StillAlive) => break,
                Ok(_) => reaped = true,
                Err(Errno::EINTR) => {}
                // No child left at all: the tree is gone.
                Err(_) => return,
            }
        }
        if !killed && !reaped {
            // SAFETY: as in `keep`.
            unsafe { libc::nanosleep(&POLL, std::ptr::null_mut()) };
        }
    }
}

/// SIGKILL to each pid in `/proc/thread-self/children`; false when it listed none (or cannot
/// be read, in which case the tool's kill of the process group is the backstop).
fn kill_children() -> bool {
    let Ok(file) = open(
        c"/proc/thread-self/children",
        OFlag::O_RDONLY | OFlag::O_CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let mut buf = [0u8; 4096];
    let mut killed = false;
    let mut pid: i32 = 0;
    let mut in_number = false;
    loop {
        let read_len = match read(file.as_fd(), &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buf[..read_len] {
            if byte.is_ascii_digit() {
                pid = pid
                    .saturating_mul(10)
                    .saturating_add(i32::from(byte - b'0'));
                in_number = true;
            } else if in_number {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                killed = true;
                pid = 0;
                in_number = false;
            }
        }
    }
    if in_number {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        killed = true;
    }
    killed
}
