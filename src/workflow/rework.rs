//! Rework and the circuit breaker (docs/design.md §7): a rejected review sends the work back to the
//! phase that must change, with the review's feedback, at most N times.

use super::context::Workflow;
use super::outcome::{Outcome, Stop};
use super::story_ops;
use crate::agents::verdict::{feedback_summary, format_issues};
use crate::board::records::{IterationResult, RefinementIteration, ReviewDecision, ReviewRecord};
use crate::board::StoryId;
use crate::board::{Phase, Story};
use crate::config::Escalation;
use crate::error::{Error, Result};

/// What a rework did, for the spinner and the events.
pub struct ReworkPlan {
    pub iteration: u32,
    pub limit: u32,
    pub target: Phase,
}

/// Where the work goes back to: the review's `target_phase`, else the issue categories.
pub fn target_phase(review: &ReviewRecord) -> Phase {
    if let Some(phase) = review
        .target_phase
        .as_deref()
        .and_then(Phase::parse)
        .filter(|p| *p != Phase::Refine)
    {
        return phase;
    }
    let categories: Vec<String> = review
        .issues
        .iter()
        .map(|i| i.category.to_lowercase())
        .collect();
    let mentions = |words: &[&str]| {
        categories
            .iter()
            .any(|c| words.iter().any(|w| c.contains(w)))
    };
    if mentions(&[
        "research",
        "requirement",
        "understanding",
        "missing information",
    ]) {
        Phase::Research
    } else if mentions(&["plan", "architecture", "design", "approach"]) {
        Phase::Plan
    } else {
        Phase::Implement
    }
}

pub fn limit(wf: &Workflow, story: &Story) -> u32 {
    story
        .meta
        .max_refinement_attempts
        .unwrap_or(wf.config.refinement.max_iterations)
}

/// What the spinner shows before the rework runs: the iteration it would start.
pub fn preview(wf: &Workflow, story: &Story) -> Option<ReworkPlan> {
    let review = story.latest_review().ok().flatten()?;
    Some(ReworkPlan {
        iteration: story.meta.refinement_count + 1,
        limit: limit(wf, story),
        target: target_phase(&review),
    })
}

pub fn run(wf: &Workflow, story_id: &StoryId) -> Result<Outcome> {
    let refinement = &wf.config.refinement;
    let (_, outcome) = wf.board.update(story_id, |story| {
        let review = story
            .latest_review()?
            .filter(|r| r.decision == ReviewDecision::Rejected)
            .ok_or_else(|| {
                Error::ActionFailed(format!("{}: no rejected review to rework", story.slug))
            })?;
        let limit = limit(wf, story);
        let count = story.meta.refinement_count;
        if count >= limit && refinement.enable_circuit_breaker {
            let reason = format!(
                "Circuit breaker: reached max refinement attempts ({count}/{limit}); manual intervention required"
            );
            story_ops::block(story, &reason);
            let stop = match refinement.escalate_on_max_attempts {
                Escalation::Manual => Stop::Manual,
                Escalation::Error => Stop::Error,
                Escalation::Skip => Stop::Skip,
            };
            return Ok(Outcome::Blocked { reason, stop });
        }
        let target = target_phase(&review);
        let iteration = count + 1;
        let summary = if review.issues.is_empty() {
            review
                .feedback
                .lines()
                .next()
                .unwrap_or("Review failed")
                .to_string()
        } else {
            feedback_summary(&review.issues)
        };
        let mut iterations = story.refinement_iterations()?;
        iterations.push(RefinementIteration {
            iteration,
            agent_type: target.name().to_string(),
            started_at: started_after(&review.timestamp),
            completed_at: None,
            review_feedback: Some(summary.clone()),
            result: IterationResult::InProgress,
        });
        story.set("refinement_count", &iteration);
        story.set("refinement_iterations", &iterations);
        story.append_to_section(
            "Review Notes",
            &iteration_note(iteration, target, &summary, &review),
        );
        story.reset_from_phase(target);
        story.remove("last_error");
        Ok(Outcome::Completed(format!(
            "iteration {iteration}/{limit}: back to {target} ({summary})"
        )))
    })?;
    Ok(outcome)
}

/// Now, but strictly after the review it answers: the assessor tells an answered rejection by
/// comparing these instants, and a rework in the same millisecond must still count.
fn started_after(review_timestamp: &str) -> String {
    let now = chrono::Utc::now();
    let at = match chrono::DateTime::parse_from_rfc3339(review_timestamp) {
        Ok(review) if review >= now => {
            review.with_timezone(&chrono::Utc) + chrono::Duration::milliseconds(1)
        }
        _ => now,
    };
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn iteration_note(iteration: u32, target: Phase, summary: &str, review: &ReviewRecord) -> String {
    let issues = if review.issues.is_empty() {
        review.feedback.trim().to_string()
    } else {
        format_issues(&review.issues)
    };
    format!("### Refinement Iteration {iteration}\nTarget phase: {target}. {summary}\n\n{issues}")
}

/// Closes the open rework iteration when a review decides (docs/design.md §7.4).
pub fn finalise_iteration(story: &mut Story, decision: ReviewDecision) -> Result<()> {
    let result = match decision {
        ReviewDecision::Approved => IterationResult::Success,
        ReviewDecision::Rejected => IterationResult::Failed,
        ReviewDecision::Failed => return Ok(()),
    };
    let mut iterations = story.refinement_iterations()?;
    if let Some(open) = iterations
        .last_mut()
        .filter(|i| i.result == IterationResult::InProgress)
    {
        open.result = result;
        open.completed_at = Some(story_ops::now());
        story.set("refinement_iterations", &iterations);
    }
    Ok(())
}
