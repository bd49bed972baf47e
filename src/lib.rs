//! agentic-sdlc: runs software stories through an AI-driven development life cycle on a
//! file-backed kanban board. `main.rs` only parses arguments and maps errors to exit codes.

pub(crate) mod agents;
pub(crate) mod atomic_file;
pub mod board;
pub mod cli;
pub mod config;
pub(crate) mod error;
pub mod exec;
pub(crate) mod front;
pub(crate) mod hint;
pub(crate) mod mcp;
pub(crate) mod model;
pub mod names;
pub(crate) mod notifications;
// The one place that writes to the terminal; the rest of the library goes through its printer.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub(crate) mod output;
pub(crate) mod own_writes;
pub(crate) mod private_temp;
pub mod protocol;
pub(crate) mod python_builtins;
pub(crate) mod report;
pub(crate) mod serve;
pub(crate) mod vcs;
pub mod workflow;

pub use error::{Error, Result};
