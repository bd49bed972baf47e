//! The run loop (docs/design.md §5, §11): assess, start what may run, record, repeat.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::task::JoinSet;

use super::assessor::{assess, Action, ActionRef, ActionType, Assessment, Policy};
use super::attention::{self, Attention, Need};
use super::budget::Spending;
use super::checkpoint::{Checkpoint, RunOptions, STALE_AFTER_HOURS};
use super::context::Workflow;
use super::events::{EventSink, ReportingMeter, RunEvent};
use super::journal::Journal;
use super::lock::BoardLock;
use super::outcome::{BlockCause, Outcome, Stop};
use super::preflight::{self, Needs};
use super::prompter::{Prompter, Terminal};
use super::remote::{Claimed, Remote, RemotePlan, Turn, Turns};
use super::server_watch::ServerWatch;
use super::{actions, off_the_runtime, rework, workspace};
use crate::agents::meter::CallMeter;
use crate::agents::Agents;
use crate::board::board_store::BoardStore;
use crate::board::validate::dependency_cycles;
use crate::board::watch::{BoardWatcher, Scope};
use crate::board::{lookup, store, Board};
use crate::config::Project;
use crate::error::{Error, ExitStatus, Result};
use crate::exec::Sandbox;
use crate::protocol::NoStory;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    pub options: RunOptions,
    pub resume: bool,
    /// `run --remote`: the remote that its checks found ready (docs/design.md §20).
    pub remote: Option<RemotePlan>,
    /// `run --watch`: once nothing is left to do, wait for a person to add or edit a story
    /// instead of ending, until Ctrl-C.
    pub watch: bool,
}

/// Builds the agents once the run knows it has work, so that `--dry-run` and an empty board
/// need no API key.
/// The factory gets the run's budget meter, which every model call must go through, and the
/// run's box, which every command an agent runs must go through.
pub type AgentFactory =
    Box<dyn FnOnce(&Project, Arc<dyn CallMeter>, Sandbox) -> Result<Arc<dyn Agents>> + Send>;

/// The actions of an assessment this run may take, in order.
fn runnable<'a>(
    assessment: &'a Assessment,
    options: &'a RunOptions,
    skip: &'a HashSet<String>,
) -> impl Iterator<Item = &'a Action> {
    assessment.actions.iter().filter(move |a| {
        options.story.as_ref().is_none_or(|id| &a.story_id == id)
            && options.step.is_none_or(|step| a.action_type == step)
            && !skip.contains(&a.story_id)
    })
}

/// `run --dry-run`: the actions that would run, in order. Writes nothing.
pub fn plan(project: &Project, options: &RunOptions) -> Result<Vec<Action>> {
    let board = Board::load(&project.board_dir())?;
    let options = resolve_story(&board, options.clone())?;
    let assessment = assess(&board, Policy::from_config(&project.config));
    let none = HashSet::new();
    let limit = match (options.auto, options.max_actions) {
        (false, _) => 1,
        (true, Some(max)) => max as usize,
        (true, None) => usize::MAX,
    };
    Ok(runnable(&assessment, &options, &none)
        .take(limit)
        .cloned()
        .collect())
}

/// `--story` accepts an id or slug; the loop works with the id.
fn resolve_story(board: &Board, mut options: RunOptions) -> Result<RunOptions> {
    if let Some(query) = &options.story {
        options.story = Some(lookup::find(&board.stories, query)?.id().to_string());
    }
    Ok(options)
}

