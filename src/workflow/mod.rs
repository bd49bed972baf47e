//! The life cycle: the assessor picks what to do next; the runner does it through the agents,
//! under phase gates, rework and the circuit breaker, with a lock and a checkpoint.

pub(crate) mod actions;
pub(crate) mod assessor;
pub(crate) mod attention;
pub(crate) mod blocking;
pub mod budget;
pub mod checkpoint;
pub(crate) mod context;
pub(crate) mod copied_code;
pub(crate) mod decision;
pub(crate) mod delivery;
pub mod events;
pub(crate) mod examples;
pub(crate) mod fixed_tests;
pub(crate) mod gate;
pub mod guard;
pub(crate) mod invented_expectations;
pub mod journal;
pub(crate) mod lock;
pub(crate) mod merging;
pub(crate) mod named_functions;
pub(crate) mod narrowed;
pub(crate) mod no_progress;
pub(crate) mod outcome;
pub(crate) mod own_folders;
pub(crate) mod person_decides;
pub(crate) mod phase_output;
pub(crate) mod phases;
pub(crate) mod preflight;
pub(crate) mod prompter;
pub(crate) mod protocol_choice;
pub(crate) mod refined;
pub(crate) mod remote;
pub(crate) mod review;
pub(crate) mod rework;
pub(crate) mod runner;
#[cfg(test)]
mod scripted_tests;
pub(crate) mod server_watch;
pub(crate) mod shown_blockers;
pub(crate) mod story_ops;
pub(crate) mod stray_changes;
pub(crate) mod test_rounds;
pub(crate) mod tests_run;
pub(crate) mod unasked_tests;
pub(crate) mod unknown_methods;
pub(crate) mod workspace;
