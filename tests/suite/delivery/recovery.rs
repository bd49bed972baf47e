//! A run killed in the middle of an action: the next run commits the agent's leftover work on
//! the story's branch and checks the user's branch out again (docs/design.md §12).

use std::time::{Duration, Instant};

use serde_json::json;

use super::{marker, Repo};
use crate::suite::fake_llm::Reply;

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill_hard(child: &mut std::process::Child) {
    // SIGKILL: nothing of the tool gets to clean up.
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test]
async fn a_crash_mid_implement_is_recovered_by_the_next_run() {
    let repo = Repo::new().await;
    let story = repo.story("Half done", &[]);
    repo.run(&["run", "--auto", "--story", &story.id, "--max-actions", "3"])
        .success();
    // The agent writes a file, then runs a long command: the tool is killed during it.
    repo.fake.push_for(
        "implement",
        &marker(&story),
        Reply::tool(
            "write_file",
            json!({"path": "wip.txt", "content": "half\n"}),
        ),
    );
    repo.fake.push_for(
        "implement",
        &marker(&story),
        Reply::tool(
            "run_command",
            json!({"command": "sleep 30", "timeout_seconds": 60}),
        ),
    );
    let mut child = repo
        .env
        .spawn_with_llm(&repo.fake, &["run", "--story", &story.id]);
    let wip = repo.env.root().join("wip.txt");
    wait_for("the agent's first write", || wip.exists());
    wait_for("the long command", || {
        repo.fake.requests_for("implement").len() >= 2
    });
    std::thread::sleep(Duration::from_millis(300));
    kill_hard(&mut child);
    assert_eq!(
        repo.head_branch(),
        story.branch(),
        "killed on the story branch"
    );
    assert!(!repo.dirty().is_empty());

    let next = repo.run(&["run", "--dry-run"]);
    next.success();
    // A dry run writes nothing; a real run puts things back before anything else.
    assert_eq!(repo.head_branch(), story.branch());
    let out = repo.run(&["run", "--story", &story.id, "--step", "review"]);
    out.stderr_has("committed the work an interrupted run left on")
        .stderr_has("checked out main again");

    assert_eq!(repo.head_branch(), "main");
    assert!(repo.dirty().is_empty(), "{}", repo.dirty());
    assert!(
        !wip.exists(),
        "the story's work is not on the user's branch"
    );
    assert_eq!(
        repo.show(&story.branch(), "wip.txt").as_deref(),
        Some("half")
    );
    assert_eq!(repo.show("main", "wip.txt"), None);
    // The story kept its state: it was never implemented, so it stays where it was.
    assert_eq!(repo.column(&story), "ready");
    assert_eq!(repo.details(&story)["implementation_complete"], false);
}

#[tokio::test]
async fn a_kill_while_the_merge_is_tested_leaves_main_at_its_old_tip() {
    let repo = Repo::new().await;
    // Outside the repository, or the run would see it as work left in the tree.
    let signals = tempfile::tempdir().unwrap();
    let started = signals.path().join("tests-started");
    repo.configure(json!({
        "review": {
            // Slow only on the integrated tree, which holds the teammate's file.
            "testCommand": format!("if [ -f teammate.txt ]; then touch {}; sleep 30; fi", started.display())
        },
        "phases": {"acceptance": {"enabled": false}},
        // The box lets the test command write there, to say it started.
        "tools": {"writableRoots": [signals.path()]}
    }));
    let story = repo.story("Killed in tests", &[]);
    repo.implement_writes(&story, &[("story.txt", "story\n")]);
    repo.run(&["run", "--auto", "--story", &story.id, "--max-actions", "5"])
        .success();
    repo.env.write("teammate.txt", "teammate\n");
    repo.git(&["add", "teammate.txt"]);
    repo.git(&["commit", "--quiet", "-m", "Teammate"]);
    let main_before = repo.git(&["rev-parse", "main"]);

    let mut child = repo
        .env
        .spawn_with_llm(&repo.fake, &["run", "--story", &story.id]);
    wait_for("the test command on the merge", || started.exists());
    kill_hard(&mut child);
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);

    // Without the slow test, the next run puts the checkout back and merges.
    std::fs::remove_file(&started).unwrap();
    repo.configure(json!({"review": {"testCommand": null}}));
    let out = repo.run(&["run", "--auto", "--story", &story.id]);
    out.success();
    assert_eq!(repo.column(&story), "done", "{}", out.stderr);
    assert_eq!(repo.head_branch(), "main");
    assert_eq!(repo.show("main", "story.txt").as_deref(), Some("story"));
    assert_eq!(
        repo.show("main", "teammate.txt").as_deref(),
        Some("teammate")
    );
}
