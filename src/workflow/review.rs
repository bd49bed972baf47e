//! The review action (docs/design.md §10): the test command first, then three perspectives, then
//! one recorded decision.

use super::context::Workflow;
use super::events::RunEvent;
use super::outcome::{Outcome, Stop};
use super::tests_run::TestRun;
use super::workspace::Work;
use super::{no_progress, rework, shown_blockers, story_ops, tests_run, workspace};
use crate::agents::transcript::Transcript;
use crate::agents::verdict::{decide, format_issues, PerspectiveVerdict};
use crate::agents::{AgentError, AgentFailure, Perspective, ReviewRequest};
use crate::board::records::{
    IssueSeverity, ReviewDecision, ReviewIssue, ReviewRecord, Severity, Usage,
};
use crate::board::StoryId;
use crate::board::{Phase, Story};
use crate::error::Result;
use crate::hint::told;

pub async fn run(wf: &Workflow, story_id: &StoryId) -> Result<Outcome> {
    let story = wf.board.locate(story_id)?;
    let transcript = match story_ops::open_transcript(wf, story_id, "review")? {
        Ok(transcript) => transcript,
        Err(outcome) => return Ok(outcome),
    };
    let work = match workspace::prepare(wf, &story, workspace::Purpose::Inspect).await {
        Ok(work) => work,
        Err(err) => return story_ops::fail(wf, story_id, told(&err), Usage::default()),
    };
    // The reviewers read the story's tree, so it stays on the story's branch until they are done.
    let outcome = review_work(wf, &story, &transcript, &work).await;
    workspace::release(wf, work).await;
    outcome
}

async fn review_work(
    wf: &Workflow,
    story: &Story,
    transcript: &Transcript,
    work: &Work,
) -> Result<Outcome> {
    let story_id = story.id();
    let tests = tests_run::run(wf, story_id, &work.dir, transcript).await;
    if let Some(why) = tests.as_ref().and_then(TestRun::refusal) {
        return story_ops::fail(wf, story_id, why, Usage::default());
    }
    if let Some(failure) = tests.as_ref().and_then(TestRun::failure) {
        let issue = ReviewIssue {
            severity: IssueSeverity::Blocker,
            category: "testing".into(),
            description: failure,
            file: None,
            line: None,
            suggested_fix: Some("Make the test command pass".into()),
        };
        let record = record_from(vec![issue], &[], None);
        return record_review(wf, story_id, record, Usage::default());
    }
    let diff = match workspace::diff(wf, story, work).await {
        Ok(diff) => diff,
        Err(err) => return story_ops::fail(wf, story_id, told(&err), Usage::default()),
    };
    let request = ReviewRequest {
        story,
        diff: &diff,
        tests_passed: wf.config.review.test_command.as_deref(),
        work_dir: &work.dir,
        transcript,
    };
    match wf.agents.review(request).await {
        Err(AgentError {
            failure: AgentFailure::Failed(why),
            usage,
        }) => record_failed(wf, story_id, format!("review agent failed: {why}"), usage),
        Err(refused) => story_ops::agent_failed(wf, story_id, refused),
        Ok(output) => {
            let missing: Vec<&str> = output
                .verdicts
                .iter()
                .filter(|(_, v)| v.is_none())
                .map(|(p, _)| p.role())
                .collect();
            if !missing.is_empty() {
                let message = format!(
                    "review FAILED: no verdict from {} after a reminder",
                    missing.join(", ")
                );
                return record_failed(wf, story_id, message, output.usage);
            }
            let mut verdicts: Vec<(Perspective, PerspectiveVerdict)> = output
                .verdicts
                .into_iter()
                .filter_map(|(p, v)| v.map(|v| (p, v)))
                .collect();
            let mut usage = output.usage;
            if let Some(passing) = &tests {
                let evidence = shown_blockers::Evidence {
                    wf,
                    story,
                    dir: &work.dir,
                    diff: &diff,
                    transcript,
                    passing,
                };
                usage.add(&evidence.weigh(&mut verdicts).await);
            }
            let issues: Vec<ReviewIssue> = verdicts
                .iter()
                .flat_map(|(_, v)| v.issues.clone())
                .collect();
            let record = record_from(issues, &verdicts, earliest_target(&verdicts));
            record_review(wf, story_id, record, usage)
        }
    }
}

/// What running `review.testCommand` gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestVerdict {
    /// It passed, or none is set.
    Passed,
    /// It failed: what it printed last, or that it timed out.
    Failed(String),
    /// The box refused it, or it changed what no command may change (put back): the action
    /// fails, this says why.
    Refused(String),
}

/// Runs `review.testCommand` in the box on `dir`, when one is set. The review runs it on the
/// story's branch, delivery on the integrated tree.
pub async fn run_test_command(
    wf: &Workflow,
    story_id: &StoryId,
    dir: &std::path::Path,
    transcript: &Transcript,
) -> TestVerdict {
    let Some(run) = tests_run::run(wf, story_id, dir, transcript).await else {
        return TestVerdict::Passed;
    };
    match (run.refusal(), run.failure()) {
        (Some(why), _) => TestVerdict::Refused(why),
        (None, Some(failure)) => TestVerdict::Failed(failure),
        (None, None) => TestVerdict::Passed,
    }
}

