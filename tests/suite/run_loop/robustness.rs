//! A run that dies, is interrupted, or shares the board with a person (docs/design.md §11).

use std::time::{Duration, Instant};

use super::{columns, front_json, requests_about, wait_until};
use crate::suite::common::{finish, TestEnv};
use crate::suite::fake_llm::FakeLlm;

fn signal(child: &std::process::Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    // SAFETY: kill(2) with a pid we spawned and have not reaped yet; it touches no memory.
    let sent = unsafe { libc::kill(pid, signal) };
    assert_eq!(sent, 0, "kill({pid}, {signal}) failed");
}

/// A pseudo-random number from the clock, printed with a failure so it can be reproduced.
fn clock_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    u64::from(nanos).wrapping_mul(6_364_136_223_846_793_005) >> 33
}

#[tokio::test]
async fn a_killed_run_leaves_a_board_a_new_run_finishes() {
    // Two stories take 14 requests, the first story's seven before the second's. Each round
    // waits for a later request to reach the server, then kills after a random few
    // milliseconds: while the model thinks, while its answer is written, or while the next
    // action starts. The last round stops at the second story's implement, so that the run is
    // still working when the kill comes.
    const DELAY_MS: u64 = 40;
    let seed = clock_seed();
    for (round, after_request) in [1_usize, 3, 5, 8, 11].into_iter().enumerate() {
        let jitter = seed.wrapping_add(round as u64 * 7_919) % (DELAY_MS + 10);
        let context = format!(
            "round {round}: killed {jitter} ms after request {after_request} (seed {seed})"
        );
        let env = TestEnv::init();
        let slow = FakeLlm::start_with_delay(Some(Duration::from_millis(DELAY_MS))).await;
        env.add("Add a rate limiter", &["--priority", "10"]);
        env.add("Export to CSV", &["--priority", "20"]);

        let child = env.spawn_with_llm(&slow, &["run", "--auto"]);
        wait_until(&context, Duration::from_secs(30), || {
            slow.requests().len() >= after_request
        });
        std::thread::sleep(Duration::from_millis(jitter));
        signal(&child, libc::SIGKILL);
        let killed = finish(child);
        assert_eq!(killed.code, -1, "{context}: the run ended before the kill");

        let valid = env.run(&["validate"]);
        assert_eq!(valid.code, 0, "{context}: {valid:?}");
        let fresh = FakeLlm::start().await;
        let rerun = env.run_with_llm(&fresh, &["run", "--auto"]);
        assert_eq!(rerun.code, 0, "{context}: {rerun:?}");
        let board = columns(&env);
        assert_eq!(board.len(), 2, "{context}");
        for (column, slug) in board {
            assert_eq!(column, "done", "{context}: {slug}");
        }
        env.run(&["validate"]).success();
    }
}

#[tokio::test]
async fn ctrl_c_abandons_the_running_action_and_keeps_the_checkpoint() {
    let env = TestEnv::init();
    let slow = FakeLlm::start_with_delay(Some(Duration::from_millis(1_500))).await;
    let (id, slug, _) = env.add("Add a rate limiter", &[]);

    let child = env.spawn_with_llm(&slow, &["run", "--auto"]);
    wait_until("the research request", Duration::from_secs(20), || {
        slow.requests().len() == 2
    });
    let path = env.story_path(&slug);
    let before = env.read(&path);
    let interrupted_at = Instant::now();
    signal(&child, libc::SIGINT);
    let out = finish(child);
    out.code(130).stdout_has("--continue");
    assert!(
        interrupted_at.elapsed() < Duration::from_millis(1_400),
        "the running request is abandoned, not awaited"
    );

    // Research was abandoned whole: the story is exactly as refine left it.
    assert_eq!(env.story_path(&slug), path);
    assert_eq!(env.read(&path), before);
    assert_eq!(front_json(&env, &path)["research_complete"], false);
    env.run(&["validate"]).success();
    assert!(!env.board().join(".lock").exists());
    let state: serde_json::Value =
        serde_json::from_str(&env.read(env.board().join(".workflow-state.json")))
            .expect("the checkpoint is kept");
    assert_eq!(state["currentAction"]["type"], "research");
    assert_eq!(state["currentAction"]["storyId"], id.as_str());
    assert_eq!(state["completedActions"][0]["type"], "refine");

    let fresh = FakeLlm::start().await;
    env.run_with_llm(&fresh, &["run", "--continue"]).success();
    assert_eq!(fresh.roles()[0], "research");
    assert!(env.story_path(&slug).starts_with(env.board().join("done")));
}

