//! What a person must do for a story that a run could not move on by itself: what to read,
//! what to change first, and the one command that moves it on, by slug. A run's summary and
//! the morning report say it the same way.

use std::path::Path;

use super::outcome::BlockCause;
use crate::board::StoryId;
use crate::board::{Board, Phase, StorySummary};
use crate::names::BranchName;
pub use crate::protocol::{Attention, NextStep};

/// What a story waits for a person for.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// A human gate's output waits for `decide`; `pending` is where it waits.
    Decision {
        phase: String,
        pending: String,
        /// The story's branch and base, when an implement waits: the diff to read.
        branches: Option<(BranchName, BranchName)>,
    },
    /// The story is in blocked/. `cause` is `None` for a block the record does not explain
    /// (made by hand, or by an older version).
    Blocked {
        reason: String,
        cause: Option<BlockCause>,
    },
}

impl Need {
    /// Why the story waits, in a few words.
    pub fn why(&self) -> String {
        match self {
            Need::Decision { phase, .. } => format!("waits for your decision on its {phase}"),
            Need::Blocked { reason, .. } => format!("blocked: {reason}"),
        }
    }

    pub fn next_step(&self, slug: &str) -> NextStep {
        let details = format!("agentic-sdlc details {slug}");
        let unblock = format!("agentic-sdlc unblock {slug}");
        match self {
            Need::Decision {
                pending, branches, ..
            } => NextStep {
                read: match branches {
                    Some((branch, base)) => {
                        format!("{pending} and the diff: git diff {base}...{branch}")
                    }
                    None => pending.clone(),
                },
                note: Some(r#"or decide "RETRY: <feedback>" or "REJECT: <reason>""#.into()),
                command: format!("agentic-sdlc decide {slug} \"APPROVE\""),
            },
            Need::Blocked { cause, .. } => match cause {
                Some(BlockCause::Breaker) => NextStep {
                    read: details,
                    note: Some(
                        "read the review history, and edit the story or its plan if the \
                         reviews keep asking for the same thing"
                            .into(),
                    ),
                    command: format!("{unblock} --reset"),
                },
                Some(BlockCause::Rejected) => NextStep {
                    read: details,
                    note: Some("answer the rejection in the story first".into()),
                    command: unblock,
                },
                Some(BlockCause::Budget { key }) => NextStep {
                    read: details,
                    note: Some(format!(
                        "raise {key} first (`agentic-sdlc config {key} <limit>`)"
                    )),
                    command: unblock,
                },
                Some(BlockCause::NoProgress) => NextStep {
                    read: details,
                    note: Some(
                        "read the repeated output, and edit the story or its notes first".into(),
                    ),
                    command: unblock,
                },
                Some(BlockCause::Refused) => NextStep {
                    read: details,
                    note: Some(
                        "look at the branch's commits it names; remove them from the branch                          (or the story's `branch` to start over) first"
                            .into(),
                    ),
                    command: unblock,
                },
                None => NextStep {
                    read: details,
                    note: None,
                    command: unblock,
                },
            },
        }
    }
}

impl Attention {
    pub fn new(story: &StorySummary, need: &Need) -> Attention {
        Attention {
            story_id: StoryId::from(story.id()),
            slug: story.slug.clone(),
            title: story.meta.title.clone(),
            why: need.why(),
            next: need.next_step(&story.slug),
        }
    }
}

/// The human gate a story waits on, with where its output waits (shown relative to `root`).
pub fn pending_decision(story: &StorySummary, root: &Path, board_dir: &Path) -> Option<Need> {
    let phase_name = story.progress.as_ref().ok()?.pending_gate.clone()?;
    let phase = Phase::parse(&phase_name)?;
    let path = super::gate::pending_output_path(board_dir, story.id(), phase);
    let shown = path
        .strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string();
    let branches = match (phase, &story.meta.branch, &story.meta.base_branch) {
        (Phase::Implement, Some(branch), Some(base)) => Some((branch.clone(), base.clone())),
        _ => None,
    };
    Some(Need::Decision {
        phase: phase_name,
        pending: shown,
        branches,
    })
}

/// Every story of `board` that waits for a decision, among those `in_scope` lets through.
pub fn waiting_for_decisions(
    board: &Board,
    root: &Path,
    in_scope: impl Fn(&str) -> bool,
) -> Vec<Attention> {
    board
        .stories
        .iter()
        .filter(|story| in_scope(story.id()))
        .filter_map(|story| {
            pending_decision(story, root, &board.dir).map(|need| Attention::new(story, &need))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_need_names_its_command_by_slug() {
        let cases = [
            (
                Need::Blocked {
                    reason: "Circuit breaker: …".into(),
                    cause: Some(BlockCause::Breaker),
                },
                "agentic-sdlc unblock fix-login --reset",
            ),
            (
                Need::Blocked {
                    reason: "Phase plan rejected by review: vague".into(),
                    cause: Some(BlockCause::Rejected),
                },
                "agentic-sdlc unblock fix-login",
            ),
            (
                Need::Decision {
                    phase: "research".into(),
                    pending: ".agentic-sdlc/logs/x/pending-research.md".into(),
                    branches: None,
                },
                "agentic-sdlc decide fix-login \"APPROVE\"",
            ),
        ];
        for (need, command) in cases {
            assert_eq!(need.next_step("fix-login").command, command, "{need:?}");
        }
        let budget = Need::Blocked {
            reason: "Budget: 9 of 5 USD".into(),
            cause: Some(BlockCause::Budget {
                key: "budget.storyUsd".into(),
            }),
        };
        assert!(budget
            .next_step("s")
            .note
            .is_some_and(|n| n.contains("budget.storyUsd")));
        let implement = Need::Decision {
            phase: "implement".into(),
            pending: "p.md".into(),
            branches: Some(("agentic-sdlc/s".into(), "main".into())),
        };
        assert_eq!(
            implement.next_step("s").read,
            "p.md and the diff: git diff main...agentic-sdlc/s"
        );
    }
}
