//! `run`: execute the next action, or (`--auto`) everything runnable.

use std::sync::Arc;

use clap::Args;

use super::context::Context;
use super::values::Choice;
use crate::agents::prompts::DIFF_BUDGET;
use crate::board::records::DecidedBy;
use crate::board::{Board, Phase, StoryId};
use crate::config::Project;
use crate::error::{Error, ExitStatus, Result};
use crate::front::launch;
use crate::hint::told;
use crate::output::Printer;
use crate::output::{RunDisplay, TerminalPrompter};
use crate::workflow::assessor::ActionType;
use crate::workflow::checkpoint::{Checkpoint, RunOptions};
use crate::workflow::person_decides;
use crate::workflow::prompter::{Answer, GateQuestion, Prompter};
use crate::workflow::remote::remote_preflight;
use crate::workflow::runner;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Keep assessing and executing until no runnable action is left.
    #[arg(long)]
    pub auto: bool,
    /// Only this story's actions (id or slug); with --auto, its whole life cycle.
    #[arg(long, value_name = "STORY",
          add = clap_complete::ArgValueCandidates::new(super::values::story_candidates))]
    pub story: Option<String>,
    /// Only actions of this type.
    #[arg(long, value_name = "PHASE", value_parser = Choice::<ActionType>::new(
        |typed, names| format!("--step {typed}: unknown action; use one of {names}")))]
    pub step: Option<ActionType>,
    /// Print each story's next action, in the order a run would start them; write nothing,
    /// call no LLM. Later actions depend on how these end, so they are not listed.
    #[arg(long)]
    pub dry_run: bool,
    /// Resume the interrupted run from .workflow-state.json, with its options.
    #[arg(long = "continue")]
    pub resume: bool,
    /// Never ask a person at the terminal: a human gate leaves its story waiting for
    /// `agentic-sdlc decide`. The default when stdin is not a terminal.
    #[arg(long)]
    pub no_input: bool,
    /// Up to N stories in parallel (default: the config's `concurrency`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: Option<u32>,
    /// Stop after N actions.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_actions: Option<u32>,
    /// Work the board together with other clones through this git remote: stories are
    /// claimed there, and the board and every merge reach its base branch.
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// Like --auto, then keep watching the board: a story a person adds or edits starts
    /// within seconds. Ctrl-C stops.
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
}

/// `run --dry-run --json`: each story's next action, in the order a run would start them.
#[derive(Serialize)]
struct Plan<'a, A: Serialize> {
    actions: &'a [A],
}

