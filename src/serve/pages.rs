//! The pages, written as HTML by hand: a board page and a story page, each a frame around a
//! fragment that the page's script fetches again whenever the board changes. Everything that
//! comes from a story file, a journal or a transcript goes through `esc!`
//! ([`crate::report::html::escape_into`]).
//!
//! This file only declares the rooms: the frame every page shares and its small helpers
//! (`frame`), the board page (`board`, its cards in `card`), the story page (`story`), the forms
//! and search a person acts with (`tools`), icons and Markdown.

/// Appends escaped text; `esc!(out, a, b, …)` for several pieces.
macro_rules! esc {
    ($out:expr, $($text:expr),+ $(,)?) => {{
        $( $crate::report::html::escape_into($out, $text); )+
    }};
}

// After the macro, which every page uses.
pub(super) mod board;
mod card;
pub(super) mod frame;
mod icons;
mod markdown;
pub(super) mod story;
mod tools;
