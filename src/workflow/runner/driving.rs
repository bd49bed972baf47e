//! The run loop: it starts the actions the board calls for, as many at a time as allowed,
//! watches for signals, remote turns and a lost server, and waits for each to end.

use super::*;
use crate::board::StoryId;
use crate::hint::told;

impl Loop {
    pub(super) async fn drive(&mut self, checkpoint: &mut Checkpoint) -> Result<ExitStatus> {
        let mut interrupt = Box::pin(interrupted());
        // The board as last looked at: read by the store just before the loop, then refreshed
        // once after each action ends.
        let mut current = Some(self.wf.board.board());
        loop {
            self.server.check(self.wf.agents.endpoint()).await;
            if self.may_start_more() {
                let board = match current.take() {
                    Some(board) => board,
                    None => self.refreshed_board().await?,
                };
                self.start_actions(&board, checkpoint)?;
            }
            let idle = self.tasks.is_empty() && self.turns.as_ref().is_none_or(Turns::is_idle);
            let waiting = idle && self.waits_on_other_clones().await?;
            if idle && !waiting {
                if !self.may_keep_watching() {
                    break;
                }
                // Idle under --watch: the run's own writes are behind it; what changes next is a
                // person's doing.
                let mut watch = self.watch.take();
                let Some(watcher) = watch.as_mut() else { break };
                // Forgotten before looking, so a change made after the look still wakes.
                watcher.forget_pending();
                drop(current.take());
                let board = self.refreshed_board().await?;
                // A story this run gave up on (failed, waiting for a decision) is worth another
                // look once a person touched it, even before the wait began.
                let touched = self.touched_by_others(&board);
                if touched.is_empty() {
                    drop(board);
                    let woke = tokio::select! {
                        _ = watcher.changed() => true,
                        _ = &mut interrupt => false,
                    };
                    self.watch = watch;
                    if !woke {
                        return Ok(self.interrupted().await);
                    }
                    continue;
                }
                self.watch = watch;
                self.parked.retain(|id| !touched.contains(id));
                self.parked_stamps.retain(|id, _| !touched.contains(id));
                current = Some(board);
                continue;
            }
            let poll = self.turns.as_ref().map(|t| t.remote().poll_interval());
            tokio::select! {
                (story_id, turn) = next_turn(&mut self.turns), if !idle => {
                    self.settle_turn(&story_id, turn);
                    drop(current.take());
                }
                _ = tokio::time::sleep(poll.unwrap_or_default()), if waiting => {
                    if let Some(turns) = &self.turns {
                        if let Err(err) = turns.remote().pull().await {
                            self.wf.events.emit(RunEvent::Warning { story_id: None, message: told(&err) });
                        }
                    }
                    drop(current.take());
                }
                joined = self.tasks.join_next(), if !self.tasks.is_empty() => {
                    let Some(joined) = joined else { break };
                    let (action, result) = joined.map_err(|source| Error::Task { what: "an action task", source })?;
                    self.running.remove(&action.story_id);
                    self.settle(&action, result);
                    // Handed back, the board's stories move into the refresh instead of being copied.
                    drop(current.take());
                    let board = self.refreshed_board().await?;
                    let story_path = board
                        .get(&action.story_id)
                        .map(|s| s.path.clone())
                        .unwrap_or_default();
                    checkpoint.complete(&action, story_path);
                    checkpoint.save(self.wf.board_dir(), self.wf.board.content_hash())?;
                    current = Some(board);
                }
                signal = &mut interrupt => {
                    // Ctrl-C at an open gate prompt means "not now": that story waits for
                    // `decide`, and the run goes on. Another Ctrl-C stops the run.
                    let at_prompt = signal == Signal::Interrupt
                        && self.wf.terminal.as_ref().is_some_and(|t| t.interrupt_prompt());
                    if at_prompt {
                        interrupt = Box::pin(interrupted());
                        continue;
                    }
                    return Ok(self.interrupted().await);
                }
            }
        }
        if let Some(turns) = &mut self.turns {
            drop(current.take());
            turns.finish().await;
        }
        // The board at the end says who waits for a person, and whether work is left. The board
        // refreshed after the last action is that board, when nothing ran since: another stat of
        // every story (a third of a one-action run on a large board) would only catch a person's
        // edit made in the last milliseconds.
        let board = match current {
            Some(board) => Some(board),
            None => self.refreshed_board().await.ok(),
        };
        Ok(self.conclude(board))
    }

