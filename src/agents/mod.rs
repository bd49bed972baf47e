//! The agents that work on stories and what they share: the LLM client, the turn loop, the
//! transcripts, the confined tools and the reading of review verdicts.

pub mod conversation;
pub mod llm;
pub mod llm_agents;
pub mod meter;
pub mod prompts;
pub mod structured;
pub mod text_calls;
pub mod tools;
pub mod transcript;
pub mod verdict;

use std::path::Path;

use async_trait::async_trait;
use serde_json::Value;

use crate::board::records::Usage;
use crate::board::{Phase, Story};
use meter::Refusal;
use transcript::Transcript;
use verdict::PerspectiveVerdict;

/// The result of one tool call as the model will read it. An error here (a bad argument, a
/// refused path) is for the model to handle, not a reason to end the action; only a fatal one
/// (the tool itself broke) ends it.
pub use tools::{CallFailure, ToolOutcome};

/// The tools one agent may use.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// OpenAI function definitions (`{"type": "function", "function": {"name", …}}`).
    fn definitions(&self) -> Vec<Value>;
    async fn call(&self, name: &str, arguments: &str) -> ToolOutcome;
    /// Whether the tool can change the files (a later read may then read something else).
    fn writes(&self, name: &str) -> bool {
        let _ = name;
        true
    }
}

/// A check of the work an agent did, run when the model says it is done (the project's tests
/// after implement). A failure goes back to the model in the same conversation.
#[async_trait]
pub trait WorkCheck: Send + Sync {
    /// Checks the work as it is now: `None` when it passes, else what the model should read.
    async fn run(&self) -> Option<String>;

    /// How many failures may be sent back before the conversation ends anyway.
    fn feedback_rounds(&self) -> u32;

    /// What the check runs, for the prompt (`python3 -m pytest -q`).
    fn describe(&self) -> String;

    /// What the check already found failing before the conversation starts (implement's
    /// opening, `first_alone`), said for the end of the first prompt: the model then fixes it
    /// in its first reply instead of claiming a change the tool made and hearing of the
    /// failure a reply later.
    fn standing_failure(&self) -> Option<String> {
        None
    }
}

/// The feedback a phase re-run gets (docs/design.md §9): after a gate's RETRY, a predecessor retry
/// or a rework.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// 2 for the first re-run, then 3, …
    pub attempt: u32,
    pub feedback: String,
    pub previous_output: Option<String>,
}

pub struct PhaseRequest<'a> {
    pub phase: Phase,
    pub story: &'a Story,
    pub revision: Option<&'a Revision>,
    /// The working tree the agent may read and (for implement) change.
    pub work_dir: &'a Path,
    pub transcript: &'a Transcript,
    /// What checks the work when the model says it is done (implement with a test command),
    /// and how often a failure may go back to it.
    pub check: Option<&'a dyn WorkCheck>,
    /// Where acceptance writes its tests, picked by the tool from the project's tests.
    pub acceptance_path: Option<&'a str>,
    /// 0 for the phase's first try in this action; each retry or further attempt counts up,
    /// so that it is asked differently and does not replay an answer already refused.
    pub variant: u32,
}

/// What an agent produced, and what producing it cost.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentOutput {
    pub text: String,
    pub usage: Usage,
    /// The answer was cut off by the reply cap (finish_reason `length`, docs/design.md §15).
    pub truncated: bool,
    /// Tool calls the model made, so an implement that changed nothing can say why.
    pub tool_calls: u32,
    /// The server refused the tools and the agent went on without them.
    pub tools_refused: Option<String>,
    /// Times a failed work check (the tests) was sent back to the model.
    pub check_rounds: u32,
}

/// An agent that could not finish. The action ends, the story keeps its state and gets
/// `last_error`; the tokens already spent are still counted.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentError {
    pub failure: AgentFailure,
    pub usage: Usage,
}

/// Why an agent could not finish, as the workflow tells the cases apart.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentFailure {
    /// The budget refused a model call before it was sent: not the agent's fault. A story's
    /// own budget blocks it; the run's stops the action and leaves the story as it was.
    #[error("{0}")]
    Refused(Refusal),
    /// Anything else, said for `last_error`: the API, a tool on the tool's side, an answer
    /// that could not be used.
    #[error("{0}")]
    Failed(String),
    /// The model server could not be reached (no connection, or it dropped): the action
    /// fails, and the run checks whether the server is gone before starting anything else.
    #[error("{0}")]
    Unreachable(String),
}

impl AgentError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            failure: AgentFailure::Failed(message.into()),
            usage: Usage::default(),
        }
    }

    /// The failure with some context in front (`review agent failed: …`); a budget refusal
    /// stays as it is, since the workflow handles it apart.
    pub fn context(self, context: impl FnOnce(&str) -> String) -> Self {
        let failure = match self.failure {
            AgentFailure::Failed(message) => AgentFailure::Failed(context(&message)),
            AgentFailure::Unreachable(message) => AgentFailure::Unreachable(context(&message)),
            refused => refused,
        };
        AgentError { failure, ..self }
    }
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.failure.fmt(f)
    }
}

impl From<(llm::LlmError, Usage)> for AgentError {
    fn from((error, usage): (llm::LlmError, Usage)) -> AgentError {
        let failure = match error {
            llm::LlmError::Budget(refusal) => AgentFailure::Refused(refusal),
            unreachable @ llm::LlmError::Connection(_) => {
                AgentFailure::Unreachable(unreachable.to_string())
            }
            // A failure said for `last_error` keeps its hint: the person reads it there.
            other => AgentFailure::Failed(crate::hint::told(&other)),
        };
        AgentError { failure, usage }
    }
}

