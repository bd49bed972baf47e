//! One step of a delivery, the same through a shared remote and without one: the story's work
//! merged with the base's tip (the local branch's, or a fetched commit), the story's branch
//! taking the merge, and the tests run on it (docs/design.md §12).

use crate::agents::transcript::Transcript;
use crate::board::records::{IssueSeverity, ReviewIssue};
use crate::board::{Column, Story};
use crate::error::{Error, Result};
use crate::names::BranchName;
use crate::vcs as git;
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::context::Workflow;
use crate::workflow::review;
use crate::workflow::workspace::Work;

/// How a delivery ended.
pub(crate) enum Delivery {
    Merged {
        commit: String,
        base: BranchName,
    },
    /// A conflict or red tests: the base is untouched and the work goes back to implement.
    Rejected {
        issue: ReviewIssue,
        base: BranchName,
    },
}

/// The merge of a story's branch into its base, and its commit message.
pub(crate) struct Merge {
    pub(crate) branch: BranchName,
    pub(crate) base: BranchName,
    message: String,
}

impl Merge {
    pub(crate) fn of(story: &Story, work: &Work) -> Result<Merge> {
        let (Some(branch), Some(base)) = (work.branch.clone(), work.base.clone()) else {
            return Err(Error::Other(
                "internal: delivery without a story branch".into(),
            ));
        };
        let message = format!(
            "Merge {branch} into {base}\n\nStory {}: {}",
            story.id(),
            story.meta.title
        );
        Ok(Merge {
            branch,
            base,
            message,
        })
    }

    pub(crate) fn merged(&self, commit: String) -> Delivery {
        Delivery::Merged {
            commit,
            base: self.base.clone(),
        }
    }

    pub(crate) fn rejected(&self, issue: ReviewIssue) -> Delivery {
        Delivery::Rejected {
            issue,
            base: self.base.clone(),
        }
    }
}

/// Whether the step runs the tests on its merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Testing {
    Run,
    /// They passed on an earlier merge whose tree outside the board is the same.
    AlreadyPassed,
}

/// How one step ended.
pub(crate) enum MergeStep {
    /// The base already holds the story's work.
    AlreadyMerged { commit: String },
    /// A conflict or red tests: the base is untouched and the work goes back to implement.
    Rejected(ReviewIssue),
    /// Merged on the story's branch and tested: `commit` may become the base, in place of
    /// `base_tip` where the merge was made.
    Ready { commit: String, base_tip: String },
}

/// Merges the base's tip (`onto`, or the local base's) into the story's work, lets the story's
/// branch take the merge and runs the tests on it.
pub(crate) async fn merge_and_test(
    wf: &Workflow,
    story: &Story,
    work: &Work,
    merge: &Merge,
    onto: Option<&str>,
    testing: Testing,
    transcript: &Transcript,
) -> Result<MergeStep> {
    let integration = integrate_step(wf, merge, onto, transcript).await?;
    let (commit, base_tip) = match integration {
        git::Integration::AlreadyMerged { commit } => {
            return Ok(MergeStep::AlreadyMerged { commit })
        }
        git::Integration::Conflicts(conflicts) => {
            return Ok(MergeStep::Rejected(conflict_issue(&conflicts, &merge.base)))
        }
        git::Integration::Merged {
            commit, base_tip, ..
        } => (commit, base_tip),
    };
    take_merge(wf, work, &merge.branch, &commit, &base_tip).await?;
    match testing {
        Testing::Run => {
            match review::run_test_command(wf, story.id(), &work.dir, transcript).await {
                review::TestVerdict::Passed => {}
                review::TestVerdict::Failed(failure) => {
                    return Ok(MergeStep::Rejected(test_issue(
                        &failure,
                        &merge.base,
                        &commit,
                    )));
                }
                review::TestVerdict::Refused(why) => return Err(Error::ActionFailed(why)),
            }
        }
        Testing::AlreadyPassed => transcript.record(
            "integrate",
            serde_json::json!({ "tests": "not run again: since they passed, the base changed only in the board folder" }),
        ),
    }
    Ok(MergeStep::Ready { commit, base_tip })
}

