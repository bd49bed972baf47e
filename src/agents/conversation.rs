//! The agent turn loop, independent of any one agent: send, run the tools the model asks for,
//! send the results back, until the model answers without calling a tool; then, when the work
//! has a check (the project's tests), run it and send a failure back, a bounded number of times.
//!
//! Tool calls come however the model makes them (`llm.toolProtocol`): native function calls,
//! or calls written in the reply's text ([`super::text_calls`]). Under `text` the tools are not
//! sent at all: the prompt describes them and each reply is read for one action.

mod answers;
mod calls;
mod done_reading;
mod ending;
mod history;
mod trim;

use answers::{answer_calls, record_error, Answered, AnsweredCalls};

use serde_json::{json, Value};

use super::llm::{
    ChatMessage, ChatReply, ChatRequest, Exchange, LlmClient, LlmError, ReplyShape, ResponseSchema,
    Sampling, Usage,
};
use super::transcript::Transcript;
use super::{ToolExecutor, WorkCheck};
pub use crate::config::ToolProtocol;
use calls::Reading;
use done_reading::DoneReading;
pub use ending::Conversation;
use ending::{after_repeat, failed_check, finish, leave_out_calls, AfterRepeat};
use history::{record_request, record_response, reply_as_text, with_results};

/// What every request of a conversation asks for besides its messages.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConverseOptions<'a> {
    /// The reply cap; `None` uses `llm.maxTokens`.
    pub max_tokens: Option<u32>,
    /// The JSON schema of a machine-read answer (docs/design.md §15).
    pub schema: Option<&'a ResponseSchema>,
    /// How tool calls travel.
    pub protocol: ToolProtocol,
    /// Temperature and seed, when a retry must not replay an earlier answer.
    pub sampling: Sampling,
    /// Under the text protocol, leave the tools out of the prompt: the agent's own prompt says
    /// how it acts (implement with `editFormat: "whole"`). Calls it writes still run.
    pub tools_untold: bool,
    /// The turn budget (`phases.<phase>.maxTurns`); `None` uses `llm.maxTurns`.
    pub max_turns: Option<u32>,
    /// The file a code fence without a path is written to, when the agent was told which
    /// file to write (acceptance's test file): a small model often leaves the path out.
    pub default_file: Option<&'a str>,
    /// Which copies of the prompt stop a reply: an agent answers with code, files or findings,
    /// never with the prompt's text (docs/design.md §15).
    pub shape: ReplyShape,
}

/// Runs a conversation to its end, with the prompt's reply cap and answer schema.
///
/// Every tool call of a reply is executed in order and answered by exactly one result: a `tool`
/// message with its id for native calls and for calls read from text under `auto` (the call is
/// put into the history as the native call it stands for), a user message under `text`. If the
/// server refuses `tools` on the first request, the request is repeated once without them.
/// A reading call identical to one already answered, with nothing changed since (no call that
/// writes ran in between), is not run again: its result says it is done and above, and the turn
/// counts (docs/design.md §21, "Every phase ends"). When `max_turns` requests have been sent and
/// the model still calls tools, those calls are not run: the tools are withdrawn and the model
/// is asked once for its answer, which ends the conversation.
///
/// The transcript gets each request (only the messages added since the previous request, so it
/// grows linearly; with the tool names), each response, each tool call with its result and the
/// protocol and form it came in, and each error. Headers and the key never reach it.
pub async fn converse_with(
    client: &LlmClient,
    prompt: Prompt<'_>,
    max_turns: u32,
    transcript: &Transcript,
) -> Result<Conversation, ConversationError> {
    let mut done = Conversation {
        final_text: String::new(),
        usage: Usage::default(),
        turns: 0,
        tool_calls: 0,
        truncated: false,
        structured: false,
        tools_refused: None,
        check_rounds: 0,
    };
    match run_turns(client, &prompt, max_turns, transcript, &mut done).await {
        Ok(()) => Ok(done),
        Err(error) => Err(ConversationError {
            error,
            usage: done.usage,
        }),
    }
}

