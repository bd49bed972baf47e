//! `completions <shell>`: what a shell needs to complete the commands, generated from the same
//! clap definitions as `--help`, so it never falls behind them.

use clap::Args;

use super::context::Context;
use crate::error::{ExitStatus, Result};

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for: bash, zsh or fish (elvish and powershell work too).
    pub shell: clap_complete::Shell,
}

/// Prints the completion script on stdout, e.g. `agentic-sdlc completions bash >
/// ~/.local/share/bash-completion/completions/agentic-sdlc`.
/// `command` is the whole command line, as `--help` knows it.
pub fn run(
    args: CompletionsArgs,
    mut command: clap::Command,
    context: &Context,
) -> Result<ExitStatus> {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    context.printer.document(&String::from_utf8_lossy(&script));
    Ok(ExitStatus::Success)
}
