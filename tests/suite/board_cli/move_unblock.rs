//! `move` and `unblock`: changing a story's column by hand.

use crate::suite::common::{TestEnv, COLUMNS};

/// A story that sits in blocked/ with the given phase flags set.
fn blocked_story(env: &TestEnv, title: &str, done_flags: &[&str]) -> String {
    let (_, slug, _) = env.add(title, &[]);
    env.run(&["move", &slug, "blocked"]).success();
    let path = env.story_path(&slug);
    for flag in done_flags {
        env.edit(&path, &format!("{flag}: false"), &format!("{flag}: true"));
    }
    env.edit(
        &path,
        "blocked_reason: Moved to blocked by hand\n",
        "blocked_reason: 'Phase plan rejected by review: too vague'\nlast_error: boom\n\
         refinement_count: 2\n",
    );
    slug
}

#[test]
fn move_goes_to_every_column_and_the_status_key_follows() {
    let env = TestEnv::init();
    let (id, slug, _) = env.add("Dark mode", &[]);
    for column in [
        "ready",
        "in-progress",
        "done",
        "blocked",
        "backlog",
        "ready",
    ] {
        let moved = env.run_json(&["move", &slug, column]);
        assert_eq!(moved["kind"], "moved");
        assert_eq!(moved["to"], column);
        let path = env.story_path(&slug);
        assert_eq!(
            path,
            env.path(format!(".agentic-sdlc/{column}/dark-mode.md"))
        );
        assert_eq!(moved["path"].as_str().unwrap(), path.to_str().unwrap());
        assert_eq!(env.frontmatter(&path)["status"].as_str(), Some(column));
        let status = env.status_json();
        assert_eq!(status["columns"][column][0]["id"], id.as_str(), "{column}");
        for other in COLUMNS.iter().filter(|c| **c != column) {
            assert!(
                std::fs::read_dir(env.path(format!(".agentic-sdlc/{other}")))
                    .unwrap()
                    .next()
                    .is_none(),
                "{other}/ is empty after moving to {column}"
            );
        }
    }
}

#[test]
fn move_prints_what_it_did() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let out = env.run(&["move", "dark-mode", "in-progress"]);
    out.success();
    assert_eq!(out.stdout, "Moved dark-mode from backlog to in-progress\n");
}

#[test]
fn move_rejects_an_unknown_column_or_story() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let before = env.files();
    env.run(&["move", "dark-mode", "archive"])
        .code(2)
        .stderr_has("archive");
    env.run(&["move", "light-mode", "done"])
        .code(1)
        .stderr_has("light-mode");
    env.run(&["move", "dark-mode", "archive", "--json"])
        .code(2)
        .stdout_empty();
    assert_eq!(env.files(), before);
}

#[test]
fn moving_into_blocked_records_a_reason_and_moving_out_removes_it() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    env.run(&["move", "dark-mode", "blocked"]).success();
    let blocked = env.story_path("dark-mode");
    assert!(env.frontmatter(&blocked)["blocked_reason"].is_string());

    env.edit(
        &blocked,
        "blocked_reason: Moved to blocked by hand",
        "blocked_reason: Waiting for the design",
    );
    env.run(&["move", "dark-mode", "ready"]).success();
    let ready = env.story_path("dark-mode");
    assert_eq!(env.frontmatter(&ready).get("blocked_reason"), None);
    assert!(!env.read(&ready).contains("blocked_reason"));
}

#[test]
fn unblock_refuses_a_story_that_is_not_blocked() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let before = env.files();
    env.run(&["unblock", "dark-mode"])
        .code(1)
        .stderr_has("not blocked");
    env.run(&["unblock", "nothing-like-it"]).code(1);
    assert_eq!(env.files(), before);
}

#[test]
fn unblock_returns_the_story_to_the_column_its_flags_call_for() {
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "research_complete",
                "plan_complete",
                "implementation_complete",
            ],
            "in-progress",
        ),
        (&["research_complete"], "ready"),
        (&[], "backlog"),
    ];
    for (flags, column) in cases {
        let env = TestEnv::init();
        let slug = blocked_story(&env, "Dark mode", flags);
        let out = env.run_json(&["unblock", &slug]);
        assert_eq!(out["kind"], "unblocked");
        assert_eq!(
            (out["from"].as_str(), out["to"].as_str()),
            (Some("blocked"), Some(column))
        );

        let path = env.story_path(&slug);
        assert_eq!(
            path,
            env.path(format!(".agentic-sdlc/{column}/{slug}.md")),
            "{flags:?}"
        );
        let front = env.frontmatter(&path);
        assert_eq!(front["status"].as_str(), Some(column));
        assert_eq!(front.get("blocked_reason"), None, "{flags:?}");
        assert_eq!(front.get("last_error"), None, "{flags:?}");
        assert_eq!(
            front["refinement_count"].as_i64(),
            Some(2),
            "kept without --reset"
        );
    }
}

#[test]
fn unblock_reset_sets_the_refinement_count_to_zero() {
    let env = TestEnv::init();
    let slug = blocked_story(&env, "Dark mode", &["research_complete"]);
    env.run(&["unblock", &slug, "--reset"]).success();
    let front = env.frontmatter(env.story_path(&slug));
    assert_eq!(front["refinement_count"].as_i64(), Some(0));
    assert_eq!(front["status"].as_str(), Some("ready"));
}