/// The three ways the review looks at the work (docs/design.md §10); each is an agent role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::VariantArray, strum::IntoStaticStr)]
pub enum Perspective {
    #[strum(serialize = "code-review")]
    Code,
    #[strum(serialize = "security-review")]
    Security,
    #[strum(serialize = "po-review")]
    ProductOwner,
}

impl Perspective {
    pub const ALL: [Perspective; 3] = [
        Perspective::Code,
        Perspective::Security,
        Perspective::ProductOwner,
    ];

    pub fn role(self) -> &'static str {
        self.into()
    }
}

pub struct ReviewRequest<'a> {
    pub story: &'a Story,
    pub diff: &'a str,
    /// The test command that passed on the work just before the review, when one is set.
    pub tests_passed: Option<&'a str>,
    /// The story's working tree, which the reviewers may read.
    pub work_dir: &'a Path,
    pub transcript: &'a Transcript,
}

/// Each perspective's verdict; `None` when it gave none even after a reminder.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewOutput {
    pub verdicts: Vec<(Perspective, Option<PerspectiveVerdict>)>,
    pub usage: Usage,
}

pub struct GateRequest<'a> {
    pub phase: Phase,
    pub story: &'a Story,
    pub output: &'a str,
    pub criteria: Option<&'a str>,
    /// The working tree the phase ran in, which the gate may read.
    pub work_dir: &'a Path,
    pub transcript: &'a Transcript,
}

/// A narrowed task (docs/design.md §21): one definition the story names, still missing after
/// two rounds, asked for alone.
pub struct DefinitionRequest<'a> {
    pub kind: CodeKind,
    pub story: &'a Story,
    /// The whole ask: the signature, the class, the file, the tests that call it.
    pub task: &'a str,
    /// The name of the definition asked for: the map leaves out its line, which shows an
    /// earlier answer that failed.
    pub name: &'a str,
    /// The tree the map is made of.
    pub work_dir: &'a Path,
    pub transcript: &'a Transcript,
    /// 0 for the first answer; each further one is sampled hotter, with its own seed.
    pub variant: u32,
}

/// What a [`DefinitionRequest`] asks for: one definition of the story's code, or one test of an
/// example of the story's that the tool cannot write alone (docs/design.md §21).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodeKind {
    Definition,
    ExampleTest,
}

impl CodeKind {
    /// The agent's name in its instructions and its transcript.
    pub fn role(self) -> &'static str {
        match self {
            CodeKind::Definition => "definition",
            CodeKind::ExampleTest => "example_test",
        }
    }

    /// The agent's instructions.
    pub fn system(self) -> String {
        match self {
            CodeKind::Definition => prompts::definition_system(),
            CodeKind::ExampleTest => prompts::example_test_system(),
        }
    }
}

/// A blocker raised against work whose acceptance tests pass, put back to the perspective that
/// raised it: show it with an example that fails, or withdraw it (docs/design.md §10).
pub struct BlockerRequest<'a> {
    pub story: &'a Story,
    pub perspective: Perspective,
    /// The blocker as the perspective wrote it.
    pub blocker: &'a str,
    /// The acceptance tests that pass on the work, each under its path.
    pub acceptance_tests: &'a str,
    pub diff: &'a str,
    /// The story's working tree, whose changed files the perspective sees whole.
    pub work_dir: &'a Path,
    pub transcript: &'a Transcript,
}

/// Everything the run loop needs from agents, whatever thinks behind it: the LLM agents in
/// production, scripted ones in tests.
#[async_trait]
pub trait Agents: Send + Sync {
    /// Produces a phase's output: refine's Summary and Acceptance Criteria, the Research, the
    /// Implementation Plan, or (after changing the working tree) the Implementation Notes.
    async fn run_phase(&self, request: PhaseRequest<'_>) -> Result<AgentOutput, AgentError>;

    /// Looks at the story's work from the three perspectives.
    async fn review(&self, request: ReviewRequest<'_>) -> Result<ReviewOutput, AgentError>;

    /// An `ai` phase gate: the reviewer's answer, which holds a decision line (docs/design.md §8).
    async fn phase_review(&self, request: GateRequest<'_>) -> Result<AgentOutput, AgentError>;

    /// A narrowed task's answer: the code of one definition, which the workflow merges in.
    /// Agents that cannot write code have none to give.
    async fn write_definition(
        &self,
        request: DefinitionRequest<'_>,
    ) -> Result<AgentOutput, AgentError> {
        let _ = request;
        Err(AgentError::new("these agents write no code"))
    }

    /// A perspective's example that shows its blocker: test code ending in an assertion, or
    /// words that withdraw it. Agents that write no code show nothing, and the blocker stands.
    async fn show_blocker(&self, request: BlockerRequest<'_>) -> Result<AgentOutput, AgentError> {
        let _ = request;
        Err(AgentError::new("these agents write no code"))
    }

    /// The model server these agents talk to, for the checks before a run spends anything;
    /// `None` for agents that need none.
    fn endpoint(&self) -> Option<&llm::LlmSettings> {
        None
    }

    /// Under `llm.toolProtocol: "auto"`: how this run's probe found the model makes tool
    /// calls (docs/design.md §21); agents that call no model ignore it.
    fn use_tool_protocol(&self, protocol: crate::config::ToolProtocol) {
        let _ = protocol;
    }
}
