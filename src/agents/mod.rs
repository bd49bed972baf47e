//! The agents that work on stories, the tools they use, and how their answers are read.

pub mod git;
pub mod tools;
pub mod verdict;
