//! `status`: the board column by column and the recommended next action. Read-only.

use serde_json::{json, Value};

use crate::suite::common::{strings_of, TestEnv, COLUMNS};

/// The keys of S in docs/design.md §5, sorted.
const STORY_KEYS: [&str; 18] = [
    "base_branch",
    "blocked_reason",
    "branch",
    "depends_on",
    "id",
    "implementation_complete",
    "last_error",
    "merged_commit",
    "path",
    "plan_complete",
    "priority",
    "refinement_count",
    "research_complete",
    "reviews_complete",
    "slug",
    "status",
    "title",
    "type",
];

/// The keys of A in docs/design.md §5, sorted.
const ACTION_KEYS: [&str; 5] = ["priority", "reason", "slug", "storyId", "type"];

fn sorted_keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

/// A board with a story in every column, one with an error and one blocked with a reason.
pub(super) fn mixed_board(env: &TestEnv) {
    env.add("Add dark mode toggle", &["--priority", "10"]);
    let (_, _, docs) = env.add("Write the docs", &["--priority", "30"]);
    env.edit(
        &docs,
        "labels: []\n",
        "labels: []\nlast_error: 'LLM error: rate limited'\n",
    );

    env.add("Login page", &["--priority", "20"]);
    env.run(&["move", "login-page", "ready"]).success();
    let login = env.story_path("login-page");
    env.edit(
        &login,
        "research_complete: false",
        "research_complete: true",
    );

    env.add("Session store", &["--priority", "5"]);
    env.run(&["move", "session-store", "in-progress"]).success();
    let session = env.story_path("session-store");
    for flag in [
        "research_complete",
        "plan_complete",
        "implementation_complete",
    ] {
        env.edit(
            &session,
            &format!("{flag}: false"),
            &format!("{flag}: true"),
        );
    }

    env.add("Old feature", &["--priority", "1"]);
    env.run(&["move", "old-feature", "done"]).success();
    let old = env.story_path("old-feature");
    for flag in [
        "research_complete",
        "plan_complete",
        "implementation_complete",
        "reviews_complete",
    ] {
        env.edit(&old, &format!("{flag}: false"), &format!("{flag}: true"));
    }

    env.add("Payment flow", &["--priority", "15"]);
    env.run(&["move", "payment-flow", "blocked"]).success();
    env.edit(
        env.story_path("payment-flow"),
        "blocked_reason: Moved to blocked by hand",
        "blocked_reason: 'Circuit breaker: reached max refinement attempts (3/3); manual intervention required'",
    );
}

#[test]
fn status_shows_every_column_and_the_next_action() {
    let env = TestEnv::init();
    mixed_board(&env);
    let out = env.run(&["status"]);
    out.success();
    env.snapshot_settings().bind(|| {
        insta::assert_snapshot!("status_mixed_board", out.stdout);
    });
}

#[test]
fn status_recommends_refining_the_first_backlog_story() {
    let env = TestEnv::init();
    env.add("Later", &["--priority", "20"]);
    env.add("Sooner", &["--priority", "10"]);
    let out = env.run(&["status"]);
    out.success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        &lines[..3],
        [
            "backlog (2)",
            "  [10] sooner - Sooner [----]",
            "  [20] later - Later [----]"
        ]
    );
    let next = lines.last().expect("a Next line");
    assert!(next.starts_with("Next: refine sooner "), "{next}");
}

#[test]
fn status_on_an_empty_board_has_nothing_to_do() {
    let env = TestEnv::init();
    let out = env.run(&["status"]);
    out.success();
    for column in COLUMNS {
        out.stdout_has(&format!("{column} (0)"));
    }
    out.stdout_has("Next: nothing to do");
}

#[test]
fn status_active_hides_done() {
    let env = TestEnv::init();
    mixed_board(&env);
    let out = env.run(&["status", "--active"]);
    out.success();
    assert!(!out.stdout.contains("done ("), "{}", out.stdout);
    assert!(!out.stdout.contains("old-feature"), "{}", out.stdout);
    out.stdout_has("session-store").stdout_has("blocked (1)");
    assert!(env.run(&["status"]).stdout.contains("old-feature"));
}

#[test]
fn status_marks_errors_and_blocked_reasons() {
    let env = TestEnv::init();
    mixed_board(&env);
    let out = env.run(&["status"]);
    out.success()
        .stdout_has("[30] write-the-docs - Write the docs [----] ! LLM error: rate limited")
        .stdout_has(
            "[15] payment-flow - Payment flow [----]\n      blocked: Circuit breaker: reached max \
             refinement attempts (3/3); manual intervention required",
        );
}