    /// Ctrl-C or SIGTERM: the actions in flight are abandoned, the interrupted work put back,
    /// and the checkpoint kept for `run --continue`.
    pub(super) async fn interrupted(&mut self) -> ExitStatus {
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        if let Some(turns) = &mut self.turns {
            let _ = tokio::time::timeout(INTERRUPTED_PUSH, turns.finish()).await;
        }
        let (root, board_dir, config) = (
            self.wf.root.clone(),
            self.wf.board_dir().to_path_buf(),
            self.wf.config.clone(),
        );
        for message in workspace::recovery::recover_interrupted(&root, &board_dir, &config) {
            self.wf.events.emit(RunEvent::Warning {
                story_id: None,
                message,
            });
        }
        self.wf.events.emit(RunEvent::RunFinished {
            story_id: NoStory,
            actions: self.started,
            failed: self.failed,
            exit_code: ExitStatus::Interrupted.code(),
            message: "Interrupted; the checkpoint is kept: `agentic-sdlc run --continue` resumes"
                .into(),
            attention: Vec::new(),
        });
        ExitStatus::Interrupted
    }

    /// `run --watch` goes on waiting for work unless something stopped the run for good: an
    /// escalation, the run's budget, or `--max-actions`.
    pub(super) fn may_keep_watching(&self) -> bool {
        self.watch.is_some()
            && self.stop.is_none()
            && self.wf.spending.run_stop().is_none()
            && self
                .options
                .max_actions
                .is_none_or(|max| self.started < max)
    }

    /// The board as it is now: what the run wrote and what people edited since the last look
    /// are read again, the rest is kept ([`BoardStore::refresh`]).
    pub(super) async fn refreshed_board(&self) -> Result<Arc<Board>> {
        let store = Arc::clone(&self.wf.board);
        off_the_runtime(move || store.refresh()).await
    }

    pub(super) fn may_start_more(&self) -> bool {
        self.stop.is_none()
            && !self.server.is_lost()
            && self.wf.spending.run_stop().is_none()
            && (self.options.auto || self.started == 0)
            && self
                .options
                .max_actions
                .is_none_or(|max| self.started < max)
    }

    pub(super) fn start_actions(
        &mut self,
        board: &Board,
        checkpoint: &mut Checkpoint,
    ) -> Result<()> {
        let assessment = assess(board, Policy::from_config(&self.wf.config));
        for duplicate in &assessment.duplicate_ids {
            if self.duplicates_seen.insert(duplicate.id.clone()) {
                let paths: Vec<String> = duplicate
                    .paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect();
                self.wf.events.emit(RunEvent::Warning {
                    story_id: Some(duplicate.id.clone()),
                    message: format!(
                        "{} story files share the id {}: {}; neither is run until one gets a new id",
                        paths.len(),
                        duplicate.id,
                        paths.join(", ")
                    ),
                });
            }
        }
        let mut skip: HashSet<StoryId> = self.parked.clone();
        skip.extend(self.running.keys().cloned());
        let candidates: Vec<Action> = runnable(&assessment, &self.options, &skip)
            .cloned()
            .collect();
        if let Some(turns) = &mut self.turns {
            // A held story with nothing left to run here goes back to the other clones.
            let running = &self.running;
            turns.release_idle(|id| {
                running.contains_key(id) || candidates.iter().any(|a| a.story_id == id)
            });
        }
        for action in candidates {
            let claiming = self.turns.as_ref().map_or(0, Turns::claims_in_flight);
            if self.running.len() + claiming >= self.concurrency || !self.may_start_more() {
                break;
            }
            if self.running.contains_key(&action.story_id) {
                continue;
            }
            if let Some(turns) = &mut self.turns {
                if !turns.admit(&self.wf, &action.story_id) {
                    continue;
                }
            }
            // The whole story: its records say what a rework will be and what it spent so far.
            // This read is the one the action's writes build on (the store keeps the file).
            let story = self.wf.board.locate(&action.story_id).ok();
            let story_path = story.as_ref().map(|s| s.path.clone()).unwrap_or_default();
            let rework = match action.action_type {
                crate::workflow::assessor::ActionType::Rework => {
                    story.as_ref().and_then(|s| rework::preview(&self.wf, s))
                }
                _ => None,
            };
            let spent = story
                .as_ref()
                .and_then(|s| s.usage().ok())
                .unwrap_or_default();
            self.wf.spending.begin_action(&action.story_id, spent);
            checkpoint.start(&action, story_path);
            checkpoint.save(self.wf.board_dir(), self.wf.board.content_hash())?;
            self.started += 1;
            self.running.insert(action.story_id.clone(), action.clone());
            let detail = rework.as_ref().map(|p| {
                format!(
                    "iteration {}/{}, target: {}",
                    p.iteration, p.limit, p.target
                )
            });
            self.wf.events.emit(RunEvent::ActionStarted {
                story_id: action.story_id.clone(),
                action: ActionRef::from(&action),
                title: story
                    .as_ref()
                    .map(|s| s.meta.title.clone())
                    .unwrap_or_default(),
                detail,
            });
            if let Some(plan) = rework {
                self.wf.events.emit(RunEvent::ReworkStarted {
                    story_id: action.story_id.clone(),
                    slug: action.slug.clone(),
                    iteration: plan.iteration,
                    limit: plan.limit,
                    target: plan.target,
                });
            }
            let wf = Arc::clone(&self.wf);
            let remote = self.turns.as_ref().map(|turns| Arc::clone(turns.remote()));
            self.tasks.spawn(async move {
                let result = actions::execute(&wf, &action, remote.as_deref()).await;
                (action, result)
            });
        }
        Ok(())
    }

