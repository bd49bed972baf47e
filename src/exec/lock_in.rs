//! The last steps before a boxed command execs: it gives up every capability and locks itself
//! into the kernel rules prepared by [`super::kernel`]. Once done, nothing it or its children do
//! can undo it: the bounding set is empty, `no_new_privs` keeps set-user-ID programs from
//! granting anything, and Landlock domains and seccomp filters are inherited and only ever
//! added to.
//!
//! Runs between fork and exec: system calls only, no allocation.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// What the command child locks itself into.
#[derive(Debug)]
pub(crate) struct Lock {
    /// The highest capability number the kernel knows (`/proc/sys/kernel/cap_last_cap`).
    last_capability: u32,
    /// A Landlock ruleset to enforce, when the box has file-system rules.
    landlock: Option<OwnedFd>,
    /// Seccomp programs to install, in order.
    seccomp: Vec<Vec<libc::sock_filter>>,
}

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit capability sets in two 32-bit words.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

impl Lock {
    pub(crate) fn new(landlock: Option<OwnedFd>, seccomp: Vec<Vec<libc::sock_filter>>) -> Lock {
        Lock {
            last_capability: last_capability(),
            landlock,
            seccomp,
        }
    }

    /// Drops every capability, sets `no_new_privs`, then enforces the Landlock ruleset and the
    /// seccomp filters. An error means the command must not run.
    pub(crate) fn apply(&self) -> io::Result<()> {
        drop_capabilities(self.last_capability)?;
        // SAFETY: prctl only takes integers.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if let Some(ruleset) = &self.landlock {
            // SAFETY: the descriptor is a Landlock ruleset this process holds open; flags 0.
            let enforced = unsafe {
                libc::syscall(
                    libc::SYS_landlock_restrict_self,
                    ruleset.as_raw_fd(),
                    0 as libc::c_uint,
                )
            };
            if enforced != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        for program in &self.seccomp {
            let filter = libc::sock_fprog {
                len: u16::try_from(program.len())
                    .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
                filter: program.as_ptr().cast_mut(),
            };
            // SAFETY: `filter` points at a program that lives as long as `self`; the kernel
            // copies it during the call.
            let installed = unsafe {
                libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0 as libc::c_uint,
                    &filter as *const libc::sock_fprog,
                )
            };
            if installed != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Empties the bounding and ambient sets, then the process's own sets. Without
/// `CAP_SETPCAP` (an unprivileged tool outside any namespace of its own) the bounding set
/// cannot shrink, and there is nothing in it to fear: the process holds no capability.
fn drop_capabilities(last: u32) -> io::Result<()> {
    for capability in 0..=last {
        // SAFETY: prctl only takes integers.
        let dropped = unsafe {
            libc::prctl(
                libc::PR_CAPBSET_DROP,
                libc::c_ulong::from(capability),
                0,
                0,
                0,
            )
        };
        if dropped != 0 {
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EPERM) => {}
                // Past the kernel's last capability.
                Some(libc::EINVAL) => break,
                _ => return Err(err),
            }
        }
    }
    // SAFETY: prctl only takes integers.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let none = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a header and two data words, both alive on this stack.
    let set =
        unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, none.as_ptr()) };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Read once, before any fork.
fn last_capability() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(63)
}
