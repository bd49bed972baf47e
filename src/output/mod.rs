//! The one output sink: the library never prints directly, it goes through a [`Printer`].

mod printer;
mod progress;
mod theme;

pub use printer::{ColorChoice, Printer, Spinner, Verbosity};
pub use progress::{LiveArea, LiveLine};
pub use theme::Palette;
