//! The runner against real processes: namespaces where the kernel allows them (it does on the
//! machines this is built on), and the process-group fallback.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::process::{build, scrubbed_names, Launch};
use super::*;

// The integration suite's probe for leftover processes, the same file compiled here.
#[path = "../../tests/suite/process_probe.rs"]
pub(crate) mod process_probe;
use process_probe::{live_processes_with, marker, survivors};

/// Runs `work` to its end on a multi-threaded runtime of its own, as the tool does.
fn block_on<T>(work: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

/// Runs `command` in the default box (Landlock, namespaces, no network) on `dir`.
fn run(command: &str, dir: &Path, secs: u64) -> ShellOutput {
    block_on(Sandbox::default().run(BoxedCommand {
        command,
        tree: dir,
        limit: Duration::from_secs(secs),
        env: &[],
    }))
    .unwrap()
}

/// Starts `command` without namespaces, as on a kernel that refuses them (inside a runtime).
fn spawn_in_group(command: &str, dir: &Path) -> tokio::process::Child {
    let spawn = Spawn {
        command,
        dir,
        env: &[],
        scrub: Scrub {
            hidden: &[],
            keep: &[],
        },
    };
    build(&spawn, Launch::Reaper(None)).spawn().unwrap()
}

/// Runs without namespaces, as on a kernel that refuses them.
fn run_in_group(command: &str, dir: &Path, secs: u64) -> ShellOutput {
    block_on(async {
        let child = spawn_in_group(command, dir);
        supervise(child, Isolation::ProcessGroup, Duration::from_secs(secs))
            .await
            .unwrap()
    })
}

/// Whether this kernel refuses user namespaces, said once so a skipped test shows why.
fn namespaces_refused() -> bool {
    let refused = !std::process::Command::new("unshare")
        .args(["-Urpf", "--mount-proc", "true"])
        .status()
        .is_ok_and(|status| status.success());
    if refused {
        eprintln!("skipped: this kernel refuses user namespaces");
    }
    refused
}

#[test]
fn reports_exit_code_and_combined_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = run("echo out; echo err >&2; exit 3", dir.path(), 30);
    assert_eq!(out.exit_code, Some(3));
    assert!(!out.timed_out);
    assert_eq!(out.output, "out\nerr\n");
    assert_eq!(out.describe_status(), "exit code: 3");
}

#[test]
fn commands_see_their_own_processes_only() {
    if namespaces_refused() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tool = std::process::id();
    let out = run(
        &format!(
            "echo parent=$PPID; ls /proc | grep -x '[0-9]*' | wc -l; \
             cat /proc/{tool}/environ 2>&1 || echo no-tool; cat /proc/1/environ 2>&1 || echo no-init"
        ),
        dir.path(),
        30,
    );
    assert_eq!(out.exit_code, Some(0), "{}", out.output);
    // sh's parent is init, pid 1 of the namespace; the tool's pid does not exist there.
    assert!(out.output.starts_with("parent=1\n"), "{}", out.output);
    assert!(out.output.contains("no-tool"), "{}", out.output);
    // Init is a fork of the tool and holds its environment; it is not readable.
    assert!(out.output.contains("no-init"), "{}", out.output);
    assert!(!out.output.contains("PATH="), "{}", out.output);
    assert!(out.output.contains("Permission denied"), "{}", out.output);
}

#[test]
fn the_private_proc_cannot_be_unmounted_even_as_root() {
    if namespaces_refused() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run(
        "umount /proc 2>/dev/null || umount -l /proc 2>/dev/null || echo refused; \
         unshare -Urm sh -c 'umount /proc 2>/dev/null || umount -l /proc 2>/dev/null || echo refused-nested' 2>&1 | head -c 200; \
         ls /proc | grep -c '^[0-9]'",
        dir.path(),
        30,
    );
    let lines: Vec<&str> = out.output.lines().collect();
    assert_eq!(lines.first(), Some(&"refused"), "{}", out.output);
    // A nested user namespace gets its own CAP_SYS_ADMIN, but the kernel locks the mounts it
    // inherits.
    assert!(
        out.output.contains("refused-nested") || out.output.contains("unshare: "),
        "{}",
        out.output
    );
    // Init, sh and ls (and grep): not the machine's processes.
    let visible: usize = lines.last().unwrap().parse().unwrap();
    assert!(visible < 10, "{}", out.output);
}

#[test]
fn a_setsid_child_dies_when_the_command_ends() {
    if namespaces_refused() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let out = run(
        &format!("setsid sleep {marker} & (sleep {marker} &) ; echo started"),
        dir.path(),
        30,
    );
    assert_eq!(out.output, "started\n");
    assert_eq!(live_processes_with(&marker), Vec::<String>::new());
}

