//! The one gate path on a real board folder: a decision means the same whoever made it, and a
//! person's retry is carried from `decide` into the next run.

use std::path::Path;

use super::*;
use crate::board::board_store::BoardStore;
use crate::board::frontmatter::Frontmatter;
use crate::board::{Column, StoryId};
use crate::workflow::decision::parse_decision;

const ID: &str = "story-gate-1";
static STORY: std::sync::LazyLock<StoryId> = std::sync::LazyLock::new(|| StoryId::from(ID));

fn board_with_story() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut front = Frontmatter::empty();
    front.set("id", &ID);
    front.set("title", &"Add a rate limiter");
    front.set("status", &Column::Ready.name());
    let mut story = Story::new(
        front,
        "# Add a rate limiter\n".into(),
        Column::Ready,
        "rate".into(),
    )
    .unwrap();
    store::create(dir.path(), &mut story).unwrap();
    dir
}

fn story(board: &Path) -> Story {
    store::locate(board, ID, None).unwrap()
}

fn record(board: &Path) -> PhaseReview {
    story(board).phase_reviews().unwrap()["research"].clone()
}

fn gate_config(max_retries: u32, max_predecessor_retries: u32) -> GateConfig {
    serde_json::from_value(serde_json::json!({
        "reviewer": "ai",
        "maxRetries": max_retries,
        "maxPredecessorRetries": max_predecessor_retries,
    }))
    .unwrap()
}

/// A commit of the current output that the gate did not approve, with the record's note.
fn kept(note: &str) -> Applied<Rerun> {
    Applied::Committed {
        note: Some(note.into()),
    }
}

/// A research attempt left for a person, as a run without a terminal leaves it.
fn waiting_for_person(board: &Path, output: &str) {
    let store = BoardStore::unloaded(board);
    let mut gate = PhaseGate::new(&store, &STORY, Phase::Research);
    gate.count_attempt();
    gate.wait_for_person(output).unwrap();
}

/// The research reviewer's first decision in a run, on `output`.
fn decided_in_run(board: &Path, output: &str, decision: &str) -> Applied<Rerun> {
    let store = BoardStore::unloaded(board);
    let mut gate = PhaseGate::new(&store, &STORY, Phase::Research);
    gate.count_attempt();
    gate.apply_in_run(&gate_config(2, 2), output, parse_decision(decision))
        .unwrap()
}

/// A person's decision with `decide`, on the research output that waited for them.
fn decided_afterwards(board: &Path, decision: &str) -> Result<Applied<Recorded>> {
    let waiting = story(board);
    let store = BoardStore::unloaded(board);
    let mut gate = PhaseGate::awaiting_person(&store, &waiting)
        .unwrap()
        .expect("the research output waits for a person");
    gate.apply_afterwards(parse_decision(decision), DecidedBy::Decide)
}

#[test]
fn a_reject_blocks_the_story_the_same_way_whoever_decided() {
    let in_run = board_with_story();
    let applied = decided_in_run(in_run.path(), "findings", "REJECT: off topic");

    let afterwards = board_with_story();
    waiting_for_person(afterwards.path(), "findings");
    let by_person = decided_afterwards(afterwards.path(), "REJECT: off topic").unwrap();

    let reason = "Phase research rejected by review: off topic".to_string();
    assert_eq!(
        applied,
        Applied::Blocked {
            reason: reason.clone()
        }
    );
    assert_eq!(
        by_person,
        Applied::Blocked {
            reason: reason.clone()
        }
    );
    for board in [in_run.path(), afterwards.path()] {
        let blocked = story(board);
        assert_eq!(blocked.column, Column::Blocked);
        assert_eq!(
            blocked.get::<String>("blocked_reason").unwrap(),
            Some(reason.clone())
        );
        assert_eq!(blocked.section("Research").unwrap_or(""), "");
    }
    // The same record, but for who decided: only a person's decision says where it came from.
    let (mut by_reviewer, by_person) = (record(in_run.path()), record(afterwards.path()));
    assert_eq!(by_reviewer.decided_by, None);
    assert_eq!(by_person.decided_by, Some(DecidedBy::Decide));
    by_reviewer.decided_by = by_person.decided_by;
    assert_eq!(by_reviewer, by_person);
    assert_eq!(record(in_run.path()).decision, "REJECT");
    assert_eq!(record(in_run.path()).feedback.as_deref(), Some("off topic"));
}

#[test]
fn an_approval_commits_the_output_and_says_who_approved_it() {
    let in_run = board_with_story();
    let applied = decided_in_run(in_run.path(), "in-run findings", "Looks fine.");
    assert_eq!(applied, Applied::Committed { note: None });
    assert_eq!(
        story(in_run.path()).section("Research"),
        Some("in-run findings")
    );
    assert_eq!(
        record(in_run.path()).feedback.as_deref(),
        Some("no decision line; approved by default")
    );

    let afterwards = board_with_story();
    waiting_for_person(afterwards.path(), "waited findings");
    let applied = decided_afterwards(afterwards.path(), "approve").unwrap();
    assert_eq!(applied, Applied::Committed { note: None });
    let approved = story(afterwards.path());
    assert_eq!(approved.section("Research"), Some("waited findings"));
    assert_eq!(
        approved.get::<bool>("research_complete").unwrap(),
        Some(true)
    );
    assert_eq!(record(afterwards.path()).decision, "APPROVE");
    assert_eq!(
        record(afterwards.path()).feedback.as_deref(),
        Some("approved by a person")
    );
    assert!(
        PhaseGate::awaiting_person(&BoardStore::unloaded(afterwards.path()), &approved)
            .unwrap()
            .is_none(),
        "nothing waits once the person decided"
    );
    assert!(!pending_output_path(afterwards.path(), &STORY, Phase::Research).exists());
}

