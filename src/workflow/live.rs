//! Keeps a running story's live line (SPEC §14) up to date with the tokens its action spent.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::budget::Spending;
use crate::output::LiveLine;

/// How often a live line reads the meter.
const REFRESH: Duration = Duration::from_millis(250);

/// Runs `work`, refreshing `line` with the story's tokens until it is done; the line is then
/// removed, and the event that reports the result prints its own.
pub async fn track<F: Future>(
    line: Option<LiveLine>,
    spending: Arc<Spending>,
    story_id: String,
    work: F,
) -> F::Output {
    let Some(line) = line else {
        return work.await;
    };
    let mut work = std::pin::pin!(work);
    let mut refresh = tokio::time::interval(REFRESH);
    let output = loop {
        tokio::select! {
            output = &mut work => break output,
            _ = refresh.tick() => line.set_tokens(spending.action_usage(&story_id).tokens()),
        }
    };
    line.finish();
    output
}
