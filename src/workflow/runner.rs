//! The run loop (docs/design.md §5, §11): assess, start what may run, record, repeat.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::task::JoinSet;

use super::assessor::{assess, Action, ActionRef, Policy};
use super::attention::{self, Attention, Need};
use super::blocking::off_the_runtime;
use super::checkpoint::{Checkpoint, RunOptions};
use super::context::Workflow;
use super::events::{EventSink, RunEvent};
use super::lock::BoardLock;
use super::outcome::{BlockCause, Outcome, Stop};
use super::preflight::Needs;
use super::prompter::Prompter;
use super::remote::{Claimed, Remote, RemotePlan, Turn, Turns};
use super::server_watch::ServerWatch;
use super::{actions, rework, workspace};
use crate::board::watch::{BoardWatcher, Scope};
use crate::board::Board;
use crate::board::StoryId;
use crate::config::Project;
use crate::error::{Error, ExitStatus, Result};
use crate::protocol::NoStory;

mod driving;
mod settling;
mod setup;
mod signals;
mod starting;

use setup::*;
use signals::*;
pub(crate) use signals::{interrupted, Signal};
pub use starting::AgentFactory;
use starting::*;

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

/// One run: the board checked and locked, the tree put in order, then the loop from the first
/// action to the last (docs/design.md §11).
pub async fn run(
    project: &Project,
    events: EventSink,
    request: RunRequest,
    agents: AgentFactory,
    prompter: Option<Arc<dyn Prompter>>,
) -> Result<ExitStatus> {
    let board_dir = project.board_dir();
    let store = load_store(&board_dir).await?;
    refuse_dependency_cycles(&store.board())?;
    let _lock = BoardLock::acquire(&board_dir)?;
    // Watching starts before the first look at the board, so no change falls in between.
    let watch = match request.watch {
        true => Some(BoardWatcher::start(&board_dir, Scope::Stories)?),
        false => None,
    };
    let project = &prepare_tree(project, request.remote.is_some(), &events);
    let remote = connect(request.remote.clone(), project, &events).await?;
    let board = board_to_work_on(&store, remote.is_some(), &events).await?;
    let mut checkpoint =
        open_checkpoint(request.resume, &request.options, &store, &board, &events)?;
    let options = checkpoint.context.options.clone();
    let assessment = assess(&board, Policy::from_config(&project.config));
    let Some(first) = first_action(&assessment, &options, watch.is_some()) else {
        if let Some(remote) = &remote {
            remote.finish().await;
        }
        let resumed = request.resume;
        return Ok(finish_empty(
            project,
            &board,
            &events,
            &assessment,
            &options,
            resumed,
        ));
    };
    let concurrency = concurrency_of(&options, project);
    let start = Start {
        needs: Needs::of_run(options.auto, options.step, first),
        concurrency,
        options: &options,
        remote: remote.as_deref(),
    };
    // Ctrl-C while the run gets ready (a model loading, the checks) ends it as Ctrl-C in the
    // loop does: with exit 130, and with what it started (a local model's server) stopped by
    // its owner rather than left behind by a process killed outright.
    let ready = start_workflow(project, store, &events, agents, prompter, start);
    let wf = tokio::select! {
        wf = ready => match wf {
            Err(Error::Interrupted) => None,
            wf => Some(wf?),
        },
        _ = interrupted() => None,
    };
    let Some(wf) = wf else {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: "Interrupted before the first action; nothing was started".into(),
        });
        return Ok(ExitStatus::Interrupted);
    };
    // Handed back, the board's stories move into the store's next refresh instead of being
    // copied.
    drop(board);
    Loop::new(wf, options, concurrency, remote, watch)
        .run_to_end(&mut checkpoint)
        .await
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
    /// The actions that failed, as `slug (action)`, for the run's last line.
    failed_actions: Vec<String>,
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

impl Loop {
    fn new(
        wf: Arc<Workflow>,
        options: RunOptions,
        concurrency: usize,
        remote: Option<Arc<Remote>>,
        watch: Option<BoardWatcher>,
    ) -> Loop {
        Loop {
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
            failed_actions: Vec::new(),
            stop: None,
            duplicates_seen: HashSet::new(),
            blocked: Vec::new(),
            turns: remote.map(Turns::new),
            watch,
            server: ServerWatch::default(),
        }
    }

    /// Drives the run to its end, renewing its claims meanwhile when it works through a remote.
    async fn run_to_end(mut self, checkpoint: &mut Checkpoint) -> Result<ExitStatus> {
        let renewal = self
            .turns
            .as_ref()
            .map(|turns| renew_claims(Arc::clone(turns.remote())));
        let exit_code = self.drive(checkpoint).await;
        if let Some(renewal) = renewal {
            renewal.abort();
        }
        if let (Err(_), Some(turns)) = (&exit_code, self.turns.as_mut()) {
            turns.finish().await;
        }
        exit_code
    }
}