#[test]
fn the_timeout_kills_the_whole_tree() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let out = run(
        &format!("setsid sleep {marker} & echo begun; sleep {marker}"),
        dir.path(),
        1,
    );
    assert!(out.timed_out);
    assert_eq!(out.exit_code, None);
    assert_eq!(out.output, "begun\n");
    assert_eq!(live_processes_with(&marker), Vec::<String>::new());
}

#[test]
fn without_namespaces_the_keeper_sweeps_setsid_children_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let out = run_in_group(
        &format!("setsid sleep {marker} & (sleep {marker} &); echo begun; sleep {marker}"),
        dir.path(),
        1,
    );
    assert!(out.timed_out);
    assert_eq!(out.output, "begun\n");
    assert_eq!(survivors(&marker), Vec::<String>::new());
    let out = run_in_group("exit 4", dir.path(), 30);
    assert_eq!(out.exit_code, Some(4));
}

#[test]
fn without_namespaces_the_keeper_sweeps_setsid_children_when_the_command_ends() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let out = run_in_group(
        &format!(
            "setsid sh -c 'touch in-session; exec sleep {marker}' & (sleep {marker} &); \
             while [ ! -e in-session ]; do sleep 0.1; done; echo started"
        ),
        dir.path(),
        30,
    );
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.output, "started\n");
    assert_eq!(survivors(&marker), Vec::<String>::new());
}

#[test]
fn without_namespaces_a_cancelled_call_sweeps_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let marker = marker();
    let command = format!("setsid sh -c 'touch in-session; exec sleep {marker}' & sleep {marker}");
    block_on(async {
        let child = spawn_in_group(&command, dir.path());
        let call = supervise(child, Isolation::ProcessGroup, Duration::from_secs(60));
        // Ctrl-C drops the call; here an outer timeout does, once the daemon has its session.
        let cancel = async {
            while !dir.path().join("in-session").exists() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        tokio::select! {
            _ = call => panic!("the command ended by itself"),
            _ = cancel => {}
        }
    });
    assert_eq!(survivors(&marker), Vec::<String>::new());
}

#[test]
fn files_written_inside_keep_their_owner() {
    let dir = tempfile::tempdir().unwrap();
    let out = run("echo hi > made.txt; id -u", dir.path(), 30);
    assert_eq!(out.exit_code, Some(0), "{}", out.output);
    assert_eq!(out.output.trim(), nix::unistd::geteuid().to_string());
    let meta = std::fs::metadata(dir.path().join("made.txt")).unwrap();
    assert_eq!(
        std::os::unix::fs::MetadataExt::uid(&meta),
        nix::unistd::geteuid().as_raw()
    );
}

#[test]
fn secrets_are_scrubbed_from_the_environment() {
    let hidden = ["MY_LLM_KEY_VAR".to_string()];
    let keep = [
        "BUILD_CACHE_TOKEN".to_string(),
        "MY_LLM_KEY_VAR".to_string(),
    ];
    let scrub = Scrub {
        hidden: &hidden,
        keep: &keep,
    };
    let current = [
        ("MY_LLM_KEY_VAR", "sk-abcdefgh12345"),
        ("COPY_OF_IT", "sk-abcdefgh12345"),
        ("GITHUB_TOKEN", "ghp_x"),
        ("AWS_SECRET_ACCESS_KEY", "x"),
        ("DB_PASSWORD", "x"),
        ("PATH", "/usr/bin"),
        ("KEYBOARD_LAYOUT", "us"),
        ("npm_config_credential_helper", "x"),
        ("BUILD_CACHE_TOKEN", "kept-by-the-user"),
        ("HOME", "/root"),
    ]
    .map(|(k, v)| (OsString::from(k), OsString::from(v)));
    let mut removed = scrubbed_names(&scrub, current.into_iter());
    removed.sort();
    // Any name containing KEY, SECRET, TOKEN, PASSWORD, PASSWD or CREDENTIAL, in any case, goes;
    // tools.keepEnv keeps one of those, but never the key's own variable or a copy of it.
    assert_eq!(
        removed,
        [
            "AWS_SECRET_ACCESS_KEY",
            "COPY_OF_IT",
            "DB_PASSWORD",
            "GITHUB_TOKEN",
            "KEYBOARD_LAYOUT",
            "MY_LLM_KEY_VAR",
            "npm_config_credential_helper",
        ]
        .map(OsString::from)
    );
}

/// docs/reference.md names every part of a name that marks a variable as a secret.
#[test]
fn the_keep_env_row_names_every_secret_marker() {
    let page = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference.md"),
    )
    .unwrap();
    let row = page
        .lines()
        .find(|line| line.starts_with("| `tools.keepEnv`"))
        .expect("a tools.keepEnv row");
    for part in super::SECRET_NAME_PARTS {
        assert!(
            row.contains(&format!("`{part}`")),
            "the row misses {part}: {row}"
        );
    }
}
