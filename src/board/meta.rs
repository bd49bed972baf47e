//! What the tool reads from a story's frontmatter, parsed once when the story is loaded.

use super::frontmatter::{Frontmatter, FrontmatterError};
use super::vocabulary::{Column, Phase, PhaseSet};
use crate::names::{BranchName, StoryId};

/// The frontmatter keys every part of the tool reads, parsed once when the story is loaded.
/// The frontmatter itself stays the source of truth; this is refreshed after every change.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StoryMeta {
    pub id: StoryId,
    pub title: String,
    pub priority: i64,
    pub status: Option<String>,
    pub story_type: super::vocabulary::StoryType,
    pub labels: Vec<String>,
    /// The phases whose flag (`research_complete`, …) is set.
    pub completed: PhaseSet,
    pub reviews_complete: bool,
    /// The acceptance tests the acceptance phase wrote, as paths in the project's tree: fixed
    /// for implement, run by every test round and by the merge (docs/design.md §21).
    pub acceptance_tests: Vec<String>,
    pub depends_on: Vec<StoryId>,
    pub branch: Option<BranchName>,
    /// The commit the tool made `branch` from: proof that it made it, and where its history
    /// must start.
    pub branch_base: Option<String>,
    pub base_branch: Option<BranchName>,
    pub merged_commit: Option<String>,
    pub pr_url: Option<String>,
    pub last_error: Option<String>,
    pub blocked_reason: Option<String>,
    pub refinement_count: u32,
    pub max_refinement_attempts: Option<u32>,
}

/// The flag the review after implement sets; it follows every phase's flag.
pub const REVIEWS_FLAG: &str = "reviews_complete";

impl StoryMeta {
    /// Whether `phase` is complete by its flag; refine is complete once the story left backlog.
    pub fn phase_complete(&self, phase: Phase, column: Column) -> bool {
        match phase.flag() {
            None => column != Column::Backlog,
            Some(_) => self.completed.contains(phase),
        }
    }
}

impl StoryMeta {
    /// The flags `status` and the board page show, in order: each lettered phase's, then the
    /// reviews' (`V`).
    pub fn shown_flags(&self, column: Column) -> Vec<ShownFlag> {
        Phase::ALL
            .iter()
            .filter_map(|phase| {
                Some(ShownFlag {
                    letter: phase.letter()?,
                    name: phase.name(),
                    set: self.phase_complete(*phase, column),
                })
            })
            .chain([ShownFlag {
                letter: 'V',
                name: "reviews",
                set: self.reviews_complete,
            }])
            .collect()
    }
}

/// One flag as `status` and the board page show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShownFlag {
    pub letter: char,
    /// What it is the flag of: a phase's name, or `reviews`.
    pub name: &'static str,
    pub set: bool,
}

/// The priority a story without one gets: after everything that was prioritised by hand.
pub const DEFAULT_PRIORITY: i64 = 100;

/// The phases whose completion flag the frontmatter sets to true; a missing flag is false.
fn completed_phases(front: &Frontmatter) -> Result<PhaseSet, FrontmatterError> {
    let mut completed = PhaseSet::default();
    for phase in Phase::flagged() {
        let flag = phase.flag().expect("a flagged phase has a flag");
        if front.get::<bool>(flag)?.unwrap_or(false) {
            completed = completed.with(phase);
        }
    }
    Ok(completed)
}

pub(super) fn read_meta(front: &Frontmatter) -> Result<StoryMeta, FrontmatterError> {
    Ok(StoryMeta {
        id: StoryId::from(front.get::<String>("id")?.unwrap_or_default()),
        title: front.get::<String>("title")?.unwrap_or_default(),
        priority: front.get::<i64>("priority")?.unwrap_or(DEFAULT_PRIORITY),
        status: front.get("status")?,
        story_type: front.get::<String>("type")?.map_or(
            super::vocabulary::StoryType::Feature,
            super::vocabulary::StoryType::from,
        ),
        labels: front.get("labels")?.unwrap_or_default(),
        completed: completed_phases(front)?,
        reviews_complete: front.get(REVIEWS_FLAG)?.unwrap_or(false),
        acceptance_tests: front.get("acceptance_tests")?.unwrap_or_default(),
        depends_on: front.get("depends_on")?.unwrap_or_default(),
        branch: front.get("branch")?,
        branch_base: front.get("branch_base")?,
        base_branch: front.get("base_branch")?,
        merged_commit: front.get("merged_commit")?,
        pr_url: front.get("pr_url")?,
        last_error: front.get("last_error")?,
        blocked_reason: front.get("blocked_reason")?,
        refinement_count: front.get("refinement_count")?.unwrap_or(0),
        max_refinement_attempts: front.get("max_refinement_attempts")?,
    })
}
