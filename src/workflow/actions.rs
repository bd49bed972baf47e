//! Carrying out one action of the assessor.

use super::assessor::{Action, ActionType};
use super::context::Workflow;
use super::outcome::Outcome;
use super::remote::Remote;
use super::{delivery, phases, review, rework};
use crate::error::Result;

/// Carries out `action`; with `run --remote`, a delivery goes through `remote`
/// (docs/design.md §20).
pub async fn execute(wf: &Workflow, action: &Action, remote: Option<&Remote>) -> Result<Outcome> {
    let id = &action.story_id;
    if let Some(phase) = action.action_type.phase() {
        return phases::run(wf, id, phase).await;
    }
    match action.action_type {
        ActionType::Review => review::run(wf, id).await,
        ActionType::Rework => rework::run(wf, id),
        ActionType::CreatePr => delivery::create_pr(wf, id).await,
        ActionType::MoveToDone => delivery::move_to_done(wf, id, remote).await,
        // The phases' actions, which `phase()` sent off above.
        phase_action => unreachable!("{phase_action} runs its phase"),
    }
}
