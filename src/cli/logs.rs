//! `logs <story> [--phase P] [--follow]`: a story's transcripts, readable (docs/design.md §14).

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use super::context::Context;
use crate::board::{lookup, Board};
use crate::error::{Error, ExitStatus, Result};
use crate::output::Printer;
use crate::report::transcript::{transcripts, Renderer};
use crate::workflow::lock;

/// How often `--follow` looks for new lines.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The story: id or slug (or a unique prefix of either).
    #[arg(add = clap_complete::ArgValueCandidates::new(super::values::story_candidates))]
    pub story: String,
    /// Only the transcripts of this phase (or of the review, or of the merge's checks).
    #[arg(long, value_name = "PHASE", ignore_case = true,
          value_parser = clap::builder::PossibleValuesParser::new(super::values::transcript_labels()))]
    pub phase: Option<String>,
    /// Keep printing while a run works on the board; stops when the run ends, or on Ctrl-C.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Show long messages in full instead of folding them.
    #[arg(long)]
    pub full: bool,
}

pub fn run(args: LogsArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let board_dir = project.board_dir();
    let board = Board::load(&board_dir)?;
    let story = lookup::find_on_board(&board, &args.story)?;
    let (story_id, slug) = (story.id().clone(), story.slug.clone());
    let phase = args.phase.as_deref().map(|p| p.trim().to_ascii_lowercase());
    let mut follower = Follower {
        printer: &context.printer,
        offsets: HashMap::new(),
        renderer: Renderer::new(!args.full),
    };
    let wanted = || transcripts(&board_dir, &story_id, phase.as_deref());
    let printed = follower.drain(&wanted());
    if !args.follow || !lock::held(&board_dir) {
        if printed {
            return Ok(ExitStatus::Success);
        }
        let which = phase
            .as_deref()
            .map_or(String::new(), |p| format!(" for phase {p}"));
        let hint = if args.follow {
            "no run is working on the board either"
        } else {
            "they are written while a run works on the story"
        };
        return Err(Error::ActionFailed(format!(
            "no transcripts of {slug}{which} yet in {} ({hint})",
            board_dir.join("logs").join(&story_id).display()
        )));
    }
    // Follow until the run lets go of the board, then print what it wrote last.
    while lock::held(&board_dir) {
        std::thread::sleep(POLL);
        follower.drain(&wanted());
    }
    follower.drain(&wanted());
    Ok(ExitStatus::Success)
}

struct Follower<'a> {
    printer: &'a Printer,
    /// How far each transcript has been printed, in bytes.
    offsets: HashMap<PathBuf, u64>,
    renderer: Renderer,
}

impl Follower<'_> {
    /// Prints the complete lines added to `paths` since the last call; whether any were.
    fn drain(&mut self, paths: &[PathBuf]) -> bool {
        let mut printed = false;
        for path in paths {
            let (start, fresh) = match self.offsets.get(path) {
                Some(offset) => (*offset, false),
                None => (0, true),
            };
            let Some(text) = read_from(path, start) else {
                continue;
            };
            // A line still being written ends without a newline: leave it for the next poll.
            let complete = text.rfind('\n').map_or(0, |end| end + 1);
            if fresh {
                let header = self.renderer.header(path);
                // A blank line between transcripts, none before the first.
                let lines = match self.offsets.is_empty() {
                    true => vec![header],
                    false => vec![String::new(), header],
                };
                self.print(lines);
            }
            self.offsets.insert(path.clone(), start + complete as u64);
            for line in text[..complete].lines().filter(|l| !l.trim().is_empty()) {
                let rendered = if self.printer.is_json() {
                    vec![line.to_string()]
                } else {
                    self.renderer.line(line)
                };
                self.print(rendered);
                printed = true;
            }
        }
        printed
    }

    fn print(&self, lines: Vec<String>) {
        if self.printer.is_json() {
            for line in lines.iter().filter(|l| l.starts_with('{')) {
                if let Ok(value) = serde_json::from_str::<serde_json::Value>(line) {
                    self.printer.json_line(&value);
                }
            }
            return;
        }
        for line in lines {
            self.printer.out(line);
        }
    }
}

/// The text of `path` from byte `offset`, read as UTF-8 up to the last whole character.
fn read_from(path: &Path, offset: u64) -> Option<String> {
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
