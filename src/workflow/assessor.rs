//! The state assessor (docs/design.md §6): a pure function from the board to the actions it calls
//! for. It never writes, so `status` and `run --dry-run` are read-only.

use foldhash::{HashMap, HashMapExt};

use serde::Serialize;

use crate::board::records::ReviewDecision;
use crate::board::story::Progress;
use crate::board::Slug;
use crate::board::StoryId;
use crate::board::{Board, Column, Phase, PhaseSet, StorySummary};

pub use crate::protocol::{ActionRef, ActionType};

/// One action the board calls for. Keyed by story id: stories move between folders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    #[serde(rename = "type")]
    pub action_type: ActionType,
    #[serde(rename = "storyId")]
    pub story_id: StoryId,
    pub slug: Slug,
    pub reason: String,
    pub priority: i64,
    #[serde(skip)]
    pub story_priority: i64,
}

impl From<&Action> for ActionRef {
    fn from(action: &Action) -> ActionRef {
        ActionRef {
            action_type: action.action_type,
            story_id: action.story_id.clone(),
            slug: action.slug.clone(),
        }
    }
}

/// A story that has work left but cannot take it now, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waiting {
    #[serde(rename = "storyId")]
    pub story_id: StoryId,
    pub slug: Slug,
    pub reason: String,
    /// The stories it waits on, for dependency waits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<StoryId>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Assessment {
    pub actions: Vec<Action>,
    pub waiting: Vec<Waiting>,
    /// Ids that more than one story file carries: none of those stories gets an action.
    #[serde(skip)]
    pub duplicate_ids: Vec<DuplicateId>,
}

/// One id carried by several story files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateId {
    pub id: StoryId,
    pub paths: Vec<std::path::PathBuf>,
}

/// The parts of the config the assessor's rules depend on (docs/design.md §6, §12).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// `git.integrate: "pr"`: a reviewed story opens a pull request before it is done.
    pub create_pr: bool,
    /// `git.integrate: "merge"`: a dependency counts as done only once its work is merged.
    pub dependencies_merged: bool,
    /// Phases switched off (`phases.<phase>.enabled: false`, acceptance without a test
    /// command): their flags count as complete, and a skipped refine moves a story to ready as
    /// written.
    pub skipped: PhaseSet,
}

impl Policy {
    pub fn from_config(config: &crate::config::Config) -> Policy {
        use crate::config::Integrate;
        let skipped = Phase::ALL
            .iter()
            .filter(|phase| !config.phase_enabled(**phase))
            .fold(PhaseSet::default(), |set, phase| set.with(*phase));
        Policy {
            create_pr: config.git.integrate == Integrate::Pr,
            dependencies_merged: config.git.integrate == Integrate::Merge,
            skipped,
        }
    }
}

enum Next {
    Act(ActionType, i64, String),
    Wait(String, Vec<StoryId>),
}

