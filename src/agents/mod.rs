//! The agents that work on stories, and how their answers are read.

pub mod verdict;
