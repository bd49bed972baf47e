//! What coordinating through a git remote costs (docs/design.md §20): N stories through `run
//! --auto` in one clone, without `--remote` and with `--remote origin` against a bare repository on
//! this disk, with a fake model that answers at once, so what is left is the tool and git.
//!
//! ```text
//! cargo bench --bench remote                           # 6 stories, 5 runs
//! cargo bench --bench remote -- --stories 12 --runs 3
//! AGENTIC_SDLC_BIN=/tmp/agentic-sdlc-before cargo bench --bench remote   # another build
//! ```
//!
//! Both sides use worktrees (as `--remote` does) and merge every story into main. Per story the
//! table gives the median wall time each way, their difference (what claiming, fetching and
//! pushing add), and git connections to the remote per story, counted by a stand-in for ssh
//! that logs every connection (one extra run). The target is at most 2 connections per story
//! beyond the merge's own fetch and push, so 4 in all, plus a fixed 3 per run (the checks
//! before the run and its first look at the board).
//!
//! Without `--bench` (as `cargo test --benches` runs it) it does a small smoke run. A benchmark
//! reports; it exits non-zero only when it cannot measure.

// A benchmark reports its figures on stdout and its progress on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "common/cli.rs"]
mod cli;
#[path = "../tests/suite/fake_llm.rs"]
#[allow(dead_code)]
mod fake_llm;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fake_llm::{FakeLlm, Reply};
use serde_json::json;

/// A stand-in for ssh that runs the git command here and logs the connection.
const COUNTING_SSH: &str =
    "#!/bin/sh\nshift\necho \"$*\" >> \"$(dirname \"$0\")/connections.log\"\nexec sh -c \"$*\"\n";

struct Options {
    stories: usize,
    runs: usize,
}

fn parse_args(args: &mut cli::BenchArgs) -> Result<Options, String> {
    let smoke = args.smoke;
    let mut options = Options {
        stories: if smoke { 2 } else { 6 },
        runs: if smoke { 1 } else { 5 },
    };
    while let Some(flag) = args.next_flag() {
        match flag.as_str() {
            "--stories" => options.stories = args.number::<usize>(&flag)?.max(1),
            "--runs" => options.runs = args.number::<usize>(&flag)?.max(1),
            other => args.unknown(other),
        }
    }
    Ok(options)
}

fn main() {
    cli::main(
        "remote",
        "[--stories N] [--runs R]",
        parse_args,
        |options| bench(&options),
    );
}

fn binary() -> PathBuf {
    std::env::var("AGENTIC_SDLC_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_agentic-sdlc")))
}

/// Git for the bench's own set-up, shut off from the machine's configuration.
fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// How a run reaches main.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    /// Merged into the clone's own main.
    Local,
    /// Through the bare repository as `origin`.
    Remote,
    /// As `Remote`, through the connection-counting ssh.
    CountedRemote,
}

/// One clone of a fresh bare repository holding `stories` stories, its fake model scripted.
struct Board {
    _place: tempfile::TempDir,
    clone: PathBuf,
    ssh_log: PathBuf,
}

fn board(fake: &FakeLlm, stories: usize, way: Way) -> Result<Board, String> {
    let place = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = place.path();
    let seed = root.join("seed");
    std::fs::create_dir_all(&seed).map_err(|e| e.to_string())?;
    git(
        root,
        &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
    )?;
    git(&seed, &["init", "--quiet", "-b", "main"])?;
    run_tool(&seed, fake, &["init"])?;
    run_tool(&seed, fake, &["config", "git.worktrees", "true"])?;
    for n in 0..stories {
        let title = format!("Bench story {n}");
        run_tool(&seed, fake, &["add", &title])?;
        let marker = format!("# Story: {title}");
        let file = format!("work/story-{n}.txt");
        fake.push_for(
            "implement",
            &marker,
            Reply::tool("write_file", json!({"path": file, "content": "done\n"})),
        );
        fake.push_for("implement", &marker, Reply::text("Wrote it."));
    }
    std::fs::write(seed.join(".gitignore"), ".agentic-sdlc/runs/\n").map_err(|e| e.to_string())?;
    git(&seed, &["add", "--all"])?;
    git(
        &seed,
        &[
            "-c",
            "user.name=Bench",
            "-c",
            "user.email=b@example.com",
            "commit",
            "-qm",
            "board",
        ],
    )?;
    let bare = root.join("origin.git");
    git(
        &seed,
        &["push", "--quiet", &bare.display().to_string(), "main"],
    )?;
    let clone = root.join("clone");
    git(
        root,
        &["clone", "--quiet", &bare.display().to_string(), "clone"],
    )?;
    let ssh_log = root.join("connections.log");
    if way == Way::CountedRemote {
        let script = root.join("ssh.sh");
        std::fs::write(&script, COUNTING_SSH).map_err(|e| e.to_string())?;
        git(
            &clone,
            &[
                "config",
                "core.sshCommand",
                &format!("sh {}", script.display()),
            ],
        )?;
        git(&clone, &["config", "ssh.variant", "simple"])?;
        let url = format!("ssh://bench{}", bare.display());
        git(&clone, &["remote", "set-url", "origin", &url])?;
    }
    Ok(Board {
        _place: place,
        clone,
        ssh_log,
    })
}