/// A failed conversation still spent tokens; the story's usage counts them (docs/design.md §10).
#[derive(Debug)]
pub struct ConversationError {
    pub error: LlmError,
    pub usage: Usage,
}

impl std::fmt::Display for ConversationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

/// What a conversation starts from: the two prompts, the tools the model may call, what
/// checks the work when the model is done, and what every request asks for besides its
/// messages.
#[derive(Clone, Copy)]
pub struct Prompt<'a> {
    pub system: &'a str,
    pub user: &'a str,
    pub tools: Option<&'a dyn ToolExecutor>,
    pub check: Option<&'a dyn WorkCheck>,
    pub options: ConverseOptions<'a>,
}

/// Sends one request of turn `done.turns`: records it (the messages from `new_from` on, those
/// the transcript does not hold yet) and every attempt, and counts what each attempt spent.
async fn send(
    client: &LlmClient,
    messages: &[ChatMessage],
    new_from: usize,
    definitions: &[Value],
    options: ConverseOptions<'_>,
    transcript: &Transcript,
    done: &mut Conversation,
) -> Result<ChatReply, LlmError> {
    let turn = done.turns;
    record_request(
        transcript,
        turn,
        &messages[new_from..],
        messages.len(),
        definitions,
    );
    let request = ChatRequest {
        messages,
        tools: definitions,
        max_tokens: options.max_tokens,
        schema: options.schema,
        sampling: options.sampling,
        shape: options.shape,
    };
    let exchange: Exchange = client.exchange(&request).await;
    done.usage.add(&exchange.usage());
    for attempt in &exchange.attempts {
        let mut entry = attempt.to_json();
        entry["turn"] = json!(turn);
        transcript.record("attempt", entry);
    }
    done.structured = exchange.structured();
    exchange.result
}

