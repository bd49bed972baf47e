//! Large-board benchmark: `status --json` and `run --dry-run --auto --json` against reading
//! every story file once with `cat`.
//!
//! Target: both commands no slower than 1.5× that `cat` (median wall time) with a peak RSS
//! under 60 MiB, on a board of 10,000 stories of about 4 KB each.
//!
//! Then one real action on the same board, `run --step research --max-actions 1` against a fake
//! model, is timed against `status --json` (target: ≤ 1.5×), and the opens of each story file
//! during one such run are counted with strace (target: at most twice for every file but the
//! story researched). See `board_scale/research_run.rs`.
//!
//! ```text
//! cargo bench --bench board_scale                                  # 10,000 stories, 5 runs
//! cargo bench --bench board_scale -- --stories 1000 --runs 3 --keep
//! ```
//! `--keep` leaves the generated board on disk (for a profiler); `--seed N` varies the board;
//! `--bin PATH` measures another build of the tool (say, one from before a change) on the same
//! board. Without `--bench` (as `cargo test --benches` runs it) it does a small smoke run.
//!
//! The binary is copied into the temporary folder before anything runs, so all rounds measure
//! one build. With a target folder shared by several checkouts, `target/release/agentic-sdlc`
//! is whichever checkout built last, possibly between cargo's build and this run; the report
//! notes a rebuild it sees, and `--bin` with a copy of your own build settles it.
//!
//! A benchmark reports; it does not fail. It exits non-zero only when it cannot measure: the
//! generated board does not validate, or a command fails.

// A benchmark reports its figures on stdout and its progress on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

// A bench's root file resolves modules beside it, so the helpers name their folder.
#[path = "common/cli.rs"]
mod cli;
#[path = "../tests/suite/fake_llm.rs"]
#[allow(dead_code)]
mod fake_llm;
#[path = "board_scale/generate.rs"]
mod generate;
#[path = "board_scale/measure.rs"]
mod measure;
#[path = "board_scale/research_run.rs"]
mod research_run;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use measure::{Sample, Summary};

const BIN: &str = env!("CARGO_BIN_EXE_agentic-sdlc");
const MAX_RATIO: f64 = 1.5;
const MAX_RSS_MIB: f64 = 60.0;

struct Options {
    bin: PathBuf,
    stories: usize,
    runs: usize,
    seed: u64,
    keep: bool,
    smoke: bool,
}

fn parse_args(args: &mut cli::BenchArgs) -> Result<Options, String> {
    let smoke = args.smoke;
    let mut options = Options {
        bin: PathBuf::from(BIN),
        stories: if smoke { 200 } else { 10_000 },
        runs: if smoke { 1 } else { 5 },
        seed: 0x5eed_b0a2d,
        keep: false,
        smoke,
    };
    while let Some(flag) = args.next_flag() {
        match flag.as_str() {
            "--stories" => options.stories = args.number::<usize>(&flag)?.max(1),
            "--runs" => options.runs = args.number::<usize>(&flag)?.max(1),
            "--seed" => options.seed = args.number(&flag)?,
            "--keep" => options.keep = true,
            "--bin" => options.bin = args.value(&flag)?.into(),
            other => args.unknown(other),
        }
    }
    Ok(options)
}

fn main() {
    cli::main(
        "board_scale",
        "[--stories N] [--runs R] [--seed S] [--keep] [--bin PATH]",
        parse_args,
        |options| bench(&options),
    );
}

fn tool(bin: &Path, root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin);
    command
        .args(args)
        .current_dir(root)
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG");
    command
}