pub async fn run(
    project: &Project,
    events: EventSink,
    request: RunRequest,
    agents: AgentFactory,
    prompter: Option<Arc<dyn Prompter>>,
) -> Result<ExitStatus> {
    let board_dir = project.board_dir();
    let store = {
        let board_dir = board_dir.clone();
        Arc::new(off_the_runtime(move || BoardStore::load(&board_dir)).await?)
    };
    let board = store.board();
    // `dependency_cycles` leaves out a story that names itself (validate reports it apart),
    // but that story would wait on itself for ever just the same.
    let self_loop = board
        .stories
        .iter()
        .find(|s| s.meta.depends_on.iter().any(|d| d == s.id()))
        .map(|s| vec![s.id().to_string(), s.id().to_string()]);
    if let Some(cycle) = dependency_cycles(&board).into_iter().next().or(self_loop) {
        return Err(Error::ActionFailed(format!(
            "refusing to run: dependency cycle {}\nHint: fix depends_on, then run `agentic-sdlc validate`",
            cycle.join(" -> ")
        )));
    }
    let _lock = BoardLock::acquire(&board_dir)?;
    // Watching starts before the first look at the board, so no change falls in between.
    let watch = match request.watch {
        true => Some(BoardWatcher::start(&board_dir, Scope::Stories)?),
        false => None,
    };
    store::sweep_temporary_files(&board_dir);
    for warning in super::own_folders::prepare(project) {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: warning,
        });
    }
    // Through a remote, stories work in worktrees of their own: the checkout stays on the
    // base, which follows the remote's.
    let mut project = project.clone();
    if request.remote.is_some() {
        project.config.git.worktrees = true;
    }
    let project = &project;
    put_back_interrupted_work(project, &events);
    let remote = match request.remote.clone() {
        Some(plan) => {
            let remote = Arc::new(Remote::connect(plan, project, events.clone())?);
            remote.pull().await?;
            Some(remote)
        }
        None => None,
    };
    let board = match &remote {
        Some(_) => {
            let store = Arc::clone(&store);
            off_the_runtime(move || store.refresh()).await?
        }
        None => board,
    };
    for broken in &board.broken {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: format!("skipping a story that does not parse: {broken}"),
        });
    }
    let mut checkpoint = if request.resume {
        resume_checkpoint(&board_dir, &store, &events)?
    } else {
        Checkpoint::new(
            &board_dir,
            resolve_story(&board, request.options.clone())?,
            store.content_hash(),
        )
    };
    let options = checkpoint.context.options.clone();
    let assessment = assess(&board, Policy::from_config(&project.config));
    let none_skipped = HashSet::new();
    let first = runnable(&assessment, &options, &none_skipped)
        .next()
        .map(|action| action.action_type);
    // A watching run with nothing to do yet waits for work of any kind.
    let first = first.or_else(|| watch.as_ref().map(|_| ActionType::Refine));
    let Some(first) = first else {
        if let Some(remote) = &remote {
            remote.finish().await;
        }
        return Ok(finish_empty(
            project,
            &board,
            &events,
            &assessment,
            &options,
            request.resume,
        ));
    };
    let needs = Needs::of_run(options.auto, options.step, first);
    let concurrency = options
        .concurrency
        .unwrap_or(project.config.concurrency)
        .max(1) as usize;
    let sandbox = build_sandbox(project);
    let spending = Arc::new(Spending::new(&project.config));
    let meter =
        ReportingMeter::new(Arc::clone(&spending), events.clone()).writing_to(Arc::clone(&store));
    let agents = agents(
        project,
        Arc::new(meter) as Arc<dyn CallMeter>,
        sandbox.clone(),
    )
    .map_err(|err| match err {
        Error::MissingKey { variable, endpoint } => preflight::missing_key(&variable, &endpoint),
        other => other,
    })?;
    // Only a run with work checks the machine, and only for what its actions need.
    preflight::check(project, needs, agents.endpoint(), &sandbox)
        .await
        .map_err(|failure| Error::Preflight {
            check: failure.check.name(),
            message: failure.message,
        })?;
    let mut project = project.clone();
    if let Some(settled) =
        super::protocol_choice::settle(&project.config, &board_dir, agents.endpoint()).await
    {
        project.config.llm.tool_protocol = settled.protocol();
        agents.use_tool_protocol(settled.protocol());
        events.emit(RunEvent::Notice {
            story_id: NoStory,
            message: settled.line,
        });
    }
    if !project.config.has_test_command()
        && project
            .config
            .phases
            .acceptance
            .as_ref()
            .and_then(|p| p.enabled)
            != Some(false)
    {
        // Said once per run: every story goes on without acceptance tests.
        events.emit(RunEvent::Notice {
            story_id: NoStory,
            message: "the acceptance phase is skipped: review.testCommand is not set, so the stories' criteria cannot become tests".into(),
        });
    }
    let project = &project;
    events.begin(concurrency);
    // The journal starts with the work: a run that stops at its config or finds nothing to do
    // leaves no file behind.
    match Journal::create(&board_dir, Arc::clone(&spending), &options) {
        Ok(journal) => {
            if let Some(remote) = &remote {
                remote.set_run_id(journal.run_id());
            }
            events.attach_journal(Arc::new(journal))
        }
        Err(err) => events.emit(RunEvent::Warning {
            story_id: None,
            message: format!("this run keeps no journal: {err}"),
        }),
    }
    let wf = Arc::new(Workflow {
        root: project.root.clone(),
        board: store,
        config: project.config.clone(),
        agents,
        events: events.clone(),
        shared_tree: Arc::new(tokio::sync::Mutex::new(())),
        integration: tokio::sync::Mutex::new(()),
        terminal: prompter.map(Terminal::new),
        spending,
        sandbox,
        remote: remote.clone(),
    });
    if !project.config.refinement.enable_circuit_breaker {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: "the circuit breaker is disabled (refinement.enableCircuitBreaker: false): reworks are unbounded".into(),
        });
    }
    // Handed back, the board's stories move into the store's next refresh instead of being
    // copied.
    drop(board);
    let mut run = Loop {
        wf,
        options,
        concurrency,
        tasks: JoinSet::new(),
        running: HashMap::new(),
        parked: HashSet::new(),
        parked_stamps: HashMap::new(),
        retried_for: HashMap::new(),
        started: 0,
        failed: 0,
        stop: None,
        duplicates_seen: HashSet::new(),
        blocked: Vec::new(),
        turns: remote.map(Turns::new),
        watch,
        server: ServerWatch::default(),
    };
    let renewal = run
        .turns
        .as_ref()
        .map(|turns| renew_claims(Arc::clone(turns.remote())));
    let exit_code = run.drive(&mut checkpoint).await;
    if let Some(renewal) = renewal {
        renewal.abort();
    }
    if let (Err(_), Some(turns)) = (&exit_code, run.turns.as_mut()) {
        turns.finish().await;
    }
    exit_code
}

