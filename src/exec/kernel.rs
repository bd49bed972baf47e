//! The kernel's part of the box, prepared in the tool before the fork: a Landlock ruleset (as a
//! file descriptor the boxed process enforces on itself) and a seccomp filter (as a BPF program).
//! Building them allocates and opens files, which the code between fork and exec must not do;
//! enforcing them is one system call each (see [`super::sandbox`]).
//!
//! What the rules allow is described for users in docs/security.md ("What the box allows").

use std::collections::BTreeMap;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
    Scope, ABI,
};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

/// The newest Landlock ABI whose rights the box asks for; the kernel grants what it knows
/// (best effort), and everything it does not know is simply not restricted further.
const NEWEST_ABI: ABI = ABI::V9;

/// Character devices every program expects to open for writing. No terminal: neither
/// `/dev/tty` nor anything under `/dev/pts`, where the person's own terminal is, so a boxed
/// process can neither type into it nor write escape sequences past the tool's escaping
/// (docs/design.md §22).
const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The Landlock ABI of the running kernel: 0 when Landlock is missing or disabled.
pub(crate) fn landlock_abi() -> i64 {
    // Tests play a kernel without Landlock (debug builds only).
    #[cfg(debug_assertions)]
    if std::env::var_os("AGENTIC_SDLC_TEST_NO_LANDLOCK").is_some() {
        return 0;
    }
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag, the call only returns a
    // number; it reads and writes no memory of ours.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    version.max(0)
}

/// What the file-system rules of one boxed process allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FsRules {
    /// Read, list and execute everywhere; write only beneath these.
    pub writable: Vec<PathBuf>,
    /// Whether `/dev/shm` is a private mount of the box, and may then be written.
    pub private_shm: bool,
    /// Without a network namespace of its own, TCP is closed by Landlock where the kernel can.
    pub deny_tcp: bool,
    /// Connecting to named UNIX sockets anywhere (`tools.network: "host"`), where the kernel
    /// can restrict that at all.
    pub unix_sockets_anywhere: bool,
}

/// Builds the Landlock ruleset for `rules` and returns its descriptor.
pub(crate) fn landlock_ruleset(rules: &FsRules) -> Result<OwnedFd, String> {
    let fail = |what: &str, err: &dyn std::fmt::Display| format!("Landlock {what}: {err}");
    let all = AccessFs::from_all(NEWEST_ABI);
    let read = AccessFs::from_read(NEWEST_ABI)
        | if rules.unix_sockets_anywhere {
            AccessFs::ResolveUnix.into()
        } else {
            landlock::BitFlags::EMPTY
        };
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .map_err(|e| fail("file-system rights", &e))?
        .scope(Scope::from_all(NEWEST_ABI))
        .map_err(|e| fail("scopes", &e))?;
    if rules.deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(NEWEST_ABI))
            .map_err(|e| fail("network rights", &e))?;
    }
    let mut writable: Vec<&Path> = rules.writable.iter().map(PathBuf::as_path).collect();
    if rules.private_shm {
        writable.push(Path::new("/dev/shm"));
    }
    let created = ruleset
        .create()
        .map_err(|e| fail("ruleset", &e))?
        .add_rules(path_beneath_rules(["/"], read))
        .map_err(|e| fail("read rule", &e))?
        .add_rules(path_beneath_rules(DEVICES, device))
        .map_err(|e| fail("device rules", &e))?
        .add_rules(path_beneath_rules(writable, all))
        .map_err(|e| fail("write rules", &e))?;
    Option::<OwnedFd>::from(created).ok_or_else(|| "the kernel has no Landlock".to_string())
}

/// Mode bits that make an executable run as its owner or group.
const SET_ID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

