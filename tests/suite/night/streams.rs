//! Streams tell the truth: progress on stderr, the run's summary on stdout (so
//! `run --auto > night.log` keeps it), and `-q` hides progress but never an error.

use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

#[tokio::test]
async fn progress_goes_to_stderr_and_the_summary_to_stdout() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Whole night", &[]);
    let out = env.run_with_llm(&llm, &["run", "--auto"]);
    out.success();
    assert_eq!(out.stdout, "Done: 6 action(s) run\n", "the summary alone");
    assert!(
        out.stderr.contains(&format!("✓ refine {slug}")),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn quiet_hides_progress_but_never_an_error() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.push("refine", Reply::bad_request("the context is too small"));
    let (_, slug, _) = env.add("Failing story", &[]);

    let out = env.run_with_llm(&llm, &["run", "--auto", "-q"]);

    out.code(1);
    assert!(
        !out.stderr.contains('⟳'),
        "no progress with -q: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("✗ refine {slug}"))
            && out.stderr.contains("the context is too small"),
        "the error, even with -q: {}",
        out.stderr
    );
    // The summary names the story and the action that failed.
    out.stdout_has(&format!("1 action(s) failed: {slug} (refine);"));
}

#[tokio::test]
async fn quiet_shows_a_block_and_the_way_on() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.configure_json(&serde_json::json!({"phases": {"refine": {"review": {"reviewer": "ai"}}}}));
    llm.push("phase-review", Reply::text("REJECT: not a story"));
    let (_, slug, _) = env.add("Rejected story", &[]);

    let out = env.run_with_llm(&llm, &["run", "--auto", "-q"]);

    out.code(3);
    assert!(
        out.stderr.contains(&format!(
            "{slug} blocked: Phase refine rejected by review: not a story"
        )),
        "{}",
        out.stderr
    );
    out.stdout_has(&format!("agentic-sdlc unblock {slug}"))
        .stdout_has(&format!("read: agentic-sdlc details {slug}"));
}

#[tokio::test]
async fn a_night_logged_into_the_repository_keeps_the_log_out_of_the_stories() {
    let env = TestEnv::init();
    super::make_repository(&env, true);
    let llm = FakeLlm::start().await;
    env.write("notes.txt", "a person's untracked notes\n");
    let (_, slug, _) = env.add("Logged night", &[]);

    // `agentic-sdlc run --auto > night.log`, with the log inside the repository.
    let log = std::fs::File::create(env.path("night.log")).unwrap();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"))
        .current_dir(env.root())
        .args(["run", "--auto"])
        .env("NO_COLOR", "1")
        .env("OPENAI_BASE_URL", llm.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .stdout(log)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();

    assert_eq!(status.code(), Some(0), "{}", env.read("night.log"));
    assert_eq!(env.read("night.log"), "Done: 6 action(s) run\n");
    let story = env.run_json(&["details", &slug])["story"].clone();
    assert!(story["merged_commit"].is_string(), "{story}");
    let tracked = super::git(&env, &["ls-files"]);
    assert!(
        !tracked.contains("night.log") && !tracked.contains("notes.txt"),
        "{tracked}"
    );
    let branch = super::git(
        &env,
        &[
            "ls-tree",
            "-r",
            "--name-only",
            &format!("agentic-sdlc/{slug}"),
        ],
    );
    assert!(
        !branch.contains("night.log") && !branch.contains("notes.txt"),
        "{branch}"
    );
    assert_eq!(env.read("notes.txt"), "a person's untracked notes\n");
}

#[tokio::test]
async fn a_retry_is_a_warning_in_words_and_quiet_shows_none() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.push("refine", Reply::status(500));
    env.add("Dark mode", &[]);
    let out = env.run_with_llm(&llm, &["run", "--step", "refine"]);
    out.success();
    assert!(out.stderr.contains("retrying in"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("agentic_sdlc::"),
        "a warning in words, without a Rust module path: {}",
        out.stderr
    );
    llm.push("refine", Reply::status(500));
    env.add("Light mode", &[]);
    let quiet = env.run_with_llm(&llm, &["run", "--step", "refine", "-q"]);
    quiet.success();
    assert!(
        !quiet.stderr.contains("retrying"),
        "-q prints results and errors only: {}",
        quiet.stderr
    );
}
