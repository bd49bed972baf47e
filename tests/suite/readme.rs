//! The README's quick start, run as it is written, so that it cannot rot: the shell block after
//! the `quick start` marker, in an empty folder, with the binary on PATH and the scripted model
//! behind OPENAI_BASE_URL, as a reader who exported it would have it.

use std::process::Command;

use crate::suite::fake_llm::FakeLlm;

/// The shell lines of the README's quick start block.
fn quick_start() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let after_marker = readme
        .split_once("<!-- quick start:")
        .expect("README.md has a quick start marker")
        .1;
    let block = after_marker
        .split_once("```sh\n")
        .expect("a sh block after the marker")
        .1;
    block
        .split_once("```")
        .expect("the block ends")
        .0
        .to_string()
}

#[tokio::test]
async fn the_readme_quick_start_works_as_written() {
    let fake = FakeLlm::start().await;
    let folder = tempfile::tempdir().unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
    let path = crate::suite::common::path_with(bin.parent().unwrap());
    let script = quick_start();
    assert!(script.contains("agentic-sdlc run --auto"), "{script}");

    let output = Command::new("sh")
        .args(["-e", "-c", &script])
        .current_dir(folder.path())
        .env("PATH", path)
        .env("OPENAI_BASE_URL", fake.base_url())
        .env("HOME", folder.path())
        .env("NO_COLOR", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Reader")
        .env("GIT_AUTHOR_EMAIL", "reader@example.com")
        .env("GIT_COMMITTER_NAME", "Reader")
        .env("GIT_COMMITTER_EMAIL", "reader@example.com")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .output()
        .unwrap();

    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the quick start failed:\n{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    // The story went all the way: merged into the branch the reader was on.
    assert!(
        stdout.contains("Merge agentic-sdlc/add-a-greeting into"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("Add a greeting"), "{stdout}");
    assert!(!fake.requests_for("implement").is_empty());
}
