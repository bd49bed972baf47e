//! The run loop (docs/design.md §5, §11): assess, start what may run, record, repeat.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::task::JoinSet;

use super::assessor::{assess, Action, ActionRef, ActionType, Assessment, Policy};
use super::attention::{self, Attention, Need};
use super::blocking::off_the_runtime;
use super::budget::Spending;
use super::checkpoint::{Checkpoint, RunOptions};
use super::context::Workflow;
use super::events::{EventSink, ReportingMeter, RunEvent};
use super::journal::Journal;
use super::lock::BoardLock;
use super::outcome::{BlockCause, Outcome, Stop};
use super::preflight::{self, Needs};
use super::prompter::{Prompter, Terminal};
use super::remote::{Claimed, Remote, RemotePlan, Turn, Turns};
use super::server_watch::ServerWatch;
use super::{actions, rework, workspace};
use crate::agents::meter::CallMeter;
use crate::agents::Agents;
use crate::board::board_store::BoardStore;
use crate::board::validate::dependency_cycles;
use crate::board::watch::{BoardWatcher, Scope};
use crate::board::StoryId;
use crate::board::{lookup, store, Board, Phase};
use crate::config::Project;
use crate::error::{Error, ExitStatus, Result};
use crate::exec::Sandbox;
use crate::protocol::NoStory;

mod driving;
mod settling;
mod setup;
mod signals;

use setup::*;
use signals::*;
pub(crate) use signals::{interrupted, Signal};

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
    skip: &'a HashSet<StoryId>,
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
            "refusing to run: dependency cycle {}",
            cycle.join(" -> ")
        ))
        .with_hint("fix depends_on, then run `agentic-sdlc validate`"));
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
    preflight::check(project, needs, agents.endpoint(), &sandbox, &events)
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
    if !project.config.has_test_command() {
        // Said once per run: every story goes on without the phases that run tests.
        for phase in Phase::ALL.iter().filter(|phase| phase.runs_tests()) {
            if project.config.phases.enabled_setting(*phase) != Some(false) {
                events.emit(RunEvent::Notice {
                    story_id: NoStory,
                    message: format!(
                        "the {phase} phase is skipped: review.testCommand is not set to run its \
                         tests"
                    ),
                });
            }
        }
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

/// A story this run moved to blocked/.
struct NewlyBlocked {
    story_id: StoryId,
    reason: String,
    cause: BlockCause,
}

struct Loop {
    wf: Arc<Workflow>,
    options: RunOptions,
    concurrency: usize,
    tasks: JoinSet<(Action, Result<Outcome>)>,
    /// Stories with an action in flight; a story never runs two actions at once.
    running: HashMap<StoryId, Action>,
    /// Stories that take no further action in this run: failed, blocked or waiting.
    parked: HashSet<StoryId>,
    /// Under `--watch`: each parked story's file as it was when the run first looked at it
    /// idle, for files the run itself never wrote.
    parked_stamps: HashMap<StoryId, FileStamp>,
    /// Under `--watch`: the content a story was given another chance for, so that the same
    /// change does not start it over and over when its action writes nothing.
    retried_for: HashMap<StoryId, u128>,
    started: u32,
    failed: u32,
    /// Set when an escalation stops new work.
    stop: Option<Stop>,
    /// The stories this run blocked, in order: each needs a person, and the run ends with
    /// exit 3 (unless the breaker's escalation says otherwise).
    blocked: Vec<NewlyBlocked>,
    /// Ids shared by several story files that the run has warned about, once each.
    duplicates_seen: HashSet<StoryId>,
    /// With `--remote`: the claims and releases in flight (docs/design.md §20).
    turns: Option<Turns>,
    /// `run --watch`: what tells the idle run that a person changed the board.
    watch: Option<BoardWatcher>,
    /// Whether the model server is still there, once an action could not reach it.
    server: ServerWatch,
}
