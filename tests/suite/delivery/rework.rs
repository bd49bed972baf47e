//! A conflict or red tests on the integrated tree is a rework back to implement, in the same
//! run, with the base untouched (docs/design.md §12).

use serde_json::json;

use super::{conversation, marker, Repo};
use crate::suite::fake_llm::Reply;

/// Runs the story up to and including its review: five actions from backlog.
fn up_to_review(repo: &Repo, story: &super::Story) {
    repo.run(&["run", "--auto", "--story", &story.id, "--max-actions", "5"])
        .success();
    assert_eq!(repo.details(story)["reviews_complete"], true);
}

#[tokio::test]
async fn a_teammates_conflicting_commit_leads_to_a_rework_that_makes_the_story_change_again_on_it()
{
    let repo = Repo::new().await;
    let story = repo.story("Rename base", &[]);
    repo.implement_writes(&story, &[("src/lib.rs", "pub fn from_story() {}\n")]);
    up_to_review(&repo, &story);
    // Meanwhile a teammate changes the same line on main.
    repo.env.write("src/lib.rs", "pub fn from_teammate() {}\n");
    repo.git(&["commit", "--quiet", "-am", "Teammate renames base"]);
    let teammate = repo.git(&["rev-parse", "main"]);
    let status = repo.env.run(&["status"]);
    status
        .success()
        .stdout_has(&format!("({}, 1 behind main)", story.branch()));
    // The rework's agent finds the teammate's file and writes the story's change into it.
    let resolved = "pub fn from_story() {}\npub fn from_teammate() {}\n";
    repo.fake.push_for(
        "implement",
        &marker(&story),
        Reply::tool("read_file", json!({"path": "src/lib.rs"})),
    );
    repo.implement_writes(&story, &[("src/lib.rs", resolved)]);

    let out = repo.run(&["run", "--auto"]);
    out.success();

    assert_eq!(repo.column(&story), "done", "{}", out.stderr);
    let details = repo.details(&story);
    assert_eq!(details["refinement_count"], 1);
    assert_eq!(details["refinement_iterations"][0]["result"], "success");
    let rejection = &details["review_history"][1];
    assert_eq!(rejection["decision"], "REJECTED");
    let feedback = rejection["feedback"].as_str().unwrap();
    assert!(feedback.contains("src/lib.rs"), "{feedback}");
    assert!(feedback.contains("Teammate renames base"), "{feedback}");

    // The rework's prompt names the file and the teammate's commit and shows the story's own
    // change as a diff; its tree held the base's version of the file, with no marker.
    let rework = &repo.requests_about("implement", &story)[2];
    let prompt = rework.user_message();
    assert!(prompt.contains("## Revision Instructions"), "{prompt}");
    assert!(prompt.contains("src/lib.rs") && prompt.contains("Teammate renames base"));
    assert!(
        prompt.contains("```diff\n") && prompt.contains("+pub fn from_story() {}"),
        "{prompt}"
    );
    let read_back = conversation(&repo.requests_about("implement", &story)[3]);
    assert!(!read_back.contains("<<<<<<<"), "{read_back}");
    assert!(
        read_back.contains("pub fn from_teammate() {}"),
        "{read_back}"
    );

    // Main holds both sides, on top of the teammate's commit, and no commit has markers.
    assert_eq!(
        repo.show("main", "src/lib.rs").as_deref(),
        Some(resolved.trim())
    );
    assert!(repo.commits("main").contains(&teammate));
    for commit in repo.commits("main") {
        let (found, _, _) = repo.try_git(&["grep", "-q", "<<<<<<<", &commit]);
        assert!(!found, "conflict markers in {commit}");
    }
    assert_eq!(repo.head_branch(), "main");
    assert!(repo.dirty().is_empty(), "{}", repo.dirty());
}

#[tokio::test]
async fn lines_a_teammate_and_the_story_both_add_at_one_place_are_joined_without_a_rework() {
    let repo = Repo::new().await;
    let story = repo.story("Add a story function", &[]);
    let base = "pub fn base() {}\n";
    let story_side = format!("{base}\npub fn from_story() {{}}\n");
    repo.implement_writes(&story, &[("src/lib.rs", &story_side)]);
    up_to_review(&repo, &story);
    // Meanwhile a teammate adds a function at the same place (a drive, 2026-12-06: two
    // stories each adding a method at the end of one class).
    repo.env.write(
        "src/lib.rs",
        &format!("{base}\npub fn from_teammate() {{}}\n"),
    );
    repo.git(&["commit", "--quiet", "-am", "Teammate adds a function"]);
    let teammate = repo.git(&["rev-parse", "main"]);
    let implemented = repo.requests_about("implement", &story).len();

    let out = repo.run(&["run", "--auto"]);
    out.success();

    assert_eq!(repo.column(&story), "done", "{}", out.stderr);
    assert_eq!(
        repo.show("main", "src/lib.rs").as_deref(),
        Some("pub fn base() {}\n\npub fn from_teammate() {}\n\npub fn from_story() {}")
    );
    assert!(repo.commits("main").contains(&teammate));
    assert_eq!(
        repo.requests_about("implement", &story).len(),
        implemented,
        "no rework"
    );
}