/// The run's box, with its guard (docs/security.md). Whether this machine can build it is one
/// of the checks before the first action.
fn build_sandbox(project: &Project) -> Sandbox {
    let config = &project.config;
    let guard = super::guard::BoardGuard::new(
        &project.root,
        &project.board_dir(),
        config.git.base_branch.as_deref(),
    );
    Sandbox::new(&config.tools, &config.llm.api_key_env).with_guard(Arc::new(guard))
}

/// Renews the run's claims every third of `remote.claimSeconds` while it works.
fn renew_claims(remote: Arc<Remote>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(remote.renew_interval()).await;
            remote.renew().await;
        }
    })
}

/// How long a finishing run gives its last push after Ctrl-C.
const INTERRUPTED_PUSH: std::time::Duration = std::time::Duration::from_secs(10);

/// A run killed in the middle of an action can leave the agent's work uncommitted on a story
/// branch, and the user's checkout on that branch; the lock says no run is using them now.
fn put_back_interrupted_work(project: &Project, events: &EventSink) {
    let board_dir = project.board_dir();
    for message in workspace::recover_interrupted(&project.root, &board_dir, &project.config) {
        events.emit(RunEvent::Warning {
            story_id: None,
            message,
        });
    }
}

fn resume_checkpoint(
    board_dir: &std::path::Path,
    store: &BoardStore,
    events: &EventSink,
) -> Result<Checkpoint> {
    let checkpoint = Checkpoint::load(board_dir)?.ok_or_else(|| {
        Error::ActionFailed("No checkpoint found; start a run with `agentic-sdlc run`".into())
    })?;
    if checkpoint
        .age_hours()
        .is_some_and(|h| h >= STALE_AFTER_HOURS)
    {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: format!(
                "the checkpoint is older than {STALE_AFTER_HOURS} hours ({}); resuming anyway",
                checkpoint.timestamp
            ),
        });
    }
    if checkpoint.context.story_content_hash != store.content_hash() {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: "stories changed since the checkpoint was written; resuming from the board as it is now".into(),
        });
    }
    Ok(checkpoint)
}

