//! `add`: a story file in backlog with the frontmatter of docs/design.md §3.

use serde_norway::Value as Yaml;

use crate::suite::common::{assert_date, assert_story_id, TestEnv};

/// The keys a new story has, in the order docs/design.md §3 shows them.
const NEW_STORY_KEYS: [&str; 12] = [
    "id",
    "title",
    "priority",
    "status",
    "type",
    "created",
    "updated",
    "labels",
    "research_complete",
    "plan_complete",
    "implementation_complete",
    "reviews_complete",
];

fn keys(front: &Yaml) -> Vec<String> {
    front
        .as_mapping()
        .expect("frontmatter is a mapping")
        .keys()
        .map(|k| k.as_str().expect("string keys").to_string())
        .collect()
}

fn strings(value: &Yaml) -> Vec<String> {
    value
        .as_sequence()
        .unwrap_or_else(|| panic!("not a list: {value:?}"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn add_prints_id_slug_and_path_as_json() {
    let env = TestEnv::init();
    let out = env.run(&["add", "Add dark mode toggle", "--json"]);
    out.success();
    let added = out.json();
    let object = added.as_object().expect("an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["id", "kind", "path", "schemaVersion", "slug"]);
    assert_eq!(added["schemaVersion"], 1);
    assert_eq!(added["kind"], "added");
    assert_story_id(added["id"].as_str().unwrap());
    assert_eq!(added["slug"], "add-dark-mode-toggle");
    assert_eq!(
        added["path"].as_str().unwrap(),
        env.path(".agentic-sdlc/backlog/add-dark-mode-toggle.md")
            .to_str()
            .unwrap()
    );
}

#[test]
fn add_writes_the_contract_frontmatter() {
    let env = TestEnv::init();
    let (id, slug, path) = env.add("Add dark mode toggle", &[]);
    assert_eq!(slug, "add-dark-mode-toggle");
    assert_eq!(
        path,
        env.path(".agentic-sdlc/backlog/add-dark-mode-toggle.md")
    );
    assert_story_id(&id);

    let front = env.frontmatter(&path);
    assert_eq!(keys(&front), NEW_STORY_KEYS, "keys and their order");
    assert_eq!(front["id"].as_str(), Some(id.as_str()));
    assert_eq!(front["title"].as_str(), Some("Add dark mode toggle"));
    assert_eq!(
        front["priority"].as_i64(),
        Some(10),
        "the first story gets 10"
    );
    assert_eq!(front["status"].as_str(), Some("backlog"));
    assert_eq!(front["type"].as_str(), Some("feature"));
    // Dates are strings, not YAML timestamps, so other YAML readers keep them as written.
    let created = front["created"].as_str().expect("created is a string");
    assert_date(created);
    assert_eq!(front["updated"].as_str(), Some(created));
    assert_eq!(front["labels"], Yaml::Sequence(vec![]));
    for flag in &NEW_STORY_KEYS[8..] {
        assert_eq!(front[*flag], Yaml::Bool(false), "{flag}");
    }
    // Optional keys are left out rather than written as null.
    assert!(!env.read(&path).contains("null"));
}

#[test]
fn add_writes_the_six_standard_sections() {
    let env = TestEnv::init();
    let (_, _, path) = env.add("Add dark mode toggle", &[]);
    assert_eq!(
        env.body(&path),
        "# Add dark mode toggle\n\n## Summary\n\n## Acceptance Criteria\n\n## Research\n\n\
         ## Implementation Plan\n\n## Implementation Notes\n\n## Review Notes\n"
    );
}

#[test]
fn add_numbers_a_clashing_file_name() {
    let env = TestEnv::init();
    let (first_id, _, first) = env.add("Same title", &[]);
    let (second_id, slug, second) = env.add("Same title", &[]);
    let (_, third_slug, third) = env.add("Same title", &[]);
    assert_eq!(first, env.path(".agentic-sdlc/backlog/same-title.md"));
    assert_eq!(second, env.path(".agentic-sdlc/backlog/same-title-2.md"));
    assert_eq!(third, env.path(".agentic-sdlc/backlog/same-title-3.md"));
    assert_eq!(slug, "same-title-2");
    assert_eq!(third_slug, "same-title-3");
    assert_ne!(first_id, second_id);
}

#[test]
fn add_sets_type_priority_and_labels() {
    let env = TestEnv::init();
    env.run(&["config", "defaultLabels", r#"["team-a"]"#])
        .success();
    let (_, _, path) = env.add(
        "Fix the crash",
        &[
            "--type",
            "bug",
            "--priority",
            "-5",
            "--label",
            "ui",
            "--label",
            "team-a",
            "--label",
            "urgent",
        ],
    );
    let front = env.frontmatter(&path);
    assert_eq!(front["type"].as_str(), Some("bug"));
    assert_eq!(front["priority"].as_i64(), Some(-5));
    assert_eq!(
        strings(&front["labels"]),
        ["team-a", "ui", "urgent"],
        "default labels first, no duplicates"
    );
}

#[test]
fn add_defaults_the_priority_after_the_last_story() {
    let env = TestEnv::init();
    env.add("First", &["--priority", "40"]);
    let (_, _, path) = env.add("Second", &[]);
    assert_eq!(env.frontmatter(&path)["priority"].as_i64(), Some(50));
}

#[test]
fn add_rejects_bad_arguments() {
    let env = TestEnv::init();
    let cases: [(&[&str], &str); 3] = [
        (&["add", "X", "--type", "epic"], "epic"),
        (&["add", "   "], "title"),
        (&["add", "X", "--priority", "high"], "high"),
    ];
    for (args, needle) in cases {
        env.run(args).code(2).stderr_has(needle);
    }
    assert_eq!(
        std::fs::read_dir(env.path(".agentic-sdlc/backlog"))
            .unwrap()
            .count(),
        0,
        "nothing was written"
    );
}

#[test]
fn add_resolves_dependencies_by_slug_or_id() {
    let env = TestEnv::init();
    let (base_id, _, _) = env.add("Login page", &[]);
    let (other_id, _, _) = env.add("Session store", &[]);
    let (_, _, path) = env.add(
        "Remember me",
        &["--depends-on", "login-page", "--depends-on", &other_id],
    );
    assert_eq!(
        strings(&env.frontmatter(&path)["depends_on"]),
        [base_id, other_id]
    );
}

#[test]
fn add_refuses_an_unknown_dependency() {
    let env = TestEnv::init();
    env.add("Login page", &[]);
    let before = env.files();
    env.run(&["add", "Remember me", "--depends-on", "logout-page"])
        .code(1)
        .stderr_has("logout-page");
    assert_eq!(env.files(), before, "no story was created");
    // With --json, stdout carries no partial document.
    env.run(&["add", "Remember me", "--depends-on", "nope", "--json"])
        .code(1)
        .stdout_empty();
}

#[test]
fn add_takes_plain_text_from_a_body_file_as_the_summary() {
    let env = TestEnv::init();
    env.write("notes.txt", "Users want a dark theme.\nAt night.\n");
    let (_, _, path) = env.add("Dark mode", &["--body-file", "notes.txt"]);
    assert_eq!(
        env.body(&path),
        "# Dark mode\n\n## Summary\nUsers want a dark theme.\nAt night.\n\n\
         ## Acceptance Criteria\n\n## Research\n\n## Implementation Plan\n\n\
         ## Implementation Notes\n\n## Review Notes\n"
    );
}

#[test]
fn add_uses_a_body_file_with_sections_as_the_body() {
    let env = TestEnv::init();
    env.write(
        "story.md",
        "## Summary\nThe why.\n\n## Acceptance Criteria\n- toggles\n\n## Design Notes\nBlue.\n",
    );
    let (_, _, path) = env.add("Dark mode", &["--body-file", "story.md"]);
    let body = env.body(&path);
    assert!(
        body.starts_with(
            "# Dark mode\n\n## Summary\nThe why.\n\n## Acceptance Criteria\n- toggles\n\n\
             ## Design Notes\nBlue.\n"
        ),
        "the file's sections come first, as written:\n{body}"
    );
    for section in [
        "## Research\n",
        "## Implementation Plan\n",
        "## Implementation Notes\n",
        "## Review Notes\n",
    ] {
        assert_eq!(
            body.matches(section).count(),
            1,
            "{section} once in:\n{body}"
        );
    }
    let details = env.run_json(&["details", "dark-mode"]);
    assert_eq!(
        details["story"]["sections"]["Acceptance Criteria"],
        "- toggles"
    );
}

#[test]
fn add_makes_the_text_before_a_body_files_sections_its_summary() {
    let env = TestEnv::init();
    env.write(
        "story.md",
        "Prices like `1.005` round to `1.01`.\n\n## Acceptance Criteria\n- `round_cents(1.005) == 1.01`\n",
    );
    let (_, _, path) = env.add("Round prices", &["--body-file", "story.md"]);
    let body = env.body(&path);
    assert!(
        body.starts_with(
            "# Round prices\n\n## Summary\nPrices like `1.005` round to `1.01`.\n\n\
             ## Acceptance Criteria\n- `round_cents(1.005) == 1.01`\n"
        ),
        "the opening sentence is the summary, the criteria follow:\n{body}"
    );
    assert_eq!(body.matches("## Summary").count(), 1, "{body}");
    let details = env.run_json(&["details", "round-prices"]);
    assert_eq!(
        details["story"]["sections"]["Summary"],
        "Prices like `1.005` round to `1.01`."
    );
}

#[test]
fn add_reports_a_missing_body_file() {
    let env = TestEnv::init();
    env.run(&["add", "Dark mode", "--body-file", "missing.md"])
        .code(1)
        .stderr_has("missing.md");
}
