//! Every command an agent can influence goes through here: an agent's `run_command`, the
//! review's test command (on the story's branch and on the integrated tree) and command gates.
//! One place applies one policy:
//!
//! - **The box** ([`Sandbox`]): namespaces, Landlock and seccomp keep the command's writes in
//!   the story's tree and a private temporary folder, off the network, and without any
//!   capability; a guard checks afterwards that the board, the config and the tool's refs are
//!   as they were (see [`sandbox`] and docs/security.md).
//! - **Environment:** the key variable, any variable holding the same value, and variables
//!   whose names say they hold a secret are removed, unless `tools.keepEnv` names them;
//!   nothing waits for a person (no pager, no credential prompt).
//! - **Time:** at the limit the whole tree is killed; it also dies with the tool, even on
//!   `kill -9`, and dropping the future (Ctrl-C) kills it at once.
//! - **Output:** stdout and stderr as one stream, cut to its head and tail in bounded memory.

mod capture;
mod kernel;
mod lock_in;
mod namespaces;
mod process;
mod reaper;
mod sandbox;

pub(crate) use capture::floor_char_boundary;
pub use capture::{head_tail, OUTPUT_BUDGET};
pub use process::*;
pub use sandbox::{BoxedCommand, Guard, Sandbox, Watch};

#[cfg(test)]
pub(crate) mod tests;
