//! What the box costs one agent command (docs/benchmarks.md): `true` run N times through the
//! library's `Sandbox`, in a git repository holding a board of 50 stories, under four
//! settings measured side by side in one process:
//!
//! 1. `namespaces-only`: user, PID and mount namespaces and nothing else, as every command ran
//!    before the box (`tools.sandbox: "namespaces"`, `tools.network: "host"`, no guard);
//! 2. `box`: the default box, Landlock, seccomp, a network namespace, read-only mounts, no
//!    capability, without the guard;
//! 3. `box + guard`: the same with the guard's look at the board, the configs and the refs
//!    before and after, which is what a run does;
//! 4. `off`: no box at all (`tools.sandbox: "off"`), for reference.
//!
//! Target: the box with its guard adds at most 20 ms per command to namespaces-only.
//!
//! ```text
//! cargo bench --bench sandbox                 # 200 commands per setting
//! cargo bench --bench sandbox -- --runs 500
//! ```
//! Without `--bench` (as `cargo test --benches` runs it) it does a small smoke run.

// A benchmark reports its figures on stdout and its progress on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "common/cli.rs"]
mod cli;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentic_sdlc::config::{NetworkAccess, SandboxMode, ToolsConfig};
use agentic_sdlc::exec::{BoxedCommand, Sandbox};
use agentic_sdlc::workflow::guard::BoardGuard;

const TARGET_MS: f64 = 20.0;
const STORIES: usize = 50;

/// Commands run for each configuration.
fn parse_args(args: &mut cli::BenchArgs) -> Result<usize, String> {
    let mut runs = if args.smoke { 5 } else { 200 };
    while let Some(flag) = args.next_flag() {
        match flag.as_str() {
            "--runs" => runs = args.number::<usize>(&flag)?.max(1),
            other => args.unknown(other),
        }
    }
    Ok(runs)
}

fn main() {
    cli::main("sandbox", "[--runs R]", parse_args, bench);
}

fn bench(runs: usize) -> Result<(), String> {
    let repo = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = repo.path();
    make_project(root)?;
    let board = root.join(".agentic-sdlc");
    let tools = |sandbox: SandboxMode, network: NetworkAccess| ToolsConfig {
        max_read_bytes: 262_144,
        timeout_seconds: 120,
        sandbox,
        network,
        keep_env: Vec::new(),
        writable_roots: Vec::new(),
    };
    let key = "OPENAI_API_KEY";
    let guard = Arc::new(BoardGuard::new(root, &board, None));
    let settings: Vec<(&str, Sandbox)> = vec![
        (
            "namespaces-only",
            Sandbox::new(&tools(SandboxMode::Namespaces, NetworkAccess::Host), key),
        ),
        (
            "box",
            Sandbox::new(&tools(SandboxMode::Landlock, NetworkAccess::None), key),
        ),
        (
            "box + guard",
            Sandbox::new(&tools(SandboxMode::Landlock, NetworkAccess::None), key).with_guard(guard),
        ),
        (
            "off",
            Sandbox::new(&tools(SandboxMode::Off, NetworkAccess::Host), key),
        ),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut medians = Vec::new();
    println!("sandbox: `true` x {runs} per setting, {STORIES}-story board, in one process");
    println!(
        "{:<16} {:>10} {:>10} {:>10}",
        "setting", "median", "p90", "min"
    );
    for (name, sandbox) in &settings {
        // One warm-up call: the first command of a run also learns what the kernel allows.
        runtime.block_on(call(sandbox, root))?;
        let mut times = Vec::with_capacity(runs);
        for _ in 0..runs {
            let started = Instant::now();
            runtime.block_on(call(sandbox, root))?;
            times.push(started.elapsed());
        }
        times.sort();
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        let median = ms(times[times.len() / 2]);
        println!(
            "{:<16} {:>8.2}ms {:>8.2}ms {:>8.2}ms",
            name,
            median,
            ms(times[times.len() * 9 / 10]),
            ms(times[0])
        );
        medians.push((*name, median));
    }
    let of = |name: &str| medians.iter().find(|(n, _)| *n == name).map(|(_, m)| *m);
    if let (Some(base), Some(full)) = (of("namespaces-only"), of("box + guard")) {
        let added = full - base;
        println!(
            "box + guard adds {added:.2} ms per command to namespaces-only (target ≤ {TARGET_MS} ms): {}",
            if added <= TARGET_MS { "met" } else { "MISSED" }
        );
    }
    Ok(())
}

async fn call(sandbox: &Sandbox, tree: &Path) -> Result<(), String> {
    let out = sandbox
        .run(BoxedCommand {
            command: "true",
            tree,
            limit: Duration::from_secs(30),
            env: &[],
        })
        .await
        .map_err(|e| e.to_string())?;
    if out.exit_code != Some(0) {
        return Err(format!("`true` failed: {}", out.output));
    }
    Ok(())
}

/// A git repository with a few source files, the config and a board of stories.
fn make_project(root: &Path) -> Result<(), String> {
    let write = |path: &str, text: &str| -> Result<(), String> {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap_or(root)).map_err(|e| e.to_string())?;
        std::fs::write(full, text).map_err(|e| e.to_string())
    };
    write(".agentic-sdlc.json", "{}\n")?;
    for n in 0..20 {
        write(&format!("src/module_{n}.rs"), "pub fn f() {}\n")?;
    }
    for n in 0..STORIES {
        let column = ["backlog", "ready", "in-progress", "done"][n % 4];
        write(
            &format!(".agentic-sdlc/{column}/story-{n}.md"),
            &format!(
                "---\nid: story-bench-{n}\ntitle: Story {n}\npriority: {n}\n---\n# Story {n}\n"
            ),
        )?;
    }
    for args in [
        vec!["init", "--quiet", "-b", "main"],
        vec![
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "add",
            "--all",
        ],
        vec![
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "commit",
            "--quiet",
            "-m",
            "Initial commit",
        ],
    ] {
        let status = Command::new("git")
            .current_dir(root)
            .args(&args)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("git {args:?} failed"));
        }
    }
    Ok(())
}
