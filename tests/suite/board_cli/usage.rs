//! The command line itself: global flags, help, version and usage errors (exit 2).

use crate::suite::common::TestEnv;

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::init();
    let cases: [&[&str]; 6] = [
        &[],
        &["bogus"],
        &["status", "--bogus"],
        &["-q", "-v", "status"],
        &["status", "--color", "sometimes"],
        &["details"],
    ];
    for args in cases {
        env.run(args).code(2).stdout_empty();
    }
}

#[test]
fn help_and_version_exit_0() {
    let env = TestEnv::new();
    env.run(&["--help"])
        .success()
        .stdout_has("init")
        .stdout_has("validate");
    env.run(&["status", "--help"])
        .success()
        .stdout_has("--active");
    env.run(&["--version"])
        .success()
        .stdout_has(env!("CARGO_PKG_VERSION"));
}

#[test]
fn global_flags_go_before_or_after_the_command() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let cases: [&[&str]; 6] = [
        &["-q", "status"],
        &["status", "-q"],
        &["-v", "status"],
        &["status", "--verbose"],
        &["--json", "status"],
        &["--color", "never", "status"],
    ];
    for args in cases {
        env.run(args).success().stdout_has("dark-mode");
    }
}

#[test]
fn rust_log_from_the_shell_does_not_reach_stdout() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let out =
        crate::suite::common::outcome(env.cmd(&["status", "--json"]).env("RUST_LOG", "trace"));
    out.success();
    assert_eq!(out.json()["kind"], "status", "stdout is only the document");
}