fn bench(options: &Options) -> Result<(), String> {
    let dir = tempfile::Builder::new()
        .prefix("board-scale-")
        .tempdir()
        .map_err(|e| format!("temp dir: {e}"))?;
    let bin = dir.path().join("agentic-sdlc");
    let copied_from = identity(&options.bin);
    std::fs::copy(&options.bin, &bin)
        .map_err(|e| format!("cannot copy {}: {e}", options.bin.display()))?;
    let bin_size = std::fs::metadata(&bin).map_or(0, |m| m.len());
    let root = &dir.path().join("board");
    std::fs::create_dir(root).map_err(|e| format!("cannot create {}: {e}", root.display()))?;
    let started = Instant::now();
    let board = generate::board(root, options.stories, options.seed)
        .map_err(|e| format!("cannot write the board: {e}"))?;
    let generated_in = started.elapsed();

    check_board(&bin, root, options.stories)?;

    let mut cat_batches = cat_commands(root, &board.files);
    let status_args = ["status", "--json"];
    let plan_args = ["run", "--dry-run", "--auto", "--json"];
    let names = [
        format!(
            "cat <{} files>{}",
            board.files.len(),
            if cat_batches.len() > 1 {
                format!(" ({} batches)", cat_batches.len())
            } else {
                String::new()
            }
        ),
        "status --json".to_string(),
        "run --dry-run --auto --json".to_string(),
    ];
    let mut samples: [Vec<Sample>; 3] = Default::default();
    // One warm-up of each (the page cache is warm from here on), then rounds that take each
    // command in turn, so noise from other work on a shared machine spreads over all three.
    for round in 0..=options.runs {
        let results = [
            measure::run_all(&mut cat_batches)?,
            measure::run(&mut tool(&bin, root, &status_args))?,
            measure::run(&mut tool(&bin, root, &plan_args))?,
        ];
        if round > 0 {
            for (list, sample) in samples.iter_mut().zip(results) {
                list.push(sample);
            }
        }
    }
    let summaries: Vec<Summary> = samples.iter().map(|s| measure::summarise(s)).collect();

    println!();
    println!(
        "board: {} stories, {:.1} MiB (avg {:.1} KiB/story); {} (generated in {:.1} s, seed {:#x})",
        board.files.len(),
        board.bytes as f64 / (1024.0 * 1024.0),
        board.bytes as f64 / 1024.0 / board.files.len() as f64,
        generate::COLUMNS
            .iter()
            .zip(board.per_column)
            .map(|(c, n)| format!("{c} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        generated_in.as_secs_f64(),
        options.seed,
    );
    println!(
        "machine: {} cores available, possibly shared; page cache warm; {} run(s) after 1 warm-up",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        options.runs
    );
    println!(
        "peak RSS: ru_maxrss from wait4, never below this process's own peak of {:.1} MiB \
         (Linux charges a vfork+exec child its parent's peak); that is most of cat's figure",
        measure::own_peak_rss_kib() as f64 / 1024.0
    );
    println!(
        "binary: {} ({bin_size} bytes, copied before the first run; {})",
        options.bin.display(),
        if options.bin != Path::new(BIN) {
            "given with --bin"
        } else if cfg!(debug_assertions) {
            "DEBUG build: figures are not meaningful; use `cargo bench`"
        } else {
            "optimised: bench profile, inherits release"
        }
    );
    if options.smoke {
        println!("smoke run (no --bench): a small board to check that the benchmark works");
    }
    println!();
    print_table(&names, &summaries);
    // After the table above: the fake model's server lives in this process and would add to
    // the peak RSS that Linux charges to every child started after it.
    // The first story generated: a story in the middle of the board's name order.
    let story = board
        .files
        .first()
        .and_then(|file| Path::new(file).file_stem())
        .map(|stem| stem.to_string_lossy().into_owned())
        .ok_or("the generated board has no story")?;
    let research = research_run::measure(&bin, root, options.runs, &story)?;
    print_research(&research);
    if identity(&options.bin) != copied_from {
        println!(
            "\nnote: {} was rebuilt while this ran. With a target folder shared by several \
             checkouts it may hold another checkout's build; the copy measured here may be one \
             too. Use a private CARGO_TARGET_DIR, or build and pass --bin, when in doubt.",
            options.bin.display()
        );
    }
    if options.keep {
        let kept = dir.keep();
        println!(
            "\nboard kept at {} (the binary measured is beside it)",
            kept.join("board").display()
        );
    }
    Ok(())
}

/// The part of `status --json` the check reads; the stories themselves are skipped unread.
#[derive(serde::Deserialize)]
struct StatusCounts {
    columns: std::collections::BTreeMap<String, Vec<serde::de::IgnoredAny>>,
}

/// The generator must write what the tool accepts: `validate` passes and `status` lists every
/// story. Otherwise the figures would describe a board of parse errors.
fn check_board(bin: &Path, root: &Path, stories: usize) -> Result<(), String> {
    let output = tool(bin, root, &["validate"])
        .output()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stdout);
        let head: Vec<&str> = text.lines().take(20).collect();
        return Err(format!(
            "`agentic-sdlc validate` rejects the generated board (a generator bug, or a tool bug):\n{}\n{}",
            head.join("\n"),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // Streamed and counted, never held: this process's peak RSS is charged to every child it
    // starts afterwards (see `measure::own_peak_rss_kib`), so it must stay small.
    let mut child = tool(bin, root, &["status", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let status: Result<StatusCounts, _> = serde_json::from_reader(std::io::BufReader::new(stdout));
    let exit = child.wait().map_err(|e| e.to_string())?;
    let status =
        status.map_err(|e| format!("`status --json` printed no status document ({exit}): {e}"))?;
    let listed: usize = status.columns.values().map(Vec::len).sum();
    if listed != stories {
        return Err(format!(
            "`status --json` lists {listed} stories, the board has {stories}"
        ));
    }
    Ok(())
}

/// `cat` over every story file, as few processes as the argument-list limit allows, with paths
/// relative to the board root.
fn cat_commands(root: &Path, files: &[String]) -> Vec<Command> {
    // SAFETY: sysconf only reads a system limit.
    let arg_max = unsafe { libc::sysconf(libc::_SC_ARG_MAX) };
    let arg_max = if arg_max > 0 {
        arg_max as usize
    } else {
        128 * 1024
    };
    let env_size: usize = std::env::vars_os()
        .map(|(k, v)| k.len() + v.len() + 2 + std::mem::size_of::<usize>())
        .sum();
    // Half the remaining room: margin for the auxiliary vector and the stack.
    let budget = arg_max.saturating_sub(env_size) / 2;
    let mut commands = Vec::new();
    let mut batch: Vec<&str> = Vec::new();
    let mut used = 0;
    for file in files {
        let cost = file.len() + 1 + std::mem::size_of::<usize>();
        if !batch.is_empty() && used + cost > budget {
            commands.push(cat(root, &batch));
            batch.clear();
            used = 0;
        }
        batch.push(file);
        used += cost;
    }
    if !batch.is_empty() {
        commands.push(cat(root, &batch));
    }
    commands
}

fn cat(root: &Path, files: &[&str]) -> Command {
    let mut command = Command::new("cat");
    command.arg("--").args(files).current_dir(root);
    command
}

/// Size and modification time: enough to notice that a file was replaced.
fn identity(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn print_table(names: &[String], summaries: &[Summary]) {
    let baseline = summaries[0].median.as_secs_f64();
    println!(
        "{:<30} {:>10} {:>10} {:>8} {:>8} {:>13}  target (≤{MAX_RATIO}× cat, <{MAX_RSS_MIB} MiB)",
        "command", "median ms", "min ms", "× cat", "CPU ms", "peak RSS MiB"
    );
    for (index, (name, summary)) in names.iter().zip(summaries).enumerate() {
        let ratio = summary.median.as_secs_f64() / baseline;
        let rss = summary.max_rss_kib as f64 / 1024.0;
        let verdict = if index == 0 {
            "(baseline)".to_string()
        } else {
            let fast = ratio <= MAX_RATIO;
            let small = rss < MAX_RSS_MIB;
            match (fast, small) {
                (true, true) => "met: yes".to_string(),
                (false, true) => "met: no (time)".to_string(),
                (true, false) => "met: no (memory)".to_string(),
                (false, false) => "met: no (time, memory)".to_string(),
            }
        };
        println!(
            "{name:<30} {:>10.1} {:>10.1} {:>8.2} {:>8.1} {:>13.1}  {verdict}",
            ms(summary.median),
            ms(summary.min),
            ratio,
            ms(summary.cpu_median),
            rss
        );
    }
}

fn print_research(figures: &research_run::Figures) {
    let status = measure::summarise(&figures.status);
    let run = measure::summarise(&figures.run);
    let ratio = run.median.as_secs_f64() / status.median.as_secs_f64();
    println!();
    println!(
        "{:<38} {:>10} {:>10} {:>9} {:>8}  target (≤{MAX_RATIO}× status)",
        "one action", "median ms", "min ms", "× status", "CPU ms"
    );
    let rows = [
        (
            "status --json".to_string(),
            &status,
            "(baseline)".to_string(),
        ),
        (
            research_run::RUN_ARGS.join(" "),
            &run,
            format!("met: {}", if ratio <= MAX_RATIO { "yes" } else { "no" }),
        ),
    ];
    for (name, summary, verdict) in rows {
        println!(
            "{name:<38} {:>10.1} {:>10.1} {:>9.2} {:>8.1}  {verdict}",
            ms(summary.median),
            ms(summary.min),
            summary.median.as_secs_f64() / status.median.as_secs_f64(),
            ms(summary.cpu_median),
        );
    }
    let details = measure::summarise(&figures.details);
    let details_ms = ms(details.median);
    println!(
        "{:<38} {:>10.1} {:>10.1} {:>9.2} {:>8.1}  target (≤{}ms): met: {}",
        "details <one story> --json",
        details_ms,
        ms(details.min),
        details.median.as_secs_f64() / status.median.as_secs_f64(),
        ms(details.cpu_median),
        research_run::DETAILS_TARGET_MS,
        if details_ms <= research_run::DETAILS_TARGET_MS {
            "yes"
        } else {
            "no"
        }
    );
    match &figures.opens {
        Some(opens) => println!(
            "story files opened by one run (strace -f -e trace=openat): {} files; every file but \
             the researched one at most {}×; the researched one ({}) {}×",
            opens.files, opens.others_max, opens.busiest.0, opens.busiest.1
        ),
        None => println!("story file opens: not counted (strace is not installed)"),
    }
}