fn finish_empty(
    project: &Project,
    board: &Board,
    events: &EventSink,
    assessment: &Assessment,
    options: &RunOptions,
    resumed: bool,
) -> ExitStatus {
    for waiting in &assessment.waiting {
        events.emit(RunEvent::StoryWaiting {
            story_id: waiting.story_id.clone(),
            slug: waiting.slug.clone(),
            reason: waiting.reason.clone(),
        });
    }
    let message = if resumed {
        "All actions from checkpoint already completed!"
    } else {
        "Nothing to do."
    };
    // A filtered run with nothing to do says nothing about an interrupted unfiltered one.
    if resumed || (options.story.is_none() && options.step.is_none()) {
        let _ = Checkpoint::remove(&project.board_dir());
    }
    // Nothing to do may still mean a person is awaited: a decision left from an earlier run.
    let attention = attention::waiting_for_decisions(board, &project.root, |id| {
        options.story.as_deref().is_none_or(|story| story == id)
    });
    let code = if attention.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::NeedsPerson
    };
    let message = match attention.len() {
        0 => message.to_string(),
        waiting => format!("{message} {}:", need_you(waiting)),
    };
    events.emit(RunEvent::RunFinished {
        story_id: NoStory,
        actions: 0,
        failed: 0,
        exit_code: code.code(),
        message,
        attention,
    });
    code
}

/// "1 story needs you" or "3 stories need you".
fn need_you(count: usize) -> String {
    match count {
        1 => "1 story needs you".to_string(),
        n => format!("{n} stories need you"),
    }
}

/// A story this run moved to blocked/.
struct NewlyBlocked {
    story_id: String,
    reason: String,
    cause: BlockCause,
}

struct Loop {
    wf: Arc<Workflow>,
    options: RunOptions,
    concurrency: usize,
    tasks: JoinSet<(Action, Result<Outcome>)>,
    /// Stories with an action in flight; a story never runs two actions at once.
    running: HashMap<String, Action>,
    /// Stories that take no further action in this run: failed, blocked or waiting.
    parked: HashSet<String>,
    /// Under `--watch`: each parked story's file as it was when the run first looked at it
    /// idle, for files the run itself never wrote.
    parked_stamps: HashMap<String, FileStamp>,
    /// Under `--watch`: the content a story was given another chance for, so that the same
    /// change does not start it over and over when its action writes nothing.
    retried_for: HashMap<String, u128>,
    started: u32,
    failed: u32,
    /// Set when an escalation stops new work.
    stop: Option<Stop>,
    /// The stories this run blocked, in order: each needs a person, and the run ends with
    /// exit 3 (unless the breaker's escalation says otherwise).
    blocked: Vec<NewlyBlocked>,
    /// Ids shared by several story files that the run has warned about, once each.
    duplicates_seen: HashSet<String>,
    /// With `--remote`: the claims and releases in flight (docs/design.md §20).
    turns: Option<Turns>,
    /// `run --watch`: what tells the idle run that a person changed the board.
    watch: Option<BoardWatcher>,
    /// Whether the model server is still there, once an action could not reach it.
    server: ServerWatch,
}