/// The seccomp filter of every boxed process. It refuses (EPERM):
/// - reading or writing another process's memory (`ptrace`, `process_vm_readv/writev`);
/// - setting the set-user-ID or set-group-ID bit, by chmod or at creation: a boxed process
///   that is root inside its namespace owns its files as the host's root, and a set-user-ID
///   copy of a shell left in the tree would be root for whoever runs it later;
/// - pushing bytes into a terminal's input or console (`ioctl` `TIOCSTI`, `TIOCLINUX`): what is
///   pushed would run in the person's shell once the tool exits;
/// - with `deny_inet`, sockets other than UNIX ones (no network namespace to close it).
///
/// Two programs come back: the deny list, and one that answers `openat2` with ENOSYS (it
/// passes its mode inside a structure a filter cannot read; programs fall back to `openat`).
/// Filters stack, and the kernel applies the strictest answer.
pub(crate) fn seccomp_programs(deny_inet: bool) -> Result<Vec<Vec<libc::sock_filter>>, String> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        "riscv64" => TargetArch::riscv64,
        other => return Err(format!("no seccomp filter for the {other} architecture")),
    };
    let fail = |err: seccompiler::BackendError| format!("seccomp filter: {err}");
    let always: Vec<SeccompRule> = Vec::new();
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for syscall in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
    ] {
        rules.insert(syscall, always.clone());
    }
    // (syscall, index of the mode argument, index of the flags argument when only O_CREAT
    // makes it create)
    let mut mode_syscalls: Vec<(i64, u8, Option<u8>)> = vec![
        (libc::SYS_chmod, 1, None),
        (libc::SYS_fchmod, 1, None),
        (libc::SYS_fchmodat, 2, None),
        (libc::SYS_fchmodat2, 2, None),
        (libc::SYS_mknodat, 2, None),
        (libc::SYS_openat, 3, Some(2)),
        (libc::SYS_creat, 1, None),
    ];
    #[cfg(target_arch = "x86_64")]
    mode_syscalls.extend([(libc::SYS_open, 2, Some(1)), (libc::SYS_mknod, 1, None)]);
    for (syscall, mode_arg, flags_arg) in mode_syscalls {
        rules.insert(syscall, set_id_rules(mode_arg, flags_arg).map_err(fail)?);
    }
    let mut ioctl_rules = Vec::new();
    for request in [libc::TIOCSTI, libc::TIOCLINUX] {
        // The request's type is the C library's (an unsigned long with glibc, an int with musl).
        #[allow(clippy::unnecessary_cast)]
        let request = request as u64;
        let equal = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
            .map_err(fail)?;
        ioctl_rules.push(SeccompRule::new(vec![equal]).map_err(fail)?);
    }
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    if deny_inet {
        let mut socket_rules = Vec::new();
        for family in [
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_NETLINK,
            libc::AF_PACKET,
        ] {
            let equal =
                SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, family as u64)
                    .map_err(fail)?;
            socket_rules.push(SeccompRule::new(vec![equal]).map_err(fail)?);
        }
        rules.insert(libc::SYS_socket, socket_rules);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(fail)?;
    let openat2 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_openat2, Vec::new())]),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(fail)?;
    let compile = |filter: SeccompFilter| -> Result<Vec<libc::sock_filter>, String> {
        Ok(to_libc(filter.try_into().map_err(fail)?))
    };
    Ok(vec![compile(filter)?, compile(openat2)?])
}

/// The same instructions as libc's type, which the `seccomp` system call takes.
fn to_libc(program: seccompiler::BpfProgram) -> Vec<libc::sock_filter> {
    program
        .into_iter()
        .map(|op| libc::sock_filter {
            code: op.code,
            jt: op.jt,
            jf: op.jf,
            k: op.k,
        })
        .collect()
}

/// The open flags that create a file: `O_CREAT`, and the bit of `O_TMPFILE` that is not
/// `O_DIRECTORY` (an unnamed file that `linkat` can name later).
const CREATING_FLAGS: [u64; 2] = [libc::O_CREAT as u64, 0o20_000_000];

/// Matches a call whose mode argument carries a set-ID bit (and, for open, that creates).
fn set_id_rules(
    mode_arg: u8,
    flags_arg: Option<u8>,
) -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
    let mut rules = Vec::new();
    for bit in SET_ID_BITS {
        match flags_arg {
            None => rules.push(SeccompRule::new(vec![condition(mode_arg, bit)?])?),
            Some(flags) => {
                for creating in CREATING_FLAGS {
                    rules.push(SeccompRule::new(vec![
                        condition(mode_arg, bit)?,
                        condition(flags, creating)?,
                    ])?);
                }
            }
        }
    }
    Ok(rules)
}

/// `(argument & bit) == bit`.
fn condition(arg: u8, bit: u64) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::MaskedEq(bit),
        bit,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seccomp_programs_build() {
        let programs = seccomp_programs(true).unwrap();
        assert_eq!(programs.len(), 2);
        assert!(programs[0].len() > programs[1].len());
    }
}
