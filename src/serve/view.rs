//! What the pages show, read from the board, the run journals and the transcripts. Pure data:
//! [`super::pages`] turns it into HTML.

use std::path::{Path, PathBuf};

use super::live::{transcript_shown, Running, TranscriptShown};
use crate::board::records::Usage;
use crate::board::summary::{Listed, StorySummary};
use crate::board::{lookup, store, Board, Column, Phase, Story};
use crate::board::{Slug, StoryId};
use crate::config::Project;
use crate::error::Result;
use crate::report::transcript::transcripts;
use crate::report::{self, RunReport, StoryReport};
use crate::workflow::assessor::{assess, Assessment, Policy};
use crate::workflow::{journal, lock, person_decides};

/// The runs whose journals a story page reads for its timeline, newest first.
const TIMELINE_RUNS: usize = 50;
/// The transcripts a story page shows, newest last; older ones are a `logs` away.
const SHOWN_TRANSCRIPTS: usize = 30;

/// A story as its card shows it: the summary every board read keeps, and what it spent.
#[derive(Debug, Clone)]
pub struct Card {
    pub summary: StorySummary,
    pub usage: Usage,
}

impl Card {
    fn read(story: Story) -> Card {
        Card {
            usage: story.usage().unwrap_or_default(),
            summary: StorySummary::from(story),
        }
    }
}

impl Listed for Card {
    fn id(&self) -> &str {
        self.summary.id()
    }
    fn slug(&self) -> &str {
        &self.summary.slug
    }
    fn path(&self) -> &Path {
        &self.summary.path
    }
    fn column(&self) -> Column {
        self.summary.column
    }
    fn meta(&self) -> &crate::board::meta::StoryMeta {
        &self.summary.meta
    }
}

/// The whole board as the board page shows it.
#[derive(Debug)]
pub struct BoardView {
    /// The project folder's name, the page's title.
    pub project: String,
    pub board: Board,
    /// What each story spent, in the order of `board.stories`.
    pub usage: Vec<Usage>,
    pub assessment: Assessment,
    /// The latest run, from its journal; `running` says whether it still holds the board.
    pub run: Option<RunReport>,
}

impl BoardView {
    pub fn load(project: &Project) -> Result<BoardView> {
        let board_dir = project.board_dir();
        let cards = Board::load_with(&board_dir, Card::read)?;
        let (stories, usage): (Vec<StorySummary>, Vec<Usage>) = cards
            .stories
            .into_iter()
            .map(|card| (card.summary, card.usage))
            .unzip();
        let board = Board {
            dir: cards.dir,
            stories,
            broken: cards.broken,
        };
        let assessment = assess(&board, Policy::from_config(&project.config));
        let run = report::find_journal(&board_dir, None)
            .ok()
            .and_then(|path| {
                report::read(
                    &path,
                    Some((&board, project.root.as_path())),
                    lock::holder(&board_dir),
                )
                .ok()
            });
        Ok(BoardView {
            project: project.name(),
            board,
            usage,
            assessment,
            run,
        })
    }

    /// The stories of `column` by priority, each with what it spent.
    pub fn column(&self, column: Column) -> Vec<(&StorySummary, &Usage)> {
        let mut stories: Vec<(&StorySummary, &Usage)> = self
            .board
            .stories
            .iter()
            .zip(&self.usage)
            .filter(|(s, _)| s.column == column)
            .collect();
        stories.sort_by(|(a, _), (b, _)| (a.meta.priority, a.id()).cmp(&(b.meta.priority, b.id())));
        stories
    }

    /// What the latest run is doing to `story_id` right now, if it is at work on it.
    pub fn running(&self, story_id: &StoryId) -> Option<&report::ActionReport> {
        let run = self.run.as_ref().filter(|r| r.running)?;
        run.stories
            .iter()
            .find(|s| s.story_id == story_id)?
            .actions
            .iter()
            .rfind(|a| a.outcome == crate::report::ActionOutcome::Running)
    }

    /// Every action the latest run is at work on, for the live view of each one's work.
    pub fn running_actions(&self) -> Vec<Running> {
        let Some(run) = self.run.as_ref().filter(|r| r.running) else {
            return Vec::new();
        };
        run.stories
            .iter()
            .filter_map(|story| {
                let action = story
                    .actions
                    .iter()
                    .rfind(|a| a.outcome == crate::report::ActionOutcome::Running)?;
                Some(Running {
                    story: story.story_id.clone(),
                    action: action.action_type.name(),
                    since: action.started_at.clone(),
                })
            })
            .collect()
    }

    /// Why a story with work left cannot take it now.
    pub fn waiting(&self, story_id: &StoryId) -> Option<&str> {
        self.assessment
            .waiting
            .iter()
            .find(|w| w.story_id == story_id)
            .map(|w| w.reason.as_str())
    }
}

/// A gate that waits for a person, as its panel shows it (docs/design.md §23).
#[derive(Debug)]
pub struct PendingGate {
    pub phase: Phase,
    /// The phase's output to judge; `None` when its file is gone.
    pub output: Option<String>,
    /// What the gate judges by (`phases.<phase>.review.criteria`).
    pub criteria: Option<String>,
    /// Which output of the phase this is, counting from 1.
    pub attempt: u32,
    /// What an earlier decision or review said of the phase.
    pub earlier_feedback: Option<String>,
    /// For implement, the story branch's change, file by file.
    pub diff: Vec<FileDiff>,
}

/// One file of a change: its path, lines added and removed, and its patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub added: usize,
    pub removed: usize,
    pub patch: String,
}