impl Loop {
    async fn drive(&mut self, checkpoint: &mut Checkpoint) -> Result<ExitStatus> {
        let mut interrupt = Box::pin(interrupted());
        // The board as last looked at: read by the store just before the loop, then refreshed
        // once after each action ends.
        let mut current = Some(self.wf.board.board());
        loop {
            self.server.check(self.wf.agents.endpoint()).await;
            if self.may_start_more() {
                let board = match current.take() {
                    Some(board) => board,
                    None => self.refreshed_board().await?,
                };
                self.start_actions(&board, checkpoint)?;
            }
            let idle = self.tasks.is_empty() && self.turns.as_ref().is_none_or(Turns::is_idle);
            let waiting = idle && self.waits_on_other_clones().await?;
            if idle && !waiting {
                if !self.may_keep_watching() {
                    break;
                }
                // Idle under --watch: the run's own writes are behind it; what changes next is a
                // person's doing.
                let mut watch = self.watch.take();
                let Some(watcher) = watch.as_mut() else { break };
                // Forgotten before looking, so a change made after the look still wakes.
                watcher.forget_pending();
                drop(current.take());
                let board = self.refreshed_board().await?;
                // A story this run gave up on (failed, waiting for a decision) is worth another
                // look once a person touched it, even before the wait began.
                let touched = self.touched_by_others(&board);
                if touched.is_empty() {
                    drop(board);
                    let woke = tokio::select! {
                        _ = watcher.changed() => true,
                        _ = &mut interrupt => false,
                    };
                    self.watch = watch;
                    if !woke {
                        return Ok(self.interrupted().await);
                    }
                    continue;
                }
                self.watch = watch;
                self.parked.retain(|id| !touched.contains(id));
                self.parked_stamps.retain(|id, _| !touched.contains(id));
                current = Some(board);
                continue;
            }
            let poll = self.turns.as_ref().map(|t| t.remote().poll_interval());
            tokio::select! {
                (story_id, turn) = next_turn(&mut self.turns), if !idle => {
                    self.settle_turn(&story_id, turn);
                    drop(current.take());
                }
                _ = tokio::time::sleep(poll.unwrap_or_default()), if waiting => {
                    if let Some(turns) = &self.turns {
                        if let Err(err) = turns.remote().pull().await {
                            self.wf.events.emit(RunEvent::Warning { story_id: None, message: err.to_string() });
                        }
                    }
                    drop(current.take());
                }
                joined = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    let Some(joined) = joined else { break };
                    let (action, result) = joined.map_err(|source| Error::Task { what: "an action task", source })?;
                    self.running.remove(&action.story_id);
                    self.settle(&action, result);
                    // Handed back, the board's stories move into the refresh instead of being copied.
                    drop(current.take());
                    let board = self.refreshed_board().await?;
                    let story_path = board
                        .get(&action.story_id)
                        .map(|s| s.path.clone())
                        .unwrap_or_default();
                    checkpoint.complete(&action, story_path);
                    checkpoint.save(self.wf.board_dir(), self.wf.board.content_hash())?;
                    current = Some(board);
                }
                signal = &mut interrupt => {
                    // Ctrl-C at an open gate prompt means "not now": that story waits for
                    // `decide`, and the run goes on. Another Ctrl-C stops the run.
                    let at_prompt = signal == Signal::Interrupt
                        && self.wf.terminal.as_ref().is_some_and(|t| t.interrupt_prompt());
                    if at_prompt {
                        interrupt = Box::pin(interrupted());
                        continue;
                    }
                    return Ok(self.interrupted().await);
                }
            }
        }
        if let Some(turns) = &mut self.turns {
            drop(current.take());
            turns.finish().await;
        }
        // The board at the end says who waits for a person, and whether work is left. The board
        // refreshed after the last action is that board, when nothing ran since: another stat of
        // every story (a third of a one-action run on a large board) would only catch a person's
        // edit made in the last milliseconds.
        let board = match current {
            Some(board) => Some(board),
            None => self.refreshed_board().await.ok(),
        };
        Ok(self.conclude(board))
    }

    /// Ctrl-C or SIGTERM: the actions in flight are abandoned, the interrupted work put back,
    /// and the checkpoint kept for `run --continue`.
    async fn interrupted(&mut self) -> ExitStatus {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        if let Some(turns) = &mut self.turns {
            let _ = tokio::time::timeout(INTERRUPTED_PUSH, turns.finish()).await;
        }
        let (root, board_dir, config) = (
            self.wf.root.clone(),
            self.wf.board_dir().to_path_buf(),
            self.wf.config.clone(),
        );
        for message in workspace::recover_interrupted(&root, &board_dir, &config) {
            self.wf.events.emit(RunEvent::Warning {
                story_id: None,
                message,
            });
        }
        self.wf.events.emit(RunEvent::RunFinished {
            story_id: NoStory,
            actions: self.started,
            failed: self.failed,
            exit_code: ExitStatus::Interrupted.code(),
            message: "Interrupted; the checkpoint is kept: `agentic-sdlc run --continue` resumes"
                .into(),
            attention: Vec::new(),
        });
        ExitStatus::Interrupted
    }

    /// `run --watch` goes on waiting for work unless something stopped the run for good: an
    /// escalation, the run's budget, or `--max-actions`.
    fn may_keep_watching(&self) -> bool {
        self.watch.is_some()
            && self.stop.is_none()
            && self.wf.spending.run_stop().is_none()
            && self
                .options
                .max_actions
                .is_none_or(|max| self.started < max)
    }

    /// The board as it is now: what the run wrote and what people edited since the last look
    /// are read again, the rest is kept ([`BoardStore::refresh`]).
    async fn refreshed_board(&self) -> Result<Arc<Board>> {
        let store = Arc::clone(&self.wf.board);
        off_the_runtime(move || store.refresh()).await
    }

    fn may_start_more(&self) -> bool {
        self.stop.is_none()
            && !self.server.is_lost()
            && self.wf.spending.run_stop().is_none()
            && (self.options.auto || self.started == 0)
            && self
                .options
                .max_actions
                .is_none_or(|max| self.started < max)
    }

    fn start_actions(&mut self, board: &Board, checkpoint: &mut Checkpoint) -> Result<()> {
        let assessment = assess(board, Policy::from_config(&self.wf.config));
        for duplicate in &assessment.duplicate_ids {
            if self.duplicates_seen.insert(duplicate.id.clone()) {
                let paths: Vec<String> = duplicate
                    .paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                self.wf.events.emit(RunEvent::Warning {
                    story_id: Some(duplicate.id.clone()),
                    message: format!(
                        "{} story files share the id {}: {}; neither is run until one gets a new id",
                        paths.len(),
                        duplicate.id,
                        paths.join(", ")
                    ),
                });
            }
        }
        let mut skip: HashSet<String> = self.parked.clone();
        skip.extend(self.running.keys().cloned());
        let candidates: Vec<Action> = runnable(&assessment, &self.options, &skip)
            .cloned()
            .collect();
        if let Some(turns) = &mut self.turns {
            // A held story with nothing left to run here goes back to the other clones.
            let running = &self.running;
            turns.release_idle(|id| {
                running.contains_key(id) || candidates.iter().any(|a| a.story_id == id)
            });
        }
        for action in candidates {
            let claiming = self.turns.as_ref().map_or(0, Turns::claims_in_flight);
            if self.running.len() + claiming >= self.concurrency || !self.may_start_more() {
                break;
            }
            if self.running.contains_key(&action.story_id) {
                continue;
            }
            if let Some(turns) = &mut self.turns {
                if !turns.admit(&self.wf, &action.story_id) {
                    continue;
                }
            }
            // The whole story: its records say what a rework will be and what it spent so far.
            // This read is the one the action's writes build on (the store keeps the file).
            let story = self.wf.board.locate(&action.story_id).ok();
            let story_path = story.as_ref().map(|s| s.path.clone()).unwrap_or_default();
            let rework = match action.action_type {
                super::assessor::ActionType::Rework => {
                    story.as_ref().and_then(|s| rework::preview(&self.wf, s))
                }
                _ => None,
            };
            let spent = story
                .as_ref()
                .and_then(|s| s.usage().ok())
                .unwrap_or_default();
            self.wf.spending.begin_action(&action.story_id, spent);
            checkpoint.start(&action, story_path);
            checkpoint.save(self.wf.board_dir(), self.wf.board.content_hash())?;
            self.started += 1;
            self.running.insert(action.story_id.clone(), action.clone());
            let detail = rework.as_ref().map(|p| {
                format!(
                    "iteration {}/{}, target: {}",
                    p.iteration, p.limit, p.target
                )
            });
            self.wf.events.emit(RunEvent::ActionStarted {
                story_id: action.story_id.clone(),
                action: ActionRef::from(&action),
                title: story
                    .as_ref()
                    .map(|s| s.meta.title.clone())
                    .unwrap_or_default(),
                detail,
            });
            if let Some(plan) = rework {
                self.wf.events.emit(RunEvent::ReworkStarted {
                    story_id: action.story_id.clone(),
                    slug: action.slug.clone(),
                    iteration: plan.iteration,
                    limit: plan.limit,
                    target: plan.target,
                });
            }
            let wf = Arc::clone(&self.wf);
            self.tasks.spawn(async move {
                let result = actions::execute(&wf, &action).await;
                (action, result)
            });
        }
        Ok(())
    }

    /// Whether the run, with nothing left to start, waits for stories other clones hold: they
    /// may finish (and unblock stories that depend on them) or lapse (and be taken over).
    async fn waits_on_other_clones(&self) -> Result<bool> {
        let Some(turns) = &self.turns else {
            return Ok(false);
        };
        if !self.options.auto || !self.may_start_more() {
            return Ok(false);
        }
        let board = self.refreshed_board().await?;
        Ok(turns.waits_for_others(&board, &self.parked, self.options.story.as_deref()))
    }

    /// The parked stories whose file someone other than this run changed since the run last
    /// wrote it (or, for a file the run never wrote, since it was parked).
    fn touched_by_others(&mut self, board: &Board) -> HashSet<String> {
        for (id, stamp) in stamps(board, &self.parked) {
            self.parked_stamps.entry(id).or_insert(stamp);
        }
        let touched: HashSet<String> = self
            .parked
            .iter()
            .filter(|id| {
                let Some(story) = board.get(id) else {
                    return true;
                };
                let now = std::fs::read(&story.path).ok();
                let digest = now.as_deref().map(crate::own_writes::digest);
                if digest.is_some() && self.retried_for.get(*id) == digest.as_ref() {
                    return false;
                }
                match crate::own_writes::changed_since_own_write(&story.path, now.as_deref()) {
                    Some(changed) => changed,
                    None => {
                        let stamp = stamps(board, &HashSet::from([(*id).clone()]));
                        self.parked_stamps.get(*id) != stamp.get(*id)
                    }
                }
            })
            .cloned()
            .collect();
        for id in &touched {
            let content = board
                .get(id)
                .and_then(|story| std::fs::read(&story.path).ok());
            if let Some(content) = content {
                self.retried_for
                    .insert(id.clone(), crate::own_writes::digest(&content));
            }
        }
        touched
    }

    /// Takes in a claim or release that finished.
    fn settle_turn(&mut self, story_id: &str, turn: Turn) {
        let failed = match turn {
            Turn::Claimed(Ok(Claimed::Won | Claimed::Elsewhere)) | Turn::Released(Ok(())) => return,
            Turn::Claimed(Err(err)) => format!("could not claim {story_id}: {err}"),
            Turn::Released(Err(err)) => format!("could not release {story_id}: {err}"),
        };
        // The remote is not answering as it should: the story is left for a later run.
        self.failed += 1;
        self.parked.insert(story_id.to_string());
        self.wf.events.emit(RunEvent::Warning {
            story_id: Some(story_id.to_string()),
            message: failed,
        });
    }

    /// Reports how an action ended and what it means for the rest of the run.
    fn settle(&mut self, action: &Action, result: Result<Outcome>) {
        if self
            .turns
            .as_ref()
            .is_some_and(|turns| turns.give_up_if_lost(&action.story_id))
        {
            self.parked.insert(action.story_id.clone());
        }
        let events = &self.wf.events;
        let outcome = result.unwrap_or_else(|err| {
            // An error outside the agent (I/O, a story removed by hand): the story stays as it
            // is; record the error on it when it can still be written.
            let message = err.to_string();
            let _ = self.wf.board.update(&action.story_id, |s| {
                s.set("last_error", &message);
                Ok(())
            });
            Outcome::Failed(message)
        });
        let slug = action.slug.clone();
        match &outcome {
            Outcome::Completed(summary) => events.emit(RunEvent::ActionCompleted {
                story_id: action.story_id.clone(),
                action: ActionRef::from(action),
                summary: summary.clone(),
            }),
            Outcome::Failed(error) | Outcome::ServerLost(error) => {
                if matches!(outcome, Outcome::ServerLost(_)) {
                    self.server.action_could_not_reach();
                }
                self.failed += 1;
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::ActionFailed {
                    story_id: action.story_id.clone(),
                    action: ActionRef::from(action),
                    error: error.clone(),
                });
            }
            Outcome::Blocked { reason, stop } => {
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::StoryBlocked {
                    story_id: action.story_id.clone(),
                    slug,
                    reason: reason.clone(),
                    cause: Some(stop.cause()),
                });
                if matches!(stop, Stop::Manual | Stop::Error) {
                    self.stop = Some(*stop);
                }
                // The breaker's `skip` goes on without a person; every other block waits for one.
                if *stop != Stop::Skip {
                    self.blocked.push(NewlyBlocked {
                        story_id: action.story_id.clone(),
                        reason: reason.clone(),
                        cause: stop.cause(),
                    });
                }
            }
            Outcome::Stopped(reason) => {
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::ActionStopped {
                    story_id: action.story_id.clone(),
                    action: ActionRef::from(action),
                    reason: reason.clone(),
                });
            }
            Outcome::Waiting(reason) => {
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::StoryWaiting {
                    story_id: action.story_id.clone(),
                    slug,
                    reason: reason.clone(),
                });
            }
        }
    }

    /// The run's exit status; `board` is the board at the end, when it could be read.
    fn conclude(&self, board: Option<Arc<Board>>) -> ExitStatus {
        let attention = board
            .as_deref()
            .map(|board| self.attention(board))
            .unwrap_or_default();
        let (code, message) = match self.stop {
            Some(Stop::Manual) => (
                ExitStatus::NeedsPerson,
                "Stopped: a story needs a person (circuit breaker, escalation manual)".to_string(),
            ),
            Some(Stop::Error) => (
                ExitStatus::Failure,
                "Stopped: circuit breaker tripped (escalation error)".to_string(),
            ),
            _ if self.server.is_lost() => (
                ExitStatus::Failure,
                self.server
                    .stop_message(self.not_started(board.as_deref()))
                    .unwrap_or_default(),
            ),
            _ if self.wf.spending.run_stop().is_some() => (
                ExitStatus::NeedsPerson,
                format!(
                    "Stopped: {}; no new action was started",
                    self.wf.spending.run_stop().unwrap_or_default()
                ),
            ),
            _ if self.failed > 0 => (
                ExitStatus::Failure,
                format!(
                    "{} action(s) failed; see last_error with `agentic-sdlc status`",
                    self.failed
                ),
            ),
            _ if !attention.is_empty() => (
                ExitStatus::NeedsPerson,
                format!(
                    "Stopped for a person: {} action(s) run; {}:",
                    self.started,
                    need_you(attention.len())
                ),
            ),
            _ => (
                ExitStatus::Success,
                format!("Done: {} action(s) run", self.started),
            ),
        };
        // A run that left nothing for its filters to do has nothing to resume.
        let remaining = board
            .as_deref()
            .map(|board| {
                let assessment = assess(board, Policy::from_config(&self.wf.config));
                let any = runnable(&assessment, &self.options, &self.parked)
                    .next()
                    .is_some();
                any
            })
            .unwrap_or(true);
        if code == ExitStatus::Success && !remaining && self.options.auto {
            let _ = Checkpoint::remove(self.wf.board_dir());
        }
        self.wf.events.emit(RunEvent::RunFinished {
            story_id: NoStory,
            actions: self.started,
            failed: self.failed,
            exit_code: code.code(),
            message,
            attention,
        });
        code
    }

    /// How many stories had an action this run would have taken and did not start.
    fn not_started(&self, board: Option<&Board>) -> usize {
        let Some(board) = board else { return 0 };
        let assessment = assess(board, Policy::from_config(&self.wf.config));
        let stories: HashSet<&str> = runnable(&assessment, &self.options, &self.parked)
            .map(|action| action.story_id.as_str())
            .collect();
        stories.len()
    }

    /// Who needs a person at the end: the stories this run blocked, then every story in the
    /// run's scope that waits for a decision.
    fn attention(&self, board: &Board) -> Vec<Attention> {
        let mut attention: Vec<Attention> = self
            .blocked
            .iter()
            .filter_map(|blocked| {
                let story = board.get(&blocked.story_id)?;
                let need = Need::Blocked {
                    reason: blocked.reason.clone(),
                    cause: Some(blocked.cause.clone()),
                };
                Some(Attention::new(story, &need))
            })
            .collect();
        let options = &self.options;
        attention.extend(attention::waiting_for_decisions(
            board,
            &self.wf.root,
            |id| options.story.as_deref().is_none_or(|story| story == id),
        ));
        attention
    }
}

