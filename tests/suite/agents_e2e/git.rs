//! Implement in a git repository: the story's own branch, a commit of its work, a refusal to
//! touch a tree with the user's uncommitted changes, and pull requests without `gh`.

use serde_json::json;

use super::Project;
use crate::suite::common::outcome;
use crate::suite::fake_llm::Reply;

fn write_feature(p: &Project, content: &str) {
    p.fake
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "src/feature.rs", "content": content}),
            ),
        )
        .push("implement", Reply::text("Added the feature."));
}

#[tokio::test]
async fn implement_works_and_commits_on_the_story_branch() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    p.git_init(false);
    let story = p.planned("Add feature");
    write_feature(&p, "// FEATURE-MARK\n");

    p.step(&story, "implement").success();

    let branch = format!("agentic-sdlc/{}", story.slug);
    // The tree goes back to the user's branch, so the next story branches from it too.
    assert_eq!(p.git(&["branch", "--show-current"]), "main");
    assert_eq!(p.front(&story)["branch"], branch.as_str());
    // The work is committed on the story branch, and only there.
    assert_eq!(
        p.git(&["show", &format!("{branch}:src/feature.rs")]),
        "// FEATURE-MARK"
    );
    let touched = p.git(&["diff", "--name-only", "main", &branch]);
    assert_eq!(touched, "src/feature.rs");
    assert!(!p
        .git_output(&["cat-file", "-e", "main:src/feature.rs"])
        .status
        .success());
    // Nothing of the story's work is left uncommitted; the board is not the tool's to commit.
    let status = p.git(&[
        "status",
        "--porcelain",
        "--",
        ".",
        ":!.agentic-sdlc",
        ":!.agentic-sdlc.json",
    ]);
    assert_eq!(status, "");
    assert!(!p
        .git(&["ls-tree", "-r", "--name-only", &branch])
        .contains(".agentic-sdlc/"));
}

#[tokio::test]
async fn a_dirty_tree_stops_implement_naming_the_file_and_leaving_it_alone() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    p.git_init(false);
    p.env
        .write("src/lib.rs", "pub fn base() {} // USER-WORK-IN-PROGRESS\n");
    let story = p.planned("Add feature");
    write_feature(&p, "// FEATURE-MARK\n");

    let out = p.step(&story, "implement");

    // Found before the action starts: a usage error of the run, not the story's.
    out.code(2);
    assert!(p.front(&story).get("last_error").is_none());
    assert!(out.stderr.contains("src/lib.rs"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert_eq!(
        p.env.read("src/lib.rs"),
        "pub fn base() {} // USER-WORK-IN-PROGRESS\n"
    );
    assert_eq!(p.git(&["branch", "--show-current"]), "main");
    assert!(!p.env.path("src/feature.rs").exists());
    assert!(
        p.fake.requests_for("implement").is_empty(),
        "no model call on a dirty tree"
    );
    assert_eq!(p.column(&story), "ready");
    assert_eq!(p.front(&story)["implementation_complete"], false);
}

#[tokio::test]
async fn every_story_branch_starts_from_the_users_branch() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    p.git_init(false);
    let first = p.planned("First feature");
    let second = p.planned("Second feature");
    write_feature(&p, "// FIRST\n");
    p.step(&first, "implement").success();
    p.fake
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "src/second.rs", "content": "// SECOND\n"}),
            ),
        )
        .push("implement", Reply::text("Added the second feature."));
    p.step(&second, "implement").success();

    // The second branch holds only its own work, not the first story's commit.
    let second_branch = format!("agentic-sdlc/{}", second.slug);
    assert_eq!(
        p.git(&["diff", "--name-only", "main", &second_branch]),
        "src/second.rs"
    );
    assert_eq!(p.git(&["branch", "--show-current"]), "main");
}

#[tokio::test]
async fn work_waiting_for_a_human_gate_stays_on_its_branch() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    p.git_init(false);
    p.config(&[("phases.implement.review.reviewer", "human")]);
    let story = p.planned("Add feature");
    write_feature(&p, "// WAITING\n");

    // An implement waiting for its person: the summary points at the notes and the diff.
    let out = p.step(&story, "implement");
    out.code(3)
        .stdout_has(&format!("git diff main...agentic-sdlc/{}", story.slug));

    assert_eq!(
        p.front(&story)["phase_reviews"]["implement"]["decision"],
        "PENDING"
    );
    // The user's branch is back, clean: the edits did not travel onto it.
    assert_eq!(p.git(&["branch", "--show-current"]), "main");
    assert!(!p.env.path("src/feature.rs").exists());
    let branch = format!("agentic-sdlc/{}", story.slug);
    assert_eq!(
        p.git(&["show", &format!("{branch}:src/feature.rs")]),
        "// WAITING"
    );

    p.env.run(&["decide", &story.slug, "APPROVE"]).success();
    assert_eq!(p.front(&story)["implementation_complete"], true);
}

#[tokio::test]
async fn changes_in_the_board_and_config_do_not_make_the_tree_dirty() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    let story = p.planned("Add feature");
    p.git_init(true);
    // The board and config are tracked here, and both have uncommitted changes.
    p.config(&[("llm.maxTurns", "20")]);
    p.env.edit(
        p.path_of(&story),
        "A summary.",
        "A summary, edited by hand.",
    );
    p.story("Another", "New and untracked.", "- [ ] x", "backlog", &[]);
    assert_ne!(p.git(&["status", "--porcelain"]), "");
    write_feature(&p, "// FEATURE-MARK\n");

    p.step(&story, "implement").success();

    let branch = format!("agentic-sdlc/{}", story.slug);
    assert_eq!(p.git(&["branch", "--show-current"]), "main");
    assert_eq!(
        p.git(&["show", &format!("{branch}:src/feature.rs")]),
        "// FEATURE-MARK"
    );
    assert!(p.body(&story).contains("A summary, edited by hand."));
}

#[tokio::test]
async fn create_pr_without_gh_warns_and_the_story_still_reaches_done() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    p.git_init(false);
    p.config(&[("git.createPr", "true")]);
    let story = p.planned("Add feature");
    write_feature(&p, "// FEATURE-MARK\n");
    // A PATH with git and a shell but no gh.
    let bin = tempfile::tempdir().unwrap();
    for tool in ["git", "sh"] {
        let real = which(tool);
        std::os::unix::fs::symlink(real, bin.path().join(tool)).unwrap();
    }

    let out = outcome(
        p.cmd(&["run", "--auto", "--story", &story.id])
            .env("PATH", bin.path()),
    );

    out.success();
    assert_eq!(p.column(&story), "done");
    let warning = out
        .stderr
        .lines()
        .find(|l| l.starts_with("warning:") && l.contains("gh"))
        .unwrap_or_else(|| panic!("no warning about gh:\n{}", out.stderr));
    assert!(warning.contains("pull request"), "{warning}");
    assert!(p.front(&story).get("pr_url").is_none());
}

fn which(tool: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(tool))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{tool} is not on PATH"))
}