/// A `git diff` split file by file, with each file's counts.
pub fn files_of(patch: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest
                .rsplit_once(" b/")
                .map_or(rest, |(_, path)| path)
                .to_string();
            files.push(FileDiff {
                path,
                added: 0,
                removed: 0,
                patch: String::new(),
            });
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if line.starts_with('+') && !line.starts_with("+++") {
            file.added += 1;
        } else if line.starts_with('-') && !line.starts_with("---") {
            file.removed += 1;
        }
        file.patch.push_str(line);
        file.patch.push('\n');
    }
    files
}

/// One story as its page shows it.
#[derive(Debug)]
pub struct StoryView {
    pub project: String,
    pub story: Story,
    pub usage: Usage,
    /// The human gate waiting for a decision, with what a person judges it by.
    pub pending: Option<PendingGate>,
    /// Why the story cannot go on now, when it waits.
    pub waiting: Option<String>,
    /// Each dependency's id, with its slug and column when the board has it.
    pub depends_on: Vec<(StoryId, Option<(Slug, Column)>)>,
    /// The runs that worked on the story, oldest first, with what each did to it.
    pub runs: Vec<(RunReport, StoryReport)>,
    /// Transcripts as `logs` prints them, each a heading then its lines, oldest first, with
    /// their files and how far they were read (where the page's live tail goes on from).
    pub transcripts: Vec<TranscriptShown>,
    /// Transcripts left out for length.
    pub older_transcripts: usize,
}

impl StoryView {
    /// The story `query` names (id, slug or unique prefix), found on `board`.
    pub fn load(project: &Project, board: &BoardView, query: &str) -> Result<StoryView> {
        let board_dir = project.board_dir();
        let found = lookup::find_on_board(&board.board, query)?;
        let story = store::locate(&board_dir, found.id(), Some(&found.path))?;
        let id = story.id().clone();
        let pending = story
            .progress()
            .ok()
            .and_then(|p| p.pending_gate)
            .and_then(|name| Phase::parse(&name))
            .map(|phase| pending_gate(project, &story, phase));
        let depends_on = story
            .meta
            .depends_on
            .iter()
            .map(|dep| {
                let known = board.board.get(dep).map(|d| (d.slug.clone(), d.column));
                (dep.clone(), known)
            })
            .collect();
        let paths = transcripts(&board_dir, &id, None);
        let older_transcripts = paths.len().saturating_sub(SHOWN_TRANSCRIPTS);
        let transcripts = paths[older_transcripts..]
            .iter()
            .map(|path| transcript_shown(path))
            .collect();
        Ok(StoryView {
            project: board.project.clone(),
            usage: story.usage().unwrap_or_default(),
            waiting: board.waiting(&id).map(str::to_string),
            runs: runs_of(&board_dir, &id),
            pending,
            depends_on,
            transcripts,
            older_transcripts,
            story,
        })
    }
}

/// The runs whose journals mention `story_id`, oldest first, each with its part for the story.
fn runs_of(board_dir: &Path, story_id: &StoryId) -> Vec<(RunReport, StoryReport)> {
    let paths: Vec<PathBuf> = journal::list(board_dir).unwrap_or_default();
    let holder = lock::holder(board_dir);
    let recent = &paths[paths.len().saturating_sub(TIMELINE_RUNS)..];
    recent
        .iter()
        .filter_map(|path| {
            let run = report::read(path, None, holder).ok()?;
            let part = run.stories.iter().find(|s| s.story_id == story_id)?.clone();
            Some((run, part))
        })
        .collect()
}

/// What the panel of a waiting gate shows: the output, the criteria, the attempt, the earlier
/// feedback and, for implement, the change.
fn pending_gate(project: &Project, story: &Story, phase: Phase) -> PendingGate {
    let board_dir = project.board_dir();
    let output = fs_err::read_to_string(person_decides::pending_output(
        &board_dir,
        story.id(),
        phase,
    ))
    .ok();
    let record = story
        .phase_reviews()
        .ok()
        .and_then(|reviews| reviews.get(phase.name()).cloned());
    let diff = match (phase, &story.meta.branch, &story.meta.base_branch) {
        (Phase::Implement, Some(branch), Some(base)) => {
            crate::vcs::diff_of_branch(&project.root, base, branch, DIFF_SHOWN)
                .map(|patch| files_of(&patch))
                .unwrap_or_default()
        }
        _ => Vec::new(),
    };
    PendingGate {
        phase,
        output,
        criteria: project
            .config
            .phases
            .gate(phase)
            .and_then(|gate| gate.criteria.clone()),
        attempt: record.as_ref().map_or(1, |r| r.attempts.max(1)),
        earlier_feedback: record.and_then(|r| r.feedback),
        diff,
    }
}

/// The most of a change a gate panel shows; the rest is in the branch.
const DIFF_SHOWN: usize = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_split_file_by_file_with_its_counts() {
        let patch = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1,2 @@\n-old\n+new\n+more\ndiff --git a/b.txt b/b.txt\nnew file mode 100644\n--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+hello\n";
        let files = files_of(patch);
        let counts: Vec<(&str, usize, usize)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.added, f.removed))
            .collect();
        assert_eq!(counts, [("src/a.rs", 2, 1), ("b.txt", 1, 0)]);
        assert!(files[0].patch.starts_with("diff --git a/src/a.rs"));
        assert!(files[1].patch.ends_with("+hello\n"));
        assert!(files_of("").is_empty());
    }
}
