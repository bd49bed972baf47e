//! The steps of a run before its loop (docs/design.md §11): the board loaded and checked, the
//! tree put in order, the remote joined, the checkpoint opened, and the workflow started with
//! its agents, checks and journal once there is work.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use crate::agents::meter::CallMeter;
use crate::agents::Agents;
use crate::board::board_store::BoardStore;
use crate::board::validate::dependency_cycles;
use crate::board::StoryId;
use crate::board::{lookup, store, Board, Phase};
use crate::config::Project;
use crate::error::{Error, Result};
use crate::exec::Sandbox;
use crate::protocol::NoStory;
use crate::workflow::assessor::{Action, ActionType, Assessment};
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::budget::Spending;
use crate::workflow::checkpoint::{Checkpoint, RunOptions};
use crate::workflow::context::Workflow;
use crate::workflow::events::{EventSink, ReportingMeter, RunEvent};
use crate::workflow::journal::Journal;
use crate::workflow::preflight::{self, Needs};
use crate::workflow::prompter::{Prompter, Terminal};
use crate::workflow::remote::{Remote, RemotePlan};

use super::setup::{build_sandbox, put_back_interrupted_work, resume_checkpoint};

/// Builds the agents once the run knows it has work, so that `--dry-run` and an empty board
/// need no API key.
/// The factory gets the run's budget meter, which every model call must go through, and the
/// run's box, which every command an agent runs must go through.
pub type AgentFactory =
    Box<dyn FnOnce(&Project, Arc<dyn CallMeter>, Sandbox) -> Result<Arc<dyn Agents>> + Send>;

/// The actions of an assessment this run may take, in order.
pub(super) fn runnable<'a>(
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

/// `--story` accepts an id or slug; the loop works with the id.
pub(super) fn resolve_story(board: &Board, mut options: RunOptions) -> Result<RunOptions> {
    if let Some(query) = &options.story {
        options.story = Some(lookup::find(&board.stories, query)?.id().to_string());
    }
    Ok(options)
}

/// The board as the run's store holds it.
pub(super) async fn load_store(board_dir: &Path) -> Result<Arc<BoardStore>> {
    let board_dir = board_dir.to_path_buf();
    Ok(Arc::new(
        off_the_runtime(move || BoardStore::load(&board_dir)).await?,
    ))
}

/// Refuses a board whose stories wait on each other in a circle: none of them could ever run.
pub(super) fn refuse_dependency_cycles(board: &Board) -> Result<()> {
    // `dependency_cycles` leaves out a story that names itself (validate reports it apart),
    // but that story would wait on itself for ever just the same.
    let self_loop = board
        .stories
        .iter()
        .find(|s| s.meta.depends_on.iter().any(|d| d == s.id()))
        .map(|s| vec![s.id().to_string(), s.id().to_string()]);
    match dependency_cycles(board).into_iter().next().or(self_loop) {
        Some(cycle) => Err(Error::ActionFailed(format!(
            "refusing to run: dependency cycle {}",
            cycle.join(" -> ")
        ))
        .with_hint("fix depends_on, then run `agentic-sdlc validate`")),
        None => Ok(()),
    }
}

/// Leftovers of an earlier run cleared and the tool's own folders made; through a remote,
/// stories work in worktrees of their own, so the checkout stays on the base, which follows
/// the remote's.
pub(super) fn prepare_tree(project: &Project, through_remote: bool, events: &EventSink) -> Project {
    let board_dir = project.board_dir();
    store::sweep_temporary_files(&board_dir);
    for warning in crate::workflow::own_folders::prepare(project) {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: warning,
        });
    }
    let mut project = project.clone();
    if through_remote {
        project.config.git.worktrees = true;
    }
    put_back_interrupted_work(&project, events);
    project
}

/// With `run --remote`: the remote joined and the board brought to its tip.
pub(super) async fn connect(
    plan: Option<RemotePlan>,
    project: &Project,
    events: &EventSink,
) -> Result<Option<Arc<Remote>>> {
    let Some(plan) = plan else {
        return Ok(None);
    };
    let remote = Arc::new(Remote::connect(plan, project, events.clone())?);
    remote.pull().await?;
    Ok(Some(remote))
}

