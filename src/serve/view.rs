//! What the pages show, read from the board, the run journals and the transcripts. Pure data:
//! [`super::pages`] turns it into HTML.

use std::path::{Path, PathBuf};

use crate::board::records::Usage;
use crate::board::summary::{Listed, StorySummary};
use crate::board::{lookup, store, Board, Column, Phase, Story};
use crate::board::{Slug, StoryId};
use crate::config::Project;
use crate::error::Result;
use crate::report::transcript::{transcripts, Renderer};
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

    /// Why a story with work left cannot take it now.
    pub fn waiting(&self, story_id: &StoryId) -> Option<&str> {
        self.assessment
            .waiting
            .iter()
            .find(|w| w.story_id == story_id)
            .map(|w| w.reason.as_str())
    }
}

/// One story as its page shows it.
#[derive(Debug)]
pub struct StoryView {
    pub project: String,
    pub story: Story,
    pub usage: Usage,
    /// The human gate waiting for a decision: its phase and the output to judge.
    pub pending: Option<(Phase, Option<String>)>,
    /// Why the story cannot go on now, when it waits.
    pub waiting: Option<String>,
    /// Each dependency's id, with its slug and column when the board has it.
    pub depends_on: Vec<(StoryId, Option<(Slug, Column)>)>,
    /// The runs that worked on the story, oldest first, with what each did to it.
    pub runs: Vec<(RunReport, StoryReport)>,
    /// Transcripts as `logs` prints them, each a heading then its lines, oldest first.
    pub transcripts: Vec<Vec<String>>,
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
            .and_then(|name| {
                let phase = Phase::parse(&name)?;
                let output =
                    fs_err::read_to_string(person_decides::pending_output(&board_dir, &id, phase))
                        .ok();
                Some((phase, output))
            });
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
            .map(|path| Renderer::new(true).file(path))
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
