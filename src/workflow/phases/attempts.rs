//! Implement's attempts. One attempt works in the story's tree, with the project's tests as its
//! check: when the model says it is done the tests run, and a failure goes back to it in the
//! same conversation (`implement.testRounds`). With `implement.attempts` above one, each attempt
//! works in a throwaway worktree of its own from the same commit; the one whose tests pass, then
//! the one with the smallest diff, is kept and its patch applied to the story's tree; the others
//! are deleted. A story with acceptance tests stops at the first attempt that passes them. Every
//! attempt's tokens count.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde_json::json;

use super::PhaseRun;
use crate::agents::WorkCheck;
use crate::agents::{AgentError, AgentOutput, PhaseRequest, Revision};
use crate::board::StoryId;
use crate::board::{Phase, Story};
use crate::vcs as git;
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::test_rounds::TestRounds;
use crate::workflow::tests_run::LastRun;

/// What an implement produced, with the last test run over its work and how many runs it took.
pub(super) struct Produced {
    pub(super) output: AgentOutput,
    pub(super) tests: Option<LastRun>,
}

/// One finished attempt in a worktree of its own.
struct Attempt {
    number: u32,
    produced: Result<Produced, AgentError>,
    patch: String,
}

impl Attempt {
    /// Lines the patch adds or removes.
    fn diff_lines(&self) -> usize {
        self.patch
            .lines()
            .filter(|line| {
                (line.starts_with('+') && !line.starts_with("+++"))
                    || (line.starts_with('-') && !line.starts_with("---"))
            })
            .count()
    }

    fn tests_passed(&self) -> bool {
        match &self.produced {
            Ok(produced) => produced.tests.as_ref().is_none_or(|last| last.run.passed()),
            Err(_) => false,
        }
    }

    /// Lower is better: an attempt that changed something (one with an empty diff never wins
    /// over one with a change), that worked, passed its tests, then the smallest diff.
    fn rank(&self) -> (bool, bool, bool, usize) {
        (
            self.patch.trim().is_empty(),
            self.produced.is_err(),
            !self.tests_passed(),
            self.diff_lines(),
        )
    }
}