/// Brings the base's tip (the local branch `base`'s, or the commit `onto`) into the story's
/// work as a merge commit no branch points at yet, and notes it in the transcript.
async fn integrate_step(
    wf: &Workflow,
    merge: &Merge,
    onto: Option<&str>,
    transcript: &Transcript,
) -> Result<git::Integration> {
    let (root, story_branch, into, text, onto) = (
        wf.root.clone(),
        merge.branch.clone(),
        merge.base.clone(),
        merge.message.clone(),
        onto.map(str::to_string),
    );
    let integration = off_the_runtime(move || {
        Ok(match onto {
            Some(tip) => git::integrate_onto(&root, &story_branch, &tip, &text)?,
            None => git::integrate(&root, &story_branch, &into, &text)?,
        })
    })
    .await?;
    transcript.record(
        "integrate",
        serde_json::json!({ "branch": merge.branch, "base": merge.base, "result": describe(&integration) }),
    );
    Ok(integration)
}

/// The story's branch takes the merge whatever the tests say: a rework then builds on the
/// base's latest work (`fork`, recorded as where its own work starts).
async fn take_merge(
    wf: &Workflow,
    work: &Work,
    branch: &str,
    merged: &str,
    fork: &str,
) -> Result<()> {
    let (dir, root, story_branch, merged, fork) = (
        work.dir.clone(),
        wf.root.clone(),
        branch.to_string(),
        merged.to_string(),
        fork.to_string(),
    );
    off_the_runtime(move || {
        git::fast_forward_checkout(&dir, &merged)?;
        git::record_base(&root, &story_branch, &fork)?;
        Ok(())
    })
    .await
}

fn describe(integration: &git::Integration) -> String {
    match integration {
        git::Integration::Merged { commit, joined, .. } if joined.is_empty() => {
            format!("merged cleanly as {commit}")
        }
        git::Integration::Merged { commit, joined, .. } => format!(
            "merged as {commit}, joining the lines both sides added at one place in {} (the base's first)",
            joined.join(", ")
        ),
        git::Integration::AlreadyMerged { commit } => format!("already merged ({commit})"),
        git::Integration::Conflicts(conflicts) => {
            let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
            format!("conflicts in {}", paths.join(", "))
        }
    }
}

fn conflict_issue(conflicts: &[git::Conflict], base: &str) -> ReviewIssue {
    let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    let mut description = format!(
        "Merging into {base} conflicts in {}; {base} is unchanged.\nThe next implement run starts with {base}'s latest work merged into the story's branch; each of these files then holds {base}'s version, and the story's change to it is to be made again on top:",
        paths.join(", ")
    );
    for conflict in conflicts {
        description.push_str(&format!("\n- {}", conflict.path));
        if !conflict.base_commits.is_empty() {
            description.push_str(&format!(
                " (changed on {base} by: {})",
                conflict.base_commits.join("; ")
            ));
        }
    }
    ReviewIssue {
        severity: IssueSeverity::Blocker,
        category: "integration".into(),
        description,
        file: conflicts.first().map(|c| c.path.clone()),
        line: None,
        suggested_fix: Some(format!(
            "Resolve the conflicts with {base} so both changes work together"
        )),
    }
}

fn test_issue(failure: &str, base: &str, commit: &str) -> ReviewIssue {
    ReviewIssue {
        severity: IssueSeverity::Blocker,
        category: "testing".into(),
        description: format!(
            "The tests fail on this story merged with {base}'s latest work (merge {}); {base} is unchanged and the story's branch now holds that merge.\n{failure}",
            short(commit)
        ),
        file: None,
        line: None,
        suggested_fix: Some(format!(
            "Make the tests pass together with the work already on {base}"
        )),
    }
}

/// A commit as people read it: its first seven digits.
pub(crate) fn short(commit: &str) -> &str {
    &commit[..commit.len().min(7)]
}

/// Records a story as done: the base commit that holds its work and the base, and its column.
pub(crate) fn record_done(story: &mut Story, merged: Option<(&str, &str)>) {
    if let Some((commit, base)) = merged {
        story.set("merged_commit", &commit);
        story.set("base_branch", &base);
    }
    story.set_column(Column::Done);
    story.remove("last_error");
}
