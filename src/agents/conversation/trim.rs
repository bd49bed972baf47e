//! A conversation that outgrew the model's context window (docs/design.md §21): a local server
//! with a 16k context refuses the request, and the story failed on it (measured: implement's
//! 52 messages). The oldest turns go instead, the system prompt and the task stay: what the
//! model needs next is the task and its latest work and feedback, not its first attempts.

use crate::agents::llm::ChatMessage;

/// The system prompt and the task.
const HEAD: usize = 2;

/// Whether leaving turns out could make the conversation fit: there is more than the head and
/// the last exchange.
pub(super) fn can_leave_out(messages: &[ChatMessage]) -> bool {
    messages.len() > HEAD + 2
}

/// Leaves out the older half of the turns after the task, so that what is kept starts with an
/// answer of the model's (a tool result never loses its call). Returns how many messages went.
pub(super) fn leave_out_oldest(messages: &mut Vec<ChatMessage>) -> usize {
    if !can_leave_out(messages) {
        return 0;
    }
    let middle = messages.len() - HEAD;
    let mut start = HEAD + middle / 2;
    let is_answer = |message: &ChatMessage| matches!(message, ChatMessage::Assistant { .. });
    while start < messages.len() && !is_answer(&messages[start]) {
        start += 1;
    }
    if start >= messages.len() {
        start = HEAD + middle / 2;
        while start > HEAD && !is_answer(&messages[start]) {
            start -= 1;
        }
    }
    if start <= HEAD {
        return 0;
    }
    messages.drain(HEAD..start).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::llm::ToolCall;

    fn answer(text: &str) -> ChatMessage {
        ChatMessage::Assistant {
            content: Some(text.to_string()),
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn the_older_half_goes_and_what_stays_starts_with_an_answer() {
        let mut messages = vec![
            ChatMessage::System("sys".into()),
            ChatMessage::User("task".into()),
        ];
        for turn in 0..4 {
            messages.push(answer(&format!("answer {turn}")));
            messages.push(ChatMessage::User(format!("feedback {turn}")));
        }
        assert_eq!(leave_out_oldest(&mut messages), 4);
        assert_eq!(messages.len(), 6);
        assert_eq!(messages[1], ChatMessage::User("task".into()));
        assert_eq!(messages[2], answer("answer 2"));
    }

    #[test]
    fn a_tool_result_keeps_its_call_and_the_last_exchange_is_never_cut() {
        let call = ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{}".into(),
            }],
        };
        let result = |id: &str| ChatMessage::Tool {
            tool_call_id: id.into(),
            content: "text".into(),
        };
        let mut messages = vec![
            ChatMessage::System("sys".into()),
            ChatMessage::User("task".into()),
            answer("first"),
            ChatMessage::User("feedback".into()),
            call.clone(),
            result("c1"),
            result("c1"),
        ];
        assert_eq!(leave_out_oldest(&mut messages), 2);
        assert_eq!(messages[2], call);
        let mut short = messages[..4].to_vec();
        assert!(!can_leave_out(&short));
        assert_eq!(leave_out_oldest(&mut short), 0);
    }
}
