//! One real action on the large board: `run --step research --max-actions 1` against a fake
//! model that answers at once, timed against `status --json`, and how often the run opens each
//! story file (counted with strace when it is installed); `details` of one story is timed in
//! the same rounds.
//!
//! After each run the story files it changed are put back from a copy taken at the start, so
//! every round researches the same story on the same board.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use super::fake_llm::{FakeLlm, Reply};
use super::measure::{self, Sample};

pub const RUN_ARGS: [&str; 5] = ["run", "--step", "research", "--max-actions", "1"];
const STATUS_ARGS: [&str; 2] = ["status", "--json"];
/// `details` of one story, measured in the same rounds (target: 50 ms).
pub const DETAILS_TARGET_MS: f64 = 50.0;

/// What the rounds measured.
pub struct Figures {
    pub status: Vec<Sample>,
    pub run: Vec<Sample>,
    /// `details <story> --json` of one story on the same board.
    pub details: Vec<Sample>,
    /// `None` when strace is not installed.
    pub opens: Option<Opens>,
}

/// Opens of story files during one run, by file.
pub struct Opens {
    pub files: usize,
    /// The most-opened file (the story the run researched) and its count.
    pub busiest: (String, usize),
    /// The most any other story file was opened.
    pub others_max: usize,
}

fn tool(bin: &Path, root: &Path, llm: &FakeLlm, args: &[&str]) -> Command {
    let mut command = super::tool(bin, root, args);
    command
        .env("OPENAI_BASE_URL", llm.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .env_remove("AGENTIC_SDLC_STREAM");
    command
}

/// One warm-up, then `runs` rounds of `status --json`, the research run and `details` of
/// `story` in turn.
pub fn measure(bin: &Path, root: &Path, runs: usize, story: &str) -> Result<Figures, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let llm = runtime.block_on(FakeLlm::start());
    llm.set_default(
        "research",
        Reply::text("Findings: the module needs a cache."),
    );
    let mut figures = Figures {
        status: Vec::new(),
        run: Vec::new(),
        details: Vec::new(),
        opens: None,
    };
    let pristine = Pristine::take(root)?;
    for round in 0..=runs {
        let status = measure::run(&mut super::tool(bin, root, &STATUS_ARGS))?;
        let started = SystemTime::now();
        let run = measure::run(&mut tool(bin, root, &llm, &RUN_ARGS))?;
        pristine.restore(started)?;
        let details = measure::run(&mut super::tool(bin, root, &["details", story, "--json"]))?;
        if round > 0 {
            figures.status.push(status);
            figures.run.push(run);
            figures.details.push(details);
        }
    }
    let started = SystemTime::now();
    figures.opens = count_opens(&tool(bin, root, &llm, &RUN_ARGS), root)?;
    pristine.restore(started)?;
    let researched = llm.requests_for("research").len();
    let expected = runs + 1 + usize::from(figures.opens.is_some());
    if researched != expected {
        return Err(format!(
            "{expected} runs made {researched} research calls; each should make one"
        ));
    }
    Ok(figures)
}

/// A copy of the board's column folders, to undo what a run wrote.
struct Pristine {
    board: PathBuf,
    copy: tempfile::TempDir,
}

impl Pristine {
    fn take(root: &Path) -> Result<Pristine, String> {
        let board = root.join(".agentic-sdlc");
        let copy = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
        for column in super::generate::COLUMNS {
            let (from, to) = (board.join(column), copy.path().join(column));
            std::fs::create_dir_all(&to).map_err(|e| e.to_string())?;
            for file in files(&from)? {
                std::fs::copy(&file, to.join(file.file_name().unwrap_or_default()))
                    .map_err(|e| format!("cannot copy {}: {e}", file.display()))?;
            }
        }
        Ok(Pristine { board, copy })
    }

    /// Puts back every story file changed since `since`, and removes files that were not there.
    fn restore(&self, since: SystemTime) -> Result<(), String> {
        for column in super::generate::COLUMNS {
            let (live, saved) = (self.board.join(column), self.copy.path().join(column));
            for file in files(&live)? {
                let name = file.file_name().unwrap_or_default();
                let changed = std::fs::metadata(&file)
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t >= since);
                if !saved.join(name).exists() {
                    std::fs::remove_file(&file).map_err(|e| e.to_string())?;
                } else if changed {
                    std::fs::copy(saved.join(name), &file).map_err(|e| e.to_string())?;
                }
            }
            for file in files(&saved)? {
                let target = live.join(file.file_name().unwrap_or_default());
                if !target.exists() {
                    std::fs::copy(&file, &target).map_err(|e| e.to_string())?;
                }
            }
        }
        Ok(())
    }
}

fn files(folder: &Path) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(folder).map_err(|e| format!("cannot list {}: {e}", folder.display()))?;
    Ok(entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
}

/// Runs `command` once more under `strace -f -e trace=openat` and counts the opens of each
/// story file (`.md` files in the column folders); `None` without strace.
fn count_opens(command: &Command, root: &Path) -> Result<Option<Opens>, String> {
    let installed = Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        return Ok(None);
    }
    let trace = tempfile::NamedTempFile::new().map_err(|e| format!("temp file: {e}"))?;
    let mut traced = Command::new("strace");
    traced
        .args(["-f", "-qq", "-e", "trace=openat", "-o"])
        .arg(trace.path())
        .arg(command.get_program())
        .args(command.get_args())
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (key, value) in command.get_envs() {
        match value {
            Some(value) => traced.env(key, value),
            None => traced.env_remove(key),
        };
    }
    let status = traced
        .status()
        .map_err(|e| format!("cannot run strace: {e}"))?;
    if !status.success() {
        return Err(format!("the run under strace failed: {status}"));
    }
    let text = std::fs::read_to_string(trace.path()).map_err(|e| e.to_string())?;
    let mut counts: HashMap<String, usize> = HashMap::new();
    for line in text.lines() {
        // `1234 openat(AT_FDCWD, "/…/.agentic-sdlc/ready/slug.md", O_RDONLY|O_CLOEXEC) = 3`
        let Some(path) = line.split('"').nth(1) else {
            continue;
        };
        let in_column = super::generate::COLUMNS
            .iter()
            .any(|c| path.contains(&format!(".agentic-sdlc/{c}/")));
        if in_column && path.ends_with(".md") {
            *counts.entry(path.to_string()).or_default() += 1;
        }
    }
    let mut sorted: Vec<(String, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let files = sorted.len();
    let mut sorted = sorted.into_iter();
    let busiest = sorted.next().unwrap_or_default();
    let others_max = sorted.next().map_or(0, |(_, n)| n);
    Ok(Some(Opens {
        files,
        busiest,
        others_max,
    }))
}
