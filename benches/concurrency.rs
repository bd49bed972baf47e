//! Parallel-run benchmark: N independent stories through `run --auto --concurrency N` against
//! `--concurrency 1`, with a fake model that answers every request after a fixed delay.
//!
//! Target: a speed-up of at least 0.8 × N for the phases that can run in parallel (N = 4).
//!
//! ```text
//! cargo bench --bench concurrency                                   # 4 stories, 300 ms, 5 runs
//! cargo bench --bench concurrency -- --stories 8 --delay-ms 500 --runs 1
//! AGENTIC_SDLC_BIN=/tmp/agentic-sdlc-before cargo bench --bench concurrency   # another build
//! ```
//! Configurations, each on fresh boards:
//! - (a) the whole life cycle in a folder that is not a git repository: implement has no branch
//!   and the stories share one working tree, so implement and review (whose reviewers read that
//!   tree) take turns;
//! - (b) the whole life cycle in a git repository with `git.worktrees: true` and
//!   `git.integrate: "none"`: each story implements in a worktree of its own, so every phase
//!   can run in parallel, and its work stays on its branch;
//! - (d) as (b) with `git.integrate: "merge"` (the default): every story ends merged into main,
//!   one merge at a time, each on the base the one before left;
//! - (c) `run --auto --step refine`, then `research`, then `plan`: phases that never touch the
//!   working tree.
//!
//! The "ideal" column is the speed-up the model's delay alone allows (rounds of requests a story
//! waits for, with implement and review taking turns in (a)); "C=N overhead" is the C=N time
//! beyond those rounds: the process starting, board reads and fsynced writes, git. A `--step`
//! run waits for one round only, so this fixed cost weighs most there; a longer `--delay-ms`
//! weighs it less.
//! Without `--bench` (as `cargo test --benches` runs it) it does a small smoke run.
//!
//! A benchmark reports; it does not fail. It exits non-zero only when it cannot measure: a
//! command fails, or a run leaves a story short of where it should be.

// A benchmark reports its figures on stdout and its progress on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "common/cli.rs"]
mod cli;
#[path = "../tests/suite/fake_llm.rs"]
#[allow(dead_code)]
mod fake_llm;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use fake_llm::{FakeLlm, Reply};
use serde_json::{json, Value};

/// The binary under test: a private copy, taken at start, of the one cargo built for this bench
/// (or of `AGENTIC_SDLC_BIN`, to measure another build). Checkouts that share one target folder
/// rebuild `target/release/agentic-sdlc` whenever they build, which would otherwise swap the
/// binary in the middle of a measurement.
static BIN: OnceLock<PathBuf> = OnceLock::new();

fn binary() -> &'static Path {
    BIN.get()
        .expect("the binary is copied before anything runs")
}

fn copy_binary(into: &Path) -> Result<String, String> {
    let source = std::env::var("AGENTIC_SDLC_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_agentic-sdlc").to_string());
    let copy = into.join("agentic-sdlc");
    std::fs::copy(&source, &copy).map_err(|e| format!("cannot copy {source}: {e}"))?;
    BIN.set(copy)
        .map_err(|_| "the binary was copied twice".to_string())?;
    Ok(source)
}

/// The target: speed-up ≥ 0.8 × N where every phase can run in parallel.
const TARGET: f64 = 0.8;
/// Requests one story makes from backlog to done: refine, research, plan, implement (a
/// `write_file` call, then its report), and the three review perspectives.
const REQUESTS_PER_STORY: usize = 8;
/// Rounds of requests a story waits for in turn: the review's three perspectives go at once.
const ROUNDS_PER_STORY: usize = 6;
const STEPS: [&str; 3] = ["refine", "research", "plan"];

struct Options {
    stories: usize,
    delay: Duration,
    runs: usize,
    smoke: bool,
}

