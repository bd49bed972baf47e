//! No-progress detection (docs/design.md §14): a model that repeats itself is stopped at once
//! instead of going round until the circuit breaker trips.
//!
//! Two signals: a re-run (a gate's RETRY or a rework) whose output is the same as the output it
//! was asked to improve, and a review that rejects with the same blockers as the rejection
//! before it. Either blocks the story with `blocked_reason` "No progress: …" and the evidence.

use std::path::{Path, PathBuf};

use super::context::Workflow;
use super::outcome::{Outcome, Stop};
use super::story_ops;
use crate::board::records::{IterationResult, ReviewDecision, ReviewRecord};
use crate::board::StoryId;
use crate::board::{Phase, Story};
use crate::error::Result;
use crate::names::BranchName;
use crate::vcs as git;

/// How much of the repeated text the reason quotes.
const EVIDENCE_CHARS: usize = 160;

/// Two outputs that differ only in surrounding whitespace or trailing spaces are the same.
fn normalised(text: &str) -> String {
    text.trim()
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The reason when a re-run's output repeats the output it was asked to improve.
///
/// `tree_unchanged` says, for implement, whether the code stayed exactly as it was: notes that
/// repeat themselves over a changed tree are progress.
pub fn repeated_output(
    phase: Phase,
    previous: Option<&str>,
    output: &str,
    tree_unchanged: bool,
) -> Option<String> {
    let previous = previous?;
    if normalised(previous) != normalised(output) || normalised(output).is_empty() {
        return None;
    }
    if phase == Phase::Implement && !tree_unchanged {
        return None;
    }
    let what = if phase == Phase::Implement {
        "the same notes and no change to the code"
    } else {
        "the same output"
    };
    Some(format!(
        "No progress: the {phase} re-run gave {what} as the attempt before it: \"{}\"",
        excerpt(output)
    ))
}

/// The reason when `review` rejects with the blockers of the rejection before it.
pub fn repeated_blockers(history: &[ReviewRecord], review: &ReviewRecord) -> Option<String> {
    if review.decision != ReviewDecision::Rejected || review.blockers.is_empty() {
        return None;
    }
    let previous = history
        .iter()
        .rev()
        .find(|r| r.decision == ReviewDecision::Rejected)?;
    let sorted = |blockers: &[String]| {
        let mut list: Vec<String> = blockers.iter().map(|b| normalised(b)).collect();
        list.sort();
        list
    };
    if sorted(&previous.blockers) != sorted(&review.blockers) {
        return None;
    }
    let quoted: Vec<String> = review
        .blockers
        .iter()
        .map(|b| format!("\"{}\"", excerpt(b)))
        .collect();
    Some(format!(
        "No progress: the review rejected with the same blocker(s) twice: {}",
        quoted.join("; ")
    ))
}

/// The first line of a text, cut to a length a reason can carry.
fn excerpt(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    let mut cut: String = line.chars().take(EVIDENCE_CHARS).collect();
    if cut.len() < line.len() || text.trim().lines().nth(1).is_some() {
        cut.push('…');
    }
    cut
}

/// The phase the story's open rework iteration went back to.
pub fn rework_target(story: &Story) -> Option<Phase> {
    let iteration = story.latest_iteration().ok().flatten()?;
    (iteration.result == IterationResult::InProgress)
        .then(|| Phase::parse(&iteration.agent_type))
        .flatten()
}

/// Blocks the story for no progress.
pub fn block(wf: &Workflow, story_id: &StoryId, reason: &str) -> Result<Outcome> {
    wf.board.update(story_id, |story| {
        story_ops::block(story, reason);
        Ok(())
    })?;
    Ok(Outcome::Blocked {
        reason: reason.to_string(),
        stop: Stop::NoProgress,
    })
}

/// The story's work as a patch, to tell whether an implement re-run changed any code; `None`
/// outside git, where the notes alone decide.
pub async fn work_fingerprint(
    work_dir: &Path,
    branch: Option<BranchName>,
    ignore: Vec<PathBuf>,
) -> Option<String> {
    if !git::is_repo(work_dir) {
        return None;
    }
    super::workspace::diff_of(work_dir, branch, ignore)
        .await
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::records::ReviewRecord;

    fn review(decision: ReviewDecision, blockers: &[&str]) -> ReviewRecord {
        ReviewRecord {
            timestamp: "2026-11-23T10:00:00.000Z".into(),
            decision,
            severity: None,
            feedback: String::new(),
            blockers: blockers.iter().map(|b| b.to_string()).collect(),
            code_review_passed: false,
            security_review_passed: false,
            po_review_passed: false,
            target_phase: None,
            issues: Vec::new(),
        }
    }

    #[test]
    fn a_repeated_output_is_no_progress() {
        let cases = [
            (Phase::Plan, Some("1. Do it\n"), "1. Do it", true, true),
            (
                Phase::Plan,
                Some("1. Do it"),
                "1. Do it better",
                true,
                false,
            ),
            (Phase::Plan, None, "1. Do it", true, false),
            (Phase::Research, Some("  "), " ", true, false),
            (Phase::Implement, Some("Done."), "Done.", true, true),
            (Phase::Implement, Some("Done."), "Done.", false, false),
        ];
        for (phase, previous, output, unchanged, expected) in cases {
            let reason = repeated_output(phase, previous, output, unchanged);
            assert_eq!(
                reason.is_some(),
                expected,
                "{phase} {previous:?} {output:?}"
            );
            if let Some(reason) = reason {
                assert!(reason.starts_with("No progress: "), "{reason}");
                assert!(reason.contains(output.trim()), "{reason}");
            }
        }
    }

    #[test]
    fn the_same_blockers_twice_is_no_progress() {
        let first = review(ReviewDecision::Rejected, &["b", "a"]);
        let failed = review(ReviewDecision::Failed, &[]);
        let again = review(ReviewDecision::Rejected, &["a", "b"]);
        let other = review(ReviewDecision::Rejected, &["a", "c"]);
        let history = vec![first, failed];
        let reason = repeated_blockers(&history, &again).unwrap();
        assert_eq!(
            reason,
            "No progress: the review rejected with the same blocker(s) twice: \"a\"; \"b\""
        );
        assert_eq!(repeated_blockers(&history, &other), None);
        assert_eq!(repeated_blockers(&[], &again), None);
    }
}
