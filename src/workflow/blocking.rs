//! Blocking work (git, board I/O) kept off the async runtime's worker threads.

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