fn parse_args(args: &mut cli::BenchArgs) -> Result<Options, String> {
    let smoke = args.smoke;
    let mut options = Options {
        stories: if smoke { 2 } else { 4 },
        delay: Duration::from_millis(if smoke { 50 } else { 300 }),
        runs: if smoke { 1 } else { 5 },
        smoke,
    };
    while let Some(flag) = args.next_flag() {
        match flag.as_str() {
            "--stories" => options.stories = args.number::<usize>(&flag)?.max(2),
            "--delay-ms" => options.delay = Duration::from_millis(args.number(&flag)?),
            "--runs" => options.runs = args.number::<usize>(&flag)?.max(1),
            other => args.unknown(other),
        }
    }
    Ok(options)
}

fn main() {
    cli::main(
        "concurrency",
        "[--stories N] [--delay-ms D] [--runs R]",
        parse_args,
        |options| {
            let bin_dir =
                tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
            let source = copy_binary(bin_dir.path())?;
            bench(&options, &source)
        },
    );
}

/// Where a run happens: a plain folder, or a git repository with a worktree per story.
#[derive(Clone, Copy, PartialEq)]
enum Tree {
    Shared,
    /// Worktrees, work left on its branch.
    Worktrees,
    /// Worktrees, work merged into main.
    WorktreesMerged,
}

/// One row of the table: the median wall times at C=1 and C=N.
struct Row {
    name: String,
    serial: Duration,
    parallel: Duration,
    /// Rounds of model delay one after another at C=1 and at C=N: the least each run can take.
    serial_rounds: usize,
    parallel_rounds: usize,
    /// Whether the ≥ 0.8 × N target applies (every phase of the row can run in parallel).
    targeted: bool,
}

impl Row {
    /// The speed-up the model's delay alone allows.
    fn ideal(&self) -> f64 {
        self.serial_rounds as f64 / self.parallel_rounds as f64
    }

    /// The C=N time beyond the model's own: process start, board reads and writes, git.
    fn overhead(&self, delay: Duration) -> f64 {
        self.parallel.as_secs_f64() - delay.as_secs_f64() * self.parallel_rounds as f64
    }
}

fn bench(options: &Options, source: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let n = options.stories;
    let load_before = load_average();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); 6 + 2 * STEPS.len()];
    for run in 0..options.runs {
        // Alternate the order so drift in the machine's load does not favour one side.
        let order = if run % 2 == 0 { [1, n] } else { [n, 1] };
        for c in order {
            let side = usize::from(c != 1);
            samples[side].push(whole_life_cycle(&runtime, options, Tree::Shared, c)?);
            samples[2 + side].push(whole_life_cycle(&runtime, options, Tree::Worktrees, c)?);
            samples[4 + side].push(whole_life_cycle(
                &runtime,
                options,
                Tree::WorktreesMerged,
                c,
            )?);
            for (i, time) in parallel_steps(&runtime, options, c)?
                .into_iter()
                .enumerate()
            {
                samples[6 + 2 * i + side].push(time);
            }
        }
    }
    let m = |i: usize| median(&samples[i]);
    let row = |name: String, at: usize, serial_rounds, parallel_rounds, targeted| Row {
        name,
        serial: m(at),
        parallel: m(at + 1),
        serial_rounds,
        parallel_rounds,
        targeted,
    };
    let life_cycle = ROUNDS_PER_STORY * n;
    let mut rows = vec![
        // Refine, research and plan at once, then implement and review one story at a time.
        row(
            "(a) life cycle, shared tree".into(),
            0,
            life_cycle,
            3 + 3 * n,
            false,
        ),
        row(
            "(b) life cycle, git worktrees".into(),
            2,
            life_cycle,
            ROUNDS_PER_STORY,
            true,
        ),
        // Merges take turns, but each is a few git commands next to the model's delay.
        row(
            "(d) life cycle, worktrees, merge".into(),
            4,
            life_cycle,
            ROUNDS_PER_STORY,
            true,
        ),
    ];
    for (i, step) in STEPS.iter().enumerate() {
        rows.push(row(format!("(c) --step {step}"), 6 + 2 * i, n, 1, true));
    }
    let steps: Vec<usize> = (0..STEPS.len()).map(|i| 6 + 2 * i).collect();
    rows.push(Row {
        name: "(c) refine+research+plan".into(),
        serial: steps.iter().map(|&i| m(i)).sum(),
        parallel: steps.iter().map(|&i| m(i + 1)).sum(),
        serial_rounds: STEPS.len() * n,
        parallel_rounds: STEPS.len(),
        targeted: true,
    });
    print_table(options, &rows, source, &load_before);
    Ok(())
}