pub fn assess(board: &Board, policy: Policy) -> Assessment {
    let mut assessment = Assessment::default();
    // Dependencies are looked up by id for every open story; scanning the board for each one
    // made assessing a large board quadratic. The first story with an id wins, as in
    // `Board::get` (duplicates are a validation error).
    let mut by_id: HashMap<&str, &StorySummary> = HashMap::with_capacity(board.stories.len());
    let mut shared: HashMap<&str, Vec<&StorySummary>> = HashMap::new();
    for story in &board.stories {
        if let Some(first) = by_id.get(story.id().as_str()) {
            shared
                .entry(story.id().as_str())
                .or_insert_with(|| vec![first])
                .push(story);
        } else {
            by_id.insert(story.id().as_str(), story);
        }
    }
    for (id, stories) in &shared {
        assessment.duplicate_ids.push(DuplicateId {
            id: StoryId::from(*id),
            paths: stories.iter().map(|s| s.path.clone()).collect(),
        });
    }
    assessment.duplicate_ids.sort_by(|a, b| a.id.cmp(&b.id));
    for story in &board.stories {
        if matches!(story.column, Column::Done | Column::Blocked) {
            continue;
        }
        if shared.contains_key(story.id().as_str()) {
            // Which file is the story? Acting on either could undo the other; a person decides.
            assessment.waiting.push(Waiting {
                story_id: StoryId::from(story.id()),
                slug: story.slug.clone(),
                reason: format!(
                    "another story file has the same id {}; give one of them a new id (`agentic-sdlc validate` lists them)",
                    story.id()
                ),
                on: Vec::new(),
            });
            continue;
        }
        match next_for(story, &by_id, policy) {
            Next::Act(action_type, offset, reason) => assessment.actions.push(Action {
                action_type,
                story_id: StoryId::from(story.id()),
                slug: story.slug.clone(),
                reason,
                priority: story.meta.priority.saturating_add(offset),
                story_priority: story.meta.priority,
            }),
            Next::Wait(reason, on) => assessment.waiting.push(Waiting {
                story_id: StoryId::from(story.id()),
                slug: story.slug.clone(),
                reason,
                on,
            }),
        }
    }
    assessment.actions.sort_by(|a, b| {
        (a.priority, a.story_priority, &a.story_id).cmp(&(
            b.priority,
            b.story_priority,
            &b.story_id,
        ))
    });
    assessment
}

fn next_for(story: &StorySummary, board: &HashMap<&str, &StorySummary>, policy: Policy) -> Next {
    if story.column == Column::Backlog {
        let reason = if policy.skipped.contains(Phase::Refine) {
            "in backlog: refine is skipped, so it moves to ready as written"
        } else {
            "in backlog: needs refinement"
        };
        return Next::Act(ActionType::Refine, 500, reason.into());
    }
    let unfinished: Vec<StoryId> = story
        .meta
        .depends_on
        .iter()
        .filter(|dep| {
            board
                .get(dep.as_str())
                .is_none_or(|d| !delivered(d, policy))
        })
        .cloned()
        .collect();
    if !unfinished.is_empty() {
        let described: Vec<String> = unfinished
            .iter()
            .map(|id| describe_dependency(board, id))
            .collect();
        return Next::Wait(format!("waiting on {}", described.join(", ")), unfinished);
    }
    let progress = match &story.progress {
        Ok(progress) => progress,
        Err(err) => return Next::Wait(format!("cannot read its records: {err}"), Vec::new()),
    };
    if let Some(phase) = &progress.pending_gate {
        return Next::Wait(
            format!("waiting for a human decision on the {phase} review (agentic-sdlc decide)"),
            Vec::new(),
        );
    }
    if rejection_unanswered(progress) {
        return Next::Act(
            ActionType::Rework,
            0,
            "latest review rejected the work".into(),
        );
    }
    let meta = &story.meta;
    // A story implemented before its acceptance phase existed (or with it off) is never sent
    // back for it (docs/design.md §21).
    let settled = |phase: Phase| {
        meta.phase_complete(phase, story.column)
            || policy.skipped.contains(phase)
            || phase
                .too_late_after()
                .is_some_and(|later| meta.completed.contains(later))
    };
    let pending = Phase::flagged().find(|phase| !settled(*phase));
    if let Some(phase) = pending.filter(|p| *p != Phase::Implement) {
        let offset = match phase {
            Phase::Research => 200,
            Phase::Plan => 300,
            _ => 350,
        };
        Next::Act(
            ActionType::of_phase(phase),
            offset,
            format!("{phase} not complete"),
        )
    } else if pending == Some(Phase::Implement) {
        let offset = if story.column == Column::InProgress {
            50
        } else {
            400
        };
        Next::Act(
            ActionType::Implement,
            offset,
            "implementation not complete".into(),
        )
    } else if !meta.reviews_complete {
        Next::Act(
            ActionType::Review,
            100,
            "implementation awaits review".into(),
        )
    } else if meta.pr_url.is_none() && policy.create_pr {
        Next::Act(
            ActionType::CreatePr,
            150,
            "reviewed; no pull request yet".into(),
        )
    } else {
        Next::Act(ActionType::MoveToDone, 175, "all phases complete".into())
    }
}