#[tokio::test]
async fn a_hand_edit_made_while_a_run_works_is_kept() {
    let env = TestEnv::init();
    let slow = FakeLlm::start_with_delay(Some(Duration::from_millis(400))).await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);

    let child = env.spawn_with_llm(&slow, &["run", "--auto"]);
    wait_until("the research request", Duration::from_secs(20), || {
        slow.requests().len() == 2
    });
    // While research is with the model: a key of the person's own, a changed priority, and a
    // line in the summary refine wrote.
    let path = env.story_path(&slug);
    env.edit(&path, "priority: 10\n", "priority: 7\nteam: platform\n");
    env.edit(
        &path,
        "## Summary\nRefined summary.\n",
        "## Summary\nRefined summary.\nOnly for the public API, said Sam.\n",
    );
    finish(child).success();

    let path = env.story_path(&slug);
    assert!(path.starts_with(env.board().join("done")));
    let text = env.read(&path);
    assert!(text.contains("priority: 7\nteam: platform\n"), "{text}");
    assert!(
        text.contains("## Summary\nRefined summary.\nOnly for the public API, said Sam.\n"),
        "{text}"
    );
    let front = front_json(&env, &path);
    assert_eq!(front["research_complete"], true);
    // Seven agent calls; implement's takes two requests (the write, then its notes).
    assert_eq!(front["usage"]["requests"], 8);
    assert!(text.contains("## Research\nResearch findings"), "{text}");
}

#[tokio::test]
async fn a_story_broken_by_hand_during_a_run_is_named_and_left_alone() {
    let env = TestEnv::init();
    let slow = FakeLlm::start_with_delay(Some(Duration::from_millis(400))).await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);

    let child = env.spawn_with_llm(&slow, &["run", "--auto"]);
    wait_until("the research request", Duration::from_secs(20), || {
        slow.requests().len() == 2
    });
    let path = env.story_path(&slug);
    env.edit(&path, "priority: 10\n", "priority: [10\n");
    let broken = env.read(&path);
    let out = finish(child);
    // The failure names the file and line to fix, as every broken story does (docs/design.md §3).
    out.code(1)
        .stderr_has(&format!("{}:", path.display()))
        .stderr_has("agentic-sdlc validate");
    assert!(!out.stderr.contains("not found"), "{}", out.stderr);
    assert_eq!(
        env.read(&path),
        broken,
        "the run must not overwrite a file it cannot read"
    );
    assert_eq!(
        slow.requests().len(),
        2,
        "the broken story takes no further action"
    );
}

#[tokio::test]
async fn two_files_with_one_id_are_not_run_and_never_looped_on() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, twin, path) = env.add("Twin story", &["--priority", "10"]);
    let (_, _, _) = env.add("Other story", &["--priority", "20"]);
    // One `cp` by hand (or by an agent, before the box) makes a second file with the same id.
    let copy = path.with_file_name(format!("{twin}-copy.md"));
    std::fs::copy(&path, &copy).unwrap();

    let out = env.run_with_llm(&llm, &["run", "--auto"]);

    assert!(
        requests_about(&llm, "Twin story").is_empty(),
        "a story with a shared id was run"
    );
    assert!(
        !requests_about(&llm, "Other story").is_empty(),
        "{}",
        out.stderr
    );
    let warnings = out.stderr.matches("share the id").count();
    assert_eq!(warnings, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("{twin}-copy.md")),
        "{}",
        out.stderr
    );
    // Both files are as they were.
    assert_eq!(std::fs::read(&path).unwrap(), std::fs::read(&copy).unwrap());
    let status = env.run(&["status"]);
    assert!(status.stdout.contains("same id"), "{}", status.stdout);
}

#[tokio::test]
async fn an_interrupted_action_keeps_the_spend_of_every_reply_it_got() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Add a rate limiter", &[]);
    // Research reads three times, then thinks for longer than anyone waits.
    for _ in 0..3 {
        llm.push(
            "research",
            crate::suite::fake_llm::Reply::tool("list_files", serde_json::json!({"path": "."})),
        );
    }
    llm.push(
        "research",
        crate::suite::fake_llm::Reply::delayed(
            Duration::from_secs(60),
            crate::suite::fake_llm::Reply::text("Too late."),
        ),
    );

    let child = env.spawn_with_llm(&llm, &["run", "--auto"]);
    wait_until(
        "the fourth research request",
        Duration::from_secs(30),
        || llm.requests_for("research").len() == 4,
    );
    signal(&child, libc::SIGINT);
    finish(child).code(130);

    // Refine's request and research's three answered ones, 100 + 20 tokens each: all in the
    // story, though the action that spent them never finished (docs/design.md §22).
    let usage = front_json(&env, env.story_path(&slug))["usage"].clone();
    assert_eq!(usage["requests"], 4, "{usage}");
    assert_eq!(usage["prompt_tokens"], 400, "{usage}");
    assert_eq!(usage["completion_tokens"], 80, "{usage}");
}
