//! A remote that cannot be used stops `run --remote` before anything happens: one line on
//! stderr, exit 2, no model called, nothing written.

use serde_json::json;

use super::{git_ok, through_ssh, Fleet};
use crate::suite::common::Outcome;

/// Asserts the run stopped at its checks: exit 2, one line naming `needle`, no request to the
/// model, and the remote untouched.
#[track_caller]
fn refused(fleet: &Fleet, out: &Outcome, needle: &str) {
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", out.stderr);
    assert!(
        lines[0].contains(needle),
        "{needle:?} missing in {:?}",
        lines[0]
    );
    assert!(fleet.fake.requests().is_empty(), "no model call");
    assert!(fleet.claims().is_empty());
}

#[tokio::test]
async fn an_unreachable_remote_a_refusing_one_and_a_missing_base_stop_the_run() {
    let fleet = Fleet::new(1, json!({})).await;
    fleet.stories(&[("Never started", &[])]);
    let root = fleet.clones[0].root();
    let tip = fleet.origin(&["rev-parse", "main"]);
    let run = || fleet.run(0, &["run", "--auto", "--remote", "origin"]);

    let no_such = fleet.run(0, &["run", "--auto", "--remote", "upstream"]);
    refused(&fleet, &no_such, "no git remote named `upstream`");

    let real = fleet.bare().display().to_string();
    git_ok(
        &root,
        &[
            "remote",
            "set-url",
            "origin",
            "/nonexistent/agentic-sdlc.git",
        ],
    );
    refused(&fleet, &run(), "cannot be reached");

    // An ssh server that turns this clone's key away.
    let script = fleet.scratch().join("refusing-ssh.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"git@$1: Permission denied (publickey).\" >&2\nexit 255\n",
    )
    .unwrap();
    through_ssh(&root, &script, &fleet.bare());
    let out = run();
    refused(&fleet, &out, "rejected this clone's credentials");
    assert!(
        out.stderr.contains("Permission denied (publickey)"),
        "{}",
        out.stderr
    );

    // A remote without the base branch.
    git_ok(&root, &["remote", "set-url", "origin", &real]);
    fleet.origin(&["branch", "-m", "main", "trunk"]);
    refused(&fleet, &run(), "has no branch `main`");
    fleet.origin(&["branch", "-m", "trunk", "main"]);

    // A server that cannot push atomically is refused, never raced.
    fleet.origin(&["config", "receive.advertiseAtomic", "false"]);
    refused(&fleet, &run(), "does not support atomic pushes");
    fleet.origin(&["config", "--unset", "receive.advertiseAtomic"]);

    // A clone whose board git ignores could never share it.
    fleet.clones[0].write(".git/info/exclude", ".agentic-sdlc/\n");
    refused(&fleet, &run(), "is ignored by git");
    fleet.clones[0].write(".git/info/exclude", "");

    // Work that would stay on the runner that made it is refused.
    fleet.clones[0].configure_json(&json!({"git": {"integrate": "none"}}));
    refused(&fleet, &run(), "git.integrate is \"none\"");
    fleet.clones[0].configure_json(&json!({"git": {"integrate": "merge"}}));

    assert_eq!(
        fleet.origin(&["rev-parse", "main"]),
        tip,
        "the remote is as it was"
    );
    assert!(
        fleet
            .run(0, &["run", "--dry-run", "--remote", "origin"])
            .code
            == 0
    );
}
