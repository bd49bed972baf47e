//! `run --watch`: after the last action the run keeps watching the board, takes up stories a
//! person adds or unblocks, and stops on Ctrl-C like any run.

use std::io::Read;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::json;

use super::{column_of, details, terminate, within};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

/// Long enough for a whole life cycle against the fake model on a busy machine; the speed of
/// the pick-up itself is measured in benches/faces.rs.
const A_WHILE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn a_watching_run_takes_up_new_and_decided_stories_until_ctrl_c() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.configure_json(&json!({"phases": {"research": {"review": {"reviewer": "human"}}}}));
    let mut watching = env.spawn_with_llm(&llm, &["run", "--watch"]);

    // Nothing to do at first: the run waits instead of ending.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        watching.try_wait().unwrap().is_none(),
        "run --watch ended on an empty board"
    );

    let (_, slug, _) = env.add("Added while watching", &[]);
    let waiting = within(A_WHILE, || {
        let story = details(&env, &slug);
        (story["phase_reviews"]["research"]["decision"] == "PENDING").then_some(())
    });
    assert!(waiting.is_some(), "the new story was not taken up");

    env.run(&["decide", &slug, "APPROVE"]).success();
    let done = within(A_WHILE, || (column_of(&env, &slug) == "done").then_some(()));
    assert!(done.is_some(), "the decided story was not taken up again");
    assert!(watching.try_wait().unwrap().is_none(), "still watching");

    let code = terminate(&mut watching, Signal::SIGINT);
    let mut stdout = String::new();
    let _ = watching.stdout.take().unwrap().read_to_string(&mut stdout);
    assert_eq!(
        code,
        Some(130),
        "Ctrl-C ends a watching run as it ends any run"
    );
    assert!(
        env.board().join(".workflow-state.json").exists(),
        "the checkpoint is kept, as after any interrupted run"
    );
    assert!(
        !env.board().join(".lock").exists(),
        "the board is free again"
    );
}