fn print_table(options: &Options, rows: &[Row], source: &str, load_before: &str) {
    let n = options.stories;
    let cpus = std::thread::available_parallelism().map_or(0, |c| c.get());
    println!("\nbinary: {source}");
    println!(
        "concurrency: {n} stories, model delay {} ms, median of {} run(s), {cpus} CPU(s), load average {load_before} before and {} after",
        options.delay.as_millis(),
        options.runs,
        load_average()
    );
    let c1 = "C=1 (s)";
    let cn = format!("C={n} (s)");
    let target = format!("target ≥{:.1}", TARGET * n as f64);
    println!(
        "{:<34} {c1:>8} {cn:>8} {:>9} {:>11} {target:>11} {:>6} {:>13}",
        "configuration", "speed-up", "speed-up/N", "ideal", "C=N overhead"
    );
    for row in rows {
        let speedup = row.serial.as_secs_f64() / row.parallel.as_secs_f64();
        let per_story = speedup / n as f64;
        let verdict = match (row.targeted, per_story >= TARGET) {
            (false, _) => "n/a",
            (true, true) => "met",
            (true, false) => "MISSED",
        };
        println!(
            "{:<34} {:>8.2} {:>8.2} {:>9.2} {:>11.2} {verdict:>11} {:>6.2} {:>12.2}s",
            row.name,
            row.serial.as_secs_f64(),
            row.parallel.as_secs_f64(),
            speedup,
            per_story,
            row.ideal(),
            row.overhead(options.delay)
        );
    }
    println!("(a) is not held to the target: its implement and review actions share one working tree and take turns.");
    println!("ideal: the speed-up the model's delay alone allows; C=N overhead: the C=N time beyond that delay.");
    if options.smoke {
        println!(
            "smoke run (no --bench): it checks that the bench works; its figures mean nothing."
        );
    }
}

/// Backlog to done for every story in one `run --auto`; the wall time of that run.
fn whole_life_cycle(
    runtime: &tokio::runtime::Runtime,
    options: &Options,
    tree: Tree,
    concurrency: usize,
) -> Result<Duration, String> {
    let project = new_project(tree, options.stories)?;
    let dir = project.path();
    let llm = runtime.block_on(FakeLlm::start_with_delay(Some(options.delay)));
    for i in 1..=options.stories {
        // The title line ends the marker, so story 1 does not match story 10.
        let marker = format!("# Story: {}\n", story_title(i));
        let file = story_file(i);
        llm.push_for(
            "implement",
            &marker,
            Reply::tool("write_file", json!({"path": file, "content": "work\n"})),
        );
        llm.push_for("implement", &marker, Reply::text(format!("Wrote {file}.")));
    }
    let concurrency = concurrency.to_string();
    let (elapsed, _) = run_tool(dir, &llm, &["run", "--auto", "--concurrency", &concurrency])?;
    for story in stories(dir, &llm)? {
        if story["status"] != "done" {
            return Err(format!(
                "story {} ended in {} ({})",
                story["slug"], story["status"], story["last_error"]
            ));
        }
    }
    if tree == Tree::WorktreesMerged {
        for i in 1..=options.stories {
            git(dir, &["cat-file", "-e", &format!("main:{}", story_file(i))])
                .map_err(|e| format!("story {i}'s work is not on main: {e}"))?;
        }
    }
    expect_requests(&llm, REQUESTS_PER_STORY * options.stories)?;
    Ok(elapsed)
}

