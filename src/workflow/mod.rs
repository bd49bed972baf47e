//! The life cycle: what to do next, and doing it.

pub mod assessor;
pub mod decision;
