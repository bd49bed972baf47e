//! A person deciding a human gate on the terminal (docs/design.md §8). The workflow only asks; the
//! [`Prompter`] the command line hands in (the output module's `TerminalPrompter`) owns the terminal
//! while it asks. The run's other stories go on meanwhile: nothing they print or draw waits
//! for the answer.
//!
//! A prompt never decides by itself: an empty line, end of input (Ctrl-D) and Ctrl-C are no
//! decision, and the story waits for `agentic-sdlc decide`.

use std::sync::Arc;

use crate::agents::AgentError;
use crate::board::Slug;

/// What a human gate shows the person.
#[derive(Debug, Clone)]
pub struct GateQuestion {
    pub phase: String,
    pub slug: Slug,
    pub title: String,
    /// The phase's output: the section to be written, or implement's notes.
    pub output: String,
    /// For an implement, the change itself (a diff of the story's work).
    pub diff: Option<String>,
    pub criteria: Option<String>,
}

/// How a person answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Text that holds a decision line (APPROVE, RETRY: …, REJECT: …).
    Decision(String),
    /// No decision now; the story waits for `decide`.
    Later(NoDecision),
}

/// Why a prompt ended without a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoDecision {
    /// An empty line.
    Empty,
    /// End of input (Ctrl-D, or stdin closed).
    EndOfInput,
    /// Ctrl-C while the question was open.
    Interrupted,
}

impl NoDecision {
    pub fn describe(self) -> &'static str {
        match self {
            NoDecision::Empty => "an empty answer",
            NoDecision::EndOfInput => "end of input",
            NoDecision::Interrupted => "Ctrl-C",
        }
    }
}

/// Asks a person and waits for the answer.
pub trait Prompter: Send + Sync {
    fn ask(&self, question: &GateQuestion) -> std::io::Result<Answer>;

    /// Ends the question being asked, if one is open, as [`NoDecision::Interrupted`]; true
    /// when one was. The run calls it on Ctrl-C, which at an open prompt means "not now"
    /// rather than "stop the run".
    fn interrupt(&self) -> bool;
}

/// The terminal of a run: one question at a time, asked off the async threads.
pub struct Terminal {
    prompter: Arc<dyn Prompter>,
    turn: tokio::sync::Mutex<()>,
}

impl Terminal {
    pub fn new(prompter: Arc<dyn Prompter>) -> Terminal {
        Terminal {
            prompter,
            turn: tokio::sync::Mutex::new(()),
        }
    }

    /// Waits for the terminal to be free, then asks.
    pub async fn ask(&self, question: GateQuestion) -> Result<Answer, AgentError> {
        let _turn = self.turn.lock().await;
        let prompter = Arc::clone(&self.prompter);
        tokio::task::spawn_blocking(move || prompter.ask(&question))
            .await
            .map_err(|e| AgentError::new(format!("the terminal prompt failed: {e}")))?
            .map_err(|e| AgentError::new(format!("cannot read the decision: {e}")))
    }

    /// See [`Prompter::interrupt`].
    pub fn interrupt_prompt(&self) -> bool {
        self.prompter.interrupt()
    }
}