async fn run_turns(
    client: &LlmClient,
    prompt: &Prompt<'_>,
    mut max_turns: u32,
    transcript: &Transcript,
    done: &mut Conversation,
) -> Result<(), LlmError> {
    let tools = prompt.tools;
    let options = prompt.options;
    let all_definitions = tools.map(|t| t.definitions()).unwrap_or_default();
    let reading = Reading::new(
        options.protocol,
        &all_definitions,
        options.default_file,
        options.tools_untold,
    );
    let system = match reading.text_only() && !options.tools_untold {
        true => format!(
            "{}\n\n{}",
            prompt.system,
            super::prompts::text_protocol(&all_definitions)
        ),
        false => prompt.system.to_string(),
    };
    let mut messages = vec![
        ChatMessage::System(system),
        ChatMessage::User(prompt.user.to_string()),
    ];
    let mut definitions = match reading.text_only() {
        true => Vec::new(),
        false => all_definitions.clone(),
    };
    let mut recorded = 0;
    let mut last_unreadable: Option<String> = None;
    let mut last_failed: Option<Answered> = None;
    let mut answered_since_change = AnsweredCalls::default();
    let mut done_reading = DoneReading::default();
    let mut told_unchanged = false;
    let last_call = LastCall {
        client,
        reading: &reading,
        options,
        transcript,
        tools,
    };
    loop {
        done.turns += 1;
        let sent = send(
            client,
            &messages,
            recorded,
            &definitions,
            options,
            transcript,
            done,
        )
        .await;
        let mut reply = match sent {
            Ok(reply) => reply,
            Err(err) => {
                // Two failures are worth one more request; it records the messages from here.
                let record_from = if done.turns == 1
                    && !definitions.is_empty()
                    && err.is_tools_unsupported()
                {
                    transcript.record(
                        "tools_unsupported",
                        json!({"error": err.to_string(), "action": "retrying once without tools"}),
                    );
                    tracing::warn!("the model refused tools; retrying without them: {err}");
                    done.tools_refused = Some(err.to_string());
                    definitions.clear();
                    // The retry is recorded whole: it is a request of its own, without tools.
                    Some(0)
                } else if matches!(err, LlmError::ContextLength(_))
                    && trim::can_leave_out(&messages)
                {
                    let left_out = trim::leave_out_oldest(&mut messages);
                    transcript.record(
                        "context_trimmed",
                        json!({"left_out": left_out, "kept": messages.len(), "error": err.to_string()}),
                    );
                    Some(messages.len())
                } else {
                    None
                };
                let Some(record_from) = record_from else {
                    record_error(transcript, &err);
                    return Err(err);
                };
                send(
                    client,
                    &messages,
                    record_from,
                    &definitions,
                    options,
                    transcript,
                    done,
                )
                .await
                .inspect_err(|err| record_error(transcript, err))?
            }
        };
        recorded = messages.len();
        record_response(transcript, done.turns, &reply);
        let mut turn = reading.read(&reply, !definitions.is_empty());
        if reading.steps_of_an_answer(&turn, reply.content.as_deref().unwrap_or_default()) {
            transcript.record("calls_as_steps", json!({"turn": done.turns}));
            finish(reply, transcript, done);
            done.final_text = reading.answer_without_calls(&done.final_text);
            return Ok(());
        }
        let edits = std::mem::take(&mut turn.edits);
        if turn.calls.is_empty() && !edits.is_empty() {
            let cut_off = reply.finish_reason.as_deref() == Some("length");
            let text = reply.content.as_deref().unwrap_or_default();
            if let Some(why) = calls::whole_files_cut_off(&edits, text).filter(|_| cut_off) {
                // Cut off after its files, not inside one: the change is checked as a finished
                // one (docs/design.md §15).
                transcript.record(why, json!({"turn": done.turns}));
                reply.finish_reason = Some("stop".to_string());
            }
            // The reply is the model's change: its edits are made, and unless one failed the
            // reply counts as its answer, checked like any other.
            turn.calls = edits;
            let last_turn = done.turns >= max_turns;
            let answered = answer_calls(
                tools,
                turn,
                &reply,
                &mut messages,
                transcript,
                &mut done.tool_calls,
                &mut answered_since_change,
            )
            .await?;
            if last_turn {
                // The budget's last reply was the change itself: it is made, and it is the
                // answer.
                finish(reply, transcript, done);
                return Ok(());
            }
            if answered.repeats(last_failed.as_ref()) {
                let check = prompt.check;
                let AfterRepeat::Feedback(feedback) =
                    after_repeat(check, reply, max_turns, &reading, false, transcript, done).await
                else {
                    return Ok(());
                };
                with_results(&mut messages, feedback);
                last_failed = None;
                continue;
            }
            if answered.any_failed() {
                last_failed = Some(answered);
                continue;
            }
            if prompt.check.is_some() && reply.finish_reason.as_deref() == Some("length") {
                // A change cut off at the cap is no claim to be done, and no end either: the
                // 1.5B model wrote a right `add`, then notes until its 4,096 tokens ran out, and
                // the action ended there on one test run.
                transcript.record("reply_cut_off", json!({"turn": done.turns}));
                with_results(&mut messages, super::prompts::change_cut_off().to_string());
                continue;
            }
            if let Some(feedback) =
                failed_check(prompt.check, &reply, max_turns, transcript, done).await
            {
                with_results(&mut messages, feedback);
                continue;
            }
            finish(reply, transcript, done);
            return Ok(());
        }
        turn.calls.extend(edits);
        if turn.calls.is_empty() {
            if let Some(unreadable) = &turn.unreadable {
                // The same unreadable reply again: more of the same feedback will not help. It
                // ends the conversation as its answer, and a retry can ask differently.
                let repeated = last_unreadable.as_deref() == reply.content.as_deref();
                if done.turns < max_turns && !repeated {
                    last_unreadable = reply.content.clone();
                    transcript.record(
                        "unreadable_call",
                        json!({"turn": done.turns, "why": unreadable}),
                    );
                    messages.push(reply_as_text(&reply));
                    messages.push(ChatMessage::User(super::prompts::unreadable_call(
                        unreadable,
                        reading.text_only(),
                    )));
                    continue;
                }
            }
            let cut_off = reply.finish_reason.as_deref() == Some("length");
            if prompt.check.is_some() && cut_off && !told_unchanged && done.turns < max_turns {
                // Cut off before it changed anything is no end of the work: the 1.5B model's
                // implement wrote notes of changes it never made, over and over until the loop
                // watch cut it off, and the action ended there on one test run (sawmill
                // `overlength-pieces`, 2026-12-07). Told once: a model that does it again
                // ends, and the workflow asks for what is missing alone.
                told_unchanged = true;
                transcript.record(
                    "reply_cut_off",
                    json!({"turn": done.turns, "changed": false}),
                );
                messages.push(reply_as_text(&reply));
                messages.push(ChatMessage::User(
                    super::prompts::cut_off_before_a_change().to_string(),
                ));
                continue;
            }
            if let Some(feedback) =
                failed_check(prompt.check, &reply, max_turns, transcript, done).await
            {
                messages.push(reply_as_text(&reply));
                messages.push(ChatMessage::User(feedback));
                continue;
            }
            finish(reply, transcript, done);
            if reading.text_only() {
                // Calls written where none is read (a fence opened at the end of a plan's
                // step) were not run either. Under `native`, text is only text.
                leave_out_calls(&reading, transcript, done);
            }
            return Ok(());
        }
        if done.turns >= max_turns {
            return last_call
                .ask(
                    &mut messages,
                    WhyNoTools::BudgetSpent(&reply),
                    done,
                    &mut answered_since_change,
                )
                .await;
        }
        let stutters = turn.stutters;
        let writes_refused = reading.writes_not_offered(&turn.calls);
        let answered = answer_calls(
            tools,
            turn,
            &reply,
            &mut messages,
            transcript,
            &mut done.tool_calls,
            &mut answered_since_change,
        )
        .await?;
        if answered.repeats(last_failed.as_ref()) {
            let check = prompt.check;
            let only_read_again = answered.only_already_done();
            match after_repeat(
                check,
                reply,
                max_turns,
                &reading,
                only_read_again,
                transcript,
                done,
            )
            .await
            {
                AfterRepeat::Feedback(feedback) => with_results(&mut messages, feedback),
                AfterRepeat::Ended => return Ok(()),
                AfterRepeat::AskForAnswer => {
                    return last_call
                        .ask(
                            &mut messages,
                            WhyNoTools::Repeated,
                            done,
                            &mut answered_since_change,
                        )
                        .await;
                }
            }
            last_failed = None;
            continue;
        }
        let reason =
            done_reading.after_turn(stutters, answered.only_already_done(), writes_refused);
        if let Some(reason @ done_reading::Reason::WritesRefused(_)) = &reason {
            // It knows what it would change, and another reply with tools was another write
            // of a whole file: three of them, about 90 s each, in one research of inventory's
            // `format-price` (2026-11-30). It answers now, without tools.
            reason.record(transcript, done.turns);
            return last_call
                .ask(
                    &mut messages,
                    WhyNoTools::WritesRefused,
                    done,
                    &mut answered_since_change,
                )
                .await;
        }
        if let Some(reason) = reason.filter(|_| max_turns > done.turns + 1) {
            // The model is done reading: its next reply is its budget's last.
            reason.record(transcript, done.turns);
            max_turns = done.turns + 1;
        }
        last_failed = Some(answered);
    }
}

