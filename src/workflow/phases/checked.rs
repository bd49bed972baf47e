//! Fail closed on empty or broken phase output (docs/design.md §15): a phase's output is checked
//! before anything sees it; output that fails the check is produced once more with feedback naming
//! what was missing, and a second failure ends the action with the story as it was.

use std::path::PathBuf;

use super::{Outcome, PhaseRun};
use crate::agents::prompts::backticked;
use crate::agents::{AgentOutput, Revision};
use crate::board::records::Usage;
use crate::board::{Phase, Story, StoryType};
use crate::config::{Config, EditFormat, ToolProtocol};
use crate::error::Result;
use crate::exec::head_tail;
use crate::workflow::done_claims;
use crate::workflow::named_functions::{mentions_word, named_functions, undefined};
use crate::workflow::phase_output::{check_text, has_substance, mark_truncated, TreeFingerprint};
use crate::workflow::story_ops;
use crate::workflow::tests_run::notes_line;

/// The most of a refused output that its retry is shown.
const REFUSED_QUOTE: usize = 2_000;

impl PhaseRun<'_> {
    /// [`PhaseRun::produce`], checked. `Ok(Ok(text))` is output fit to show a gate and write
    /// into the story: a truncated one is marked as such, and an implement that needed no
    /// change says so.
    pub(super) async fn produce_checked(
        &mut self,
        phase: Phase,
        story: &Story,
        revision: Option<&Revision>,
    ) -> Result<Result<String, Outcome>> {
        let mut retry: Option<Revision> = None;
        if self.tree_before.is_none() {
            self.tree_before = self.fingerprint(phase).await;
        }
        loop {
            let output = match self
                .produce(
                    phase,
                    story,
                    retry.as_ref().or(revision),
                    // A retry after a refusal is compared with nothing: its "previous output"
                    // was refused, not kept.
                    retry.is_none(),
                )
                .await?
            {
                Ok(output) => output,
                Err(outcome) => return Ok(Err(outcome)),
            };
            let after = self.fingerprint(phase).await;
            let changed = match (&self.tree_before, &after) {
                (Some(before), Some(after)) => Some(before.changed(after)),
                (Some(_), None) => Some(true),
                (None, _) => None,
            };
            // Work that changed files is not thrown away for want of notes: the tool writes
            // them from the change (docs/design.md §21, "Passing work is kept").
            let mut output = output;
            if phase == Phase::Implement && changed == Some(true) && needs_notes(&output.text) {
                let files = match (&self.tree_before, &after) {
                    (Some(before), Some(after)) => before.changed_files(after),
                    _ => Vec::new(),
                };
                self.transcript.record(
                    "notes_written",
                    serde_json::json!({"files": files, "reason": "the model gave no implementation notes"}),
                );
                output.text = written_notes(&output.text, &files);
            }
            // The functions the output claimed done that are not: a refusal says so.
            let mut claimed_done = Vec::new();
            if matches!(phase, Phase::Research | Phase::Plan) {
                let (text, names) = self.without_done_claims(story, output.text).await;
                output.text = text;
                claimed_done = names;
            }
            if let Some(reason) = unchanged_rework(phase, story, revision, changed) {
                return Ok(Err(crate::workflow::no_progress::block(
                    self.wf,
                    self.story_id,
                    &reason,
                )?));
            }
            let writes_text = writes_in_text(&self.wf.config);
            let refused = self
                .refused_by_own_check(phase)
                .or_else(|| refusal(phase, story, &output, changed, writes_text))
                .map(|why| match claimed_done.is_empty() {
                    true => why,
                    false => format!(
                        "{why}; it said {} done, which the repository does not define yet: \
                         say what to add, where",
                        backticked(&claimed_done)
                    ),
                });
            let why = match refused {
                None => match self.red_tests(phase) {
                    // Red code is not reviewed: no reviewer tokens are spent on it.
                    Some(message) => {
                        return Ok(Err(story_ops::fail(
                            self.wf,
                            self.story_id,
                            message,
                            Usage::default(),
                        )?))
                    }
                    None => return Ok(Ok(self.accepted(phase, story, output, changed))),
                },
                Some(why) => why,
            };
            self.transcript.record(
                "output_refused",
                serde_json::json!({"phase": phase.name(), "reason": why, "retried": retry.is_none()}),
            );
            if retry.is_some()
                && matches!(phase, Phase::Research | Phase::Plan)
                && (output.tool_calls > 0
                    || !claimed_done.is_empty()
                    || has_substance(&output.text))
            {
                // A read-only phase that has read anything, or answered steps or code without
                // prose, completes with what it has instead of failing the story (docs/design.md
                // §21): the phases after it have the story and the map. Twice refused for a
                // plan without prose, the held-out gradebook's `weighted-average` was lost at 3.7
                // of its 10 minutes (2026-12-06). One that read nothing and answered nothing
                // fails (§15).
                self.transcript.record(
                    "read_only_fallback",
                    serde_json::json!({"phase": phase.name(), "refused": why}),
                );
                return Ok(Ok(read_only_fallback(phase, &why)));
            }
            if retry.is_some() {
                let message = format!("{phase} output refused after a retry: {why}");
                return Ok(Err(story_ops::fail(
                    self.wf,
                    self.story_id,
                    message,
                    Usage::default(),
                )?));
            }
            let earlier = revision.map(|r| format!("\n\n{}", r.feedback.trim()));
            retry = Some(Revision {
                attempt: revision.map_or(2, |r| r.attempt + 1),
                feedback: format!(
                    "Your previous output was refused: {why}.{}",
                    earlier.unwrap_or_default()
                ),
                previous_output: Some(output.text)
                    .filter(|text| !text.trim().is_empty())
                    .map(|text| head_tail(text.trim(), REFUSED_QUOTE)),
            });
        }
    }

    /// A research's or plan's `text` without the sentences that claim done a function the
    /// story names and the tree does not define yet ([`done_claims`]); said in the transcript.
    /// Returns the text and the names it claimed done.
    async fn without_done_claims(&self, story: &Story, text: String) -> (String, Vec<String>) {
        let named = named_functions(story);
        if named.is_empty() {
            return (text, Vec::new());
        }
        let dir = self.work_dir.clone();
        let skip: Vec<PathBuf> = self
            .wf
            .own_paths()
            .iter()
            .map(|own| dir.join(own))
            .collect();
        let missing = tokio::task::spawn_blocking(move || undefined(&dir, &named, &skip))
            .await
            .unwrap_or_default();
        let names: Vec<String> = missing.into_iter().map(|m| m.name).collect();
        let Some((kept, taken)) = done_claims::without_done_claims(&text, &names) else {
            return (text, Vec::new());
        };
        self.transcript.record(
            "done_claims_dropped",
            serde_json::json!({"missing": names, "sentences": taken}),
        );
        let claimed = names
            .into_iter()
            .filter(|name| taken.iter().any(|sentence| mentions_word(sentence, name)))
            .collect();
        (kept, claimed)
    }

    /// Why an implement whose tests still fail after its last round cannot be kept: the first
    /// failing line of the last run, for `last_error`.
    fn red_tests(&self, phase: Phase) -> Option<String> {
        let last = self.tests.as_ref().filter(|_| phase == Phase::Implement)?;
        let (run, runs) = (&last.run, last.runs);
        if run.passed() {
            return None;
        }
        Some(format!(
            "implement: the tests still fail after {runs} run(s) of `{}`: {}",
            run.command,
            run.first_failing_line()
        ))
    }

    /// The files of the working tree, for an implement to be checked against; `None` for the
    /// phases that change no file.
    async fn fingerprint(&self, phase: Phase) -> Option<TreeFingerprint> {
        if phase != Phase::Implement {
            return None;
        }
        let (dir, ignore) = (self.work_dir.clone(), self.ignore.clone());
        tokio::task::spawn_blocking(move || TreeFingerprint::take(&dir, &ignore))
            .await
            .ok()
    }

    fn accepted(
        &self,
        phase: Phase,
        story: &Story,
        output: AgentOutput,
        changed: Option<bool>,
    ) -> String {
        let mut text = output.text;
        if changed == Some(false) {
            text = format!(
                "{}\n\nNo files were changed: a {} may change none.",
                text.trim_end(),
                story.meta.story_type
            );
        }
        if let Some(last) = self.tests.as_ref().filter(|_| phase == Phase::Implement) {
            self.transcript.record(
                "tests_result",
                serde_json::json!({"passed": last.run.passed(), "runs": last.runs,
                                   "check_rounds": output.check_rounds}),
            );
            for note in &last.notes {
                text = format!("{}\n\n{note}", text.trim_end());
            }
            text = format!(
                "{}\n\n{}",
                text.trim_end(),
                notes_line(&last.run, last.runs)
            );
        }
        if output.truncated {
            let config = &self.wf.config;
            let cap = config.phases.reply_cap(phase, config.llm.max_tokens);
            self.transcript.record(
                "truncated",
                serde_json::json!({"phase": phase.name(), "max_tokens": cap, "action": "kept and marked"}),
            );
            text = mark_truncated(&text, phase, cap);
        }
        text
    }
}

