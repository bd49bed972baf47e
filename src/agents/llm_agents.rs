//! The production agents: LLM calls through any OpenAI-compatible API.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};

use super::conversation::{
    converse_with, ConversationError, ConverseOptions, Prompt, ToolProtocol,
};
use super::llm::{LlmClient, ReplyShape, Sampling};
use super::meter::{CallMeter, StoryMeter};
use super::structured::{gate_schema, gate_text, verdict_schema};
use super::tools::{Sandbox, ToolAccess, ToolBox, ToolLimits};
use super::transcript::Transcript;
use super::verdict::{parse_verdict, PerspectiveVerdict};
use super::{
    prompts, AgentError, AgentOutput, Agents, BlockerRequest, DefinitionRequest, GateRequest,
    Perspective, PhaseRequest, ReviewOutput, ReviewRequest, ToolExecutor, ToolOutcome,
};
use crate::board::records::Usage;
use crate::board::Phase;
use crate::board::StoryId;
use crate::config::{Config, EditFormat, PhasesConfig, Project, CONFIG_FILE};
use crate::hint::message_and_hint;

pub struct LlmAgents {
    client: LlmClient,
    board_dir: PathBuf,
    max_turns: u32,
    tool_limits: ToolLimits,
    sandbox: Sandbox,
    /// `llm.maxTokens`, and the per-phase overrides.
    max_tokens: u32,
    tool_protocol: ToolProtocol,
    /// `implement.editFormat` as set (`auto` is resolved by [`LlmAgents::edits`]).
    edit_format: EditFormat,
    /// Under `llm.toolProtocol: "auto"`, what the run's probe found (docs/design.md §21).
    probed_protocol: std::sync::OnceLock<ToolProtocol>,
    /// `llm.temperature`: a first try's temperature, `None` for the server's own.
    temperature: Option<f32>,
    phases: PhasesConfig,
    /// The run's budget meter; every call of a story is admitted and counted there.
    meter: Option<Arc<dyn CallMeter>>,
    /// The project's `.agentic-sdlc.json`, which no agent may change.
    config_file: PathBuf,
    /// The board folder as it appears inside any working tree (a worktree has its own copy).
    board_in_tree: PathBuf,
}

/// One question to the model for one story: what [`LlmAgents::talk`] sends, and what a re-ask
/// repeats with a reminder.
#[derive(Clone, Copy)]
struct Ask<'a> {
    story_id: &'a StoryId,
    prompt: Prompt<'a>,
    transcript: &'a Transcript,
}

impl<'a> Ask<'a> {
    fn new(
        story_id: &'a StoryId,
        system: &'a str,
        user: &'a str,
        tools: &'a ToolBox,
        transcript: &'a Transcript,
        options: ConverseOptions<'a>,
    ) -> Self {
        Ask {
            story_id,
            prompt: Prompt {
                system,
                user,
                tools: Some(tools),
                check: None,
                options,
            },
            transcript,
        }
    }
}

/// Why a machine-read answer is asked for once more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reask {
    /// Cut off by the reply cap: never a complete verdict or decision.
    Truncated,
    /// No verdict could be read from it.
    NoVerdict,
    /// `"passed": false` with no issues: a failure that names nothing to fix.
    NoIssues,
}

impl Reask {
    fn name(self) -> &'static str {
        match self {
            Reask::Truncated => "truncated",
            Reask::NoVerdict => "no_verdict",
            Reask::NoIssues => "failed_without_issues",
        }
    }
}

/// What a perspective's answer is worth: a verdict, or the reason to ask again.
fn judge(answer: &AgentOutput) -> Result<PerspectiveVerdict, Reask> {
    if answer.truncated {
        return Err(Reask::Truncated);
    }
    match parse_verdict(&answer.text) {
        None => Err(Reask::NoVerdict),
        Some(verdict) if !verdict.passed && verdict.issues.is_empty() => Err(Reask::NoIssues),
        Some(verdict) => Ok(verdict),
    }
}

