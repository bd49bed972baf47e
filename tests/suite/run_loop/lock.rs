//! One run per board (docs/design.md §11): a second run exits at once naming the holder; a stale
//! lock is taken over.

use std::io::Write;
use std::time::Duration;

use super::{front_json, wait_until};
use crate::suite::common::{finish, TestEnv};
use crate::suite::fake_llm::FakeLlm;

#[tokio::test]
async fn a_second_run_is_refused_while_the_lock_is_held() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, path) = env.add("Add a rate limiter", &[]);
    let before = env.read(&path);

    // Held the way a run holds it: an OS lock on the file, with the holder's pid inside.
    let lock_path = env.board().join(".lock");
    let mut lock = std::fs::File::create(&lock_path).unwrap();
    lock.try_lock().expect("lock the board");
    writeln!(lock, "4242").unwrap();

    for args in [
        &["run"][..],
        &["run", "--auto", "--json"],
        &["run", "--continue"],
    ] {
        let out = env.run_with_llm(&llm, args);
        out.code(1).stdout_empty().stderr_has("pid 4242");
        assert!(out.stderr.contains(".lock"), "{}", out.stderr);
    }
    assert!(llm.requests().is_empty());
    assert_eq!(env.read(env.story_path(&slug)), before);

    // Released, the next run goes ahead.
    drop(lock);
    env.run_with_llm(&llm, &["run"]).success();
    assert_eq!(llm.roles(), ["refine"]);
}

#[tokio::test]
async fn a_second_run_is_refused_while_a_real_run_works() {
    let env = TestEnv::init();
    let llm = FakeLlm::start_with_delay(Some(Duration::from_millis(400))).await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);

    let first = env.spawn_with_llm(&llm, &["run", "--auto"]);
    let pid = first.id().to_string();
    let lock_path = env.board().join(".lock");
    wait_until(
        "the first run to take the lock",
        Duration::from_secs(10),
        || std::fs::read_to_string(&lock_path).is_ok_and(|text| text.trim() == pid),
    );
    let second = env.run_with_llm(&llm, &["run", "--auto"]);
    second.code(1).stderr_has(&format!("pid {pid}"));

    finish(first).success();
    assert!(env.story_path(&slug).starts_with(env.board().join("done")));
    assert_eq!(llm.calls().len(), 7, "only the first run asked the model");
    assert!(!lock_path.exists(), "the lock is released at the end");
}

#[tokio::test]
async fn a_stale_lock_is_taken_over() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);
    // A run killed without a chance to clean up: the file stays, with a pid no process has.
    let lock_path = env.board().join(".lock");
    std::fs::write(&lock_path, "999999999\n").unwrap();

    env.run_with_llm(&llm, &["run", "--auto"]).success();
    let path = env.story_path(&slug);
    assert!(path.starts_with(env.board().join("done")));
    assert_eq!(front_json(&env, &path)["status"], "done");
    assert!(!lock_path.exists());
}
