//! Hints: what a person can do about an error, kept apart from what went wrong, as jj's
//! `command_error.rs` does (docs/design.md, "Errors and hints"). A leaf, so that every room's
//! error type can have one.

/// What a person can do about an error, kept apart from what went wrong (docs/design.md,
/// "Errors and hints"): the message says what happened, the hint what to do next. The terminal
/// prints the hint on a line of its own, and a story's `last_error` keeps both ([`told`]).
pub trait Hint {
    /// The next step for a person, if the error knows one.
    fn hint(&self) -> Option<String>;
}

/// An error as a person reads it: the message, then its hint on a line of its own.
pub fn told(err: &(impl std::fmt::Display + Hint + ?Sized)) -> String {
    match err.hint() {
        Some(hint) => message_and_hint(&err.to_string(), &hint),
        None => err.to_string(),
    }
}

/// A message and its hint in the words [`told`] uses, for a failure recorded as text (an
/// agent's, for `last_error`).
pub fn message_and_hint(message: &str, hint: &str) -> String {
    format!("{message}\nHint: {hint}")
}

/// An error of a room above this one that knows its hint (the library error's `Llm`).
pub trait HintedError: std::error::Error + Hint + Send + Sync {}

impl<T: std::error::Error + Hint + Send + Sync> HintedError for T {}