/// What a research or plan whose answers were refused twice leaves in its section.
fn read_only_fallback(phase: Phase, why: &str) -> String {
    format!(
        "Written by agentic-sdlc: the {phase} agent's answer was refused twice ({why}), so this \
         section holds no {phase} of its own. The story, its acceptance criteria and the \
         repository map stand for it."
    )
}

/// Whether an implement's answer lacks the notes its check asks for.
fn needs_notes(text: &str) -> bool {
    check_text(Phase::Implement, text).is_err()
}

/// Implementation notes the tool writes for a model that changed files and said nothing of it:
/// what it answered (code, if anything) stays below them.
fn written_notes(text: &str, files: &[std::path::PathBuf]) -> String {
    let listed: Vec<String> = files
        .iter()
        .take(20)
        .map(|path| format!("`{}`", path.display()))
        .collect();
    let more = files.len().saturating_sub(listed.len());
    let mut notes = String::from("Written by agentic-sdlc: the model gave no notes. ");
    if listed.is_empty() {
        notes.push_str("Files were changed.");
    } else {
        notes.push_str(&format!("Changed: {}", listed.join(", ")));
        if more > 0 {
            notes.push_str(&format!(" and {more} more"));
        }
        notes.push('.');
    }
    let rest = text.trim();
    if rest.is_empty() {
        notes
    } else {
        format!("{notes}\n\n{rest}")
    }
}

