//! The production agents: LLM calls through any OpenAI-compatible API.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::conversation::{converse, ConversationError, ToolExecutor, ToolResultText};
use super::llm::LlmClient;
use super::meter::{CallMeter, StoryMeter};
use super::tools::{CommandEnv, ToolAccess, ToolBox, ToolLimits};
use super::transcript::Transcript;
use super::verdict::parse_verdict;
use super::{
    prompts, AgentError, AgentOutput, Agents, GateRequest, Perspective, PhaseRequest, ReviewOutput,
    ReviewRequest,
};
use crate::board::records::Usage;
use crate::board::Phase;
use crate::config::{Config, CONFIG_FILE};

pub struct LlmAgents {
    client: LlmClient,
    board_dir: PathBuf,
    max_turns: u32,
    tool_limits: ToolLimits,
    command_env: CommandEnv,
    /// The run's budget meter; every call of a story is admitted and counted there.
    meter: Option<Arc<dyn CallMeter>>,
    /// The project's `.agentic-sdlc.json`, which no agent may change.
    config_file: PathBuf,
}

impl LlmAgents {
    pub fn new(client: LlmClient, config: &Config, board_dir: PathBuf) -> Self {
        Self {
            client,
            max_turns: config.llm.max_turns,
            tool_limits: ToolLimits::from_config(&config.tools),
            command_env: CommandEnv {
                set: Vec::new(),
                hidden: vec![config.llm.api_key_env.clone()],
            },
            config_file: project_root(&board_dir, &config.sdlc_folder).join(CONFIG_FILE),
            board_dir,
            meter: None,
        }
    }

    /// Counts every call against the run's budgets (SPEC §14).
    pub fn with_meter(mut self, meter: Arc<dyn CallMeter>) -> Self {
        self.meter = Some(meter);
        self
    }

    /// The client for one story's calls.
    fn client_for(&self, story_id: &str) -> LlmClient {
        match &self.meter {
            Some(meter) => self
                .client
                .metered(StoryMeter::new(Arc::clone(meter), story_id)),
            None => self.client.clone(),
        }
    }

    /// The tools of one agent call, confined to `work_dir`.
    fn tools(&self, work_dir: &Path, access: ToolAccess) -> ToolBox {
        ToolBox::new(
            work_dir.to_path_buf(),
            self.board_dir.clone(),
            access,
            self.tool_limits,
        )
        .with_command_env(self.command_env.clone())
        .protect(self.config_file.clone())
        .with_secrets(self.client.settings().api_key.clone().into_iter().collect())
    }

    async fn talk(
        &self,
        story_id: &str,
        system: &str,
        user: &str,
        tools: Option<&dyn ToolExecutor>,
        transcript: &Transcript,
    ) -> Result<AgentOutput, AgentError> {
        match converse(
            &self.client_for(story_id),
            system,
            user,
            tools,
            self.max_turns,
            transcript,
        )
        .await
        {
            Ok(conversation) => Ok(AgentOutput {
                text: conversation.final_text,
                usage: conversation.usage,
            }),
            Err(ConversationError { error, usage }) => Err(AgentError {
                message: error.to_string(),
                usage,
            }),
        }
    }

    /// Asks one review perspective, reminding it once when its answer holds no verdict.
    async fn perspective(
        &self,
        story_id: &str,
        perspective: Perspective,
        user: &str,
        tools: &ToolBox,
        transcript: &Transcript,
    ) -> Result<(Option<super::verdict::PerspectiveVerdict>, Usage), AgentError> {
        let system = prompts::review_system(perspective.role());
        let first = self
            .talk(story_id, &system, user, Some(tools), transcript)
            .await?;
        let mut usage = first.usage;
        if let Some(verdict) = parse_verdict(&first.text) {
            return Ok((Some(verdict), usage));
        }
        let retry_user = format!(
            "{user}\n\n## Your previous answer\n{}\n\n{}",
            prompts::head_tail(&first.text, 4_000),
            prompts::VERDICT_REMINDER
        );
        let second = self
            .talk(story_id, &system, &retry_user, Some(tools), transcript)
            .await
            .map_err(|mut e| {
                e.usage.add(&usage);
                e
            })?;
        usage.add(&second.usage);
        Ok((parse_verdict(&second.text), usage))
    }
}

