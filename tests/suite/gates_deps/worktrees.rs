//! `git.worktrees` (docs/design.md §4, §11): each story implements in a worktree of its own, on its
//! own branch, so implement actions run in parallel and the main working tree stays untouched.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::{backlog_story, column, configure, details, events, run_llm, Story};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

/// Runs git in `dir` with an identity of its own; returns (success, stdout).
fn git(dir: &Path, args: &[&str]) -> (bool, String) {
    let output = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=Test Person",
            "-c",
            "user.email=test@example.com",
        ])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("run git");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).to_string(),
    )
}

#[track_caller]
fn git_ok(dir: &Path, args: &[&str]) -> String {
    let (ok, stdout) = git(dir, args);
    assert!(ok, "git {args:?} failed");
    stdout
}

/// The implement agent of `story` writes `file` with `write_file`, then reports.
fn script_implement(fake: &FakeLlm, story: &Story, file: &str) {
    let marker = format!("# Story: {}", story.title);
    fake.push_for(
        "implement",
        &marker,
        Reply::tool(
            "write_file",
            json!({"path": file, "content": format!("{}\n", story.title)}),
        ),
    );
    fake.push_for("implement", &marker, Reply::text(format!("Wrote {file}.")));
}

#[tokio::test]
async fn each_story_commits_on_its_own_branch_in_its_own_worktree() {
    let fake = FakeLlm::start_with_delay(Some(Duration::from_millis(200))).await;
    let env = TestEnv::init();
    let root = env.root();
    git_ok(&root, &["init", "--quiet", "--initial-branch", "main"]);
    env.write("README.md", "# Demo\n");
    git_ok(&root, &["add", "README.md"]);
    git_ok(&root, &["commit", "--quiet", "-m", "initial"]);
    let initial = git_ok(&root, &["rev-parse", "HEAD"]);
    // Work left on its branch (`integrate: none`), so each branch shows only its own story.
    configure(
        &env,
        json!({"git": {"branchPerStory": true, "worktrees": true, "integrate": "none"}}),
    );
    let alpha = backlog_story(&env, "Alpha greeting", &[]);
    let bravo = backlog_story(&env, "Bravo farewell", &[]);
    script_implement(&fake, &alpha, "alpha.txt");
    script_implement(&fake, &bravo, "bravo.txt");

    let out = run_llm(
        &env,
        &fake,
        &["run", "--auto", "--concurrency", "2", "--json"],
    );
    out.success();

    for (story, file, other_file) in [
        (&alpha, "alpha.txt", "bravo.txt"),
        (&bravo, "bravo.txt", "alpha.txt"),
    ] {
        assert_eq!(column(&env, &story.slug), "done", "{}", out.stderr);
        let branch = format!("agentic-sdlc/{}", story.slug);
        assert_eq!(details(&env, &story.slug)["branch"], branch.as_str());
        assert_eq!(
            git_ok(&root, &["show", &format!("{branch}:{file}")]),
            format!("{}\n", story.title),
            "{file} is committed on {branch}"
        );
        assert!(
            !git(
                &root,
                &["cat-file", "-e", &format!("{branch}:{other_file}")]
            )
            .0,
            "{other_file} is not on {branch}"
        );
        assert!(
            !root.join(file).exists(),
            "{file} leaked into the main tree"
        );
    }

    // The main tree is untouched: same branch, same commit, nothing new in it.
    assert_eq!(git_ok(&root, &["rev-parse", "HEAD"]), initial);
    assert_eq!(
        git_ok(&root, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    let status = git_ok(&root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        !status.contains("alpha.txt") && !status.contains("bravo.txt"),
        "{status}"
    );

    // Worktrees are gone after move_to_done; only the main tree is left.
    let worktrees = git_ok(&root, &["worktree", "list", "--porcelain"]);
    let trees: Vec<&str> = worktrees
        .lines()
        .filter(|l| l.starts_with("worktree "))
        .collect();
    assert_eq!(trees.len(), 1, "{worktrees}");
    let leftover = std::fs::read_dir(env.path(".agentic-sdlc-worktrees"))
        .map(|dir| dir.count())
        .unwrap_or(0);
    assert_eq!(leftover, 0, "worktree folders left behind");

    // With a worktree each, the two implement actions ran at the same time.
    assert!(
        implements_overlapped(&events(&out)),
        "the implement actions ran one after the other"
    );
}

fn implements_overlapped(events: &[Json]) -> bool {
    let mut running = 0;
    for event in events {
        if event["action"]["type"] != "implement" {
            continue;
        }
        match event["event"].as_str() {
            Some("action_started") => {
                running += 1;
                if running > 1 {
                    return true;
                }
            }
            Some("action_completed" | "action_failed") => running -= 1,
            _ => {}
        }
    }
    false
}