/// Why the model is asked for its answer without tools.
enum WhyNoTools<'r> {
    /// The turn budget is spent, and this reply's calls are not run.
    BudgetSpent(&'r ChatReply),
    /// A read-only agent tried again to write; its calls were answered already.
    WritesRefused,
    /// The same calls again, and nothing else: they were answered already.
    Repeated,
}

/// What asking for the answer without tools needs besides the conversation so far.
struct LastCall<'a> {
    client: &'a LlmClient,
    reading: &'a Reading,
    options: ConverseOptions<'a>,
    transcript: &'a Transcript,
    tools: Option<&'a dyn ToolExecutor>,
}

impl LastCall<'_> {
    /// The model still calls tools, but its turns are spent or it is done reading: the tools
    /// are withdrawn, and it is asked once for its answer with what it has read. That reply
    /// ends the conversation, whatever it holds: its text is the answer (a read-only phase
    /// finishes with what it found), and a change it writes in full is made. Only a server
    /// that does not answer fails it.
    async fn ask(
        &self,
        messages: &mut Vec<ChatMessage>,
        why: WhyNoTools<'_>,
        done: &mut Conversation,
        answered: &mut AnsweredCalls,
    ) -> Result<(), LlmError> {
        let transcript = self.transcript;
        let recorded = match why {
            WhyNoTools::BudgetSpent(reply) => {
                transcript.record(
                    "turn_budget_spent",
                    json!({"turn": done.turns, "action": "tools withdrawn; asked for the answer"}),
                );
                messages.push(reply_as_text(reply));
                messages.push(ChatMessage::User(
                    super::prompts::turn_budget_spent(done.turns).to_string(),
                ));
                messages.len() - 2
            }
            WhyNoTools::WritesRefused => {
                with_results(
                    messages,
                    super::prompts::writes_refused_answer_now().to_string(),
                );
                messages.len() - 1
            }
            WhyNoTools::Repeated => {
                with_results(messages, super::prompts::repeats_answer_now().to_string());
                messages.len() - 1
            }
        };
        let mut last = self.send(messages, recorded, done).await?;
        if self.only_calls(&last) {
            // Told that no tool runs any more, the 1.5B model's research still answered with
            // one read call in 2 of sawmill's 11 researches (2026-12-07): with the call left out
            // the answer was empty, the phase refused it, and the research began again from
            // nothing. Once more, told plainly, it costs one short request.
            transcript.record(
                "answer_was_a_call",
                json!({"turn": done.turns, "action": "asked once more for the answer in words"}),
            );
            messages.push(reply_as_text(&last));
            messages.push(ChatMessage::User(
                super::prompts::call_instead_of_answer().to_string(),
            ));
            last = self.send(messages, messages.len() - 2, done).await?;
        }
        let mut turn = self.reading.read(&last, false);
        let edits = std::mem::take(&mut turn.edits);
        if !edits.is_empty() {
            turn.calls = edits;
            answer_calls(
                self.tools,
                turn,
                &last,
                messages,
                transcript,
                &mut done.tool_calls,
                answered,
            )
            .await?;
        }
        finish(last, transcript, done);
        leave_out_calls(self.reading, transcript, done);
        Ok(())
    }

    /// Sends `messages` without tools, the ones from `recorded` on new to the transcript.
    async fn send(
        &self,
        messages: &[ChatMessage],
        recorded: usize,
        done: &mut Conversation,
    ) -> Result<ChatReply, LlmError> {
        let transcript = self.transcript;
        done.turns += 1;
        let reply = send(
            self.client,
            messages,
            recorded,
            &[],
            self.options,
            transcript,
            done,
        )
        .await
        .inspect_err(|err| record_error(transcript, err))?;
        record_response(transcript, done.turns, &reply);
        Ok(reply)
    }

    /// Whether `reply` held calls and nothing else: with them left out, no answer is left.
    fn only_calls(&self, reply: &ChatReply) -> bool {
        let text = reply.content.as_deref().unwrap_or_default();
        !text.trim().is_empty() && self.reading.answer_without_calls(text).trim().is_empty()
    }
}

#[cfg(test)]
mod tests;