pub fn run(args: RunArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let step = args.step;
    let options = RunOptions {
        auto: args.auto || args.watch,
        story: args.story.clone(),
        step,
        max_actions: args.max_actions,
        concurrency: args.concurrency,
        remote: args.remote.clone(),
    };
    let printer = &context.printer;
    if args.dry_run {
        let actions = runner::plan(&project, &options)?;
        printer.json_line(&crate::front::envelope("plan", Plan { actions: &actions }));
        if actions.is_empty() {
            printer.out("Nothing to do.");
        } else {
            let p = printer.palette();
            printer.out(format!("Would run {} action(s):", actions.len()));
            // A story's later actions depend on how its next one ends, so only that one is known.
            printer.out(if args.auto {
                "(each story's next action only: as these finish, a run with --auto goes on with the actions after them)"
            } else {
                "(the next action only: a run without --auto takes just this one)"
            });
            for (index, action) in actions.iter().enumerate() {
                printer.out(format!(
                    "  {}. {} {} ({}) {}",
                    index + 1,
                    p.accent(action.action_type.name()),
                    p.id(&action.slug),
                    action.reason,
                    p.dim(&format!("[priority {}]", action.priority))
                ));
            }
        }
        return Ok(ExitStatus::Success);
    }
    // A resumed run goes on through the remote it started with.
    let remote_name = match (&args.remote, args.resume) {
        (Some(name), _) => Some(name.clone()),
        (None, true) => Checkpoint::load(&project.board_dir())
            .ok()
            .flatten()
            .and_then(|checkpoint| checkpoint.context.options.remote),
        (None, false) => None,
    };
    // Checked before anything else happens: a remote that cannot be used stops the run here,
    // with one line and exit 2, before any model is called.
    let remote = match &remote_name {
        Some(name) => Some(remote_preflight(&project, name)?),
        None => None,
    };
    let request = runner::RunRequest {
        options,
        resume: args.resume,
        remote,
        watch: args.watch,
    };
    if args.watch {
        printer.info(format!(
            "Watching {} after the last action: stories added or edited start within seconds; Ctrl-C stops",
            project.board_dir().display()
        ));
    }
    // The events of the run go to one display, which a human gate's prompt suspends.
    let display = Arc::new(RunDisplay::new(printer.clone()));
    let prompter = TerminalPrompter::for_terminal(printer, Arc::clone(&display), args.no_input)
        .map(|p| Arc::new(p) as Arc<dyn Prompter>);
    if let Some(prompter) = &prompter {
        offer_waiting_gates(&project, prompter.as_ref(), &request.options, printer)?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))?;
    let serving = launch::Serving::new(super::model_cmd::progress_reporter(printer));
    let result = runtime.block_on(launch::run_notified(
        &project,
        display,
        request,
        launch::llm_agents(&serving),
        prompter,
    ));
    // The local model's server stops with the run, Ctrl-C included, unless another run uses it.
    serving.stop();
    // A file tool stuck in the kernel (a hung network mount, say) must not keep an interrupted
    // run from exiting: blocking threads are left behind rather than waited for.
    runtime.shutdown_background();
    result
}

/// A run at a terminal first offers the human gates that still wait from earlier runs, one at a
/// time, as a gate reached in the run is asked: a person at the terminal need not know about
/// `decide`. "Later" (Ctrl-C or an empty answer) leaves a gate waiting.
fn offer_waiting_gates(
    project: &Project,
    prompter: &dyn Prompter,
    options: &RunOptions,
    printer: &Printer,
) -> Result<()> {
    let board_dir = project.board_dir();
    let board = Board::load(&board_dir)?;
    for story in &board.stories {
        let in_scope = options.story.as_ref().is_none_or(|query| {
            story.id() == query.as_str() || story.slug.as_str() == query.as_str()
        });
        let pending = story
            .progress
            .as_ref()
            .ok()
            .and_then(|p| p.pending_gate.clone());
        let (Some(phase_name), true) = (pending, in_scope) else {
            continue;
        };
        let Some(phase) = Phase::parse(&phase_name) else {
            continue;
        };
        let story_id = StoryId::from(story.id());
        let waiting = person_decides::pending_output(&board_dir, &story_id, phase);
        let Ok(output) = fs_err::read_to_string(&waiting) else {
            continue;
        };
        let diff = match (phase, &story.meta.branch, &story.meta.base_branch) {
            (Phase::Implement, Some(branch), Some(base)) => Some(
                crate::vcs::diff_of_branch(&project.root, base, branch, DIFF_BUDGET)
                    .unwrap_or_else(|err| format!("(the diff could not be made: {err})")),
            ),
            _ => None,
        };
        let question = GateQuestion {
            phase: phase_name,
            slug: story.slug.clone(),
            title: story.meta.title.clone(),
            output,
            diff,
            criteria: project
                .config
                .phases
                .gate(phase)
                .and_then(|gate| gate.criteria.clone()),
        };
        let answer = prompter
            .ask(&question)
            .map_err(|err| Error::io("cannot ask at the terminal", err))?;
        let Answer::Decision(text) = answer else {
            continue;
        };
        match person_decides::decide(&board_dir, story.id(), &text, DecidedBy::Terminal) {
            Ok(decided) => printer.out(format!("{}: {}", decided.slug, decided.message)),
            Err(err) => printer.warn(told(&err)),
        }
    }
    Ok(())
}
