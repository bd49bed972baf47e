//! Starting a run the way every front end does (`run` on the command line, `run_story` over
//! MCP): agents that talk to the configured model, and the run's news handed to the configured
//! notifiers as well as to the caller's renderer.

use std::sync::Arc;

use crate::agents::llm::LlmClient;
use crate::agents::llm_agents::LlmAgents;
use crate::agents::Agents;
use crate::config::Project;
use crate::error::{ExitStatus, Result};
use crate::notifications::Notifier;
use crate::workflow::events::{EventSink, Fanout, RunRenderer};
use crate::workflow::prompter::Prompter;
use crate::workflow::runner::{self, AgentFactory, RunRequest};

/// Agents that call the model of the project's config. They are built only once the run knows
/// it has work, so that an empty board needs no key.
pub fn llm_agents() -> AgentFactory {
    Box::new(|project, meter, sandbox| {
        // Before the key is read: its copies in memory stay out of other processes' reach.
        crate::exec::protect_tool_process();
        let client = LlmClient::from_config(&project.config)?;
        let agents = LlmAgents::new(client, &project.config, project.board_dir())
            .with_meter(meter)
            .with_sandbox(sandbox);
        Ok(Arc::new(agents) as Arc<dyn Agents>)
    })
}

/// Runs the board with `renderer` showing the events, and the notifiers of `notify.*` told
/// about them. The notices still queued when the run ends go out before this returns (each
/// within `notify.timeoutSeconds`), unless another Ctrl-C says not to wait.
pub async fn run_notified(
    project: &Project,
    renderer: Arc<dyn RunRenderer>,
    request: RunRequest,
    agents: AgentFactory,
    prompter: Option<Arc<dyn Prompter>>,
) -> Result<ExitStatus> {
    let notifier = Notifier::start(project);
    let events = match &notifier {
        Some(notifier) => EventSink::new(Arc::new(Fanout(vec![renderer, notifier.observer()]))),
        None => EventSink::new(renderer),
    };
    let result = runner::run(project, events, request, agents, prompter).await;
    if let Some(notifier) = notifier {
        tokio::select! {
            _ = notifier.finish() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    result
}