impl LlmAgents {
    /// How tool calls travel: `llm.toolProtocol`, or under `auto` what the probe found.
    fn protocol(&self) -> ToolProtocol {
        self.probed_protocol
            .get()
            .copied()
            .unwrap_or(self.tool_protocol)
    }

    /// How implement is told to change files, `auto` resolved from [`Self::protocol`].
    fn edits(&self) -> EditFormat {
        self.edit_format.resolved(self.protocol())
    }

    pub fn new(client: LlmClient, config: &Config, board_dir: PathBuf) -> Self {
        Self {
            client,
            max_turns: config.llm.max_turns,
            tool_limits: ToolLimits::from_config(&config.tools),
            sandbox: Sandbox::new(&config.tools, &config.llm.api_key_env),
            config_file: Project::root_of_board(&board_dir, &config.sdlc_folder).join(CONFIG_FILE),
            board_in_tree: PathBuf::from(&config.sdlc_folder),
            board_dir,
            max_tokens: config.llm.max_tokens,
            tool_protocol: config.llm.tool_protocol,
            edit_format: config.implement.edit_format,
            probed_protocol: std::sync::OnceLock::new(),
            temperature: config.llm.temperature,
            phases: config.phases.clone(),
            meter: None,
        }
    }

    /// Runs the implement agent's commands in the run's box (with its guard).
    pub fn with_sandbox(mut self, sandbox: Sandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Counts every call against the run's budgets (docs/design.md §14).
    pub fn with_meter(mut self, meter: Arc<dyn CallMeter>) -> Self {
        self.meter = Some(meter);
        self
    }

    /// The client for one story's calls.
    fn client_for(&self, story_id: &StoryId) -> LlmClient {
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
        .with_sandbox(self.sandbox.clone())
        .protect(self.config_file.clone())
        .protect_folder(work_dir.join(&self.board_in_tree))
        .protect_folder(work_dir.join(crate::config::WORKTREES_DIR))
        .with_secrets(
            self.client
                .settings()
                .key()
                .map(str::to_string)
                .into_iter()
                .collect(),
        )
    }

    /// Asks once more, with `reminder` after the user message. What the first answer spent is
    /// added to the second's usage (or to its error's), so nothing spent goes unrecorded.
    async fn reask(
        &self,
        ask: Ask<'_>,
        reminder: &str,
        spent: Usage,
    ) -> Result<AgentOutput, AgentError> {
        let user = format!("{}\n\n{reminder}", ask.prompt.user);
        let prompt = Prompt {
            user: &user,
            ..ask.prompt
        };
        let mut answer = self.talk(Ask { prompt, ..ask }).await.map_err(|mut e| {
            e.usage.add(&spent);
            e
        })?;
        answer.usage.add(&spent);
        Ok(answer)
    }

    async fn talk(&self, ask: Ask<'_>) -> Result<AgentOutput, AgentError> {
        let max_turns = ask.prompt.options.max_turns.unwrap_or(self.max_turns);
        match converse_with(
            &self.client_for(ask.story_id),
            ask.prompt,
            max_turns,
            ask.transcript,
        )
        .await
        {
            Ok(conversation) => Ok(AgentOutput {
                text: conversation.final_text,
                usage: conversation.usage,
                truncated: conversation.truncated,
                tool_calls: conversation.tool_calls,
                tools_refused: conversation.tools_refused,
                check_rounds: conversation.check_rounds,
            }),
            Err(ConversationError { error, usage }) => Err(AgentError::from((error, usage))),
        }
    }

    /// One short conversation whose answer is code in the reply, whatever the protocol: a
    /// narrowed definition, an example that shows a blocker.
    async fn ask_for_code(
        &self,
        asked: CodeAsk<'_>,
        max_tokens: Option<u32>,
        variant: u32,
    ) -> Result<AgentOutput, AgentError> {
        let tools = self.tools(asked.work_dir, ToolAccess::ReadOnly);
        let transcript = asked.transcript.for_agent(asked.role);
        let options = ConverseOptions {
            max_tokens,
            schema: None,
            protocol: self.protocol(),
            sampling: sampling_for(variant, self.temperature),
            tools_untold: true,
            max_turns: Some(2),
            default_file: None,
            shape: ReplyShape::Files,
        };
        let ask = Ask::new(
            asked.story_id,
            asked.system,
            asked.user,
            &tools,
            &transcript,
            options,
        );
        self.talk(ask).await
    }

    /// Asks one review perspective for its verdict, and once more when the answer was cut
    /// off, held no verdict, or failed the work without naming an issue. A second answer that
    /// still falls short is no verdict (a FAILED review), never an approval (docs/design.md §15).
    async fn perspective(
        &self,
        story_id: &StoryId,
        perspective: Perspective,
        user: &str,
        tools: &ToolBox,
        transcript: &Transcript,
    ) -> Result<(Option<PerspectiveVerdict>, Usage), AgentError> {
        let transcript = transcript.for_agent(perspective.role());
        let system = prompts::review_system();
        let user = format!("{user}{}", prompts::review_focus(perspective.role()));
        let options = ConverseOptions {
            max_tokens: None,
            schema: Some(verdict_schema()),
            protocol: self.protocol(),
            sampling: sampling_for(0, self.temperature),
            tools_untold: false,
            max_turns: None,
            default_file: None,
            shape: ReplyShape::Free,
        };
        let ask = Ask::new(story_id, &system, &user, tools, &transcript, options);
        let first = self.talk(ask).await?;
        let mut usage = first.usage;
        let reason = match judge(&first) {
            Ok(verdict) => return Ok((Some(verdict), usage)),
            Err(reason) => reason,
        };
        transcript.record("reask", json!({"reason": reason.name()}));
        let reminder = match reason {
            Reask::Truncated => prompts::truncated_reminder(self.max_tokens),
            Reask::NoVerdict => prompts::verdict_reminder(&first.text),
            Reask::NoIssues => prompts::issues_reminder(&first.text),
        };
        let second = self.reask(ask, &reminder, usage).await?;
        usage = second.usage;
        let judged = judge(&second).and_then(|verdict| {
            // Asked for the issues of a failure, an answer that names none is no verdict, even
            // one that now says it passed.
            if reason == Reask::NoIssues && verdict.issues.is_empty() {
                Err(Reask::NoIssues)
            } else {
                Ok(verdict)
            }
        });
        if let Err(still) = &judged {
            transcript.record("no_verdict", json!({"reason": still.name()}));
        }
        Ok((judged.ok(), usage))
    }
}

#[async_trait]
impl ToolExecutor for ToolBox {
    fn definitions(&self) -> Vec<Value> {
        ToolBox::definitions(self)
    }

