//! Integration tests that drive the real `agentic-sdlc` binary in temporary folders.

mod board_cli;
pub mod common;
