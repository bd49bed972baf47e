//! Before the first action a run checks what its actions need, and stops with one line and
//! exit 2, having sent no request to the model and changed no story.

use serde_json::json;

use super::{assert_one_line_refusal, board_files, make_repository};
use crate::suite::common::{outcome, TestEnv};
use crate::suite::fake_llm::FakeLlm;

/// A board with one story in backlog: a night's run would refine, research, plan, implement.
fn board_with_a_story() -> TestEnv {
    let env = TestEnv::init();
    env.add("Add a rate limiter", &[]);
    env
}

/// Runs `run --auto` against the fake, and checks that nothing was spent or written.
#[track_caller]
fn refused(env: &TestEnv, llm: &FakeLlm, needles: &[&str]) {
    let before = board_files(env);
    let out = env.run_with_llm(llm, &["run", "--auto"]);
    assert_one_line_refusal(&out, needles);
    assert!(llm.requests().is_empty(), "no request reached the model");
    assert!(board_files(env) == before, "no story file changed");
    let story = &env.status_json()["columns"]["backlog"][0];
    assert!(story["last_error"].is_null(), "{story}");
}

#[tokio::test]
async fn outside_a_repository_with_branches_per_story_the_run_stops() {
    let env = board_with_a_story();
    env.use_git_branches();
    let llm = FakeLlm::start().await;
    refused(
        &env,
        &llm,
        &["is not a git repository", "git.branchPerStory"],
    );
    // Stories without branches work in the tree as it is.
    env.run(&["config", "git.branchPerStory", "false"])
        .success();
    env.run_with_llm(&llm, &["run", "--auto"]).success();
}

#[tokio::test]
async fn a_repository_without_a_commit_stops_the_run() {
    let env = board_with_a_story();
    make_repository(&env, false);
    let llm = FakeLlm::start().await;
    refused(&env, &llm, &["has no commit yet", "git commit"]);
}

#[tokio::test]
async fn a_tracked_change_stops_the_run_and_untracked_files_do_not() {
    let env = board_with_a_story();
    make_repository(&env, true);
    let llm = FakeLlm::start().await;
    env.write("notes.txt", "an untracked file is no obstacle\n");
    env.write("src/lib.rs", "pub fn base() {} // work in progress\n");
    refused(
        &env,
        &llm,
        &["uncommitted changes", "src/lib.rs", "git.worktrees"],
    );
    assert_eq!(
        env.read("src/lib.rs"),
        "pub fn base() {} // work in progress\n",
        "the person's work is left alone"
    );

    // With worktrees, implement never touches the person's checkout.
    env.configure_json(&json!({"git": {"worktrees": true}}));
    env.run_with_llm(&llm, &["run", "--auto"]).success();
    assert!(!llm.requests().is_empty());
}

#[tokio::test]
async fn a_server_that_does_not_answer_stops_the_run() {
    let env = board_with_a_story();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{closed}/v1");
    let before = board_files(&env);
    let out = outcome(
        env.cmd(&["run", "--auto"])
            .env("OPENAI_BASE_URL", &url)
            .timeout(std::time::Duration::from_secs(60)),
    );
    assert_one_line_refusal(&out, &["does not answer", &url]);
    assert!(board_files(&env) == before);
}

#[tokio::test]
async fn a_server_still_loading_its_model_is_waited_for() {
    let env = board_with_a_story();
    let llm = FakeLlm::start().await;
    llm.load_model_for(Some(3)).await;
    llm.serve_models(&["gpt-4o-mini"], None).await;
    let out = env.run_with_llm(&llm, &["run"]);
    out.success();
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(said.contains("is loading its model; waiting"), "{said}");
    assert_eq!(
        llm.roles(),
        ["refine"],
        "the run went on once it had loaded"
    );
}

