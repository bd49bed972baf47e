//! Done means delivered (docs/design.md §12): `move_to_done` merges a story's work into its base,
//! tested together with everything merged before it; `create_pr` opens its pull request.

use std::path::{Path, PathBuf};

use super::blocking::off_the_runtime;
use super::context::Workflow;
use super::events::RunEvent;
use super::merging::Delivery;
use super::merging::{merge_and_test, record_done, short, Merge, MergeStep, Testing};
use super::outcome::Outcome;
use super::workspace::{self, Purpose, Work};
use super::{remote, review, story_ops};
use crate::agents::transcript::Transcript;
use crate::board::records::{ReviewIssue, Usage};
use crate::board::Story;
use crate::board::StoryId;
use crate::config::Integrate;
use crate::error::{Error, Result};
use crate::hint::told;
use crate::names::BranchName;
use crate::vcs as git;

/// Times a delivery integrates again because someone committed to the base while it tested.
const BASE_RACES: usize = 3;

pub async fn move_to_done(
    wf: &Workflow,
    story_id: &StoryId,
    remote: Option<&remote::Remote>,
) -> Result<Outcome> {
    let story = wf.board.locate(story_id)?;
    let merges = wf.config.git.integrate == Integrate::Merge
        && workspace::uses_branches(wf)
        && story.meta.branch.is_some();
    if !merges {
        mark_done(wf, &story, None).await?;
        return Ok(Outcome::Completed("moved to done".into()));
    }
    // Merges into one base happen one at a time, so each is tested on the base as the one
    // before it left it.
    let _integrating = wf.integration.lock().await;
    let transcript = match story_ops::open_transcript(wf, story_id, "integrate")? {
        Ok(transcript) => transcript,
        Err(outcome) => return Ok(outcome),
    };
    let work = match workspace::prepare(wf, &story, Purpose::Inspect).await {
        Ok(work) => work,
        Err(err) => return story_ops::fail(wf, story_id, told(&err), Usage::default()),
    };
    let work = match deliverable(wf, &story, work, "merge").await? {
        Ok(work) => work,
        Err(outcome) => return Ok(outcome),
    };
    let delivered = match remote {
        Some(remote) => remote::integrate_through(wf, remote, &story, &work, &transcript).await,
        None => integrate_and_test(wf, &story, &work, &transcript).await,
    };
    workspace::release(wf, work).await;
    match delivered {
        Ok(Delivery::Merged { commit, base }) => {
            mark_done(wf, &story, Some((&commit, &base))).await?;
            wf.events.emit(RunEvent::StoryMerged {
                story_id: StoryId::from(story_id),
                slug: story.slug.clone(),
                base: base.clone(),
                commit: commit.clone(),
            });
            Ok(Outcome::Completed(format!(
                "merged into {base} as {}",
                short(&commit)
            )))
        }
        Ok(Delivery::Rejected { issue, base }) => send_back(wf, story_id, issue, &base),
        Err(err) => story_ops::fail(wf, story_id, told(&err), Usage::default()),
    }
}

/// Why the story's branch must not be merged, if it must not: it adds or changes a config or
/// anything in a board folder, or its history does not start where the tool made the branch
/// (docs/design.md §16, "What is merged").
/// `deed` says what was refused ("merge", "open a pull request for").
async fn refusal(
    wf: &Workflow,
    story: &Story,
    work: &Work,
    deed: &'static str,
) -> Result<Option<String>> {
    let (Some(branch), Some(base)) = (work.branch.clone(), work.base.clone()) else {
        return Ok(None);
    };
    let root = wf.root.clone();
    let board = wf.config.sdlc_folder.clone();
    let start = story.meta.branch_base.clone();
    off_the_runtime(move || {
        let forbidden: Vec<String> = git::story_changes(&root, &branch, &base)?
            .into_iter()
            .filter(|path| forbidden_in_a_story(path, &board))
            .collect();
        if !forbidden.is_empty() {
            return Ok(Some(format!(
                "Refused to {deed} {branch}: it changes {}, which no story's work may change (the config and the board belong to agentic-sdlc)",
                forbidden.join(", ")
            )));
        }
        let gitlinks = git::story_gitlinks(&root, &branch, &base)?;
        if !gitlinks.is_empty() {
            return Ok(Some(format!(
                "Refused to {deed} {branch}: it adds a nested git repository (gitlink) at {}, whose own settings git would run in every clone",
                gitlinks.join(", ")
            )));
        }
        let Some(start) = start else {
            return Ok(None);
        };
        if !git::descends_from(&root, &start, &branch)? {
            return Ok(Some(format!(
                "Refused to {deed} {branch}: it no longer starts at {start:.7}, where agentic-sdlc made it (its history was rewritten)"
            )));
        }
        let foreign = git::commits_not_from(&root, &start, &branch)?;
        if !foreign.is_empty() {
            let shown: Vec<String> = foreign.iter().take(5).map(|c| format!("{c:.7}")).collect();
            return Ok(Some(format!(
                "Refused to {deed} {branch}: it holds commits that do not build on {start:.7}, where agentic-sdlc made it ({})",
                shown.join(", ")
            )));
        }
        Ok(None)
    })
    .await
}