/// Whether a dependency's work is where its dependents can build on it: done and, when work is
/// merged, merged. A done story that never had a branch (no git, no branch per story, or moved
/// to done by hand before implementing) has nothing to merge.
fn delivered(dependency: &StorySummary, policy: Policy) -> bool {
    dependency.column == Column::Done
        && (!policy.dependencies_merged
            || dependency.meta.merged_commit.is_some()
            || dependency.meta.branch.is_none())
}

fn describe_dependency(board: &HashMap<&str, &StorySummary>, id: &str) -> String {
    match board.get(id) {
        Some(dep) if dep.column == Column::Blocked => format!("{} (blocked)", dep.slug),
        Some(dep) if dep.column == Column::Done => {
            format!("{} (done, but its branch is not merged yet)", dep.slug)
        }
        Some(dep) => format!("{} ({})", dep.slug, dep.column),
        None => format!("{id} (unknown story)"),
    }
}

/// Whether the latest review rejected the work and no rework was started after it.
fn rejection_unanswered(progress: &Progress) -> bool {
    match &progress.latest_review {
        Some((ReviewDecision::Rejected, reviewed_at)) => !progress
            .latest_rework_started
            .as_deref()
            .is_some_and(|started| is_after(started, reviewed_at)),
        _ => false,
    }
}