/// The board the run starts from (read again after a remote's pull), with a warning for each
/// story file that does not parse.
pub(super) async fn board_to_work_on(
    store: &Arc<BoardStore>,
    pulled: bool,
    events: &EventSink,
) -> Result<Arc<Board>> {
    let board = match pulled {
        true => {
            let store = Arc::clone(store);
            off_the_runtime(move || store.refresh()).await?
        }
        false => store.board(),
    };
    for broken in &board.broken {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: format!("skipping a story that does not parse: {broken}"),
        });
    }
    Ok(board)
}

/// The run's checkpoint: the interrupted run's with `--continue`, else a new one.
pub(super) fn open_checkpoint(
    resume: bool,
    options: &RunOptions,
    store: &BoardStore,
    board: &Board,
    events: &EventSink,
) -> Result<Checkpoint> {
    let board_dir = store.dir();
    if resume {
        return resume_checkpoint(board_dir, store, events);
    }
    Ok(Checkpoint::new(
        board_dir,
        resolve_story(board, options.clone())?,
        store.content_hash(),
    ))
}

/// The kind of the first action the run will take; a watching run with nothing to do yet
/// waits for work of any kind.
pub(super) fn first_action(
    assessment: &Assessment,
    options: &RunOptions,
    watching: bool,
) -> Option<ActionType> {
    let none_skipped = HashSet::new();
    let first = runnable(assessment, options, &none_skipped)
        .next()
        .map(|action| action.action_type);
    first.or_else(|| watching.then_some(ActionType::Refine))
}

/// Stories at once: `--concurrency`, else `concurrency` from the config, at least one.
pub(super) fn concurrency_of(options: &RunOptions, project: &Project) -> usize {
    options
        .concurrency
        .unwrap_or(project.config.concurrency)
        .max(1) as usize
}

/// What the run starts its workflow with.
pub(super) struct Start<'a> {
    pub needs: Needs,
    pub concurrency: usize,
    pub options: &'a RunOptions,
    pub remote: Option<&'a Remote>,
}

/// The workflow of a run that has work: the box, the budget, the agents, the checks before
/// the first action (which spend nothing), the tool protocol settled, the journal opened.
pub(super) async fn start_workflow(
    project: &Project,
    store: Arc<BoardStore>,
    events: &EventSink,
    agents: AgentFactory,
    prompter: Option<Arc<dyn Prompter>>,
    start: Start<'_>,
) -> Result<Arc<Workflow>> {
    let board_dir = project.board_dir();
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
    preflight::check(project, start.needs, agents.endpoint(), &sandbox, events)
        .await
        .map_err(|failure| Error::Preflight {
            check: failure.check.name(),
            message: failure.message,
        })?;
    let mut project = project.clone();
    if let Some(settled) =
        crate::workflow::protocol_choice::settle(&project.config, &board_dir, agents.endpoint())
            .await
    {
        project.config.llm.tool_protocol = settled.protocol();
        agents.use_tool_protocol(settled.protocol());
        events.emit(RunEvent::Notice {
            story_id: NoStory,
            message: settled.line,
        });
    }
    announce_skipped_phases(&project, events);
    events.begin(start.concurrency);
    // The journal starts with the work: a run that stops at its config or finds nothing to do
    // leaves no file behind.
    match Journal::create(&board_dir, Arc::clone(&spending), start.options) {
        Ok(journal) => {
            if let Some(remote) = start.remote {
                remote.set_run_id(journal.run_id());
            }
            events.attach_journal(Arc::new(journal))
        }
        Err(err) => events.emit(RunEvent::Warning {
            story_id: None,
            message: format!("this run keeps no journal: {err}"),
        }),
    }
    if !project.config.refinement.enable_circuit_breaker {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: "the circuit breaker is disabled (refinement.enableCircuitBreaker: false): \
                      reworks are unbounded"
                .into(),
        });
    }
    Ok(Arc::new(Workflow {
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
    }))
}

/// Said once per run: without a test command every story goes on without the phases that run
/// tests.
fn announce_skipped_phases(project: &Project, events: &EventSink) {
    if project.config.has_test_command() {
        return;
    }
    for phase in Phase::ALL.iter().filter(|phase| phase.runs_tests()) {
        if project.config.phases.enabled_setting(*phase) != Some(false) {
            events.emit(RunEvent::Notice {
                story_id: NoStory,
                message: format!(
                    "the {phase} phase is skipped: review.testCommand is not set to run its tests"
                ),
            });
        }
    }
}
