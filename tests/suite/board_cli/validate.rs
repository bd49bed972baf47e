//! `validate`: every problem on the board with its path and line; exit 1 when there is one.

use serde_json::Value;

use crate::suite::common::TestEnv;

fn problems(env: &TestEnv) -> Vec<Value> {
    let out = env.run(&["validate", "--json"]);
    out.code(1);
    let report = out.json();
    assert_eq!(report["schemaVersion"], 1);
    assert_eq!(report["kind"], "validation");
    assert_eq!(report["valid"], false);
    report["problems"].as_array().expect("a list").clone()
}

fn kinds(problems: &[Value]) -> Vec<&str> {
    problems
        .iter()
        .map(|p| p["kind"].as_str().unwrap())
        .collect()
}

#[test]
fn a_clean_board_is_valid() {
    let env = TestEnv::init();
    env.add("Login page", &[]);
    env.add("Remember me", &["--depends-on", "login-page"]);
    env.run(&["move", "login-page", "done"]).success();
    env.run(&["validate"])
        .success()
        .stdout_has("2 stories, config valid");
    let report = env.run_json(&["validate"]);
    assert_eq!(report["valid"], true);
    assert_eq!(report["problems"], serde_json::json!([]));
}

#[test]
fn a_parse_error_is_reported_with_path_and_line() {
    // (frontmatter lines, 1-based file line of the mistake)
    let cases = [
        (
            "id: story-a-0001\ntitle: Broken\npriority: [\nstatus: ready\n",
            4,
        ),
        (
            "id: story-a-0001\ntitle: Broken\nstatus: ready\nlabels: [a, b\n",
            5,
        ),
        ("id: story-a-0001\ntitle: Broken\ntitle: Twice\n", 4),
        (
            "id: story-a-0001\ntitle: Broken\nstatus: ready\npriority: high\n",
            5,
        ),
        (
            "id: story-a-0001\ntitle: Broken\n  stray: indent\nstatus: ready\n",
            4,
        ),
    ];
    for (front, line) in cases {
        let env = TestEnv::init();
        env.add("Healthy", &[]);
        env.write_story(
            "ready",
            "broken.md",
            &format!("---\n{front}---\n# Broken\n"),
        );
        let out = env.run(&["validate"]);
        out.code(1)
            .stdout_has(&format!(".agentic-sdlc/ready/broken.md:{line}:"));
        assert!(!out.stdout.contains("healthy"), "{}", out.stdout);

        let problems = problems(&env);
        assert_eq!(kinds(&problems), ["parse"], "{front}");
        assert_eq!(problems[0]["line"], line, "{front}");
        assert!(problems[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("ready/broken.md"));
    }
}

#[test]
fn a_file_without_frontmatter_is_reported_at_line_1() {
    let env = TestEnv::init();
    env.write_story("backlog", "notes.md", "# Just notes\n");
    env.run(&["validate"])
        .code(1)
        .stdout_has(".agentic-sdlc/backlog/notes.md:1:");
}

#[test]
fn duplicate_ids_name_both_files() {
    let env = TestEnv::init();
    let (id, _, path) = env.add("Original", &[]);
    env.write_story(
        "ready",
        "copy.md",
        &env.read(&path).replace("status: backlog", "status: ready"),
    );
    let out = env.run(&["validate"]);
    out.code(1)
        .stdout_has(&id)
        .stdout_has("backlog/original.md")
        .stdout_has("ready/copy.md");
    let problems = problems(&env);
    assert_eq!(kinds(&problems), ["duplicate-id", "duplicate-id"]);
    assert_eq!(problems[0]["line"], 2, "the id line");
}

#[test]
fn a_status_that_disagrees_with_the_folder_is_reported() {
    let env = TestEnv::init();
    let (_, _, path) = env.add("Dark mode", &[]);
    env.edit(&path, "status: backlog", "status: done");
    env.run(&["validate"])
        .code(1)
        .stdout_has(".agentic-sdlc/backlog/dark-mode.md:5:")
        .stdout_has("done")
        .stdout_has("backlog");
    // The folder wins meanwhile.
    assert_eq!(
        env.status_json()["columns"]["backlog"][0]["status"],
        "backlog"
    );
    let problems = problems(&env);
    assert_eq!(kinds(&problems), ["status-mismatch"]);
}

#[test]
fn an_unknown_type_is_reported_and_kept_as_written() {
    let env = TestEnv::init();
    let (_, _, path) = env.add("Dark mode", &["--type", "chore"]);
    env.edit(&path, "type: chore", "type: Epic");
    env.run(&["validate"])
        .code(1)
        .stdout_has("type `Epic` is not one of feature, bug, chore, spike");
    assert_eq!(kinds(&problems(&env)), ["invalid-value"]);
    assert_eq!(env.status_json()["columns"]["backlog"][0]["type"], "Epic");
    // A rewrite by the tool leaves the hand-written value as it was.
    env.run(&["move", "dark-mode", "ready"]).success();
    let moved = path
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("ready/dark-mode.md");
    let text = std::fs::read_to_string(moved).unwrap();
    assert!(text.contains("\ntype: Epic\n"), "{text}");
}

#[test]
fn an_unknown_dependency_is_reported() {
    let env = TestEnv::init();
    let (_, _, path) = env.add("Dark mode", &[]);
    env.edit(
        &path,
        "labels: []\n",
        "labels: []\ndepends_on:\n- story-gone-zzzz\n",
    );
    env.run(&["validate"])
        .code(1)
        .stdout_has(".agentic-sdlc/backlog/dark-mode.md:10:")
        .stdout_has("story-gone-zzzz");
    assert_eq!(kinds(&problems(&env)), ["unknown-dependency"]);
}

#[test]
fn a_dependency_cycle_is_named() {
    let env = TestEnv::init();
    let (a, _, a_path) = env.add("Story A", &[]);
    let (b, _, _) = env.add("Story B", &["--depends-on", "story-a"]);
    env.edit(
        &a_path,
        "labels: []\n",
        &format!("labels: []\ndepends_on:\n- {b}\n"),
    );
    let out = env.run(&["validate"]);
    out.code(1).stdout_has("cycle");
    let cycle_line = out
        .stdout
        .lines()
        .find(|l| l.contains("cycle"))
        .expect("a cycle line");
    assert!(
        cycle_line.contains(&a) && cycle_line.contains(&b),
        "{cycle_line}"
    );

    let problems = problems(&env);
    assert_eq!(kinds(&problems), ["dependency-cycle"]);
    let message = problems[0]["message"].as_str().unwrap();
    assert!(message.contains(&a) && message.contains(&b), "{message}");
}

#[test]
fn a_story_that_depends_on_itself_is_a_cycle() {
    let env = TestEnv::init();
    let (a, _, path) = env.add("Story A", &[]);
    env.edit(
        &path,
        "labels: []\n",
        &format!("labels: []\ndepends_on: [{a}]\n"),
    );
    assert_eq!(kinds(&problems(&env)), ["dependency-cycle"]);
}

#[test]
fn validate_reports_every_problem_at_once() {
    let env = TestEnv::init();
    let (_, _, path) = env.add("Dark mode", &[]);
    env.edit(&path, "status: backlog", "status: ready");
    env.write_story("done", "broken.md", "---\nid: [\n---\n");
    let out = env.run(&["validate"]);
    out.code(1).stdout_has("2 problem(s)");
    let problems = problems(&env);
    let mut found = kinds(&problems);
    found.sort_unstable();
    assert_eq!(found, ["parse", "status-mismatch"]);
}
