//! The agents that work on stories and what they share: the LLM client, the turn loop, the
//! transcripts, the confined tools and the reading of review verdicts.

pub mod conversation;
pub mod llm;
pub mod tools;
pub mod transcript;
pub mod verdict;
