//! The run loop with scripted in-process agents: the loop's decisions, independent of any LLM.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::checkpoint::RunOptions;
use super::events::EventSink;
use super::prompter::{Answer, GateQuestion, NoDecision, Prompter};
use super::runner::{run, AgentFactory, RunRequest};
use crate::agents::verdict::PerspectiveVerdict;
use crate::agents::{
    AgentError, AgentOutput, Agents, GateRequest, Perspective, PhaseRequest, ReviewOutput,
    ReviewRequest,
};
use crate::board::records::{IssueSeverity, IterationResult, ReviewDecision, ReviewIssue, Usage};
use crate::board::{frontmatter::Frontmatter, sections, store, Board, Column, Story};
use crate::config::Project;

/// Answers every phase with a new text each time (a model that makes progress, docs/design.md §14)
/// and each review from a queue (approve when empty); records what each phase was asked, to check
/// the feedback it got.
#[derive(Default)]
struct Scripted {
    reviews: Mutex<VecDeque<Vec<ReviewIssue>>>,
    prompts: Mutex<Vec<(String, Option<String>)>>,
}

#[async_trait]
impl Agents for Scripted {
    async fn run_phase(&self, request: PhaseRequest<'_>) -> Result<AgentOutput, AgentError> {
        let feedback = request.revision.map(|r| r.feedback.clone());
        self.prompts
            .lock()
            .unwrap()
            .push((request.phase.name().to_string(), feedback));
        if request.phase == crate::board::Phase::Implement {
            // A feature's implementation changes a file (docs/design.md §15), as a real agent
            // would.
            let count = self.prompts.lock().unwrap().len();
            fs_err::write(
                request.work_dir.join("scripted-change.txt"),
                count.to_string(),
            )
            .unwrap();
        }
        let text = match request.phase {
            crate::board::Phase::Refine => {
                "## Summary\nS\n\n## Acceptance Criteria\n- [ ] A".to_string()
            }
            phase => format!("{phase} output {}", self.prompts.lock().unwrap().len()),
        };
        Ok(AgentOutput {
            text,
            usage: Usage {
                prompt_tokens: 1,
                completion_tokens: 1,
                requests: 1,
                cost_usd: None,
                estimated: false,
            },
            ..AgentOutput::default()
        })
    }

    async fn review(&self, _request: ReviewRequest<'_>) -> Result<ReviewOutput, AgentError> {
        let issues = self.reviews.lock().unwrap().pop_front().unwrap_or_default();
        let verdict = |issues: Vec<ReviewIssue>| {
            Some(PerspectiveVerdict {
                passed: issues.is_empty(),
                issues,
                target_phase: None,
            })
        };
        Ok(ReviewOutput {
            verdicts: vec![
                (Perspective::Code, verdict(issues)),
                (Perspective::Security, verdict(Vec::new())),
                (Perspective::ProductOwner, verdict(Vec::new())),
            ],
            usage: Usage::default(),
        })
    }

    async fn phase_review(&self, _request: GateRequest<'_>) -> Result<AgentOutput, AgentError> {
        Ok(AgentOutput {
            text: "APPROVE".into(),
            ..AgentOutput::default()
        })
    }
}

/// A blocker worded differently per `n`, so that repeated rejections are not "No progress".
fn blocker(n: u32) -> Vec<ReviewIssue> {
    vec![ReviewIssue {
        severity: IssueSeverity::Blocker,
        category: "testing".into(),
        description: format!("no tests ({n})"),
        file: Some("src/lib.rs".into()),
        line: Some(3),
        suggested_fix: Some("add tests".into()),
    }]
}

/// A board outside git with `config` (stories get no branches unless it says otherwise).
fn project(root: &Path, config: &str) -> Project {
    let mut config: serde_json::Value = serde_json::from_str(config).unwrap();
    if config.get("git").is_none() {
        config["git"] = serde_json::json!({"branchPerStory": false});
    }
    fs_err::write(root.join(crate::config::CONFIG_FILE), config.to_string()).unwrap();
    let project = Project::discover(root).unwrap();
    let mut front = Frontmatter::empty();
    front.set("id", &"story-1");
    front.set("title", &"Rate limiter");
    front.set("priority", &10);
    front.set("status", &"backlog");
    let mut story = Story::new(
        front,
        sections::template("Rate limiter", None),
        Column::Backlog,
        "rate-limiter".into(),
    )
    .unwrap();
    store::create(&project.board_dir(), &mut story).unwrap();
    project
}

async fn run_auto(project: &Project, agents: Arc<Scripted>) -> crate::error::ExitStatus {
    run_auto_asking(project, agents, None).await
}

async fn run_auto_asking(
    project: &Project,
    agents: Arc<Scripted>,
    prompter: Option<Arc<dyn Prompter>>,
) -> crate::error::ExitStatus {
    let factory: AgentFactory = Box::new(move |_, _, _| Ok(agents as Arc<dyn Agents>));
    let request = RunRequest {
        options: RunOptions {
            auto: true,
            ..RunOptions::default()
        },
        ..RunRequest::default()
    };
    run(project, EventSink::unseen(), request, factory, prompter)
        .await
        .unwrap()
}

fn only_story(project: &Project) -> Story {
    Board::load_stories(&project.board_dir())
        .unwrap()
        .stories
        .remove(0)
}

