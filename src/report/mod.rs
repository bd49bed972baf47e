//! The morning report (docs/design.md §14): what one run did, story by story, read from its journal
//! and the board as it is now. Pure data here; `cli/report.rs` prints it, [`html`] draws it.

mod building;
pub mod html;
mod run_report;
pub mod transcript;

pub use building::{find_journal, read};
pub use run_report::*;