#[tokio::test]
async fn a_server_that_never_finishes_loading_stops_the_run_after_load_seconds() {
    let env = board_with_a_story();
    env.run(&["config", "llm.loadSeconds", "2"]).success();
    let llm = FakeLlm::start().await;
    llm.load_model_for(None).await;
    let before = board_files(&env);
    let out = env.run_with_llm(&llm, &["run", "--auto"]);
    out.code(2);
    // The wait is shown, then the refusal is the one error line.
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].contains("is loading its model; waiting"),
        "{}",
        out.stderr
    );
    let errors: Vec<&&str> = lines.iter().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    for needle in ["HTTP 503 (Loading model) after 2s", "llm.loadSeconds"] {
        assert!(
            errors[0].contains(needle),
            "{needle:?} missing in {}",
            errors[0]
        );
    }
    assert!(llm.requests().is_empty(), "no request reached the model");
    assert!(board_files(&env) == before, "no story file changed");
}

#[tokio::test]
async fn a_model_the_server_does_not_list_stops_the_run() {
    let env = board_with_a_story();
    let llm = FakeLlm::start().await;
    llm.serve_models(&["qwen2.5-coder", "llama3"], None).await;
    refused(
        &env,
        &llm,
        &[
            "does not serve the model `gpt-4o-mini`",
            "qwen2.5-coder, llama3",
            "AGENTIC_SDLC_MODEL",
        ],
    );
    // The model it lists passes.
    let out = outcome(
        env.cmd_with_llm(&llm, &["run"])
            .env("AGENTIC_SDLC_MODEL", "llama3"),
    );
    out.success();
    assert_eq!(llm.requests()[0].body["model"], "llama3");
}

#[tokio::test]
async fn a_refused_key_stops_the_run_without_showing_the_key() {
    let env = board_with_a_story();
    let llm = FakeLlm::start().await;
    llm.serve_models(&["gpt-4o-mini"], Some("right-key-1234"))
        .await;
    let before = board_files(&env);
    let out = outcome(
        env.cmd_with_llm(&llm, &["run", "--auto"])
            .env("OPENAI_API_KEY", "wrong-key-5678"),
    );
    assert_one_line_refusal(&out, &["refused the key in OPENAI_API_KEY", "401"]);
    assert!(!out.stderr.contains("wrong-key-5678"), "{}", out.stderr);
    assert!(llm.requests().is_empty());
    assert!(board_files(&env) == before);

    let out = outcome(
        env.cmd_with_llm(&llm, &["run"])
            .env("OPENAI_API_KEY", "right-key-1234"),
    );
    out.success();
}

#[tokio::test]
async fn a_test_command_that_cannot_start_stops_the_run() {
    let env = board_with_a_story();
    let llm = FakeLlm::start().await;
    env.run(&[
        "config",
        "review.testCommand",
        "no-such-test-runner-xyz --all",
    ])
    .success();
    refused(
        &env,
        &llm,
        &["review.testCommand", "no-such-test-runner-xyz"],
    );
    env.run(&["config", "review.testCommand", "if then fi ("])
        .success();
    refused(&env, &llm, &["not a valid shell command"]);
    // A program on PATH, with variables before it, passes.
    env.run(&["config", "review.testCommand", "CI=1 true"])
        .success();
    env.run_with_llm(&llm, &["run"]).success();
}

#[tokio::test]
async fn a_dry_run_and_a_run_with_nothing_to_do_check_nothing() {
    let env = board_with_a_story();
    env.use_git_branches();
    let unreachable = "http://127.0.0.1:9/v1";
    let dry = outcome(
        env.cmd(&["run", "--dry-run", "--auto"])
            .env("OPENAI_BASE_URL", unreachable),
    );
    dry.success();
    let empty = TestEnv::init();
    empty.use_git_branches();
    let nothing = outcome(
        empty
            .cmd(&["run", "--auto"])
            .env("OPENAI_BASE_URL", unreachable),
    );
    nothing.success().stdout_has("Nothing to do");
}

#[tokio::test]
async fn a_run_that_only_refines_needs_no_repository() {
    // One action without --auto: refine reads the story, so no branch is needed.
    let env = board_with_a_story();
    env.use_git_branches();
    let llm = FakeLlm::start().await;
    env.run_with_llm(&llm, &["run"]).success();
    assert_eq!(llm.roles(), ["refine"]);
}