    /// Whether the run, with nothing left to start, waits for stories other clones hold: they
    /// may finish (and unblock stories that depend on them) or lapse (and be taken over).
    pub(super) async fn waits_on_other_clones(&self) -> Result<bool> {
        let Some(turns) = &self.turns else {
            return Ok(false);
        };
        if !self.options.auto || !self.may_start_more() {
            return Ok(false);
        }
        let board = self.refreshed_board().await?;
        Ok(turns.waits_for_others(&board, &self.parked, self.options.story.as_deref()))
    }

    /// The parked stories whose file someone other than this run changed since the run last
    /// wrote it (or, for a file the run never wrote, since it was parked).
    pub(super) fn touched_by_others(&mut self, board: &Board) -> HashSet<StoryId> {
        for (id, stamp) in stamps(board, &self.parked) {
            self.parked_stamps.entry(id).or_insert(stamp);
        }
        let touched: HashSet<StoryId> = self
            .parked
            .iter()
            .filter(|id| {
                let Some(story) = board.get(id) else {
                    return true;
                };
                let now = std::fs::read(&story.path).ok();
                let digest = now.as_deref().map(crate::own_writes::digest);
                if digest.is_some() && self.retried_for.get(*id) == digest.as_ref() {
                    return false;
                }
                match crate::own_writes::changed_since_own_write(&story.path, now.as_deref()) {
                    Some(changed) => changed,
                    None => {
                        let stamp = stamps(board, &HashSet::from([(*id).clone()]));
                        self.parked_stamps.get(*id) != stamp.get(*id)
                    }
                }
            })
            .cloned()
            .collect();
        for id in &touched {
            let content = board
                .get(id)
                .and_then(|story| std::fs::read(&story.path).ok());
            if let Some(content) = content {
                self.retried_for
                    .insert(id.clone(), crate::own_writes::digest(&content));
            }
        }
        touched
    }

    /// Takes in a claim or release that finished.
    pub(super) fn settle_turn(&mut self, story_id: &StoryId, turn: Turn) {
        let failed = match turn {
            Turn::Claimed(Ok(Claimed::Won | Claimed::Elsewhere)) | Turn::Released(Ok(())) => return,
            Turn::Claimed(Err(err)) => format!("could not claim {story_id}: {err}"),
            Turn::Released(Err(err)) => format!("could not release {story_id}: {err}"),
        };
        // The remote is not answering as it should: the story is left for a later run.
        self.failed += 1;
        self.parked.insert(StoryId::from(story_id));
        self.wf.events.emit(RunEvent::Warning {
            story_id: Some(StoryId::from(story_id)),
            message: failed,
        });
    }
}
