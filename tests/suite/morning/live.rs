//! Live lines (docs/design.md §14): on a terminal, `run --concurrency N` shows one line per running
//! story with its phase, elapsed time and tokens; elsewhere the output stays plain (see the budget
//! tests, which assert no escape codes on a pipe).

use std::process::Command;

use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

/// Runs `args` under `script`, which gives the tool a pseudo-terminal; `None` when `script` (util-linux) is not
/// installed.
fn on_a_terminal(env: &TestEnv, llm: &FakeLlm, args: &[&str]) -> Option<String> {
    let command = std::iter::once(env!("CARGO_BIN_EXE_agentic-sdlc"))
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let output = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .current_dir(env.root())
        .env("OPENAI_BASE_URL", llm.base_url())
        .env("NO_COLOR", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .output()
        .ok()?;
    assert!(output.status.success(), "{output:?}");
    Some(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[tokio::test]
async fn a_parallel_run_on_a_terminal_shows_one_line_per_running_story() {
    let env = TestEnv::init();
    let llm = FakeLlm::start_with_delay(Some(std::time::Duration::from_millis(600))).await;
    env.add("First story", &[]);
    env.add("Second story", &[]);
    let Some(screen) = on_a_terminal(
        &env,
        &llm,
        &["run", "--auto", "--step", "refine", "--concurrency", "2"],
    ) else {
        eprintln!("`script` is not installed; the terminal test is skipped");
        return;
    };
    for needed in [
        "Refining first-story (refine) · ",
        "Refining second-story (refine) · ",
        " tokens",
        // The log line lands above the live lines.
        "refine first-story: refined; moved to ready",
    ] {
        assert!(screen.contains(needed), "{needed:?} missing in\n{screen:?}");
    }
    // Two lines redrawn together: the cursor goes up one line between redraws.
    assert!(screen.contains("\u{1b}[1A"), "{screen:?}");
}