    fn writes(&self, name: &str) -> bool {
        super::tools::writes(name)
    }

    async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        ToolBox::call(self, name, arguments).await
    }
}

#[async_trait]
impl Agents for LlmAgents {
    async fn run_phase(&self, request: PhaseRequest<'_>) -> Result<AgentOutput, AgentError> {
        let access = if request.phase.reads_only() {
            ToolAccess::ReadOnly
        } else {
            ToolAccess::ReadWrite
        };
        let mut tools = self.tools(request.work_dir, access);
        let story_text = prompts::story_context(request.story, Some(request.phase));
        let own_words = prompts::story_own_words(request.story);
        let naming = prompts::naming_words(&own_words, &story_text);
        let mut context = format!(
            "{story_text}\n{}\n{}",
            prompts::project_context(request.work_dir, &self.board_dir),
            prompts::repository_map(request.work_dir, &self.board_dir, naming)
        );
        // Research is shown them too: it read them turn by turn, each turn a whole prompt on a
        // slow server, and ended on reading them again (docs/design.md §21). Plan is not: shown
        // a file, the small model writes it out, which a plan may not do.
        if !request.phase.reads_only() || request.phase == Phase::Research {
            let files = prompts::named_files(request.work_dir, &self.board_dir, naming);
            if !files.text.is_empty() {
                context = format!("{context}\n{}", files.text);
            }
            tools = tools.shown(&files.paths);
        }
        if request.phase == Phase::Implement {
            let elsewhere = prompts::files_not_named(request.work_dir, &self.board_dir, naming);
            let others: Vec<String> = elsewhere
                .iter()
                .filter(|path| prompts::is_test_path(std::path::Path::new(path)))
                .cloned()
                .collect();
            tools = tools
                .fixing(&request.story.meta.acceptance_tests)
                .keeping_tests_of(&others)
                .elsewhere(&elsewhere);
        }
        let mut task = prompts::phase_task(request.phase, self.edits()).to_string();
        if let Some(path) = request.acceptance_path {
            task.push_str(&prompts::acceptance_path_note(path));
        }
        if let Some(check) = request.check {
            task.push_str(&prompts::tests_note(&check.describe()));
            if let Some(failure) = check.standing_failure() {
                task.push_str("\n\n");
                task.push_str(failure.trim());
            }
        }
        let user = prompts::assemble(&context, request.revision, &task);
        let system = prompts::phase_system(request.phase, self.protocol(), self.edits());
        let options = ConverseOptions {
            max_tokens: Some(self.phases.reply_cap(request.phase, self.max_tokens)),
            schema: None,
            protocol: self.protocol(),
            sampling: sampling_for(request.variant, self.temperature),
            tools_untold: access == ToolAccess::ReadWrite && self.edits() == EditFormat::Whole,
            max_turns: Some(self.phases.turn_budget(
                request.phase,
                self.max_turns,
                self.edits() == EditFormat::Whole,
            )),
            default_file: request.acceptance_path,
            shape: reply_shape(request.phase),
        };
        let transcript = request.transcript.for_agent(request.phase.name());
        let story_id = request.story.id();
        let mut ask = Ask::new(story_id, &system, &user, &tools, &transcript, options);
        ask.prompt.check = request.check;
        // What a command changes that no agent may change (the config, the board, the
        // tool's refs) is caught by the box's guard around that command.
        let mut output = self.talk(ask).await?;
        if request.phase == Phase::Refine {
            // The two sections refine is asked for, at whatever heading level the model chose.
            output.text =
                crate::board::sections::leveled(&output.text, &["Summary", "Acceptance Criteria"]);
        }
        // Whether the output is good enough to keep is the workflow's call (it checks every
        // phase's output the same way, whoever produced it).
        Ok(output)
    }