#[tokio::test]
async fn reject_reject_approve_reworks_twice_then_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let project = project(dir.path(), "{}");
    let agents = Arc::new(Scripted::default());
    agents
        .reviews
        .lock()
        .unwrap()
        .extend([blocker(1), blocker(2)]);
    assert_eq!(
        run_auto(&project, Arc::clone(&agents)).await,
        crate::error::ExitStatus::Success
    );

    let story = only_story(&project);
    assert_eq!(story.column, Column::Done);
    assert_eq!(story.meta.refinement_count, 2);
    let results: Vec<IterationResult> = story
        .refinement_iterations()
        .unwrap()
        .iter()
        .map(|i| i.result)
        .collect();
    assert_eq!(results, [IterationResult::Failed, IterationResult::Success]);
    let decisions: Vec<ReviewDecision> = story
        .review_history()
        .unwrap()
        .iter()
        .map(|r| r.decision)
        .collect();
    assert_eq!(
        decisions,
        [
            ReviewDecision::Rejected,
            ReviewDecision::Rejected,
            ReviewDecision::Approved
        ]
    );
    // Both implement re-runs carried the blocker as feedback; the first run had none.
    let prompts = agents.prompts.lock().unwrap();
    let implement: Vec<&Option<String>> = prompts
        .iter()
        .filter(|(p, _)| p == "implement")
        .map(|(_, f)| f)
        .collect();
    assert_eq!(implement.len(), 3);
    assert!(implement[0].is_none());
    assert!(
        implement[1]
            .as_deref()
            .unwrap()
            .contains("no tests (1) — src/lib.rs:3"),
        "{:?}",
        implement[1]
    );
}

#[tokio::test]
async fn the_breaker_blocks_and_stops_for_a_person() {
    let dir = tempfile::tempdir().unwrap();
    let project = project(dir.path(), r#"{"refinement": {"maxIterations": 1}}"#);
    let agents = Arc::new(Scripted::default());
    agents
        .reviews
        .lock()
        .unwrap()
        .extend([blocker(1), blocker(2), blocker(3)]);
    assert_eq!(
        run_auto(&project, agents).await,
        crate::error::ExitStatus::NeedsPerson
    );
    let story = only_story(&project);
    assert_eq!(story.column, Column::Blocked);
    assert_eq!(
        story.meta.blocked_reason.as_deref(),
        Some(
            "Circuit breaker: reached max refinement attempts (1/1); manual intervention required"
        )
    );
}

/// A person at the terminal who gives these answers in turn and remembers what was asked.
struct Person {
    answers: Mutex<VecDeque<&'static str>>,
    asked: Mutex<Vec<GateQuestion>>,
}

impl Prompter for Person {
    fn ask(&self, question: &GateQuestion) -> std::io::Result<Answer> {
        self.asked.lock().unwrap().push(question.clone());
        let answer = self.answers.lock().unwrap().pop_front().unwrap_or_default();
        Ok(match answer {
            "" => Answer::Later(NoDecision::Empty),
            text => Answer::Decision(text.to_string()),
        })
    }

    fn interrupt(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_human_gate_asks_the_prompter_and_its_retry_reruns_the_phase() {
    let dir = tempfile::tempdir().unwrap();
    let project = project(
        dir.path(),
        r#"{"phases": {"research": {"review": {"reviewer": "human", "criteria": "cites sources"}}}}"#,
    );
    let agents = Arc::new(Scripted::default());
    let person = Arc::new(Person {
        answers: Mutex::new(VecDeque::from(["RETRY: name the sources", "APPROVE"])),
        asked: Mutex::new(Vec::new()),
    });
    let prompter = Arc::clone(&person) as Arc<dyn Prompter>;
    assert_eq!(
        run_auto_asking(&project, Arc::clone(&agents), Some(prompter)).await,
        crate::error::ExitStatus::Success
    );

    let asked = person.asked.lock().unwrap();
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert!(asked.iter().all(|q| q.phase == "research"
        && q.title == "Rate limiter"
        && q.criteria.as_deref() == Some("cites sources")));
    assert_ne!(
        asked[0].output, asked[1].output,
        "the second answer is new work"
    );
    let research: Vec<Option<String>> = agents
        .prompts
        .lock()
        .unwrap()
        .iter()
        .filter(|(phase, _)| phase == "research")
        .map(|(_, feedback)| feedback.clone())
        .collect();
    assert_eq!(research.len(), 2);
    assert!(
        research[1]
            .as_deref()
            .is_some_and(|f| f.contains("name the sources")),
        "{research:?}"
    );
    assert_eq!(only_story(&project).column, Column::Done);
}

#[tokio::test]
async fn an_answer_that_is_no_decision_leaves_the_story_waiting_and_the_run_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let project = project(
        dir.path(),
        r#"{"phases": {"research": {"review": {"reviewer": "human"}}}}"#,
    );
    let agents = Arc::new(Scripted::default());
    let person = Arc::new(Person {
        answers: Mutex::new(VecDeque::from([""])),
        asked: Mutex::new(Vec::new()),
    });
    let prompter = Arc::clone(&person) as Arc<dyn Prompter>;
    assert_eq!(
        run_auto_asking(&project, Arc::clone(&agents), Some(prompter)).await,
        crate::error::ExitStatus::NeedsPerson
    );
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    let story = only_story(&project);
    let reviews = story.phase_reviews().unwrap();
    assert!(reviews["research"].decision.is_pending(), "{reviews:?}");
    assert!(!story.meta.completed.contains(crate::board::Phase::Research));
}
