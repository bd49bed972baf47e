//! The agents and what they share: the LLM client, the turn loop and the transcripts.

pub mod conversation;
pub mod llm;
pub mod transcript;