    async fn review(&self, request: ReviewRequest<'_>) -> Result<ReviewOutput, AgentError> {
        let user = prompts::review_user(
            request.story,
            request.diff,
            request.tests_passed,
            request.work_dir,
        );
        let tools = self.tools(request.work_dir, ToolAccess::ReadOnly);
        let asks = Perspective::ALL
            .map(|p| self.perspective(request.story.id(), p, &user, &tools, request.transcript));
        // A server on this machine answers one request at a time (llama.cpp with one slot):
        // asked together, the second and third perspectives wait in its queue, and on 2 cores
        // three 11k-token prompts waited past the read timeout. One after another, each is
        // timed on its own answer. A remote API answers them side by side.
        let results = if crate::agents::llm::is_local(&self.client.settings().base_url) {
            let mut results = Vec::new();
            for ask in asks {
                results.push(ask.await);
            }
            results
        } else {
            futures::future::join_all(asks).await
        };
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
                    failure
                        .get_or_insert(err.context(|why| format!("{}: {why}", perspective.role())));
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

    /// Asks for the gate's decision with the gate schema, once more when the answer was cut
    /// off, and returns it in the text form of docs/design.md §8.
    async fn phase_review(&self, request: GateRequest<'_>) -> Result<AgentOutput, AgentError> {
        let user = prompts::gate_user(
            request.story,
            request.phase,
            request.output,
            request.criteria,
        );
        let tools = self.tools(request.work_dir, ToolAccess::ReadOnly);
        let transcript = request.transcript.for_agent("phase-review");
        let system = prompts::gate_system();
        let options = ConverseOptions {
            max_tokens: None,
            schema: Some(gate_schema()),
            protocol: self.protocol(),
            sampling: sampling_for(0, self.temperature),
            tools_untold: false,
            max_turns: None,
            default_file: None,
            shape: ReplyShape::Free,
        };
        let story_id = request.story.id();
        let ask = Ask::new(story_id, &system, &user, &tools, &transcript, options);
        let mut answer = self.talk(ask).await?;
        if answer.truncated {
            transcript.record("reask", json!({"reason": Reask::Truncated.name()}));
            let reminder = prompts::truncated_reminder(self.max_tokens);
            answer = self.reask(ask, &reminder, answer.usage).await?;
            if answer.truncated {
                return Err(AgentError {
                    usage: answer.usage,
                    ..AgentError::new(message_and_hint(
                        "the phase-review agent's answer was cut off at the reply cap twice, so \
                         it holds no complete decision",
                        &format!("raise llm.maxTokens (now {})", self.max_tokens),
                    ))
                });
            }
        }
        if let Some(text) = gate_text(&answer.text) {
            answer.text = text;
        }
        transcript.record("decision", json!({"text": answer.text}));
        Ok(answer)
    }

    async fn write_definition(
        &self,
        request: DefinitionRequest<'_>,
    ) -> Result<AgentOutput, AgentError> {
        let story_text = prompts::story_context(request.story, Some(Phase::Implement));
        let own_words = prompts::story_own_words(request.story);
        let naming = prompts::naming_words(&own_words, &story_text);
        let map = prompts::repository_map(request.work_dir, &self.board_dir, naming);
        let map = prompts::without_definition_of(&map, request.name);
        let user = format!("{map}\n## Task\n{}\n", request.task);
        let asked = CodeAsk {
            story_id: request.story.id(),
            role: request.kind.role(),
            system: &request.kind.system(),
            user: &user,
            work_dir: request.work_dir,
            transcript: request.transcript,
        };
        let cap = self.phases.max_tokens(Phase::Implement);
        self.ask_for_code(asked, cap, request.variant).await
    }

    async fn show_blocker(&self, request: BlockerRequest<'_>) -> Result<AgentOutput, AgentError> {
        let role = request.perspective.role();
        let user = prompts::blocker_user(
            request.story,
            request.blocker,
            request.acceptance_tests,
            request.diff,
            request.work_dir,
        );
        let asked = CodeAsk {
            story_id: request.story.id(),
            role,
            system: &prompts::blocker_system(role),
            user: &user,
            work_dir: request.work_dir,
            transcript: request.transcript,
        };
        self.ask_for_code(asked, None, 0).await
    }

    fn endpoint(&self) -> Option<&crate::agents::llm::LlmSettings> {
        Some(self.client.settings())
    }

    fn use_tool_protocol(&self, protocol: ToolProtocol) {
        let _ = self.probed_protocol.set(protocol);
    }
}

/// Who asks for code, and with what words.
struct CodeAsk<'a> {
    story_id: &'a StoryId,
    role: &'a str,
    system: &'a str,
    user: &'a str,
    work_dir: &'a Path,
    transcript: &'a Transcript,
}

/// How a phase's reply is sampled: `llm.temperature` (else the server's defaults) on its first
/// try, then for each retry or further attempt another seed and a temperature that climbs from
/// it, so that a retry is never a replay of the answer that was refused.
fn sampling_for(variant: u32, first: Option<f32>) -> Sampling {
    if variant == 0 {
        return Sampling {
            temperature: first,
            seed: None,
        };
    }
    let from = first.unwrap_or(0.2);
    Sampling {
        temperature: Some((from + 0.3 * variant as f32).min(from.max(1.0))),
        seed: Some(u64::from(variant)),
    }
}

/// What a phase agent answers with, which tells what stops its reply early: implement and
/// acceptance answer with files, research and plan with findings and steps in prose; refine may
/// rightly repeat a story that needs no change.
fn reply_shape(phase: Phase) -> ReplyShape {
    match phase {
        Phase::Implement | Phase::Acceptance => ReplyShape::Files,
        Phase::Research | Phase::Plan => ReplyShape::Prose,
        Phase::Refine => ReplyShape::Free,
    }
}
