//! The one output sink: the library never prints directly, it goes through a [`Printer`].

mod printer;
mod theme;

pub use printer::{ColorChoice, Printer, Spinner, Verbosity};
pub use theme::Palette;
