//! What ends a reply before the model does: a loop ([`super::repetition`]), and for the shape
//! of answer a request expects ([`ReplyShape`]), a copy of its prompt ([`super::echo`]) or a
//! second round of its files ([`super::rounds`]). A streamed reply is stopped as it arrives; a
//! reply that came whole is cut the same way.

use super::echo::{EchoWatch, ECHO_FINISH, ECHO_SPAN};
use super::messages::ChatReply;
use super::repetition::MIN_SPAN;
use super::ReplyShape;

/// Why a reply is stopped before its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// It fell into a loop, or ran to the deadline: it ends as cut off at the cap.
    Loop,
    /// It copies its prompt back: it ends as [`ECHO_FINISH`].
    Echo,
    /// It started again a file it already wrote: it ends as cut off at the cap, which is what
    /// it was heading for.
    Round,
}

impl Cut {
    /// The finish reason the reply ends with.
    pub(crate) fn finish_reason(self) -> &'static str {
        match self {
            Cut::Loop | Cut::Round => "length",
            Cut::Echo => ECHO_FINISH,
        }
    }

    /// What the log says when a streamed reply is stopped so.
    pub(crate) fn warning(self) -> String {
        match self {
            Cut::Loop => format!(
                "the model repeated itself for {MIN_SPAN}+ characters; its reply was stopped \
                 there and counts as cut off"
            ),
            Cut::Echo => format!(
                "the model copied its prompt back for {ECHO_SPAN}+ characters; its reply was \
                 stopped there"
            ),
            Cut::Round => "the model started again a file it had already written in its reply; \
                           its reply was stopped there and counts as cut off"
                .to_string(),
        }
    }
}

/// What stops one request's reply.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stops {
    echo: EchoWatch,
    rounds: bool,
}

impl Stops {
    /// The stops for a reply of `shape` to a request whose user messages are `texts`.
    pub(crate) fn new<'a>(shape: ReplyShape, texts: impl IntoIterator<Item = &'a str>) -> Self {
        Stops {
            echo: EchoWatch::new(texts, shape),
            rounds: shape == ReplyShape::Files,
        }
    }

    /// Why `text`, a reply so far, is to be stopped, if it is.
    pub(crate) fn cut(&self, text: &str) -> Option<Cut> {
        if super::repetition::loops(text) {
            Some(Cut::Loop)
        } else if self.echo.echoed(text) {
            Some(Cut::Echo)
        } else if self.rounds && super::rounds::second_round(text).is_some() {
            Some(Cut::Round)
        } else {
            None
        }
    }

    /// `reply` without what a stop found: a copy of the prompt, or a second round of files
    /// in a reply cut off, from where it starts. The copy is no part of the answer, and what
    /// it holds (a file the prompt shows, a call the prompt describes) must not be taken as
    /// the agent's; the second round would only write the first one's files again, or half of
    /// them.
    pub(crate) fn trimmed(&self, mut reply: ChatReply) -> ChatReply {
        let content = reply.content.as_deref().unwrap_or_default();
        let cut_off = reply.finish_reason.as_deref() == Some("length");
        if let Some(at) = self.echo.echo_start(content) {
            reply.content = Some(content[..at].to_string());
            reply.finish_reason = Some(ECHO_FINISH.to_string());
        } else if let Some(at) =
            super::rounds::second_round(content).filter(|_| self.rounds && cut_off)
        {
            reply.content = Some(content[..at].to_string());
        }
        reply
    }
}
