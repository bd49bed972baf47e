//! Human gates on a real (pseudo) terminal: the prompt shows what is judged, never decides by
//! itself, and never holds up the other stories of the run.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::pty::{Pty, CTRL_C, CTRL_D};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

const PROMPT: &str = "decision> ";
const WAIT: Duration = Duration::from_secs(90);

/// The binary on a pty, as a person runs it in a terminal, talking to the fake.
fn on_terminal(env: &TestEnv, llm: &FakeLlm, args: &[&str]) -> Pty {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
    command
        .current_dir(env.root())
        .args(args)
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("OPENAI_BASE_URL", llm.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .env_remove("RUST_LOG");
    Pty::spawn(command)
}

/// A board whose research phase is judged by a person.
fn gated_board() -> TestEnv {
    let env = TestEnv::init();
    env.configure_json(&json!({"phases": {"research": {"review": {"reviewer": "human"}}}}));
    env
}

/// A story in ready: research, and its gate, come next.
fn ready(env: &TestEnv, title: &str) -> (String, String) {
    let (id, slug, _) = env.add(title, &["--priority", "10"]);
    env.run(&["move", &slug, "ready"]).success();
    (id, slug)
}

fn details(env: &TestEnv, slug: &str) -> Json {
    env.run_json(&["details", slug])["story"].clone()
}

fn column(env: &TestEnv, slug: &str) -> String {
    let path = env.story_path(slug);
    let folder = path.parent().and_then(Path::file_name).unwrap();
    folder.to_string_lossy().into_owned()
}

#[tokio::test]
async fn an_empty_line_ctrl_d_and_ctrl_c_leave_the_story_waiting() {
    for (key, named) in [
        (&b"\n"[..], "an empty answer"),
        (CTRL_D, "end of input"),
        (CTRL_C, "Ctrl-C"),
    ] {
        let env = gated_board();
        let llm = FakeLlm::start().await;
        llm.push("research", Reply::text("Findings to be judged."));
        let (id, slug) = ready(&env, "Judge my research");

        let mut pty = on_terminal(&env, &llm, &["run", "--auto"]);
        pty.expect(PROMPT, WAIT);
        // The prompt shows what is judged, by title and slug.
        let shown = pty.output();
        assert!(shown.contains("Findings to be judged."), "{shown}");
        assert!(shown.contains("Judge my research"), "{shown}");
        assert!(shown.contains(&slug), "{shown}");
        pty.send(key);
        let (code, output) = pty.finish(WAIT);

        assert_eq!(code, 3, "{named}: a story waits for a person\n{output}");
        assert!(
            output.contains(&format!("No decision ({named})")),
            "{output}"
        );
        assert!(
            output.contains(&format!("agentic-sdlc decide {slug} \"APPROVE\"")),
            "{output}"
        );
        let story = details(&env, &slug);
        assert_eq!(
            story["phase_reviews"]["research"]["decision"], "PENDING",
            "{named}: {story}"
        );
        assert_eq!(story["research_complete"], false, "{named}");
        assert!(
            story["phase_reviews"]["research"]["feedback"].is_null(),
            "nothing was approved by default: {story}"
        );
        assert!(env
            .board()
            .join(format!("logs/{id}/pending-research.md"))
            .exists());
        // The decision comes later, from `decide`.
        env.run(&["decide", &slug, "APPROVE"]).success();
        assert_eq!(details(&env, &slug)["research_complete"], true, "{named}");
    }
}

#[tokio::test]
async fn text_that_is_no_decision_is_asked_again() {
    let env = gated_board();
    let llm = FakeLlm::start().await;
    llm.set_default("research", Reply::text("Findings, take {call}."));
    let (_, slug) = ready(&env, "Judge again");
    let mut pty = on_terminal(&env, &llm, &["run", "--story", &slug]);
    pty.expect(PROMPT, WAIT);
    pty.send(b"looks fine to me\n");
    pty.expect("is not a decision", WAIT);
    pty.expect_times(PROMPT, 2, WAIT);
    pty.send(b"RETRY:\nname your sources\nand dates\n\n");
    // The retry's new output is asked about in turn; this time the person approves.
    pty.expect_times(PROMPT, 3, WAIT);
    pty.send(b"approve\n");
    let (code, output) = pty.finish(WAIT);
    assert_eq!(code, 0, "{output}");
    let research = llm.requests_for("research");
    assert_eq!(research.len(), 2);
    let feedback = research[1].user_message();
    assert!(
        feedback.contains("name your sources\nand dates"),
        "{feedback}"
    );
    assert_eq!(details(&env, &slug)["research_complete"], true);
}

#[tokio::test]
async fn a_second_story_keeps_running_while_the_prompt_is_open() {
    let env = gated_board();
    let llm = FakeLlm::start().await;
    let (_, judged) = ready(&env, "Judged story");
    // The other story starts with refine, which has no gate; it answers after the prompt is up.
    let (_, other, _) = env.add("Busy story", &["--priority", "20"]);
    llm.push_for(
        "refine",
        "Busy story",
        Reply::delayed(
            Duration::from_millis(1500),
            Reply::text("## Summary\nBusy.\n\n## Acceptance Criteria\n- [ ] It works"),
        ),
    );

    let mut pty = on_terminal(&env, &llm, &["run", "--auto", "--concurrency", "2"]);
    pty.expect(PROMPT, WAIT);
    // Nobody answers. The other story's refine ends and is written meanwhile...
    // Polled while the run moves it: a move has it in both columns for a moment.
    crate::suite::run_loop::wait_until("the other story's refine", WAIT, || {
        let paths = env.story_paths(&other);
        paths.len() == 1
            && paths[0]
                .parent()
                .is_some_and(|folder| folder.ends_with("ready"))
    });
    // ...and it goes on to its own research while the question is still open.
    crate::suite::run_loop::wait_until("the other story's research", WAIT, || {
        llm.requests_for("research")
            .iter()
            .any(|r| r.user_message().contains("Busy story"))
    });
    std::thread::sleep(Duration::from_millis(300));
    let during = pty.output();
    let after_prompt = &during[during.find(PROMPT).unwrap()..];
    assert!(
        !after_prompt.contains(&format!("refine {other}")),
        "nothing is drawn over the open question:\n{after_prompt}"
    );

    pty.send(b"APPROVE\n");
    // What the other story did while the question was open shows now; then its own gate asks.
    pty.expect(&format!("refine {other}"), WAIT);
    pty.expect_times(PROMPT, 2, WAIT);
    pty.send(b"\n");
    let (code, output) = pty.finish(WAIT);
    assert_eq!(code, 3, "{output}");
    assert_eq!(column(&env, &judged), "done", "{output}");
    assert_eq!(
        details(&env, &other)["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
}

#[tokio::test]
async fn no_input_never_prompts_even_on_a_terminal() {
    let env = gated_board();
    let llm = FakeLlm::start().await;
    let (_, slug) = ready(&env, "Unattended");
    let pty = on_terminal(&env, &llm, &["run", "--auto", "--no-input"]);
    let (code, output) = pty.finish(WAIT);
    assert_eq!(code, 3, "{output}");
    assert!(!output.contains(PROMPT), "{output}");
    assert_eq!(
        details(&env, &slug)["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
}

#[tokio::test]
async fn the_implement_gate_shows_the_change_itself() {
    let env = TestEnv::init();
    super::make_repository(&env, true);
    env.configure_json(&json!({"phases": {"implement": {"review": {"reviewer": "human"}}}}));
    let (_, slug) = ready(&env, "Change a file");
    let path = env.story_path(&slug);
    env.edit(&path, "research_complete: false", "research_complete: true");
    env.edit(&path, "plan_complete: false", "plan_complete: true");
    let llm = FakeLlm::start().await;
    llm.push(
        "implement",
        Reply::tool(
            "write_file",
            json!({"path": "src/shown.rs", "content": "pub fn shown_in_the_prompt() {}\n"}),
        ),
    )
    .push("implement", Reply::text("Added src/shown.rs."));

    let mut pty = on_terminal(&env, &llm, &["run", "--story", &slug]);
    pty.expect(PROMPT, WAIT);
    let shown = pty.output();
    assert!(shown.contains("Added src/shown.rs."), "the notes: {shown}");
    assert!(shown.contains("the change"), "{shown}");
    assert!(
        shown.contains("+pub fn shown_in_the_prompt() {}"),
        "the diff itself: {shown}"
    );
    pty.send(b"REJECT: not this way\n");
    let (code, output) = pty.finish(WAIT);
    assert_eq!(code, 3, "{output}");
    assert_eq!(column(&env, &slug), "blocked");
}

#[tokio::test]
async fn a_gate_left_waiting_is_offered_again_at_the_next_run_on_a_terminal() {
    let env = gated_board();
    let llm = FakeLlm::start().await;
    llm.push("research", Reply::text("Findings to be judged later."));
    let (_, slug) = ready(&env, "Judge me later");
    // The first run has no terminal: the gate waits for `decide`.
    let first = env.run_with_llm(&llm, &["run", "--auto"]);
    assert_eq!(first.code, 3, "{}", first.stderr);
    assert_eq!(
        details(&env, &slug)["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
    // The next run at a terminal asks about it before anything else, showing what waits.
    let mut pty = on_terminal(&env, &llm, &["run", "--auto"]);
    pty.expect(PROMPT, WAIT);
    let shown = pty.output();
    assert!(shown.contains("Findings to be judged later."), "{shown}");
    assert!(shown.contains(&slug), "{shown}");
    pty.send(b"RETRY: cite the sources\n");
    // The retry is carried out by this same run, whose research asks the person again.
    pty.expect_times(PROMPT, 2, WAIT);
    pty.send(b"APPROVE\n");
    let (code, output) = pty.finish(WAIT);
    assert_eq!(code, 0, "{output}");
    let story = details(&env, &slug);
    assert_eq!(story["research_complete"], true, "{story}");
    assert_eq!(story["phase_reviews"]["research"]["decided_by"], "terminal");
    let research = llm.requests_for("research");
    assert!(
        research
            .last()
            .unwrap()
            .user_message()
            .contains("cite the sources"),
        "the retry's feedback reached the model"
    );
}
