//! Everything a person or a program reads: the library never prints directly, it goes through a
//! [`Printer`], and a run's events are drawn by a [`RunDisplay`].

pub mod log;
mod printer;
mod progress;
mod prompt;
mod run_display;
mod theme;
mod visible;

pub use printer::{ColorChoice, Printer, Verbosity};
pub use prompt::TerminalPrompter;
pub use run_display::RunDisplay;
pub use theme::Palette;
pub use visible::visible;
