//! What goes into the history the model reads next, and into the transcript, turn by turn.

use serde_json::Value;

use super::calls;
use crate::agents::llm::{ChatMessage, ChatReply};
use crate::agents::transcript::Transcript;
use crate::protocol::{RequestedCall, TranscriptEntry};

/// One message with what the edits did and what the check found: a history of two user
/// messages in a row breaks some servers' chat templates.
pub(super) fn with_results(messages: &mut Vec<ChatMessage>, feedback: String) {
    let made = match messages.pop() {
        Some(ChatMessage::User(made)) => made,
        other => {
            messages.extend(other);
            String::new()
        }
    };
    messages.push(ChatMessage::User(format!("{made}\n\n{feedback}")));
}

/// The reply as a plain assistant message, for a history that goes on after it.
pub(super) fn reply_as_text(reply: &ChatReply) -> ChatMessage {
    ChatMessage::Assistant {
        content: reply.content.clone(),
        tool_calls: Vec::new(),
    }
}

/// Records a request: its new messages, how many it sends in all, and the tools it offers.
pub(super) fn record_request(
    transcript: &Transcript,
    turn: u32,
    new: &[ChatMessage],
    total: usize,
    tools: &[Value],
) {
    transcript.entry(TranscriptEntry::Request {
        turn,
        message_count: total,
        messages: new.iter().map(ChatMessage::to_json).collect(),
        tools: tools
            .iter()
            .filter_map(calls::tool_name)
            .map(str::to_string)
            .collect(),
    });
}

/// Records a reply as it came.
pub(super) fn record_response(transcript: &Transcript, turn: u32, reply: &ChatReply) {
    transcript.entry(TranscriptEntry::Response {
        turn,
        content: reply.content.clone(),
        tool_calls: reply
            .tool_calls
            .iter()
            .map(|call| RequestedCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect(),
        usage: reply.usage,
        finish_reason: reply.finish_reason.clone(),
    });
}
