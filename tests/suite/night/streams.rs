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
    out.stdout_has("1 action(s) failed");
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
