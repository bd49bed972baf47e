//! Hand edits are first-class (docs/design.md §3): commands change only the keys they mean to
//! change.

use crate::suite::common::{assert_date, TestEnv};

/// A story as a person might leave it: keys reordered, a key the tool does not know, comments
/// (one right after a key that `move` rewrites), and prose in the sections.
const HAND_EDITED: &str = "\
---
# Owned by the platform team; ask in #platform before changing.
title: Add dark mode toggle
id: story-mwrovghh-7lzs
status: backlog
# status above is managed by agentic-sdlc
priority: 10
team: platform   # a key only people read
type: feature
labels:
  - ui
  - accessibility
created: '2025-01-01'
updated: '2025-01-01'
research_complete: true
plan_complete: false
implementation_complete: false
reviews_complete: false
refinement_count: 2
---
# Add dark mode toggle

Some context before the first section.

## Summary
Night owls want a *dark* theme.
It should follow the OS setting:

```yaml
## not a heading
theme: auto
```

## Acceptance Criteria
- [ ] a toggle in settings
- [ ] remembers the choice

## Research
Uses CSS variables.

## Design Notes
A section the tool has never heard of.
";

#[test]
fn move_and_unblock_change_only_their_keys() {
    let env = TestEnv::init();
    let path = env.write_story("backlog", "add-dark-mode-toggle.md", HAND_EDITED);

    env.run(&["move", "add-dark-mode-toggle", "blocked"])
        .success();
    let blocked = env.path(".agentic-sdlc/blocked/add-dark-mode-toggle.md");
    assert!(!path.exists(), "moved, not copied");
    let front = env.frontmatter(&blocked);
    let today = front["updated"].as_str().expect("updated").to_string();
    assert_date(&today);
    assert_ne!(today, "2025-01-01", "a write stamps `updated`");
    let expected_blocked = HAND_EDITED
        .replace("status: backlog\n", "status: blocked\n")
        .replace("updated: '2025-01-01'", &format!("updated: '{today}'"))
        .replace(
            "refinement_count: 2\n",
            "refinement_count: 2\nblocked_reason: Moved to blocked by hand\n",
        );
    assert_eq!(env.read(&blocked), expected_blocked);

    // A person records why and what went wrong, then unblocks with a reset.
    env.edit(
        &blocked,
        "blocked_reason: Moved to blocked by hand\n",
        "blocked_reason: Waiting for the design review\nlast_error: 'Review failed: 1 blocker(s)'\n",
    );
    env.run(&["unblock", "add-dark-mode-toggle", "--reset"])
        .success();
    let ready = env.path(".agentic-sdlc/ready/add-dark-mode-toggle.md");
    let expected_ready = expected_blocked
        .replace("status: blocked\n", "status: ready\n")
        .replace("refinement_count: 2\n", "refinement_count: 0\n")
        .replace("blocked_reason: Moved to blocked by hand\n", "");
    assert_eq!(env.read(&ready), expected_ready);

    // Moving to the column it is already in writes nothing at all.
    let before = env.files();
    env.run(&["move", "add-dark-mode-toggle", "ready"])
        .success();
    assert_eq!(env.files(), before);
}

#[test]
fn windows_line_endings_survive_a_move() {
    let env = TestEnv::init();
    let text = "---\r\nid: story-crlf-0001\r\ntitle: Windows\r\nstatus: ready\r\nowner: bob\r\n---\r\n# Windows\r\n\r\n## Summary\r\nWritten on Windows.\r\n";
    env.write_story("ready", "windows.md", text);
    env.run(&["move", "windows", "done"]).success();
    let moved = env.read(".agentic-sdlc/done/windows.md");
    assert!(
        moved.ends_with("---\r\n# Windows\r\n\r\n## Summary\r\nWritten on Windows.\r\n"),
        "the body is untouched:\n{moved:?}"
    );
    assert!(moved.contains("owner: bob\r\n"), "{moved:?}");
    assert_eq!(
        moved.matches('\n').count(),
        moved.matches("\r\n").count(),
        "keys the tool writes use the file's line ending:\n{moved:?}"
    );
    let details = env.run_json(&["details", "windows"]);
    assert_eq!(details["story"]["status"], "done");
    assert_eq!(
        details["story"]["sections"]["Summary"],
        "Written on Windows."
    );
}

#[test]
fn the_old_numbered_layout_is_read_and_keeps_its_file_name() {
    let env = TestEnv::init();
    env.write_story(
        "backlog",
        "03-my-story.md",
        "---\nid: story-old-0003\ntitle: My story\npriority: 3\nstatus: backlog\n---\n# My story\n",
    );
    let details = env.run_json(&["details", "my-story"]);
    assert_eq!(details["story"]["slug"], "my-story");
    assert_eq!(details["story"]["id"], "story-old-0003");
    let status = env.status_json();
    assert_eq!(status["columns"]["backlog"][0]["slug"], "my-story");
    assert_eq!(status["recommended"][0]["slug"], "my-story");

    env.run(&["move", "my-story", "ready"]).success();
    assert!(env.path(".agentic-sdlc/ready/03-my-story.md").is_file());
    assert!(!env.path(".agentic-sdlc/ready/my-story.md").exists());
    env.run(&["move", "MY-STORY", "blocked"]).success();
    env.run(&["unblock", "my-story"]).success();
    assert!(env.path(".agentic-sdlc/backlog/03-my-story.md").is_file());
    env.run(&["validate"]).success();
}

#[cfg(unix)]
#[test]
fn files_keep_their_mode_and_new_files_follow_the_umask() {
    use std::os::unix::fs::PermissionsExt;

    let env = TestEnv::init();
    // Octal text, so a failure reads `600` rather than `384`.
    let mode = |path: &std::path::Path| {
        let mode = std::fs::metadata(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .permissions()
            .mode();
        format!("{:o}", mode & 0o7777)
    };
    // A file written the ordinary way shows what the umask gives new files.
    let umask_mode = mode(&env.write("reference.txt", "x"));
    let (_, _, story) = env.add("Dark mode", &[]);
    for path in [
        env.path(".agentic-sdlc.json"),
        env.path(".agentic-sdlc/.gitignore"),
        story.clone(),
    ] {
        assert_eq!(mode(&path), umask_mode, "{}", path.display());
    }

    // A mode a person chose survives a rewrite.
    let set_mode = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    set_mode(&story, 0o640);
    env.run(&["move", "dark-mode", "ready"]).success();
    assert_eq!(mode(&env.story_path("dark-mode")), "640");
    set_mode(&env.path(".agentic-sdlc.json"), 0o600);
    env.run(&["config", "concurrency", "2"]).success();
    assert_eq!(mode(&env.path(".agentic-sdlc.json")), "600");
}
