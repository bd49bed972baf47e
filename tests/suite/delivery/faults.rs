//! Bad input and faults around delivery: each gets a message that names the branch or files
//! and says how to move on, and nothing is lost.

use serde_json::json;

use super::Repo;

/// A story refined, researched and planned: its next action is implement.
async fn planned(repo: &Repo, title: &str) -> super::Story {
    let story = repo.story(title, &[]);
    repo.run(&["run", "--auto", "--story", &story.id, "--max-actions", "3"])
        .success();
    story
}

#[tokio::test]
async fn a_detached_head_is_named_and_the_story_stays_in_its_column() {
    let repo = Repo::new().await;
    let story = planned(&repo, "Detached").await;
    repo.git(&["checkout", "--quiet", "--detach"]);
    let out = repo.run(&["run", "--story", &story.id]);
    out.code(1);
    let error = repo.last_error(&story);
    assert!(error.contains("HEAD is detached"), "{error}");
    assert!(error.contains("git.baseBranch"), "{error}");
    assert_eq!(repo.column(&story), "ready");
    let (exists, _, _) = repo.try_git(&["rev-parse", "--verify", &story.branch()]);
    assert!(!exists, "no branch was made");
}

#[tokio::test]
async fn a_base_branch_that_does_not_exist_is_named() {
    let repo = Repo::new().await;
    repo.configure(json!({"git": {"baseBranch": "release"}}));
    let story = planned(&repo, "No base").await;
    repo.run(&["run", "--story", &story.id]).code(1);
    let error = repo.last_error(&story);
    assert!(
        error.contains("the base branch `release` does not exist"),
        "{error}"
    );
    assert_eq!(repo.column(&story), "ready");
    assert_eq!(repo.head_branch(), "main");
}

#[tokio::test]
async fn a_merge_the_user_started_is_left_alone() {
    let repo = Repo::new().await;
    let story = planned(&repo, "Polite").await;
    repo.git(&["checkout", "--quiet", "-b", "side"]);
    repo.env.write("src/lib.rs", "pub fn side() {}\n");
    repo.git(&["commit", "--quiet", "-am", "side"]);
    repo.git(&["checkout", "--quiet", "main"]);
    repo.env.write("src/lib.rs", "pub fn mine() {}\n");
    repo.git(&["commit", "--quiet", "-am", "mine"]);
    let (merged, _, _) = repo.try_git(&["merge", "side"]);
    assert!(!merged, "the user's merge stops on a conflict");
    let conflicted = repo.env.read("src/lib.rs");

    // Found before the action starts: one line, and nothing written into the story.
    let out = repo.run(&["run", "--story", &story.id]);
    out.code(2);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("a merge is in progress"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("git merge --abort"), "{}", out.stderr);
    assert!(repo.details(&story)["last_error"].is_null());
    assert_eq!(repo.head_branch(), "main");
    assert_eq!(
        repo.env.read("src/lib.rs"),
        conflicted,
        "the user's merge is untouched"
    );
    let (merging, _, _) = repo.try_git(&["rev-parse", "--verify", "MERGE_HEAD"]);
    assert!(merging);
}

#[tokio::test]
async fn a_story_branch_deleted_by_hand_is_named_with_a_way_on() {
    let repo = Repo::new().await;
    let story = repo.story("Lost branch", &[]);
    repo.implement_writes(&story, &[("lost.txt", "lost\n")]);
    repo.run(&["run", "--auto", "--story", &story.id, "--max-actions", "5"])
        .success();
    repo.git(&["branch", "-D", &story.branch()]);
    let main_before = repo.git(&["rev-parse", "main"]);

    repo.run(&["run", "--story", &story.id]).code(1);

    let error = repo.last_error(&story);
    assert!(
        error.contains(&format!(
            "the story branch `{}` no longer exists",
            story.branch()
        )),
        "{error}"
    );
    assert!(error.contains("git reflog"), "{error}");
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);
    assert_ne!(repo.column(&story), "done");
}

#[tokio::test]
async fn uncommitted_changes_in_the_base_checkout_make_the_story_wait_and_are_kept() {
    let repo = Repo::new().await;
    repo.configure(json!({"git": {"worktrees": true}}));
    let story = repo.story("Touches lib", &[]);
    repo.implement_writes(&story, &[("src/lib.rs", "pub fn from_story() {}\n")]);
    repo.run(&["run", "--auto", "--story", &story.id, "--max-actions", "5"])
        .success();
    repo.env.write("src/lib.rs", "pub fn unsaved_edit() {}\n");
    let main_before = repo.git(&["rev-parse", "main"]);

    let out = repo.run(&["run", "--story", &story.id]);

    out.code(1);
    let error = repo.last_error(&story);
    assert!(error.contains("cannot advance main"), "{error}");
    assert!(error.contains("src/lib.rs"), "{error}");
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);
    assert_eq!(repo.env.read("src/lib.rs"), "pub fn unsaved_edit() {}\n");
    assert_eq!(repo.column(&story), "in-progress");

    // Once the edit is put away, the same story goes through.
    repo.git(&["stash"]);
    repo.run(&["run", "--story", &story.id]).success();
    assert_eq!(repo.column(&story), "done");
    assert_eq!(
        repo.env.read("src/lib.rs"),
        "pub fn from_story() {}\n",
        "the checkout moved with main"
    );
}