/// Compares two timestamps as instants when both parse (RFC 3339), else as text.
pub fn is_after(later: &str, earlier: &str) -> bool {
    match (
        chrono::DateTime::parse_from_rfc3339(later),
        chrono::DateTime::parse_from_rfc3339(earlier),
    ) {
        (Ok(a), Ok(b)) => a > b,
        _ => later > earlier,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::board::Story;

    /// A story in `column` with extra frontmatter lines.
    fn story(id: &str, column: Column, priority: i64, extra: &str) -> Story {
        let text =
            format!("---\nid: {id}\ntitle: {id}\npriority: {priority}\n{extra}---\n# {id}\n");
        let path = PathBuf::from(format!("/board/{}/{id}.md", column.name()));
        Story::parse(&text, path, column).unwrap()
    }

    fn board(stories: Vec<Story>) -> Board {
        let stories = stories.into_iter().map(StorySummary::from).collect();
        Board {
            dir: PathBuf::from("/board"),
            stories,
            broken: Vec::new(),
        }
    }

    /// The first action, on a board without a test command (no acceptance phase).
    fn only_action(stories: Vec<Story>, create_pr: bool) -> Option<(ActionType, i64)> {
        let policy = Policy {
            create_pr,
            skipped: PhaseSet::default().with(Phase::Acceptance),
            ..Policy::default()
        };
        let assessment = assess(&board(stories), policy);
        assessment
            .actions
            .first()
            .map(|a| (a.action_type, a.priority))
    }

    const ALL_DONE: &str = "research_complete: true\nplan_complete: true\nimplementation_complete: true\nreviews_complete: true\n";
    const REJECTED: &str =
        "review_history:\n- timestamp: '2026-11-22T10:00:00.000Z'\n  decision: REJECTED\n";

    #[test]
    fn rules_in_order() {
        type Case = (
            &'static str,
            Column,
            String,
            bool,
            Option<(ActionType, i64)>,
        );
        let cases: Vec<Case> = vec![
            (
                "backlog",
                Column::Backlog,
                String::new(),
                false,
                Some((ActionType::Refine, 510)),
            ),
            (
                "research",
                Column::Ready,
                String::new(),
                false,
                Some((ActionType::Research, 210)),
            ),
            (
                "plan",
                Column::Ready,
                "research_complete: true\n".into(),
                false,
                Some((ActionType::Plan, 310)),
            ),
            (
                "implement in ready",
                Column::Ready,
                "research_complete: true\nplan_complete: true\n".into(),
                false,
                Some((ActionType::Implement, 410)),
            ),
            (
                "implement in progress",
                Column::InProgress,
                "research_complete: true\nplan_complete: true\n".into(),
                false,
                Some((ActionType::Implement, 60)),
            ),
            (
                "review",
                Column::InProgress,
                "research_complete: true\nplan_complete: true\nimplementation_complete: true\n"
                    .into(),
                false,
                Some((ActionType::Review, 110)),
            ),
            (
                "create_pr",
                Column::InProgress,
                ALL_DONE.into(),
                true,
                Some((ActionType::CreatePr, 160)),
            ),
            (
                "pr exists",
                Column::InProgress,
                format!("{ALL_DONE}pr_url: https://x/1\n"),
                true,
                Some((ActionType::MoveToDone, 185)),
            ),
            (
                "move_to_done",
                Column::InProgress,
                ALL_DONE.into(),
                false,
                Some((ActionType::MoveToDone, 185)),
            ),
            (
                "rejected",
                Column::InProgress,
                format!("{ALL_DONE}{REJECTED}")
                    .replace("reviews_complete: true", "reviews_complete: false"),
                false,
                Some((ActionType::Rework, 10)),
            ),
            ("done", Column::Done, String::new(), false, None),
            ("blocked", Column::Blocked, String::new(), false, None),
            (
                "pending human gate",
                Column::Ready,
                "phase_reviews:\n  research:\n    attempts: 1\n    decision: PENDING\n".into(),
                false,
                None,
            ),
        ];
        for (name, column, extra, create_pr, expected) in cases {
            assert_eq!(
                only_action(vec![story("s", column, 10, &extra)], create_pr),
                expected,
                "{name}"
            );
        }
    }

    #[test]
    fn acceptance_comes_between_plan_and_implement_but_never_after_implement() {
        let first = |extra: &str| {
            assess(
                &board(vec![story("s", Column::Ready, 10, extra)]),
                Policy::default(),
            )
            .actions
            .first()
            .map(|a| (a.action_type, a.priority))
        };
        let planned = "research_complete: true\nplan_complete: true\n";
        assert_eq!(first(planned), Some((ActionType::Acceptance, 360)));
        assert_eq!(
            first(&format!("{planned}acceptance_complete: true\n")),
            Some((ActionType::Implement, 410))
        );
        // Implemented before the phase existed: on to review, not back for tests.
        assert_eq!(
            first(&format!("{planned}implementation_complete: true\n")),
            Some((ActionType::Review, 110))
        );
    }

    #[test]
    fn a_skipped_phase_counts_as_complete() {
        let ready = || vec![story("s", Column::Ready, 10, "")];
        let skip = |research: bool, plan: bool| {
            let mut skipped = PhaseSet::default().with(Phase::Acceptance);
            if research {
                skipped = skipped.with(Phase::Research);
            }
            if plan {
                skipped = skipped.with(Phase::Plan);
            }
            Policy {
                skipped,
                ..Policy::default()
            }
        };
        let first = |policy: Policy| {
            assess(&board(ready()), policy)
                .actions
                .first()
                .map(|a| (a.action_type, a.priority))
        };
        assert_eq!(first(skip(false, false)), Some((ActionType::Research, 210)));
        assert_eq!(first(skip(true, false)), Some((ActionType::Plan, 310)));
        assert_eq!(first(skip(true, true)), Some((ActionType::Implement, 410)));
        // A skipped refine still takes the story out of backlog, and says how.
        let backlog = assess(
            &board(vec![story("b", Column::Backlog, 1, "")]),
            Policy {
                skipped: PhaseSet::default().with(Phase::Refine),
                ..Policy::default()
            },
        );
        assert_eq!(backlog.actions[0].action_type, ActionType::Refine);
        assert!(backlog.actions[0]
            .reason
            .contains("moves to ready as written"));
    }

    #[test]
    fn a_rework_started_after_the_rejection_answers_it() {
        let reset = format!("{REJECTED}refinement_iterations:\n- iteration: 1\n  agentType: implement\n  startedAt: '2026-11-22T10:05:00.000Z'\n  result: in_progress\nresearch_complete: true\nplan_complete: true\nimplementation_complete: true\n");
        assert_eq!(
            only_action(vec![story("s", Column::InProgress, 10, &reset)], false),
            Some((ActionType::Review, 110))
        );
        let older = reset.replace("10:05:00", "09:55:00");
        assert_eq!(
            only_action(vec![story("s", Column::InProgress, 10, &older)], false),
            Some((ActionType::Rework, 10))
        );
    }

    #[test]
    fn dependencies_hold_a_story_after_refinement() {
        let dependent = story("b", Column::Ready, 1, "depends_on:\n- a\n");
        let waiting = assess(
            &board(vec![story("a", Column::Ready, 50, ""), dependent.clone()]),
            Policy::default(),
        );
        assert_eq!(
            waiting
                .actions
                .iter()
                .map(|a| a.story_id.as_str())
                .collect::<Vec<_>>(),
            ["a"]
        );
        assert_eq!(waiting.waiting[0].on, ["a"]);
        assert!(
            waiting.waiting[0].reason.contains("a (ready)"),
            "{}",
            waiting.waiting[0].reason
        );
        let free = assess(
            &board(vec![story("a", Column::Done, 50, ""), dependent]),
            Policy::default(),
        );
        assert_eq!(free.actions[0].story_id, "b");
        let refine_anyway = assess(
            &board(vec![story(
                "c",
                Column::Backlog,
                1,
                "depends_on:\n- missing\n",
            )]),
            Policy::default(),
        );
        assert_eq!(refine_anyway.actions[0].action_type, ActionType::Refine);
    }

    #[test]
    fn with_merge_a_dependency_counts_once_its_branch_is_merged() {
        let merge = Policy {
            dependencies_merged: true,
            ..Policy::default()
        };
        let dependent = story("b", Column::Ready, 1, "depends_on:\n- a\n");
        let done_on_a_branch = story("a", Column::Done, 50, "branch: agentic-sdlc/a\n");
        let waiting = assess(
            &board(vec![done_on_a_branch.clone(), dependent.clone()]),
            merge,
        );
        assert!(waiting.actions.is_empty());
        assert!(
            waiting.waiting[0].reason.contains("not merged"),
            "{}",
            waiting.waiting[0].reason
        );
        let branch_only_is_enough = assess(
            &board(vec![done_on_a_branch, dependent.clone()]),
            Policy::default(),
        );
        assert_eq!(branch_only_is_enough.actions[0].story_id, "b");
        let merged = story(
            "a",
            Column::Done,
            50,
            "branch: agentic-sdlc/a\nmerged_commit: 0123abc\n",
        );
        let free = assess(&board(vec![merged, dependent.clone()]), merge);
        assert_eq!(free.actions[0].story_id, "b");
        let never_branched = story("a", Column::Done, 50, "");
        let free = assess(&board(vec![never_branched, dependent]), merge);
        assert_eq!(free.actions[0].story_id, "b");
    }

    #[test]
    fn ordered_by_action_priority_then_story_priority_then_id() {
        // y (301 + 200) ties z (1 + 500): the story priority breaks the tie.
        let stories = vec![
            story("z", Column::Backlog, 1, ""),
            story("y", Column::Ready, 301, ""),
            story("b", Column::Ready, 5, ""),
            story("a", Column::Ready, 5, ""),
        ];
        let order: Vec<StoryId> = assess(&board(stories), Policy::default())
            .actions
            .into_iter()
            .map(|a| a.story_id)
            .collect();
        assert_eq!(order, ["a", "b", "z", "y"]);
    }
}
