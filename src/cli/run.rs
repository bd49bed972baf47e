//! `run`: execute the next action, or (`--auto`) everything runnable.

use std::sync::Arc;

use clap::Args;
use serde_json::json;

use super::Context;
use crate::error::{Error, ExitStatus, Result};
use crate::output::{RunDisplay, TerminalPrompter};
use crate::workflow::assessor::ActionType;
use crate::workflow::checkpoint::RunOptions;
use crate::workflow::prompter::Prompter;
use crate::workflow::{launch, runner};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Keep assessing and executing until no runnable action is left.
    #[arg(long)]
    pub auto: bool,
    /// Only this story's actions (id or slug); with --auto, its whole life cycle.
    #[arg(long, value_name = "STORY")]
    pub story: Option<String>,
    /// Only actions of this type: refine, research, plan, implement, review, rework, create_pr, move_to_done.
    #[arg(long, value_name = "PHASE")]
    pub step: Option<String>,
    /// Print the actions that would run, in order; write nothing, call no LLM.
    #[arg(long)]
    pub dry_run: bool,
    /// Resume the interrupted run from .workflow-state.json, with its options.
    #[arg(long = "continue")]
    pub resume: bool,
    /// Up to N stories in parallel (default: the config's `concurrency`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub concurrency: Option<u32>,
    /// Stop after N actions.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_actions: Option<u32>,
    /// Like --auto, then keep watching the board: a story a person adds or edits starts
    /// within seconds. Ctrl-C stops.
    #[arg(long, conflicts_with = "dry_run")]
    pub watch: bool,
}

pub fn run(args: RunArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let step = match &args.step {
        Some(name) => Some(ActionType::parse(name).ok_or_else(|| {
            Error::Usage(format!(
                "--step {name}: unknown action; use one of refine, research, plan, implement, review, rework, create_pr, move_to_done"
            ))
        })?),
        None => None,
    };
    let options = RunOptions {
        auto: args.auto || args.watch,
        story: args.story.clone(),
        step,
        max_actions: args.max_actions,
        concurrency: args.concurrency,
    };
    let printer = &context.printer;
    if args.dry_run {
        let actions = runner::plan(&project, &options)?;
        printer.json_line(&super::envelope(
            "plan",
            json!({ "actions": actions })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        ));
        if actions.is_empty() {
            printer.out("Nothing to do.");
        } else {
            let p = printer.palette();
            printer.out(format!("Would run {} action(s):", actions.len()));
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
    let request = runner::RunRequest {
        options,
        resume: args.resume,
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
    let prompter = TerminalPrompter::for_terminal(printer, Arc::clone(&display))
        .map(|p| Arc::new(p) as Arc<dyn Prompter>);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))?;
    let result = runtime.block_on(launch::run_notified(
        &project,
        display,
        request,
        launch::llm_agents(),
        prompter,
    ));
    // A file tool stuck in the kernel (a hung network mount, say) must not keep an interrupted
    // run from exiting: blocking threads are left behind rather than waited for.
    runtime.shutdown_background();
    result
}
