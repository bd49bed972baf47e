//! Finding the project root: the nearest ancestor with `.agentic-sdlc.json`, or `-C <dir>`.

use crate::suite::common::{outcome, TestEnv};

#[test]
fn commands_find_the_root_from_a_sub_folder() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let deep = env.path("src/ui/widgets");
    std::fs::create_dir_all(&deep).unwrap();

    let out = outcome(env.cmd(&["status"]).current_dir(&deep));
    out.success().stdout_has("dark-mode - Dark mode");

    // A story added from a sub-folder lands on the root's board, not in a new one.
    let out = outcome(env.cmd(&["add", "From below", "--json"]).current_dir(&deep));
    out.success();
    assert_eq!(
        out.json()["path"].as_str().unwrap(),
        env.path(".agentic-sdlc/backlog/from-below.md")
            .to_str()
            .unwrap()
    );
    assert!(!deep.join(".agentic-sdlc").exists());
}

#[test]
fn dash_c_runs_as_if_started_in_the_folder() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    std::fs::create_dir_all(env.path("sub")).unwrap();
    let elsewhere = TestEnv::new();
    let root = env.root();

    let out = elsewhere.run(&["-C", root.to_str().unwrap(), "status"]);
    out.success().stdout_has("dark-mode - Dark mode");
    // Relative to the working directory, and discovery still walks up from there.
    env.run(&["-C", "sub", "details", "dark-mode"]).success();
    // `-C` is global: it may follow the subcommand too.
    elsewhere
        .run(&["status", "-C", root.to_str().unwrap()])
        .success();
    assert!(elsewhere.files().is_empty(), "nothing written where it ran");
}

#[test]
fn init_with_dash_c_creates_the_board_there() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.path("project")).unwrap();
    env.run(&["-C", "project", "init"]).success();
    assert!(env.path("project/.agentic-sdlc.json").is_file());
    assert!(env.path("project/.agentic-sdlc/backlog").is_dir());
    assert!(!env.path(".agentic-sdlc.json").exists());
}

#[test]
fn no_config_anywhere_asks_for_init() {
    let env = TestEnv::new();
    let commands: [&[&str]; 6] = [
        &["status"],
        &["add", "X"],
        &["details", "x"],
        &["config"],
        &["validate"],
        &["move", "x", "done"],
    ];
    for args in commands {
        env.run(args)
            .code(2)
            .stderr_has("error: no .agentic-sdlc.json found in ")
            // The hint is a line of its own after the error, not part of its message.
            .stderr_has("\nHint: run `agentic-sdlc init` to create a board here");
    }
    env.run(&["status", "--json"]).code(2).stdout_empty();
    assert!(
        env.files().is_empty(),
        "no command but init creates a board"
    );
}

#[test]
fn dash_c_to_a_missing_folder_is_a_usage_error() {
    let env = TestEnv::init();
    env.run(&["-C", "no/such/dir", "status"])
        .code(2)
        .stderr_has("no/such/dir");
    env.run(&["-C", "no/such/dir", "init"]).code(2);
    assert!(!env.path("no").exists());
}
