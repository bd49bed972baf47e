//! Carrying out one action of the assessor.

use super::assessor::{Action, ActionType};
use super::context::Workflow;
use super::outcome::Outcome;
use super::{phases, review, rework, story_ops, workspace};
use crate::board::{store, Column, Phase};
use crate::error::Result;
use crate::vcs as git;

pub async fn execute(wf: &Workflow, action: &Action) -> Result<Outcome> {
    let id = action.story_id.as_str();
    match action.action_type {
        ActionType::Refine => phases::run(wf, id, Phase::Refine).await,
        ActionType::Research => phases::run(wf, id, Phase::Research).await,
        ActionType::Plan => phases::run(wf, id, Phase::Plan).await,
        ActionType::Implement => phases::run(wf, id, Phase::Implement).await,
        ActionType::Review => review::run(wf, id).await,
        ActionType::Rework => rework::run(wf, id),
        ActionType::CreatePr => create_pr(wf, id).await,
        ActionType::MoveToDone => move_to_done(wf, id).await,
    }
}

async fn move_to_done(wf: &Workflow, story_id: &str) -> Result<Outcome> {
    let (story, ()) = store::update(&wf.board_dir, story_id, None, |story| {
        story.set_column(Column::Done);
        story.remove("last_error");
        Ok(())
    })?;
    workspace::cleanup(wf, &story).await;
    Ok(Outcome::Completed("moved to done".into()))
}

/// Pushes the story branch and opens a pull request with `gh`. Where that cannot be done (no
/// git repository, no branch, no `gh`), it says so and the story goes on to done.
async fn create_pr(wf: &Workflow, story_id: &str) -> Result<Outcome> {
    let story = store::locate(&wf.board_dir, story_id, None)?;
    let Some(branch) = story.meta.branch.clone().filter(|_| git::is_repo(&wf.root)) else {
        return skip_pr(
            wf,
            story_id,
            "the story has no git branch, so there is nothing to open a pull request for",
        )
        .await;
    };
    if !git::gh_available() {
        return skip_pr(wf, story_id, &format!("the GitHub CLI `gh` is not installed; push {branch} and open the pull request by hand")).await;
    }
    let work = match workspace::prepare(wf, &story, Phase::Implement).await {
        Ok(work) => work,
        Err(message) => return story_ops::fail(wf, story_id, message, Default::default()),
    };
    let title = story.meta.title.clone();
    let body = format!(
        "{}\n\n## Acceptance Criteria\n{}\n\n---\nOpened by agentic-sdlc for story {story_id}.",
        story.section("Summary").unwrap_or(""),
        story.section("Acceptance Criteria").unwrap_or("")
    );
    let dir = work.dir.clone();
    let pushed = tokio::task::spawn_blocking(move || {
        git::push_branch(&dir, &branch)?;
        git::create_pull_request(&dir, &branch, &title, &body)
    })
    .await;
    workspace::release(wf, work).await;
    match pushed {
        Ok(Ok(url)) => {
            store::update(&wf.board_dir, story_id, None, |story| {
                story.set("pr_url", &url);
                story.remove("last_error");
                Ok(())
            })?;
            Ok(Outcome::Completed(format!("pull request {url}")))
        }
        Ok(Err(err)) => story_ops::fail(
            wf,
            story_id,
            format!("create_pr failed: {err}"),
            Default::default(),
        ),
        Err(err) => story_ops::fail(
            wf,
            story_id,
            format!("create_pr failed: {err}"),
            Default::default(),
        ),
    }
}

async fn skip_pr(wf: &Workflow, story_id: &str, why: &str) -> Result<Outcome> {
    wf.events.emit(super::events::Event::Warning {
        story_id: Some(story_id.to_string()),
        message: format!("no pull request: {why}"),
    });
    move_to_done(wf, story_id)
        .await
        .map(|_| Outcome::Completed(format!("no pull request ({why}); moved to done")))
}