#[test]
fn a_person_cannot_approve_an_output_that_is_gone_and_nothing_changes() {
    let board = board_with_story();
    waiting_for_person(board.path(), "findings");
    fs_err::remove_file(pending_output_path(board.path(), &STORY, Phase::Research)).unwrap();
    let before = fs_err::read_to_string(story(board.path()).path).unwrap();

    let err = decided_afterwards(board.path(), "APPROVE").unwrap_err();

    assert!(err.to_string().contains("is gone"), "{err}");
    assert_eq!(
        fs_err::read_to_string(story(board.path()).path).unwrap(),
        before
    );
}

#[test]
fn a_persons_retry_is_recorded_and_the_next_run_carries_it_out_whatever_the_budget() {
    let board = board_with_story();
    waiting_for_person(board.path(), "first findings");
    let applied = decided_afterwards(board.path(), "RETRY: cite the sources").unwrap();
    assert_eq!(
        applied,
        Applied::Retry(Recorded(
            "RETRY recorded; `agentic-sdlc run` carries it out".into()
        ))
    );
    assert_eq!(
        record(board.path()).resume.as_deref(),
        Some("RETRY: cite the sources")
    );

    // The next run: even a gate that allows no retry re-runs what the person asked for.
    let store = BoardStore::unloaded(board.path());
    let mut next_run = PhaseGate::new(&store, &STORY, Phase::Research);
    let resumed = next_run
        .resume(&story(board.path()), Some(&gate_config(0, 0)))
        .unwrap();
    assert_eq!(
        resumed,
        Some(Applied::Retry(Rerun::Phase(Revision {
            attempt: 2,
            feedback: "cite the sources".into(),
            previous_output: Some("first findings".into()),
        })))
    );
    assert_eq!(next_run.attempts(), 1, "the attempts carry on");
    assert_eq!(next_run.retries(), 0);
}

#[test]
fn in_run_retries_stop_at_the_budget_and_keep_the_last_output() {
    let board = board_with_story();
    let config = gate_config(1, 2);
    let store = BoardStore::unloaded(board.path());
    let mut gate = PhaseGate::new(&store, &STORY, Phase::Research);
    gate.count_attempt();
    let first = gate
        .apply_in_run(&config, "thin findings", parse_decision("RETRY: more"))
        .unwrap();
    assert_eq!(
        first,
        Applied::Retry(Rerun::Phase(Revision {
            attempt: 2,
            feedback: "more".into(),
            previous_output: Some("thin findings".into()),
        }))
    );
    assert!(
        story(board.path()).phase_reviews().unwrap().is_empty(),
        "nothing written yet"
    );

    gate.count_attempt();
    let second = gate
        .apply_in_run(
            &config,
            "better findings",
            parse_decision("RETRY: still more"),
        )
        .unwrap();
    assert_eq!(second, kept("gate retries exhausted, last output kept"));
    assert_eq!(
        story(board.path()).section("Research"),
        Some("better findings")
    );
    let kept = record(board.path());
    assert_eq!((kept.attempts, kept.exhausted), (2, Some(true)));
    assert_eq!(kept.feedback.as_deref(), Some("still more"));
}

#[test]
fn retry_predecessor_names_the_direct_predecessor_within_its_budget() {
    let config = gate_config(2, 1);
    let board = board_with_story();
    let store = BoardStore::unloaded(board.path());
    let mut gate = PhaseGate::new(&store, &STORY, Phase::Plan);
    gate.count_attempt();

    let applied = gate
        .apply_in_run(
            &config,
            "plan one",
            parse_decision("RETRY_PREDECESSOR Research: sources"),
        )
        .unwrap();
    assert_eq!(
        applied,
        Applied::Retry(Rerun::Predecessor {
            predecessor: Phase::Research,
            feedback: "sources".into(),
        })
    );
    let spent = gate
        .apply_in_run(
            &config,
            "plan two",
            parse_decision("RETRY_PREDECESSOR research: again"),
        )
        .unwrap();
    assert_eq!(spent, kept("predecessor retries exhausted"));
    let plan = story(board.path()).phase_reviews().unwrap()["plan"].clone();
    assert_eq!(plan.predecessor_retries, Some(1));
    assert_eq!(plan.exhausted, Some(true));

    let other = board_with_story();
    let store = BoardStore::unloaded(other.path());
    let mut gate = PhaseGate::new(&store, &STORY, Phase::Plan);
    let not_direct = gate
        .apply_in_run(
            &config,
            "plan",
            parse_decision("RETRY_PREDECESSOR refine: why"),
        )
        .unwrap();
    assert_eq!(
        not_direct,
        kept("`refine` is not the direct predecessor of plan")
    );
    assert_eq!(
        story(other.path()).section("Implementation Plan"),
        Some("plan")
    );
}