/// The no-progress reason (docs/design.md §14) for an implement sent back by a review that
/// changed no file: the branch holds the code the review rejected, unchanged. Refusing it for
/// changing nothing, as a first implement is, and failing the story after a retry, told the
/// morning's reader about files, not about the review's blockers that still stand (measured:
/// a right `total_with_discount` the 1.5B model wrote again unchanged after an invented
/// blocker).
fn unchanged_rework(
    phase: Phase,
    story: &Story,
    revision: Option<&Revision>,
    changed: Option<bool>,
) -> Option<String> {
    let rework = revision.is_some() && story.meta.refinement_count > 0;
    if phase != Phase::Implement || changed != Some(false) || !rework {
        return None;
    }
    let blockers = story
        .review_history()
        .ok()
        .and_then(|history| history.last().map(|review| review.blockers.clone()))
        .unwrap_or_default();
    let mut reason = String::from(
        "No progress: the implement re-run after the review changed no file, so the code the review rejected stands",
    );
    if !blockers.is_empty() {
        let quoted: Vec<String> = blockers
            .iter()
            .map(|b| format!("\"{}\"", b.lines().next().unwrap_or("").trim()))
            .collect();
        reason.push_str(&format!(": {}", quoted.join("; ")));
    }
    Some(reason)
}

/// Whether implement is told to write its changes into its reply (whole files under their
/// paths, or calls as text) rather than to call tools the server sends.
fn writes_in_text(config: &Config) -> bool {
    config.llm.tool_protocol == ToolProtocol::Text || config.edit_format() == EditFormat::Whole
}

/// Why the output cannot be kept, or `None` when it can. `changed` is whether implement
/// changed a file (`None` for the other phases); `writes_text`, whether it was told to write
/// its changes into its reply.
fn refusal(
    phase: Phase,
    story: &Story,
    output: &AgentOutput,
    changed: Option<bool>,
    writes_text: bool,
) -> Option<String> {
    if let Err(why) = check_text(phase, &output.text) {
        return Some(why);
    }
    let may_change_nothing = matches!(story.meta.story_type, StoryType::Spike | StoryType::Chore);
    if changed != Some(false) || may_change_nothing {
        return None;
    }
    let cause = match (&output.tools_refused, output.tool_calls) {
        (Some(error), _) => format!(
            "the server refused the tools ({error}); implement needs function calling \
             (llama.cpp: start llama-server with --jinja)"
        ),
        // Told to write files into its reply, it wrote none: hints about tool calling would
        // send a person after the wrong setting.
        (None, 0) if writes_text => "the model's reply held no file under its path and no \
                                     tool call"
            .to_string(),
        (None, 0) => "the model made no tool call, neither a native one nor one written in its \
                      reply; implement changes files through write_file and edit_file \
                      (llama.cpp: start llama-server with --jinja; a server without tool \
                      calling: set llm.toolProtocol to \"text\")"
            .to_string(),
        (None, calls) => format!("the model made {calls} tool call(s) but none changed a file"),
    };
    Some(format!(
        "a {} must change at least one file, and no file changed: {cause}",
        story.meta.story_type
    ))
}
