//! Processes (docs/design.md §13): nothing a command started survives it, the tool's death, or
//! Ctrl-C.

use serde_json::json;

use super::{implement_runs, wait_for_process};
use crate::suite::agents_e2e::Project;
use crate::suite::common::finish;
use crate::suite::fake_llm::Reply;
use crate::suite::process_probe::{marker, survivors};

#[tokio::test]
async fn a_child_that_calls_setsid_dies_with_its_command() {
    let p = Project::new().await;
    let story = p.planned("Run things");
    let marker = marker();
    // The command ends only once the daemon has its own session, so it cannot be killed with
    // the command's process group by luck.
    let command = format!(
        "setsid sh -c 'touch in-session; exec sleep {marker}' & (sleep {marker} &); \
         while [ ! -e in-session ]; do sleep 0.1; done; echo started"
    );
    implement_runs(&p, &command, "Started a daemon.");

    p.step(&story, "implement").success();

    assert_eq!(survivors(&marker), Vec::<String>::new());
}

/// Starts implement running `command` (with the test's unique marker in place of `{marker}`),
/// sends the tool `signal` once the command runs, and returns how the tool ended, whether the
/// command had started, and the marker to look for survivors by.
async fn signal_during(
    command: &str,
    signal: nix::sys::signal::Signal,
) -> (crate::suite::common::Outcome, bool, String) {
    let p = Project::new().await;
    let story = p.planned("Run things");
    let marker = marker();
    p.fake.push(
        "implement",
        Reply::tool(
            "run_command",
            json!({ "command": command.replace("{marker}", &marker) }),
        ),
    );
    let child = p.env.spawn_with_llm(
        &p.fake,
        &["run", "--story", &story.id, "--step", "implement"],
    );
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let started = wait_for_process(&marker);
    nix::sys::signal::kill(pid, signal).unwrap();
    (finish(child), started, marker)
}

#[tokio::test]
async fn commands_die_with_the_tool_even_on_kill_9() {
    let (_, started, marker) =
        signal_during("sleep {marker}", nix::sys::signal::Signal::SIGKILL).await;

    assert!(started, "the command never ran");
    assert_eq!(survivors(&marker), Vec::<String>::new());
}

#[tokio::test]
async fn ctrl_c_stops_a_running_command_at_once() {
    let (out, started, marker) = signal_during(
        "setsid sleep {marker} & sleep {marker}",
        nix::sys::signal::Signal::SIGINT,
    )
    .await;

    assert!(started, "the command never ran");
    out.code(130);
    assert_eq!(survivors(&marker), Vec::<String>::new());
}