#[test]
fn status_json_has_the_contract_shape() {
    let env = TestEnv::init();
    mixed_board(&env);
    let status = env.status_json();
    assert_eq!(status["schemaVersion"], 1);
    assert_eq!(status["kind"], "status");
    assert_eq!(sorted_keys(&status["columns"]), {
        let mut columns = COLUMNS.map(String::from).to_vec();
        columns.sort();
        columns
    });
    for column in COLUMNS {
        let stories = status["columns"][column].as_array().expect("a list");
        assert!(!stories.is_empty(), "{column} has a story");
        for story in stories {
            assert_eq!(sorted_keys(story), STORY_KEYS, "{story}");
            assert_eq!(story["status"], column, "{story}");
        }
    }

    let docs = &status["columns"]["backlog"][1];
    assert_eq!(docs["slug"], "write-the-docs");
    assert_eq!(docs["last_error"], "LLM error: rate limited");
    assert_eq!(docs["blocked_reason"], Value::Null);
    assert_eq!(docs["depends_on"], json!([]));
    assert_eq!(docs["refinement_count"], 0);
    assert_eq!(docs["type"], "feature");
    assert_eq!(
        docs["path"].as_str().unwrap(),
        env.story_path("write-the-docs").to_str().unwrap()
    );
    let session = &status["columns"]["in-progress"][0];
    assert_eq!(session["implementation_complete"], true);
    assert_eq!(session["reviews_complete"], false);
    let payment = &status["columns"]["blocked"][0];
    assert!(payment["blocked_reason"]
        .as_str()
        .unwrap()
        .starts_with("Circuit breaker"));

    let recommended = status["recommended"].as_array().expect("a list");
    assert!(!recommended.is_empty());
    for action in recommended {
        assert_eq!(sorted_keys(action), ACTION_KEYS, "{action}");
    }
    let priorities: Vec<i64> = recommended
        .iter()
        .map(|a| a["priority"].as_i64().unwrap())
        .collect();
    assert!(
        priorities.is_sorted(),
        "lowest priority first: {priorities:?}"
    );
    let refine = recommended
        .iter()
        .find(|a| a["slug"] == "add-dark-mode-toggle")
        .expect("the backlog story is recommended");
    assert_eq!(refine["type"], "refine");
    assert_eq!(refine["priority"], 10 + 500);
    assert_eq!(
        refine["storyId"], status["columns"]["backlog"][0]["id"],
        "{refine}"
    );
    assert!(refine["reason"].as_str().is_some_and(|r| !r.is_empty()));
}

#[test]
fn status_json_priority_is_story_priority_plus_the_refine_offset() {
    let env = TestEnv::init();
    let (id, _, _) = env.add("Negative", &["--priority", "-7"]);
    let status = env.status_json();
    assert_eq!(
        status["recommended"][0],
        json!({
            "type": "refine",
            "storyId": id,
            "slug": "negative",
            "reason": status["recommended"][0]["reason"],
            "priority": 493,
        })
    );
}

#[test]
fn status_lists_a_broken_story_and_still_shows_the_board() {
    let env = TestEnv::init();
    env.add("Healthy story", &[]);
    env.write_story(
        "ready",
        "broken.md",
        "---\nid: story-broken-0001\ntitle: Broken\npriority: [\n---\n# Broken\n",
    );
    let out = env.run(&["status"]);
    out.success()
        .stdout_has("healthy-story - Healthy story")
        .stdout_has(".agentic-sdlc/ready/broken.md:4:");

    let status = env.status_json();
    assert_eq!(status["columns"]["backlog"][0]["slug"], "healthy-story");
    assert_eq!(status["columns"]["ready"], json!([]));
}

#[test]
fn status_details_and_validate_leave_every_byte_alone() {
    let env = TestEnv::init();
    mixed_board(&env);
    env.write_story(
        "ready",
        "broken.md",
        "---\nid: story-broken-0001\ntitle: [\n---\n",
    );
    let before = env.files();
    let commands: [&[&str]; 8] = [
        &["status"],
        &["status", "--active"],
        &["status", "--json"],
        &["details", "login-page"],
        &["d", "payment-flow", "--json"],
        &["validate"],
        &["validate", "--json"],
        &["config"],
    ];
    for args in commands {
        env.run(args);
        assert_eq!(
            env.files(),
            before,
            "`{}` changed the board",
            args.join(" ")
        );
    }
}

#[test]
fn status_says_what_a_story_waits_on() {
    let env = TestEnv::init();
    let (login, _, _) = env.add("Login page", &["--priority", "10"]);
    env.add(
        "Remember me",
        &["--priority", "5", "--depends-on", "login-page"],
    );
    env.run(&["move", "remember-me", "ready"]).success();
    let out = env.run(&["status"]);
    out.success().stdout_has(
        "  [5] remember-me - Remember me [----]\n      ⏸ waiting on login-page (backlog)",
    );
    assert!(
        out.stdout
            .ends_with("Next: refine login-page (in backlog: needs refinement)\n"),
        "the waiting story is not recommended:\n{}",
        out.stdout
    );

    let status = env.status_json();
    assert_eq!(status["columns"]["ready"][0]["depends_on"], json!([login]));
    let recommended = strings_of(&status["recommended"], "slug");
    assert_eq!(recommended, ["login-page"]);

    env.run(&["move", "login-page", "done"]).success();
    let out = env.run(&["status"]);
    assert!(!out.stdout.contains("waiting on"), "{}", out.stdout);
    out.stdout_has("Next: research remember-me");
}
