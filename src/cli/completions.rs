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
/// ~/.local/share/bash-completion/completions/agentic-sdlc`. The script asks this binary for
/// each completion, so a story's slug, a column, a phase or a config key completes from the
/// board in the folder the shell is in. `command` is the whole command line.
pub fn run(args: CompletionsArgs, command: clap::Command, context: &Context) -> Result<ExitStatus> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let name = command.get_name().to_string();
    let shell: &dyn EnvCompleter = match args.shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Zsh => &Zsh,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::Elvish => &Elvish,
        _ => &Powershell,
    };
    // The binary the shell calls back: this one, wherever it is.
    let bin = std::env::current_exe()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|_| name.clone());
    let mut script = Vec::new();
    shell
        .write_registration("COMPLETE", &name, &name, &bin, &mut script)
        .map_err(|err| crate::Error::io("cannot write the completion script", err))?;
    context.printer.document(&String::from_utf8_lossy(&script));
    Ok(ExitStatus::Success)
}
