//! A person deciding a human gate on the terminal (SPEC §8). The workflow only asks; the
//! [`Prompter`] the command line hands in (`crate::output::TerminalPrompter`) owns the terminal
//! while it asks, with the run's live display suspended so the question is never drawn over.

use std::sync::Arc;

use crate::agents::AgentError;

/// What a human gate shows the person.
#[derive(Debug, Clone)]
pub struct GateQuestion {
    pub phase: String,
    pub title: String,
    pub output: String,
    pub criteria: Option<String>,
}

/// Asks a person and waits for the answer: the text of their decision, as typed.
pub trait Prompter: Send + Sync {
    fn ask(&self, question: &GateQuestion) -> std::io::Result<String>;
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
    pub async fn ask(&self, question: GateQuestion) -> Result<String, AgentError> {
        let _turn = self.turn.lock().await;
        let prompter = Arc::clone(&self.prompter);
        tokio::task::spawn_blocking(move || prompter.ask(&question))
            .await
            .map_err(|e| AgentError::new(format!("the terminal prompt failed: {e}")))?
            .map_err(|e| AgentError::new(format!("cannot read the decision: {e}")))
    }
}