/// The next claim or release of a remote run to finish.
async fn next_turn(turns: &mut Option<Turns>) -> (String, Turn) {
    match turns {
        Some(turns) => turns.join_next().await,
        None => std::future::pending().await,
    }
}

/// The signals that end a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Ctrl-C (SIGINT).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

/// Where each of `ids` is on `board` and its file's stamp, to tell later whether someone
/// changed it.
fn stamps(board: &Board, ids: &HashSet<String>) -> HashMap<String, FileStamp> {
    ids.iter()
        .filter_map(|id| {
            let path = &board.get(id)?.path;
            let meta = std::fs::metadata(path).ok()?;
            Some((id.clone(), (path.clone(), meta.modified().ok(), meta.len())))
        })
        .collect()
}

type FileStamp = (std::path::PathBuf, Option<std::time::SystemTime>, u64);

/// Resolves on Ctrl-C or SIGTERM, saying which. The handlers are in place as soon as this is
/// called, so a signal that comes before the first poll still counts.
pub(crate) fn interrupted() -> impl std::future::Future<Output = Signal> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    let mut terminate = signal(SignalKind::terminate()).ok();
    async move {
        tokio::select! {
            () = received(interrupt.as_mut()) => Signal::Interrupt,
            () = received(terminate.as_mut()) => Signal::Terminate,
        }
    }
}

/// Resolves when `signal` arrives; never, when its handler could not be installed.
async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending::<()>().await,
    }
}
