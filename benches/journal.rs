//! Run-journal overhead (docs/design.md §14): what writing `<board>/runs/<run-id>.jsonl` costs a
//! run.
//!
//! Target: at most 2 % of a 100-action run against a model that answers at once.
//!
//! ```text
//! cargo bench --bench journal                      # 100 actions, 5 runs
//! cargo bench --bench journal -- --actions 200 --runs 3
//! ```
//! 1. `run --auto --max-actions N` on a fresh board of stories, against the fake model with no
//!    delay: the wall time of a run, and the journal it wrote (one line per event).
//! 2. The same number of journal lines written again through the library's `Journal`, with the
//!    same flush per line, into a fresh folder: the journal's own time.
//!
//! The ratio of the two medians is the overhead. The run already pays for the journal it
//! writes, so the ratio is an upper bound of what a run without one would save.
//! Without `--bench` (as `cargo test --benches` runs it) it does a small smoke run.

// A benchmark reports its figures on stdout and its progress on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[path = "common/cli.rs"]
mod cli;
#[path = "../tests/suite/fake_llm.rs"]
#[allow(dead_code)]
mod fake_llm;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentic_sdlc::config::{self, Config};
use agentic_sdlc::protocol::{ActionRef, ActionType};
use agentic_sdlc::workflow::budget::Spending;
use agentic_sdlc::workflow::checkpoint::RunOptions;
use agentic_sdlc::workflow::events::RunEvent;
use agentic_sdlc::workflow::journal::Journal;
use fake_llm::FakeLlm;

/// Actions of one story from backlog to done: refine, research, plan, implement, review, done.
const ACTIONS_PER_STORY: usize = 6;
const TARGET_PERCENT: f64 = 2.0;

/// Actions and runs.
fn parse_args(args: &mut cli::BenchArgs) -> Result<(usize, usize), String> {
    let (mut actions, mut runs) = if args.smoke { (12, 1) } else { (100, 5) };
    while let Some(flag) = args.next_flag() {
        match flag.as_str() {
            "--actions" => actions = args.number(&flag)?,
            "--runs" => runs = args.number::<usize>(&flag)?.max(1),
            other => args.unknown(other),
        }
    }
    Ok((actions, runs))
}

fn main() {
    cli::main(
        "journal",
        "[--actions N] [--runs R]",
        parse_args,
        |(actions, runs)| bench(actions, runs),
    );
}

fn bench(actions: usize, runs: usize) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let llm = runtime.block_on(FakeLlm::start());
    let mut run_times = Vec::new();
    let mut journal_times = Vec::new();
    let mut lines = 0;
    for _ in 0..runs {
        let project = tempfile::tempdir().map_err(|e| e.to_string())?;
        let dir = project.path();
        tool(dir, None, &["init"])?;
        // A folder outside git: the stories work in the tree as it is.
        tool(dir, None, &["config", "git.branchPerStory", "false"])?;
        for i in 0..actions.div_ceil(ACTIONS_PER_STORY) {
            tool(dir, None, &["add", &format!("Story {i}")])?;
        }
        let max = actions.to_string();
        let start = Instant::now();
        tool(dir, Some(&llm), &["run", "--auto", "--max-actions", &max])?;
        run_times.push(start.elapsed());

        let runs_dir = dir.join(".agentic-sdlc/runs");
        let journal = std::fs::read_dir(&runs_dir)
            .map_err(|e| format!("no journal in {}: {e}", runs_dir.display()))?
            .filter_map(|e| e.ok())
            .next()
            .ok_or("the run wrote no journal")?
            .path();
        lines = std::fs::read_to_string(&journal)
            .map_err(|e| e.to_string())?
            .lines()
            .count();
        journal_times.push(write_journal(lines)?);
    }
    let run = median(&run_times);
    let journal = median(&journal_times);
    let percent = journal.as_secs_f64() / run.as_secs_f64() * 100.0;
    println!(
        "journal overhead, {actions} actions ({lines} journal lines), median of {runs} run(s)"
    );
    println!("  run --auto (zero-delay model)  {:>10.1} ms", ms(run));
    println!("  journal lines alone            {:>10.3} ms", ms(journal));
    println!(
        "  overhead                       {percent:>10.3} %   (target ≤ {TARGET_PERCENT} %{})",
        if percent <= TARGET_PERCENT {
            ", met"
        } else {
            ", NOT met"
        }
    );
    Ok(())
}

/// Writes `lines` journal lines the way a run does: a header, then started/completed pairs.
fn write_journal(lines: usize) -> Result<Duration, String> {
    let board = tempfile::tempdir().map_err(|e| e.to_string())?;
    let config = Config::from_value(
        config::merged_value(&serde_json::json!({})),
        Path::new("bench.json"),
    )
    .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let journal = Journal::create(
        board.path(),
        Arc::new(Spending::new(&config)),
        &RunOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    for n in 0..lines.saturating_sub(1) {
        let action = ActionRef {
            action_type: ActionType::Research,
            story_id: format!("story-bench-{:04}", n / 2).into(),
            slug: format!("story-{}", n / 2).into(),
        };
        let story_id = action.story_id.clone();
        let event = if n % 2 == 0 {
            RunEvent::ActionStarted {
                story_id,
                action,
                title: "A story of the bench".into(),
                detail: None,
            }
        } else {
            RunEvent::ActionCompleted {
                story_id,
                action,
                summary: "research written".into(),
            }
        };
        journal.append(&event);
    }
    Ok(start.elapsed())
}

fn tool(dir: &Path, llm: Option<&FakeLlm>, args: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
    cmd.current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .env_remove("RUST_LOG");
    match llm {
        Some(llm) => cmd.env("OPENAI_BASE_URL", llm.base_url()),
        None => cmd.env_remove("OPENAI_BASE_URL"),
    };
    let output = cmd.output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "`agentic-sdlc {}` exited {:?}: {}",
            args.join(" "),
            output.status.code(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