/// The earliest phase any perspective asked to return to: the deepest cause wins.
fn earliest_target(verdicts: &[(Perspective, PerspectiveVerdict)]) -> Option<String> {
    verdicts
        .iter()
        .filter_map(|(_, v)| v.target_phase.as_deref().and_then(Phase::parse))
        .min()
        .map(|p| p.name().to_string())
}

pub(super) fn record_from(
    issues: Vec<ReviewIssue>,
    verdicts: &[(Perspective, PerspectiveVerdict)],
    target_phase: Option<String>,
) -> ReviewRecord {
    let (decision, severity) = decide(&issues);
    // A perspective passed when it said so and its own issues would pass a review; with no
    // verdicts (the test command failed first) none did. So a "passed" verdict listing a
    // blocker is no pass, whatever another perspective said.
    let passed = |perspective: Perspective| {
        verdicts.iter().any(|(p, v)| {
            *p == perspective && v.passed && decide(&v.issues).0 == ReviewDecision::Approved
        })
    };
    let feedback = if issues.is_empty() {
        "No issues found".to_string()
    } else {
        format_issues(&issues)
    };
    ReviewRecord {
        timestamp: story_ops::now(),
        decision,
        severity: Some(severity),
        feedback,
        blockers: issues
            .iter()
            .filter(|i| i.severity == IssueSeverity::Blocker)
            .map(|i| i.description.clone())
            .collect(),
        code_review_passed: passed(Perspective::Code),
        security_review_passed: passed(Perspective::Security),
        po_review_passed: passed(Perspective::ProductOwner),
        target_phase: if decision == ReviewDecision::Rejected {
            target_phase
        } else {
            None
        },
        issues,
    }
}

/// Records a decided review: history, notes, the reviews flag and the open rework iteration.
pub(super) fn record_review(
    wf: &Workflow,
    story_id: &StoryId,
    record: ReviewRecord,
    usage: Usage,
) -> Result<Outcome> {
    let decision = record.decision;
    let blockers = record.blockers.len();
    let first_line = record
        .feedback
        .trim()
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    let (story, repeated) = wf.board.update(story_id, |story| {
        let repeated = no_progress::repeated_blockers(&story.review_history()?, &record);
        story.add_usage(wf.spending.not_yet_written(story_id, usage))?;
        story.append_to_section("Review Notes", &review_note(&record));
        story.push_review(record)?;
        rework::finalise_iteration(story, decision)?;
        story.set_reviews_flag(decision == ReviewDecision::Approved);
        story.remove("last_error");
        if let Some(reason) = &repeated {
            story_ops::block(story, reason);
        }
        Ok(repeated)
    })?;
    wf.events.emit(RunEvent::ReviewDecided {
        story_id: StoryId::from(story_id),
        slug: story.slug.clone(),
        decision,
        feedback: first_line,
        blockers,
    });
    if let Some(reason) = repeated {
        return Ok(Outcome::Blocked {
            reason,
            stop: Stop::NoProgress,
        });
    }
    Ok(Outcome::Completed(match decision {
        ReviewDecision::Approved => "review APPROVED".to_string(),
        _ => format!("review REJECTED ({blockers} blocker(s)); rework next"),
    }))
}

/// A review whose agent failed is kept in the history as FAILED, which counts as no rejection
/// (docs/design.md §7.5), and the action fails.
fn record_failed(
    wf: &Workflow,
    story_id: &StoryId,
    message: String,
    usage: Usage,
) -> Result<Outcome> {
    let record = ReviewRecord {
        timestamp: story_ops::now(),
        decision: ReviewDecision::Failed,
        severity: None,
        feedback: message.clone(),
        blockers: Vec::new(),
        code_review_passed: false,
        security_review_passed: false,
        po_review_passed: false,
        target_phase: None,
        issues: Vec::new(),
    };
    wf.board.update(story_id, |story| {
        story.add_usage(wf.spending.not_yet_written(story_id, usage))?;
        story.push_review(record)?;
        story.set("last_error", &message);
        Ok(())
    })?;
    Ok(Outcome::Failed(message))
}

fn review_note(record: &ReviewRecord) -> String {
    let severity = record
        .severity
        .map_or(String::new(), |s: Severity| format!(" ({s})"));
    let mark = |passed: bool| if passed { "passed" } else { "failed" };
    format!(
        "### Review {}: {}{severity}\n- code review: {}\n- security review: {}\n- product owner review: {}\n\n{}",
        record.timestamp,
        record.decision,
        mark(record.code_review_passed),
        mark(record.security_review_passed),
        mark(record.po_review_passed),
        record.feedback
    )
}
