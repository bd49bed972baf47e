//! What an ended action means for the run (docs/design.md §14): the story parked, blocked or
//! going on, the checkpoint, and the run's exit status and the attention list at its end.

use super::*;
use crate::hint::told;

impl Loop {
    /// Reports how an action ended and what it means for the rest of the run.
    pub(super) fn settle(&mut self, action: &Action, result: Result<Outcome>) {
        if self
            .turns
            .as_ref()
            .is_some_and(|turns| turns.give_up_if_lost(&action.story_id))
        {
            self.parked.insert(action.story_id.clone());
        }
        let events = &self.wf.events;
        let outcome = result.unwrap_or_else(|err| {
            // An error outside the agent (I/O, a story removed by hand): the story stays as it
            // is; record the error on it when it can still be written.
            let message = told(&err);
            let _ = self.wf.board.update(&action.story_id, |s| {
                s.set("last_error", &message);
                Ok(())
            });
            Outcome::Failed(message)
        });
        let slug = action.slug.clone();
        match &outcome {
            Outcome::Completed(summary) => events.emit(RunEvent::ActionCompleted {
                story_id: action.story_id.clone(),
                action: ActionRef::from(action),
                summary: summary.clone(),
            }),
            Outcome::Failed(error) | Outcome::ServerLost(error) => {
                if matches!(outcome, Outcome::ServerLost(_)) {
                    self.server.action_could_not_reach();
                }
                self.failed += 1;
                self.failed_actions.push(format!(
                    "{} ({})",
                    action.slug,
                    action.action_type.name()
                ));
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::ActionFailed {
                    story_id: action.story_id.clone(),
                    action: ActionRef::from(action),
                    error: error.clone(),
                });
            }
            Outcome::Blocked { reason, stop } => {
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::StoryBlocked {
                    story_id: action.story_id.clone(),
                    slug,
                    reason: reason.clone(),
                    cause: Some(stop.cause()),
                });
                if matches!(stop, Stop::Manual | Stop::Error) {
                    self.stop = Some(*stop);
                }
                // The breaker's `skip` goes on without a person; every other block waits for one.
                if *stop != Stop::Skip {
                    self.blocked.push(NewlyBlocked {
                        story_id: action.story_id.clone(),
                        reason: reason.clone(),
                        cause: stop.cause(),
                    });
                }
            }
            Outcome::Stopped(reason) => {
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::ActionStopped {
                    story_id: action.story_id.clone(),
                    action: ActionRef::from(action),
                    reason: reason.clone(),
                });
            }
            Outcome::Waiting(reason) => {
                self.parked.insert(action.story_id.clone());
                events.emit(RunEvent::StoryWaiting {
                    story_id: action.story_id.clone(),
                    slug,
                    reason: reason.clone(),
                });
            }
        }
    }

    /// The run's exit status; `board` is the board at the end, when it could be read.
    pub(super) fn conclude(&self, board: Option<Arc<Board>>) -> ExitStatus {
        let attention = board
            .as_deref()
            .map(|board| self.attention(board))
            .unwrap_or_default();
        let (code, message) = match self.stop {
            Some(Stop::Manual) => (
                ExitStatus::NeedsPerson,
                "Stopped: a story needs a person (circuit breaker, escalation manual)".to_string(),
            ),
            Some(Stop::Error) => (
                ExitStatus::Failure,
                "Stopped: circuit breaker tripped (escalation error)".to_string(),
            ),
            _ if self.server.is_lost() => (
                ExitStatus::Failure,
                self.server
                    .stop_message(self.not_started(board.as_deref()))
                    .unwrap_or_default(),
            ),
            _ if self.wf.spending.run_stop().is_some() => (
                ExitStatus::NeedsPerson,
                format!(
                    "Stopped: {}; no new action was started",
                    self.wf.spending.run_stop().unwrap_or_default()
                ),
            ),
            _ if self.failed > 0 => (
                ExitStatus::Failure,
                format!(
                    "{} action(s) failed: {}; see last_error with `agentic-sdlc details <story>`",
                    self.failed,
                    self.failed_actions.join(", ")
                ),
            ),
            _ if !attention.is_empty() => (
                ExitStatus::NeedsPerson,
                format!(
                    "Stopped for a person: {} action(s) run; {}:",
                    self.started,
                    need_you(attention.len())
                ),
            ),
            _ => (
                ExitStatus::Success,
                format!("Done: {} action(s) run", self.started),
            ),
        };
        // A run that left nothing for its filters to do has nothing to resume.
        let remaining = board
            .as_deref()
            .map(|board| {
                let assessment = assess(board, Policy::from_config(&self.wf.config));
                let any = runnable(&assessment, &self.options, &self.parked)
                    .next()
                    .is_some();
                any
            })
            .unwrap_or(true);
        if code == ExitStatus::Success && !remaining && self.options.auto {
            let _ = Checkpoint::remove(self.wf.board_dir());
        }
        self.wf.events.emit(RunEvent::RunFinished {
            story_id: NoStory,
            actions: self.started,
            failed: self.failed,
            exit_code: code.code(),
            message,
            attention,
        });
        code
    }

    /// How many stories had an action this run would have taken and did not start.
    pub(super) fn not_started(&self, board: Option<&Board>) -> usize {
        let Some(board) = board else { return 0 };
        let assessment = assess(board, Policy::from_config(&self.wf.config));
        let stories: HashSet<&str> = runnable(&assessment, &self.options, &self.parked)
            .map(|action| action.story_id.as_str())
            .collect();
        stories.len()
    }

    /// Who needs a person at the end: the stories this run blocked, then every story in the
    /// run's scope that waits for a decision.
    pub(super) fn attention(&self, board: &Board) -> Vec<Attention> {
        let mut attention: Vec<Attention> = self
            .blocked
            .iter()
            .filter_map(|blocked| {
                let story = board.get(&blocked.story_id)?;
                let need = Need::Blocked {
                    reason: blocked.reason.clone(),
                    cause: Some(blocked.cause.clone()),
                };
                Some(Attention::new(story, &need))
            })
            .collect();
        let options = &self.options;
        attention.extend(attention::waiting_for_decisions(
            board,
            &self.wf.root,
            |id| options.story.as_deref().is_none_or(|story| story == id),
        ));
        attention
    }
}
