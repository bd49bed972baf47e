//! Bytes no story should hold: the board reports the file with path and line and goes on.

use super::super::common::TestEnv;
use super::{status_ids, story_text};

#[test]
fn a_blank_line_inside_the_last_record_does_not_take_the_board_down() {
    let env = TestEnv::init();
    // The whitespace-only line inside the last item used to panic the frontmatter reader, and
    // with it `status` and `run` for the whole board.
    for (file, key) in [
        ("reviewed.md", "review_history:\n- decision: REJECTED\n  \n  timestamp: '2026-11-22T10:00:00.000Z'\n  feedback: x\n"),
        ("reworked.md", "refinement_iterations:\n- iteration: 1\n    \n  startedAt: '2026-11-22T10:00:00.000Z'\n"),
    ] {
        let id = format!("story-{}", file.trim_end_matches(".md"));
        env.write_story("in-progress", file, &story_text(&id, "T", "in-progress", key, "# T\n"));
    }
    env.write_story(
        "ready",
        "fine.md",
        &story_text("story-fine", "Fine", "ready", "", "# Fine\n"),
    );

    let mut ids = status_ids(&env);
    ids.sort();
    assert_eq!(ids, ["story-fine", "story-reviewed", "story-reworked"]);
    env.run(&["run", "--dry-run", "--auto"]).success();
    env.run(&["details", "reviewed"]).success();
}

#[test]
fn frontmatter_nested_deeper_than_64_levels_is_a_parse_error_with_path_and_line() {
    let env = TestEnv::init();
    // 100,000 flow levels in a key the loader reads took 43 s; 65 block levels in one it does
    // not read parsed without complaint.
    let flow = format!("labels: {}\n", "[".repeat(100_000));
    let block: String = (0..65)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect::<String>()
        + &" ".repeat(65)
        + "leaf: 1\n";
    let flow_path = env.write_story(
        "ready",
        "flow.md",
        &story_text("story-flow", "F", "ready", &flow, "# F\n"),
    );
    let block_path = env.write_story(
        "ready",
        "block.md",
        &story_text("story-block", "B", "ready", &block, "# B\n"),
    );
    env.write_story(
        "ready",
        "fine.md",
        &story_text("story-fine", "Fine", "ready", "", "# Fine\n"),
    );

    assert_eq!(status_ids(&env), ["story-fine"]);
    let out = env.run(&["validate"]);
    out.code(1);
    for (path, line) in [(flow_path, 7), (block_path, 71)] {
        let name = path.file_name().unwrap().to_str().unwrap();
        let expected =
            format!("ready/{name}:{line}: the frontmatter is nested more than 64 levels deep");
        assert!(
            out.stdout.contains(&expected) || out.stderr.contains(&expected),
            "{expected}\n{}{}",
            out.stdout,
            out.stderr
        );
    }
    let out = env.run(&["details", "flow"]);
    out.code(1)
        .stderr_has("flow.md:7: the frontmatter is nested more than 64 levels deep");
}

#[test]
fn any_bytes_give_a_story_or_an_error_naming_path_and_line() {
    let env = TestEnv::init();
    let ready = env.board().join("ready");
    let files: [(&str, &[u8]); 6] = [
        ("latin1.md", b"---\nid: story-l\ntitle: caf\xe9\n---\n"),
        ("empty.md", b""),
        ("nul.md", b"---\nid: story-n\x00\n---\n"),
        ("unclosed.md", b"---\nid: story-u\n"),
        ("tabs.md", b"---\nid: story-t\nlabels:\n\t- a\n---\n"),
        ("flow.md", b"---\nid: story-f\nx: {a: [b, {c: d}\n---\n"),
    ];
    for (name, bytes) in files {
        std::fs::write(ready.join(name), bytes).unwrap();
    }
    // A NUL inside a plain scalar may read as text, and a broken key that only `details`
    // reads leaves the story listed; the rest must be reported, not listed.
    let ids = status_ids(&env);
    for broken in ["story-l", "story-u", "story-t"] {
        assert!(!ids.iter().any(|id| id == broken), "{ids:?}");
    }
    let out = env.run(&["validate"]);
    out.code(1);
    let report = format!("{}{}", out.stdout, out.stderr);
    for (name, line) in [
        ("latin1.md", 3),
        ("empty.md", 1),
        ("unclosed.md", 1),
        ("tabs.md", 4),
    ] {
        let at = format!("ready/{name}:{line}:");
        assert!(report.contains(&at), "{at} missing in:\n{report}");
    }
}