fn run_tool(dir: &Path, fake: &FakeLlm, args: &[&str]) -> Result<Duration, String> {
    let started = Instant::now();
    let output = Command::new(binary())
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", fake.base_url())
        .env_remove("OPENAI_API_KEY")
        .output()
        .map_err(|e| format!("cannot start agentic-sdlc: {e}"))?;
    let took = started.elapsed();
    if !output.status.success() {
        return Err(format!(
            "agentic-sdlc {args:?} exited {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(took)
}

/// One run of every story from backlog to done; its wall time and the board it left.
fn one_run(
    runtime: &tokio::runtime::Runtime,
    stories: usize,
    way: Way,
) -> Result<(Duration, Board), String> {
    let fake = runtime.block_on(FakeLlm::start());
    let board = board(&fake, stories, way)?;
    let args: &[&str] = match way {
        Way::Local => &["run", "--auto"],
        Way::Remote | Way::CountedRemote => &["run", "--auto", "--remote", "origin"],
    };
    let took = run_tool(&board.clone, &fake, args)?;
    let done = std::fs::read_dir(board.clone.join(".agentic-sdlc/done"))
        .map_err(|e| e.to_string())?
        .count();
    if done != stories {
        return Err(format!("{done} of {stories} stories done"));
    }
    Ok((took, board))
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn bench(options: &Options) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let n = options.stories;
    let (mut local, mut remote) = (Vec::new(), Vec::new());
    for run in 0..options.runs {
        // Alternate the order so drift in the machine's load does not favour one side.
        let ways = if run % 2 == 0 {
            [Way::Local, Way::Remote]
        } else {
            [Way::Remote, Way::Local]
        };
        for way in ways {
            let (took, _) = one_run(&runtime, n, way)?;
            eprintln!("remote: run {} {}: {took:.2?}", run + 1, name(way));
            match way {
                Way::Local => local.push(took),
                _ => remote.push(took),
            }
        }
    }
    let (_, counted) = one_run(&runtime, n, Way::CountedRemote)?;
    let connections = std::fs::read_to_string(&counted.ssh_log)
        .map_err(|e| e.to_string())?
        .lines()
        .count();
    let (local, remote) = (median(&mut local), median(&mut remote));
    let per_story = |d: Duration| d.as_secs_f64() * 1000.0 / n as f64;
    let added = per_story(remote) - per_story(local);
    println!(
        "stories: {n}, runs: {}, model: fake, answers at once",
        options.runs
    );
    println!("| way | wall time | per story |");
    println!("|---|---:|---:|");
    println!(
        "| one clone, `run --auto` | {local:.2?} | {:.0} ms |",
        per_story(local)
    );
    println!(
        "| one clone, `run --auto --remote origin` (bare repository on disk) | {remote:.2?} | {:.0} ms |",
        per_story(remote)
    );
    println!("coordination per story: {added:.0} ms");
    println!(
        "git connections to the remote: {connections} = 3 per run + {:.1} per story (target: 4, of which 2 are the merge's own)",
        (connections as f64 - 3.0) / n as f64
    );
    Ok(())
}

fn name(way: Way) -> &'static str {
    match way {
        Way::Local => "local",
        Way::Remote => "--remote",
        Way::CountedRemote => "--remote (counted)",
    }
}
