//! agentic-sdlc: runs software stories through an AI-driven development life cycle on a
//! file-backed kanban board. `main.rs` only parses arguments and maps errors to exit codes.

pub mod agents;
pub(crate) mod atomic_file;
pub mod board;
pub mod cli;
pub mod config;
pub mod error;
pub mod exec;
pub mod mcp;
pub mod notifications;
// The one place that writes to the terminal; the rest of the library goes through its printer.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub mod output;
pub mod own_writes;
pub mod protocol;
pub mod report;
pub mod serve;
pub mod vcs;
pub mod workflow;

pub use error::{Error, Result};
