//! The life cycle: the assessor picks what to do next; the runner does it through the agents,
//! under phase gates, rework and the circuit breaker, with a lock and a checkpoint.

pub mod actions;
pub mod assessor;
pub mod attention;
pub mod budget;
pub mod checkpoint;
pub mod context;
pub mod decision;
pub mod delivery;
pub mod events;
pub mod gate;
pub mod guard;
pub mod journal;
pub mod launch;
pub mod lock;
pub mod no_progress;
pub mod outcome;
pub mod output_check;
pub mod phase_output;
pub mod phases;
pub mod preflight;
pub mod prompter;
pub mod remote;
pub mod review;
pub mod rework;
pub mod runner;
#[cfg(test)]
mod scripted_tests;
pub mod story_ops;
pub mod tests_run;
pub mod workspace;

/// Runs blocking work (git, board I/O) on tokio's blocking threads, so it does not stall the
/// actions in flight.
pub(crate) async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> crate::error::Result<T> + Send + 'static,
) -> crate::error::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|source| crate::error::Error::Task {
            what: "a background task",
            source,
        })?
}
