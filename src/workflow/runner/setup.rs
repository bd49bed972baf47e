//! Before and around the run loop: the box, claim renewal, interrupted work put back, the
//! checkpoint resumed, and a run that finds nothing to do.

use std::sync::Arc;

use crate::board::board_store::BoardStore;
use crate::board::Board;
use crate::config::Project;
use crate::error::{Error, ExitStatus, Result};
use crate::exec::Sandbox;
use crate::protocol::NoStory;
use crate::workflow::assessor::Assessment;
use crate::workflow::attention;
use crate::workflow::checkpoint::{Checkpoint, RunOptions, STALE_AFTER_HOURS};
use crate::workflow::events::{EventSink, RunEvent};
use crate::workflow::remote::Remote;
use crate::workflow::workspace;

/// The run's box, with its guard (docs/security.md). Whether this machine can build it is one
/// of the checks before the first action.
pub(super) fn build_sandbox(project: &Project) -> Sandbox {
    let config = &project.config;
    let guard = crate::workflow::guard::BoardGuard::new(
        &project.root,
        &project.board_dir(),
        config.git.base_branch.as_deref(),
    );
    Sandbox::new(&config.tools, &config.llm.api_key_env).with_guard(Arc::new(guard))
}

/// Renews the run's claims every third of `remote.claimSeconds` while it works.
pub(super) fn renew_claims(remote: Arc<Remote>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(remote.renew_interval()).await;
            remote.renew().await;
        }
    })
}

/// How long a finishing run gives its last push after Ctrl-C.
pub(super) const INTERRUPTED_PUSH: std::time::Duration = std::time::Duration::from_secs(10);

/// A run killed in the middle of an action can leave the agent's work uncommitted on a story
/// branch, and the user's checkout on that branch; the lock says no run is using them now.
pub(super) fn put_back_interrupted_work(project: &Project, events: &EventSink) {
    let board_dir = project.board_dir();
    for message in
        workspace::recovery::recover_interrupted(&project.root, &board_dir, &project.config)
    {
        events.emit(RunEvent::Warning {
            story_id: None,
            message,
        });
    }
}

pub(super) fn resume_checkpoint(
    board_dir: &std::path::Path,
    store: &BoardStore,
    events: &EventSink,
) -> Result<Checkpoint> {
    let checkpoint = Checkpoint::load(board_dir)?.ok_or_else(|| {
        Error::ActionFailed("No checkpoint found; start a run with `agentic-sdlc run`".into())
    })?;
    if checkpoint
        .age_hours()
        .is_some_and(|h| h >= STALE_AFTER_HOURS)
    {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: format!(
                "the checkpoint is older than {STALE_AFTER_HOURS} hours ({}); resuming anyway",
                checkpoint.timestamp
            ),
        });
    }
    if checkpoint.context.story_content_hash != store.content_hash() {
        events.emit(RunEvent::Warning {
            story_id: None,
            message: "stories changed since the checkpoint was written; resuming from the board as it is now".into(),
        });
    }
    Ok(checkpoint)
}

pub(super) fn finish_empty(
    project: &Project,
    board: &Board,
    events: &EventSink,
    assessment: &Assessment,
    options: &RunOptions,
    resumed: bool,
) -> ExitStatus {
    for waiting in &assessment.waiting {
        events.emit(RunEvent::StoryWaiting {
            story_id: waiting.story_id.clone(),
            slug: waiting.slug.clone(),
            reason: waiting.reason.clone(),
        });
    }
    let message = if resumed {
        "All actions from checkpoint already completed!"
    } else {
        "Nothing to do."
    };
    // A filtered run with nothing to do says nothing about an interrupted unfiltered one.
    if resumed || (options.story.is_none() && options.step.is_none()) {
        let _ = Checkpoint::remove(&project.board_dir());
    }
    // Nothing to do may still mean a person is awaited: a decision left from an earlier run.
    let attention = attention::waiting_for_decisions(board, &project.root, |id| {
        options.story.as_deref().is_none_or(|story| story == id)
    });
    let code = if attention.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::NeedsPerson
    };
    let message = match attention.len() {
        0 => message.to_string(),
        waiting => format!("{message} {}:", need_you(waiting)),
    };
    events.emit(RunEvent::RunFinished {
        story_id: NoStory,
        actions: 0,
        failed: 0,
        exit_code: code.code(),
        message,
        attention,
    });
    code
}

/// "1 story needs you" or "3 stories need you".
pub(super) fn need_you(count: usize) -> String {
    match count {
        1 => "1 story needs you".to_string(),
        n => format!("{n} stories need you"),
    }
}
