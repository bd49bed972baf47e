//! `man [--out-dir DIR]`: the manual page, generated from the same clap definitions as
//! `--help`, so it never falls behind the commands.

use std::path::PathBuf;

use clap::Args;

use super::context::Context;
use crate::error::{Error, ExitStatus, Result};

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write one page per command (agentic-sdlc.1, agentic-sdlc-run.1, …) into DIR instead
    /// of printing the main page.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// Prints the manual page as roff (`agentic-sdlc man | man -l -`), or writes every
/// command's page into a folder.
/// `command` is the whole command line, as `--help` knows it.
pub fn run(args: ManArgs, command: clap::Command, context: &Context) -> Result<ExitStatus> {
    match args.out_dir {
        Some(dir) => {
            let dir = context.cwd.join(dir);
            fs_err::create_dir_all(&dir)?;
            clap_mangen::generate_to(command, &dir).map_err(|e| {
                Error::io(
                    format!("cannot write the manual pages into {}", dir.display()),
                    e,
                )
            })?;
            context
                .printer
                .info(format!("Wrote the manual pages into {}", dir.display()));
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .map_err(|e| Error::io("cannot render the manual page", e))?;
            context.printer.document(&String::from_utf8_lossy(&page));
        }
    }
    Ok(ExitStatus::Success)
}
