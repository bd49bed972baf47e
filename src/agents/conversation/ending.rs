//! How a conversation ends: its answer taken from the last reply, and what follows when the
//! model sends the same calls again or says it is done while the work check fails.

use serde_json::json;

use super::calls::Reading;
use crate::agents::llm::{ChatReply, Usage};
use crate::agents::transcript::Transcript;
use crate::agents::WorkCheck;
use crate::protocol::TranscriptEntry;

/// What a conversation came to: its answer and what it spent.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The content of the last reply, the one without tool calls.
    pub final_text: String,
    /// Summed over every request made, including a retry without tools.
    pub usage: Usage,
    pub turns: u32,
    pub tool_calls: u32,
    /// The last reply was cut off by the reply cap (finish_reason `length`).
    pub truncated: bool,
    /// The last reply was asked for with a JSON schema.
    pub structured: bool,
    /// Why the server refused the tools, when it did and the conversation went on without.
    pub tools_refused: Option<String>,
    /// Times a failed work check was sent back to the model.
    pub check_rounds: u32,
}

/// The answer that ends a conversation on calls (its turns spent, or the same calls again)
/// without those calls: they were not run, and a phase that writes its answer into the story
/// would hand them to the next agent as an example to copy.
pub(super) fn leave_out_calls(reading: &Reading, transcript: &Transcript, done: &mut Conversation) {
    let answer = reading.answer_without_calls(&done.final_text);
    if answer != done.final_text {
        transcript.record(
            "calls_left_out",
            json!({"turn": done.turns, "kept_chars": answer.len()}),
        );
        done.final_text = answer;
    }
}

/// What follows the same calls sent again after their results were read.
pub(super) enum AfterRepeat {
    /// The work check failed, and a round is left: this is sent back.
    Feedback(String),
    /// The reply, calls left out, is the conversation's answer.
    Ended,
    /// The reply held nothing but reads made before, or, for an agent without a work check,
    /// nothing but calls: the model is asked once for its answer, without tools.
    AskForAnswer,
}

/// The model sent the same calls again after reading their results (`only_read_again`: reads
/// answered "already done", not failures). The work check may say what the failure messages
/// did not (a function still missing, an acceptance test red), and its rounds are bounded: its
/// feedback is sent back. Without it the reply ends the
/// conversation as its answer, which the phase's output check will judge (and a retry can then
/// ask differently).
///
/// Ending at once lost a story in a recorded run: the model wrote the fixed acceptance file
/// twice, both writes were refused, and the conversation ended before any test round could
/// say what was still red. A reply of nothing but reads made before is no answer at all: the
/// 1.5B model's research read the same file three times and ended on an empty answer, which
/// was refused and began again from nothing (3 of sawmill's 11 researches, 2026-12-07). It is
/// asked for its answer instead, as at the end of its turns.
pub(super) async fn after_repeat(
    check: Option<&dyn WorkCheck>,
    reply: ChatReply,
    max_turns: u32,
    reading: &Reading,
    only_read_again: bool,
    transcript: &Transcript,
    done: &mut Conversation,
) -> AfterRepeat {
    if let Some(feedback) = failed_check(check, &reply, max_turns, transcript, done).await {
        return AfterRepeat::Feedback(feedback);
    }
    let text = reply.content.as_deref().unwrap_or_default();
    // An agent without a work check (research, plan, review) needs its answer in words; one
    // whose failing call came back ended on an empty answer, which its phase refused
    // (sawmill, 2026-12-07: a read of a file that does not exist, twice).
    let needs_words = only_read_again || check.is_none();
    if needs_words && reading.answer_without_calls(text).trim().is_empty() {
        transcript.record(
            "repeated_calls",
            json!({"turn": done.turns, "action": "tools withdrawn; asked for the answer"}),
        );
        return AfterRepeat::AskForAnswer;
    }
    transcript.record(
        "repeated_calls",
        json!({"turn": done.turns, "action": "ended the conversation"}),
    );
    finish(reply, transcript, done);
    leave_out_calls(reading, transcript, done);
    AfterRepeat::Ended
}

/// Runs the work check once the model says it is done; a failure, while rounds are left, is
/// the feedback to send back.
pub(super) async fn failed_check(
    check: Option<&dyn WorkCheck>,
    reply: &ChatReply,
    max_turns: u32,
    transcript: &Transcript,
    done: &mut Conversation,
) -> Option<String> {
    let check = check?;
    // A reply cut off by the cap is no claim to be done: the check would judge half a change.
    if reply.finish_reason.as_deref() == Some("length") {
        return None;
    }
    let feedback = check.run().await?;
    let rounds_left = done.check_rounds < check.feedback_rounds();
    if !rounds_left || done.turns >= max_turns {
        return None;
    }
    done.check_rounds += 1;
    transcript.record(
        "check_feedback",
        json!({"round": done.check_rounds, "of": check.feedback_rounds()}),
    );
    Some(feedback)
}

pub(super) fn finish(reply: ChatReply, transcript: &Transcript, done: &mut Conversation) {
    done.truncated = reply.finish_reason.as_deref() == Some("length");
    done.final_text = reply
        .content
        .as_deref()
        .map(crate::agents::text_calls::without_template_markup)
        .unwrap_or_default();
    transcript.entry(TranscriptEntry::Done {
        turns: done.turns,
        tool_calls: done.tool_calls,
        usage: done.usage,
        truncated: done.truncated,
        structured: done.structured,
        check_rounds: done.check_rounds,
    });
}
