//! Slugs are unique and stable: a new story takes a slug that no story file (in any column)
//! and no story branch uses, even when many `add`s run at once, and keeps it for life.

use std::collections::HashSet;
use std::process::{Command, Stdio};

use crate::suite::common::TestEnv;

#[test]
fn ten_adds_of_one_title_at_once_all_succeed_with_their_own_slugs() {
    let env = TestEnv::init();
    let mut slugs = HashSet::new();
    for round in 0..5 {
        let children: Vec<_> = (0..10)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"))
                    .current_dir(env.root())
                    .args(["add", "Same title", "--json"])
                    .env("NO_COLOR", "1")
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let added: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let slug = added["slug"].as_str().unwrap().to_string();
            assert!(
                added["path"]
                    .as_str()
                    .unwrap()
                    .ends_with(&format!("/{slug}.md")),
                "{added}"
            );
            assert!(slugs.insert(slug.clone()), "{slug} given twice");
        }
    }
    assert_eq!(slugs.len(), 50);
    assert!(slugs.contains("same-title") && slugs.contains("same-title-50"));
    let on_board = env.status_json()["columns"]["backlog"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(on_board, 50);
}

#[test]
fn a_done_story_keeps_its_slug_and_a_new_story_of_the_same_title_takes_another() {
    let env = TestEnv::init();
    let (_, first, _) = env.add("Add dark mode", &[]);
    env.run(&["move", &first, "done"]).success();
    let (_, second, _) = env.add("Add dark mode", &[]);
    assert_eq!(first, "add-dark-mode");
    assert_eq!(
        second, "add-dark-mode-2",
        "the done story's slug stays its own"
    );
    env.run(&["move", &second, "done"]).success();
    let done: Vec<String> = env.status_json()["columns"]["done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["slug"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(done.len(), 2);
    assert!(done.contains(&first) && done.contains(&second), "{done:?}");
}

#[test]
fn a_slug_whose_branch_exists_is_not_given_out() {
    let env = TestEnv::init();
    super::make_repository(&env, true);
    super::git(&env, &["branch", "agentic-sdlc/fix-login"]);
    let (_, slug, _) = env.add("Fix login", &[]);
    assert_eq!(slug, "fix-login-2");
}
