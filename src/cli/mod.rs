//! Command-line parsing and dispatch. Each command lives in its own file.

pub(crate) mod add;
mod board_cmds;
mod completions;
mod config_cmd;
mod context;
mod decide;
pub(crate) mod details;
mod init;
mod logs;
mod man;
mod mcp;
mod model_cmd;
pub(crate) mod report;
mod run;
mod serve;
pub(crate) mod status;
mod validate;
mod values;

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand};

use crate::error::{Error, ExitStatus, Hint, Result};
use crate::output::{ColorChoice, Printer, Verbosity};
use context::Context;

/// The heading the options every command takes are listed under, apart from the command's own.
const GLOBAL_OPTIONS: &str = "Global options";

#[derive(Debug, Parser)]
#[command(
    name = "agentic-sdlc",
    version,
    about = "Runs software stories through an AI-driven development life cycle on a file-backed kanban board"
)]
pub struct Cli {
    /// Machine-readable output on stdout (no colour, no spinners).
    #[arg(long, global = true, help_heading = GLOBAL_OPTIONS)]
    pub json: bool,
    /// When to use colour.
    #[arg(long, global = true, value_enum, default_value = "auto", help_heading = GLOBAL_OPTIONS)]
    pub color: ColorChoice,
    /// Run as if started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR", help_heading = GLOBAL_OPTIONS)]
    pub directory: Option<PathBuf>,
    /// Print only results and errors.
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL_OPTIONS)]
    pub quiet: bool,
    /// Print more detail (also enables debug logs; RUST_LOG overrides).
    #[arg(short, long, global = true, help_heading = GLOBAL_OPTIONS)]
    pub verbose: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write the default config if missing and create the board columns.
    Init,
    /// Create a story in backlog.
    Add(add::AddArgs),
    /// Show the board column by column and the recommended next action.
    Status(status::StatusArgs),
    /// Show everything about one story.
    #[command(alias = "d")]
    Details(details::DetailsArgs),
    /// Show or set configuration values.
    Config(config_cmd::ConfigArgs),
    /// Move a story to another column by hand.
    Move(board_cmds::MoveArgs),
    /// Move a blocked story back to the column its flags call for.
    Unblock(board_cmds::UnblockArgs),
    /// Check every story and the config.
    Validate,
    /// Execute the next action (or, with --auto, everything runnable).
    Run(run::RunArgs),
    /// Give a pending human phase review its decision.
    Decide(decide::DecideArgs),
    /// What a run did, story by story: outcomes, reworks, gates, tokens and cost.
    Report(report::ReportArgs),
    /// A story's agent transcripts, readable; --follow streams a running story.
    Logs(logs::LogsArgs),
    /// Print a shell completion script (bash, zsh, fish) on stdout.
    Completions(completions::CompletionsArgs),
    /// Print the manual page (roff) on stdout, or write one page per command with --out-dir.
    Man(man::ManArgs),
    /// The board as a live web page: cards that move as work happens, gates decided with a click.
    Serve(serve::ServeArgs),
    /// A Model Context Protocol server on stdio, so other agents and editors can use the board.
    Mcp,
    /// The local models the tool serves with `llm.provider: "local"`: pull, list, serve, rm.
    Model(model_cmd::ModelArgs),
}

/// Runs the command line and says how it ended.
pub fn main() -> ExitStatus {
    // `COMPLETE=<shell> agentic-sdlc …` is the shell asking for completions (the script of
    // `completions` sets it): answered from the same definitions, then the process ends.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                ExitStatus::Usage
            } else {
                ExitStatus::Success
            };
            let _ = err.print();
            return code;
        }
    };
    let verbosity = match (cli.quiet, cli.verbose) {
        (true, _) => Verbosity::Quiet,
        (_, true) => Verbosity::Verbose,
        _ => Verbosity::Normal,
    };
    let printer = Printer::new(verbosity, cli.json, cli.color);
    let cwd = match resolve_cwd(cli.directory.as_deref()) {
        Ok(cwd) => cwd,
        Err(err) => return report(&printer, err),
    };
    let mut context = Context { cwd, printer };
    if let Ok(project) = context.project() {
        context.printer = context.printer.clone().with_theme(project.config.theme);
    }
    // Log lines follow the colour decision of the rest of the output, theme included.
    crate::output::log::init(&context.printer, cli.verbose);
    match dispatch(cli.command, &context) {
        Ok(code) => code,
        Err(err) => report(&context.printer, err),
    }
}

fn dispatch(command: Command, context: &Context) -> Result<ExitStatus> {
    match command {
        Command::Init => init::run(context),
        Command::Add(args) => add::run(args, context),
        Command::Status(args) => status::run(args, context),
        Command::Details(args) => details::run(args, context),
        Command::Config(args) => config_cmd::run(args, context),
        Command::Move(args) => board_cmds::run_move(args, context),
        Command::Unblock(args) => board_cmds::run_unblock(args, context),
        Command::Validate => validate::run(context),
        Command::Run(args) => run::run(args, context),
        Command::Decide(args) => decide::run(args, context),
        Command::Report(args) => report::run(args, context),
        Command::Logs(args) => logs::run(args, context),
        Command::Completions(args) => completions::run(args, Cli::command(), context),
        Command::Man(args) => man::run(args, Cli::command(), context),
        Command::Serve(args) => serve::run(args, context),
        Command::Mcp => mcp::run(context),
        Command::Model(args) => model_cmd::run(args, context),
    }
}

fn resolve_cwd(directory: Option<&Path>) -> Result<PathBuf> {
    let cwd =
        std::env::current_dir().map_err(|e| Error::io("cannot read the current directory", e))?;
    match directory {
        None => Ok(cwd),
        Some(dir) => {
            let dir = cwd.join(dir);
            if dir.is_dir() {
                Ok(dir)
            } else {
                Err(Error::Usage(format!(
                    "-C {}: no such directory",
                    dir.display()
                )))
            }
        }
    }
}

fn report(printer: &Printer, err: Error) -> ExitStatus {
    printer.error(err.to_string());
    if let Some(hint) = err.hint() {
        printer.hint(hint);
    }
    err.exit_status()
}