/// Whether `path` (relative to the repository) is one no story may add or change: a config
/// file at any depth, or anything in the board folder, in a folder named like the default
/// board, or in the worktrees folder.
fn forbidden_in_a_story(path: &str, board: &str) -> bool {
    let board = board.trim_end_matches('/');
    let components: Vec<&str> = path.split('/').collect();
    components.last() == Some(&crate::config::CONFIG_FILE)
        || path.starts_with(&format!("{board}/"))
        || components[..components.len().saturating_sub(1)]
            .iter()
            .any(|part| *part == ".agentic-sdlc" || *part == crate::config::WORKTREES_DIR)
}

/// The work back when it may be delivered; else the tree is let go and the story blocked
/// for a person (or, when the check itself failed, the action failed).
async fn deliverable(
    wf: &Workflow,
    story: &Story,
    work: Work,
    deed: &'static str,
) -> Result<std::result::Result<Work, Outcome>> {
    let checked = refusal(wf, story, &work, deed).await;
    if let Ok(None) = checked {
        return Ok(Ok(work));
    }
    workspace::release(wf, work).await;
    let outcome = match checked {
        Ok(Some(reason)) => {
            wf.board.update(story.id(), |story| {
                story_ops::block(story, &reason);
                Ok(())
            })?;
            Outcome::Blocked {
                reason,
                stop: super::outcome::Stop::Refused,
            }
        }
        Err(err) => story_ops::fail(wf, story.id(), told(&err), Usage::default())?,
        Ok(None) => unreachable!("handled above"),
    };
    Ok(Err(outcome))
}

async fn integrate_and_test(
    wf: &Workflow,
    story: &Story,
    work: &Work,
    transcript: &Transcript,
) -> Result<Delivery> {
    let merge = Merge::of(story, work)?;
    for _ in 0..BASE_RACES {
        let (commit, base_tip) =
            match merge_and_test(wf, story, work, &merge, None, Testing::Run, transcript).await? {
                MergeStep::AlreadyMerged { commit } => return Ok(merge.merged(commit)),
                MergeStep::Rejected(issue) => return Ok(merge.rejected(issue)),
                MergeStep::Ready { commit, base_tip } => (commit, base_tip),
            };
        let (root, into, merged, own_paths) = (
            wf.root.clone(),
            merge.base.clone(),
            commit.clone(),
            wf.own_paths(),
        );
        let advanced = off_the_runtime(move || {
            let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
            match git::advance_base(&root, &into, &base_tip, &merged, &ignore) {
                Ok(()) => Ok(true),
                Err(git::AdvanceRefused::Moved) => Ok(false),
                Err(git::AdvanceRefused::Error(err)) => Err(err.into()),
            }
        })
        .await?;
        if advanced {
            return Ok(merge.merged(commit));
        }
    }
    let Merge { branch, base, .. } = merge;
    Err(Error::ActionFailed(format!(
        "{base} kept moving while {branch} was tested against it ({BASE_RACES} tries); nothing \
         was merged"
    ))
    .with_hint(format!("run again when nobody is committing to {base}")))
}

/// A failed integration is a rejected review aimed at implement: the rework that follows runs
/// in this same run and is bounded by the circuit breaker like any other (docs/design.md §7, §12).
fn send_back(wf: &Workflow, story_id: &StoryId, issue: ReviewIssue, base: &str) -> Result<Outcome> {
    let headline = issue
        .description
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let record = review::record_from(vec![issue], &[], Some("implement".into()));
    review::record_review(wf, story_id, record, Usage::default())?;
    Ok(Outcome::Completed(format!(
        "not merged into {base}: {headline} Rework next."
    )))
}

/// Moves the story to done, with the base commit that now holds its work, and removes its
/// worktree (its branch stays).
async fn mark_done(wf: &Workflow, story: &Story, merged: Option<(&str, &str)>) -> Result<()> {
    let (updated, ()) = wf.board.update(story.id(), |story| {
        record_done(story, merged);
        Ok(())
    })?;
    workspace::cleanup(wf, &updated).await;
    Ok(())
}