/// refine, research and plan for every story, one `run --auto --step` each; their wall times.
fn parallel_steps(
    runtime: &tokio::runtime::Runtime,
    options: &Options,
    concurrency: usize,
) -> Result<Vec<Duration>, String> {
    let project = new_project(Tree::Shared, options.stories)?;
    let dir = project.path();
    let llm = runtime.block_on(FakeLlm::start_with_delay(Some(options.delay)));
    let concurrency = concurrency.to_string();
    let mut times = Vec::new();
    for step in STEPS {
        let (elapsed, _) = run_tool(
            dir,
            &llm,
            &[
                "run",
                "--auto",
                "--step",
                step,
                "--concurrency",
                &concurrency,
            ],
        )?;
        for story in stories(dir, &llm)? {
            let reached = match step {
                "refine" => story["status"] == "ready",
                "research" => story["research_complete"] == true,
                _ => story["plan_complete"] == true,
            };
            if !reached {
                return Err(format!(
                    "after --step {step}, story {} is {} ({})",
                    story["slug"], story["status"], story["last_error"]
                ));
            }
        }
        times.push(elapsed);
    }
    expect_requests(&llm, STEPS.len() * options.stories)?;
    Ok(times)
}

fn story_title(i: usize) -> String {
    format!("Independent story {i}")
}

fn story_file(i: usize) -> String {
    format!("story-{i}.txt")
}

/// A fresh board with `stories` independent stories; for the worktree trees, a git repository
/// with one commit and `git.worktrees: true`.
fn new_project(tree: Tree, stories: usize) -> Result<tempfile::TempDir, String> {
    let project =
        tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
    let dir = project.path();
    let git_repo = tree != Tree::Shared;
    if git_repo {
        std::fs::write(dir.join("README.md"), "# bench\n").map_err(|e| e.to_string())?;
        git(dir, &["init", "--quiet", "--initial-branch", "main"])?;
        git(dir, &["add", "README.md"])?;
        git(dir, &["commit", "--quiet", "--message", "initial"])?;
    }
    let no_model = |args: &[&str]| command(dir, None, args).map(|_| ());
    no_model(&["init"])?;
    if git_repo {
        no_model(&["config", "git.worktrees", "true"])?;
    } else {
        // A folder outside git works in the tree as it is (a run refuses to put branches there).
        no_model(&["config", "git.branchPerStory", "false"])?;
    }
    if tree == Tree::Worktrees {
        no_model(&["config", "git.integrate", "none"])?;
    }
    for i in 1..=stories {
        no_model(&["add", &story_title(i)])?;
    }
    Ok(project)
}

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let output = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// Runs the tool against the fake model; its wall time and output. A non-zero exit is an error.
fn run_tool(dir: &Path, llm: &FakeLlm, args: &[&str]) -> Result<(Duration, Output), String> {
    let start = Instant::now();
    let output = command(dir, Some(llm), args)?;
    Ok((start.elapsed(), output))
}

fn command(dir: &Path, llm: Option<&FakeLlm>, args: &[&str]) -> Result<Output, String> {
    let mut cmd = Command::new(binary());
    cmd.current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        // The story branch commits need an identity; a bench machine may have none.
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .env_remove("AGENTIC_SDLC_STREAM")
        .env_remove("RUST_LOG");
    match llm {
        Some(llm) => cmd.env("OPENAI_BASE_URL", llm.base_url()),
        None => cmd.env_remove("OPENAI_BASE_URL"),
    };
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", binary().display()))?;
    if !output.status.success() {
        return Err(format!(
            "`agentic-sdlc {}` exited {:?}\nstdout:\n{}\nstderr:\n{}",
            args.join(" "),
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output)
}

/// Every story on the board, as `status --json` reports it.
fn stories(dir: &Path, llm: &FakeLlm) -> Result<Vec<Value>, String> {
    let output = command(dir, Some(llm), &["--json", "status"])?;
    let status: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("status --json is not JSON: {e}"))?;
    let columns = status["columns"]
        .as_object()
        .ok_or("status --json has no columns")?;
    Ok(columns
        .values()
        .filter_map(Value::as_array)
        .flatten()
        .cloned()
        .collect())
}

/// The parallel run must do the same work as the serial one, no more.
fn expect_requests(llm: &FakeLlm, expected: usize) -> Result<(), String> {
    let made = llm.requests().len();
    if made != expected {
        return Err(format!(
            "the model got {made} request(s), expected {expected}: {:?}",
            llm.roles()
        ));
    }
    Ok(())
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "?".into())
}
