//! The phase workflow: gates between a phase producing output and that output being committed.

pub mod decision;