/// Pushes the story branch and opens a pull request with `gh`, stacked on its dependency's
/// branch when exactly one dependency is still unmerged with a pull request of its own. Where
/// that cannot be done (no git repository, no branch, no `gh`), it says so and the story goes
/// on to done.
pub async fn create_pr(wf: &Workflow, story_id: &StoryId) -> Result<Outcome> {
    let story = wf.board.locate(story_id)?;
    let Some(branch) = story.meta.branch.clone().filter(|_| git::is_repo(&wf.root)) else {
        return skip_pr(
            wf,
            &story,
            "the story has no git branch, so there is nothing to open a pull request for",
        )
        .await;
    };
    if !git::gh_available() {
        return skip_pr(
            wf,
            &story,
            &format!("the GitHub CLI `gh` is not installed; push {branch} and open the pull request by hand"),
        )
        .await;
    }
    let target = pr_target(wf, &story);
    let work = match workspace::prepare(wf, &story, Purpose::Inspect).await {
        Ok(work) => work,
        Err(err) => return story_ops::fail(wf, story_id, told(&err), Usage::default()),
    };
    let work = match deliverable(wf, &story, work, "open a pull request for").await? {
        Ok(work) => work,
        Err(outcome) => return Ok(outcome),
    };
    let title = story.meta.title.clone();
    let body = format!(
        "{}\n\n## Acceptance Criteria\n{}\n\n---\nOpened by agentic-sdlc for story {story_id}.",
        story.section("Summary").unwrap_or(""),
        story.section("Acceptance Criteria").unwrap_or("")
    );
    let dir = work.dir.clone();
    let pushed = off_the_runtime(move || {
        git::push_branch(&dir, &branch)?;
        Ok(git::create_pull_request(
            &dir,
            &branch,
            target.as_deref(),
            &title,
            &body,
        )?)
    })
    .await;
    workspace::release(wf, work).await;
    match pushed {
        Ok(url) => {
            wf.board.update(story_id, |story| {
                story.set("pr_url", &url);
                story.remove("last_error");
                Ok(())
            })?;
            Ok(Outcome::Completed(format!("pull request {url}")))
        }
        Err(err) => story_ops::fail(
            wf,
            story_id,
            format!("create_pr failed: {err}"),
            Usage::default(),
        ),
    }
}

/// The branch a pull request goes into: the one unmerged dependency's branch that has a pull
/// request open (a stacked PR), else the story's base.
fn pr_target(wf: &Workflow, story: &Story) -> Option<BranchName> {
    let base = story
        .meta
        .base_branch
        .clone()
        .or_else(|| wf.config.git.base_branch.clone());
    let open_dependencies: Vec<BranchName> = story
        .meta
        .depends_on
        .iter()
        .filter_map(|id| wf.board.locate(id).ok())
        .filter(|dependency| dependency.meta.pr_url.is_some())
        .filter_map(|dependency| dependency.meta.branch)
        .filter(|dependency_branch| {
            let into = base.as_deref().unwrap_or("HEAD");
            !git::is_merged(&wf.root, dependency_branch, into).unwrap_or(false)
        })
        .collect();
    match open_dependencies.as_slice() {
        [only] => Some(only.clone()),
        _ => base,
    }
}

async fn skip_pr(wf: &Workflow, story: &Story, why: &str) -> Result<Outcome> {
    wf.events.emit(super::events::RunEvent::Warning {
        story_id: Some(StoryId::from(story.id())),
        message: format!("no pull request: {why}"),
    });
    mark_done(wf, story, None).await?;
    Ok(Outcome::Completed(format!(
        "no pull request ({why}); moved to done"
    )))
}

#[cfg(test)]
mod tests {
    use super::forbidden_in_a_story;

    #[test]
    fn configs_and_boards_are_forbidden_at_any_depth() {
        for (path, forbidden) in [
            (".agentic-sdlc.json", true),
            ("src/.agentic-sdlc.json", true),
            ("stories/ready/x.md", true),
            (".agentic-sdlc/backlog/evil.md", true),
            ("src/.agentic-sdlc/backlog/evil.md", true),
            (".agentic-sdlc-worktrees/x/file", true),
            ("src/stories/x.rs", false),
            ("src/agentic-sdlc.json", false),
            ("docs/.agentic-sdlc.json.md", false),
            ("README.md", false),
        ] {
            assert_eq!(forbidden_in_a_story(path, "stories"), forbidden, "{path}");
        }
    }
}
