//! Integration tests that drive the real `agentic-sdlc` binary in temporary folders.

mod agents_e2e;
mod board_cli;
pub mod common;
mod delivery;
mod faces;
#[allow(dead_code)] // Each test module scripts a different part of the fake server.
pub mod fake_llm;
mod gates_deps;
mod morning;
mod night;
pub mod process_probe;
mod readme;
mod real_llm;
mod remote;
mod run_loop;
mod safety;
mod story_safety;
