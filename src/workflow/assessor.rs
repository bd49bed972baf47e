//! The state assessor (SPEC §6): a pure function from the board to the actions it calls for.
//! It never writes, so `status` and `run --dry-run` are read-only.

use std::collections::HashMap;

use serde::Serialize;

use crate::board::records::{ReviewDecision, PENDING_DECISION};
use crate::board::{Board, Column, Story};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionType {
    Refine,
    Research,
    Plan,
    Implement,
    Review,
    Rework,
    CreatePr,
    MoveToDone,
}

impl ActionType {
    pub const ALL: [ActionType; 8] = [
        ActionType::Refine,
        ActionType::Research,
        ActionType::Plan,
        ActionType::Implement,
        ActionType::Review,
        ActionType::Rework,
        ActionType::CreatePr,
        ActionType::MoveToDone,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ActionType::Refine => "refine",
            ActionType::Research => "research",
            ActionType::Plan => "plan",
            ActionType::Implement => "implement",
            ActionType::Review => "review",
            ActionType::Rework => "rework",
            ActionType::CreatePr => "create_pr",
            ActionType::MoveToDone => "move_to_done",
        }
    }

    pub fn parse(name: &str) -> Option<ActionType> {
        let wanted = name.trim().to_ascii_lowercase().replace('-', "_");
        ActionType::ALL.into_iter().find(|a| a.name() == wanted)
    }

    /// The phase gate this action runs under, if it is a gated phase.
    pub fn phase(self) -> Option<&'static str> {
        match self {
            ActionType::Refine => Some("refine"),
            ActionType::Research => Some("research"),
            ActionType::Plan => Some("plan"),
            ActionType::Implement => Some("implement"),
            _ => None,
        }
    }
}

impl std::fmt::Display for ActionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One action the board calls for. Keyed by story id: stories move between folders.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    #[serde(rename = "type")]
    pub action_type: ActionType,
    #[serde(rename = "storyId")]
    pub story_id: String,
    pub slug: String,
    pub reason: String,
    pub priority: i64,
    #[serde(skip)]
    pub story_priority: i64,
}

/// A story that has work left but cannot take it now, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Waiting {
    #[serde(rename = "storyId")]
    pub story_id: String,
    pub slug: String,
    pub reason: String,
    /// The stories it waits on, for dependency waits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Assessment {
    pub actions: Vec<Action>,
    pub waiting: Vec<Waiting>,
}

enum Next {
    Act(ActionType, i64, String),
    Wait(String, Vec<String>),
}

pub fn assess(board: &Board, create_pr: bool) -> Assessment {
    let mut assessment = Assessment::default();
    // Dependencies are looked up by id for every open story; scanning the board for each one
    // made assessing a large board quadratic. The first story with an id wins, as in
    // `Board::get` (duplicates are a validation error).
    let mut by_id: HashMap<&str, &Story> = HashMap::with_capacity(board.stories.len());
    for story in &board.stories {
        by_id.entry(story.id()).or_insert(story);
    }
    for story in &board.stories {
        if matches!(story.column, Column::Done | Column::Blocked) {
            continue;
        }
        match next_for(story, &by_id, create_pr) {
            Next::Act(action_type, offset, reason) => assessment.actions.push(Action {
                action_type,
                story_id: story.id().to_string(),
                slug: story.slug.clone(),
                reason,
                priority: story.meta.priority.saturating_add(offset),
                story_priority: story.meta.priority,
            }),
            Next::Wait(reason, on) => assessment.waiting.push(Waiting {
                story_id: story.id().to_string(),
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

fn next_for(story: &Story, board: &HashMap<&str, &Story>, create_pr: bool) -> Next {
    if story.column == Column::Backlog {
        return Next::Act(
            ActionType::Refine,
            500,
            "in backlog: needs refinement".into(),
        );
    }
    let unfinished: Vec<String> = story
        .meta
        .depends_on
        .iter()
        .filter(|dep| {
            board
                .get(dep.as_str())
                .is_none_or(|d| d.column != Column::Done)
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
    match story.phase_reviews() {
        Ok(reviews) => {
            if let Some((phase, _)) = reviews.iter().find(|(_, r)| r.decision == PENDING_DECISION) {
                return Next::Wait(
                    format!(
                        "waiting for a human decision on the {phase} review (agentic-sdlc decide)"
                    ),
                    Vec::new(),
                );
            }
        }
        Err(err) => return Next::Wait(format!("cannot read phase_reviews: {err}"), Vec::new()),
    }
    match unanswered_rejection(story) {
        Ok(true) => {
            return Next::Act(
                ActionType::Rework,
                0,
                "latest review rejected the work".into(),
            )
        }
        Ok(false) => {}
        Err(err) => return Next::Wait(format!("cannot read review history: {err}"), Vec::new()),
    }
    let meta = &story.meta;
    if !meta.research_complete {
        Next::Act(ActionType::Research, 200, "research not complete".into())
    } else if !meta.plan_complete {
        Next::Act(ActionType::Plan, 300, "plan not complete".into())
    } else if !meta.implementation_complete {
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
    } else if meta.pr_url.is_none() && create_pr {
        Next::Act(
            ActionType::CreatePr,
            150,
            "reviewed; no pull request yet".into(),
        )
    } else {
        Next::Act(ActionType::MoveToDone, 175, "all phases complete".into())
    }
}

fn describe_dependency(board: &HashMap<&str, &Story>, id: &str) -> String {
    match board.get(id) {
        Some(dep) if dep.column == Column::Blocked => format!("{} (blocked)", dep.slug),
        Some(dep) => format!("{} ({})", dep.slug, dep.column),
        None => format!("{id} (unknown story)"),
    }
}

/// Whether the latest review rejected the work and no rework was started after it.
pub fn unanswered_rejection(story: &Story) -> Result<bool, crate::board::StoryError> {
    let Some(review) = story.latest_review()? else {
        return Ok(false);
    };
    if review.decision != ReviewDecision::Rejected {
        return Ok(false);
    }
    let answered = story
        .latest_iteration()?
        .is_some_and(|iteration| is_after(&iteration.started_at, &review.timestamp));
    Ok(!answered)
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
