//! The integration suite: one test binary (link time on a small machine), one module per area.

mod suite;