#[tokio::test]
async fn two_parallel_stories_whose_combination_fails_the_tests_never_both_land() {
    let repo = Repo::new().await;
    repo.configure(json!({
        "git": {"worktrees": true},
        "concurrency": 2,
        "refinement": {"maxIterations": 1},
        "review": {"testCommand":
            "if [ -f a.txt ] && [ -f b.txt ]; then echo 'a.txt and b.txt clash'; exit 1; fi"},
        // The tests only at review and delivery, so the rework is judged by a review and the
        // breaker, not by implement's own test rounds.
        "implement": {"testRounds": 0},
        "phases": {"acceptance": {"enabled": false}}
    }));
    let alpha = repo.story("Alpha file", &[]);
    let bravo = repo.story("Bravo file", &[]);
    for (story, file) in [(&alpha, "a.txt"), (&bravo, "b.txt")] {
        repo.implement_writes(story, &[(file, "first\n")]);
        repo.implement_writes(story, &[(file, "second\n")]);
    }

    let out = repo.run(&["run", "--auto", "--concurrency", "2"]);

    // One lands; the other is sent back once, fails again, and the breaker stops it.
    out.code(3);
    let columns = [repo.column(&alpha), repo.column(&bravo)];
    assert!(
        columns.contains(&"done".to_string()) && columns.contains(&"blocked".to_string()),
        "{columns:?}\n{}",
        out.stderr
    );
    let blocked = if columns[0] == "blocked" {
        &alpha
    } else {
        &bravo
    };
    let details = repo.details(blocked);
    assert!(details["blocked_reason"]
        .as_str()
        .unwrap()
        .starts_with("Circuit breaker"));
    // The integration's rejection quotes the failing output of the merged tree.
    let history = details["review_history"].as_array().unwrap();
    let integration = history
        .iter()
        .find(|r| r["feedback"].as_str().unwrap().contains("latest work"))
        .unwrap_or_else(|| panic!("no integration rejection in {history:?}"));
    assert_eq!(integration["decision"], "REJECTED");
    let feedback = integration["feedback"].as_str().unwrap();
    assert!(feedback.contains("a.txt and b.txt clash"), "{feedback}");
    // No commit main ever pointed at holds both files.
    for commit in repo.commits("main") {
        let both = repo.show(&commit, "a.txt").is_some() && repo.show(&commit, "b.txt").is_some();
        assert!(!both, "{commit} holds both files");
    }
    // The blocked story's branch holds the merge it was tested on: a rework builds on it.
    let other = if std::ptr::eq(blocked, &alpha) {
        "b.txt"
    } else {
        "a.txt"
    };
    assert!(repo.show(&blocked.branch(), other).is_some());
}

#[tokio::test]
async fn a_test_command_that_hangs_on_the_merge_times_out_and_main_stays() {
    let repo = Repo::new().await;
    repo.configure(json!({"review": {
        "testCommand": "if [ -f teammate.txt ]; then sleep 60; fi",
        "testTimeoutSeconds": 2
    }, "phases": {"acceptance": {"enabled": false}}}));
    let story = repo.story("Slow merge", &[]);
    repo.implement_writes(&story, &[("story.txt", "story\n")]);
    up_to_review(&repo, &story);
    repo.env.write("teammate.txt", "teammate\n");
    repo.git(&["add", "teammate.txt"]);
    repo.git(&["commit", "--quiet", "-m", "Teammate adds a file"]);
    let main_before = repo.git(&["rev-parse", "main"]);

    let out = repo.run(&["run", "--story", &story.id]);

    out.success().stderr_has("not merged into main");
    assert_eq!(repo.git(&["rev-parse", "main"]), main_before);
    let latest = repo.details(&story)["review_history"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(latest["decision"], "REJECTED");
    assert!(
        latest["feedback"]
            .as_str()
            .unwrap()
            .contains("timed out after 2s"),
        "{latest}"
    );
    assert_eq!(repo.head_branch(), "main");
    let next = repo.env.run(&["run", "--dry-run"]);
    next.success().stdout_has("rework");
}