#[async_trait]
impl ToolExecutor for ToolBox {
    fn definitions(&self) -> Vec<Value> {
        ToolBox::definitions(self)
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolResultText {
        let outcome = ToolBox::call(self, name, arguments).await;
        ToolResultText {
            content: outcome.content,
            is_error: outcome.is_error,
            fatal: outcome.fatal,
        }
    }
}

#[async_trait]
impl Agents for LlmAgents {
    async fn run_phase(&self, request: PhaseRequest<'_>) -> Result<AgentOutput, AgentError> {
        let access = if request.phase == Phase::Implement {
            ToolAccess::ReadWrite
        } else {
            ToolAccess::ReadOnly
        };
        let tools = self.tools(request.work_dir, access);
        let context = format!(
            "{}\n{}",
            prompts::story_context(request.story, Some(request.phase)),
            prompts::project_context(request.work_dir, &self.board_dir)
        );
        let user = prompts::assemble(
            &context,
            request.revision,
            prompts::phase_task(request.phase),
        );
        let system = prompts::phase_system(request.phase);
        let talk = self.talk(
            request.story.id(),
            &system,
            &user,
            Some(&tools),
            request.transcript,
        );
        let output = if access == ToolAccess::ReadWrite {
            // Commands can change any file, the config included; a change to it is undone.
            // In a worktree, the copy there is guarded too: it would be committed with the work.
            let mut files = vec![self.config_file.clone()];
            let local = request.work_dir.join(CONFIG_FILE);
            if !files.contains(&local) {
                files.push(local);
            }
            let guards: Vec<ConfigGuard> = files.iter().map(|f| ConfigGuard::take(f)).collect();
            let output = talk.await;
            // Every guard restores its file before the first complaint is reported.
            let complaints: Vec<String> = guards
                .iter()
                .filter_map(|guard| guard.restore_if_changed().err())
                .collect();
            if !complaints.is_empty() {
                return Err(AgentError {
                    message: complaints.join("; "),
                    usage: match &output {
                        Ok(done) => done.usage,
                        Err(failed) => failed.usage,
                    },
                });
            }
            output?
        } else {
            talk.await?
        };
        if output.text.trim().is_empty() {
            return Err(AgentError {
                message: format!("the {} agent answered with no text", request.phase),
                usage: output.usage,
            });
        }
        Ok(output)
    }

    async fn review(&self, request: ReviewRequest<'_>) -> Result<ReviewOutput, AgentError> {
        let user = prompts::review_user(request.story, request.diff);
        let tools = self.tools(request.work_dir, ToolAccess::ReadOnly);
        let asks = Perspective::ALL
            .map(|p| self.perspective(request.story.id(), p, &user, &tools, request.transcript));
        let results = futures::future::join_all(asks).await;
        let mut usage = Usage::default();
        let mut verdicts = Vec::new();
        let mut failure: Option<AgentError> = None;
        for (perspective, result) in Perspective::ALL.into_iter().zip(results) {
            match result {
                Ok((verdict, spent)) => {
                    usage.add(&spent);
                    verdicts.push((perspective, verdict));
                }
                Err(err) => {
                    usage.add(&err.usage);
                    failure.get_or_insert(AgentError::new(format!(
                        "{}: {}",
                        perspective.role(),
                        err.message
                    )));
                }
            }
        }
        match failure {
            Some(mut err) => {
                err.usage = usage;
                Err(err)
            }
            None => Ok(ReviewOutput { verdicts, usage }),
        }
    }

    async fn phase_review(&self, request: GateRequest<'_>) -> Result<AgentOutput, AgentError> {
        let user = prompts::gate_user(
            request.story,
            request.phase,
            request.output,
            request.criteria,
        );
        let tools = self.tools(request.work_dir, ToolAccess::ReadOnly);
        self.talk(
            request.story.id(),
            &prompts::gate_system(),
            &user,
            Some(&tools),
            request.transcript,
        )
        .await
    }
}

/// The project root: the board folder without its `sdlcFolder` components.
fn project_root(board_dir: &Path, sdlc_folder: &str) -> PathBuf {
    let depth = Path::new(sdlc_folder)
        .components()
        .filter(|part| matches!(part, std::path::Component::Normal(_)))
        .count();
    board_dir
        .ancestors()
        .nth(depth)
        .unwrap_or(board_dir)
        .to_path_buf()
}

/// The bytes of `.agentic-sdlc.json` before an agent with write access ran (SPEC §13): the
/// config decides where the key goes and which commands run, so a change made by the agent,
/// through run_command for example, is reverted and fails the action.
struct ConfigGuard {
    path: PathBuf,
    before: Option<(Vec<u8>, std::fs::Permissions)>,
}

impl ConfigGuard {
    fn take(path: &Path) -> ConfigGuard {
        ConfigGuard {
            path: path.to_path_buf(),
            before: std::fs::read(path)
                .and_then(|bytes| Ok((bytes, std::fs::metadata(path)?.permissions())))
                .ok(),
        }
    }

    /// Puts the config back if it changed (or was removed or created); the error names it.
    fn restore_if_changed(&self) -> Result<(), String> {
        let now = std::fs::read(&self.path).ok();
        if now.as_ref() == self.before.as_ref().map(|(bytes, _)| bytes) {
            return Ok(());
        }
        let restored = match &self.before {
            Some((bytes, permissions)) => write_back(&self.path, bytes, permissions),
            None => std::fs::remove_file(&self.path),
        };
        let shown = self.path.display();
        match restored {
            Ok(()) => Err(format!(
                "the implement agent changed {shown}, which agents may not change; the change was reverted"
            )),
            Err(err) => Err(format!(
                "the implement agent changed {shown}, which agents may not change, and restoring it failed: {err}; check the file by hand"
            )),
        }
    }
}

/// Replaces the file atomically, so an interrupted restore never leaves half a config.
fn write_back(
    path: &Path,
    bytes: &[u8],
    permissions: &std::fs::Permissions,
) -> std::io::Result<()> {
    use std::io::Write;
    let parent = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().set_permissions(permissions.clone())?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}
