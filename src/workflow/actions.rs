//! Carrying out one action of the assessor.

use super::assessor::{Action, ActionType};
use super::context::Workflow;
use super::outcome::Outcome;
use super::{delivery, phases, review, rework};
use crate::board::Phase;
use crate::error::Result;

pub async fn execute(wf: &Workflow, action: &Action) -> Result<Outcome> {
    let id = action.story_id.as_str();
    match action.action_type {
        ActionType::Refine => phases::run(wf, id, Phase::Refine).await,
        ActionType::Research => phases::run(wf, id, Phase::Research).await,
        ActionType::Plan => phases::run(wf, id, Phase::Plan).await,
        ActionType::Implement => phases::run(wf, id, Phase::Implement).await,
        ActionType::Review => review::run(wf, id).await,
        ActionType::Rework => rework::run(wf, id),
        ActionType::CreatePr => delivery::create_pr(wf, id).await,
        ActionType::MoveToDone => delivery::move_to_done(wf, id).await,
    }
}