impl PhaseRun<'_> {
    /// Runs implement's agent once, or `implement.attempts` times in worktrees of their own.
    pub(super) async fn implement(
        &self,
        story: &Story,
        revision: Option<&Revision>,
        variant: u32,
    ) -> Result<Produced, AgentError> {
        let attempts = self.wf.config.attempts();
        if attempts > 1 {
            self.commit_applied_attempt().await;
            match self.scratch_start().await {
                Ok(start) => {
                    return self
                        .best_of(attempts, &start, story, revision, variant)
                        .await
                }
                Err(why) => {
                    self.transcript.record(
                        "attempts_skipped",
                        json!({"attempts": attempts, "why": why}),
                    );
                    self.wf.events.emit(crate::workflow::events::RunEvent::Warning {
                        story_id: Some(StoryId::from(self.story_id)),
                        message: format!(
                            "implement.attempts is {attempts}, but this story makes one attempt: {why}"
                        ),
                    });
                }
            }
        }
        self.attempt(&self.work_dir, story, revision, variant).await
    }

    /// One attempt in `dir`, with the tests as its check when a test command is set.
    async fn attempt(
        &self,
        dir: &Path,
        story: &Story,
        revision: Option<&Revision>,
        variant: u32,
    ) -> Result<Produced, AgentError> {
        let check = TestRounds::new(self.wf, story, dir, self.transcript);
        if let Some(check) = &check {
            if let Some(first) = check.first_alone().await {
                return Ok(Produced {
                    output: AgentOutput {
                        text: first.notes(),
                        ..AgentOutput::default()
                    },
                    tests: check.last_run().await,
                });
            }
        }
        let request = PhaseRequest {
            phase: Phase::Implement,
            story,
            revision,
            work_dir: dir,
            transcript: self.transcript,
            check: check.as_ref().map(|check| check as &dyn WorkCheck),
            acceptance_path: None,
            variant,
        };
        let output = self.wf.agents.run_phase(request).await?;
        let tests = match &check {
            Some(check) => check.last_run().await,
            None => None,
        };
        if let Some(why) = tests.as_ref().and_then(|last| last.run.refusal()) {
            return Err(AgentError {
                usage: output.usage,
                ..AgentError::new(why)
            });
        }
        Ok(Produced { output, tests })
    }

    /// The commit attempts start from, when the story's tree allows worktrees: a git
    /// repository with branches, on a commit, with nothing uncommitted and no merge under way.
    async fn scratch_start(&self) -> Result<String, String> {
        if !crate::workflow::workspace::uses_branches(self.wf) {
            return Err("attempts need a git repository with a branch per story".to_string());
        }
        let dir = self.work_dir.clone();
        let own = self.wf.own_paths();
        off_the_runtime(move || {
            let ignore: Vec<&Path> = own.iter().map(PathBuf::as_path).collect();
            if git::operation_in_progress(&dir)?.is_some() {
                return Ok(Err("a merge is under way in the story's tree".to_string()));
            }
            if !git::dirty_paths(&dir, &ignore)?.is_empty() {
                return Ok(Err("the story's tree has uncommitted changes".to_string()));
            }
            Ok(git::head_commit(&dir)?
                .ok_or_else(|| "the story's branch has no commit".to_string()))
        })
        .await
        .unwrap_or_else(|err| Err(err.to_string()))
    }

    async fn best_of(
        &self,
        attempts: u32,
        start: &str,
        story: &Story,
        revision: Option<&Revision>,
        variant: u32,
    ) -> Result<Produced, AgentError> {
        let mut done: Vec<Attempt> = Vec::new();
        for number in 1..=attempts {
            self.transcript
                .record("attempt_start", json!({"attempt": number, "of": attempts}));
            let dir = self
                .wf
                .worktrees_dir()
                .join(format!("{}.attempt-{number}", story.slug));
            let attempt = match self.scratch(&dir, start).await {
                Err(why) => Attempt {
                    number,
                    produced: Err(AgentError::new(why)),
                    patch: String::new(),
                },
                Ok(()) => {
                    let produced = self
                        .attempt(&dir, story, revision, variant + number - 1)
                        .await;
                    let patch = self.patch_of(&dir, start).await;
                    Attempt {
                        number,
                        produced,
                        patch,
                    }
                }
            };
            self.drop_scratch(&dir).await;
            // With the story's own acceptance tests as the verifier, an attempt that changed
            // something and passes them is good enough: the others would only be smaller.
            let verified = !story.meta.acceptance_tests.is_empty()
                && attempt.tests_passed()
                && attempt.produced.is_ok()
                && !attempt.patch.trim().is_empty();
            done.push(attempt);
            if verified && number < attempts {
                self.transcript.record(
                    "attempts_stopped",
                    json!({"after": number, "of": attempts, "why": "its acceptance tests pass"}),
                );
                break;
            }
        }
        self.keep_best(done).await
    }

    /// Chooses the best attempt, applies its patch to the story's tree, and counts every
    /// attempt's tokens into what it returns.
    async fn keep_best(&self, mut done: Vec<Attempt>) -> Result<Produced, AgentError> {
        let mut spent = crate::board::records::Usage::default();
        for attempt in &done {
            spent.add(match &attempt.produced {
                Ok(produced) => &produced.output.usage,
                Err(err) => &err.usage,
            });
        }
        let summary: Vec<serde_json::Value> = done
            .iter()
            .map(|a| {
                json!({"attempt": a.number, "ok": a.produced.is_ok(),
                       "tests_passed": a.tests_passed(), "diff_lines": a.diff_lines()})
            })
            .collect();
        done.sort_by_key(Attempt::rank);
        let best = done.remove(0);
        self.transcript.record(
            "attempts",
            json!({"attempts": summary, "kept": best.number}),
        );
        let mut produced = match best.produced {
            Ok(produced) => produced,
            Err(mut err) => {
                err.usage = spent;
                return Err(err);
            }
        };
        produced.output.usage = spent;
        let (dir, patch) = (self.work_dir.clone(), best.patch);
        off_the_runtime(move || Ok(git::apply_patch(&dir, &patch)?))
            .await
            .map_err(|err| AgentError {
                usage: spent,
                ..AgentError::new(format!("could not apply the kept attempt's changes: {err}"))
            })?;
        self.applied_attempt.store(true, Ordering::Relaxed);
        Ok(produced)
    }

    /// Commits the attempt kept last time on the story's branch, when there is one: its output
    /// was refused or a gate asked again, and this try's attempts then build on it from a clean
    /// tree, as a single attempt would go on from its edits, instead of giving up attempts for
    /// a tree "with uncommitted changes" (docs/design.md §21, "Passing work is kept").
    async fn commit_applied_attempt(&self) {
        if !self.applied_attempt.swap(false, Ordering::Relaxed) {
            return;
        }
        let (dir, ignore) = (self.work_dir.clone(), self.ignore.clone());
        let message = format!(
            "agentic-sdlc: implement {}, the attempt kept before another try",
            self.story_id
        );
        let committed = off_the_runtime(move || {
            let ignore: Vec<&Path> = ignore.iter().map(PathBuf::as_path).collect();
            Ok(git::commit_all(&dir, &message, &ignore)?)
        })
        .await;
        match committed {
            Ok(_) => self.transcript.record(
                "attempt_committed",
                json!({"why": "another try of best-of-n"}),
            ),
            Err(err) => tracing::warn!("could not commit the kept attempt: {err}"),
        }
    }

    async fn scratch(&self, dir: &Path, start: &str) -> Result<(), String> {
        super::scratch::make(self.wf, dir, start)
            .await
            .map_err(|err| format!("{err} for the attempt"))
    }

    /// The attempt's changes as a patch; empty when there are none or they cannot be read.
    async fn patch_of(&self, dir: &Path, start: &str) -> String {
        let (dir, start, own) = (dir.to_path_buf(), start.to_string(), self.wf.own_paths());
        off_the_runtime(move || {
            let ignore: Vec<&Path> = own.iter().map(PathBuf::as_path).collect();
            Ok(git::patch_since(&dir, &start, &ignore)?)
        })
        .await
        .unwrap_or_default()
    }

    async fn drop_scratch(&self, dir: &Path) {
        super::scratch::drop(self.wf, dir).await;
    }
}
