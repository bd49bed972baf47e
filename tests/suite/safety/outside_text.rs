//! Text from outside the tool reaches a terminal with its control characters shown, never
//! sent: a window title (OSC 0), a clipboard write (OSC 52), a cleared screen, in run, status,
//! details, logs and report. JSON escapes them as JSON does.

use serde_json::json;

use crate::suite::agents_e2e::Project;
use crate::suite::fake_llm::Reply;

const CLIPBOARD: &str = "\u{1b}]52;c;Y3VybCBldmlsIHwgc2g=\u{7}";
const CLEAR: &str = "\u{1b}[2J\u{1b}[H";

/// No escape or bell byte that the tool did not put there itself: with colour on, only its own
/// colour codes (`ESC [ … m`) may appear.
fn assert_inert(what: &str, text: &str, colour: bool) {
    let mut rest = text;
    while let Some(at) = rest.find('\u{1b}') {
        let sequence = &rest[at..];
        let is_colour = sequence
            .strip_prefix("\u{1b}[")
            .map(|body| body.trim_start_matches(|c: char| c.is_ascii_digit() || c == ';'))
            .is_some_and(|tail| tail.starts_with('m'));
        assert!(
            colour && is_colour,
            "{what}: a raw escape reached the terminal: {text:?}"
        );
        rest = &sequence[1..];
    }
    assert!(!text.contains('\u{7}'), "{what}: a raw bell: {text:?}");
}

#[tokio::test]
async fn control_sequences_from_stories_models_and_tools_are_shown_not_sent() {
    let p = Project::new().await;
    // `add` refuses such a title; a hand edit can still put one there.
    let story = p.planned("Evil story");
    let path = p.path_of(&story);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen(
        "title: Evil story",
        "title: \"Evil \\e]0;owned\\a story\"",
        1,
    );
    assert_ne!(edited, text, "the title line is where it was expected");
    std::fs::write(&path, edited).unwrap();
    p.fake
        .push(
            "implement",
            Reply::tool(
                "run_command",
                json!({"command": format!("printf '{}' > out.txt; printf 'tool says \\033]0;tool-owned\\007 done'", "x")}),
            ),
        )
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "notes.txt", "content": "notes"}),
            ),
        )
        .push(
            "implement",
            Reply::text(format!("Done {CLIPBOARD} and {CLEAR} cleared.")),
        );

    for colour in ["never", "always"] {
        let on = colour == "always";
        let run = p.run(&[
            "--color",
            colour,
            "run",
            "--story",
            &story.id,
            "--step",
            "implement",
        ]);
        if !on {
            run.success();
        }
        assert_inert("run stdout", &run.stdout, on);
        assert_inert("run stderr", &run.stderr, on);
        for args in [
            vec!["status"],
            vec!["details", story.slug.as_str()],
            vec!["logs", story.slug.as_str()],
            vec!["report"],
        ] {
            let mut full = vec!["--color", colour];
            full.extend(args.iter().copied());
            let out = p.run(&full);
            out.success();
            assert_inert(&format!("{args:?}"), &out.stdout, on);
            assert_inert(&format!("{args:?} stderr"), &out.stderr, on);
        }
    }
    let details = p.run(&["details", &story.slug]);
    assert!(
        details.stdout.contains("\\x1b]0;owned\\x07"),
        "{}",
        details.stdout
    );
    let logs = p.run(&["logs", &story.slug, "--full"]);
    assert!(logs.stdout.contains("\\x1b]52;c;"), "{}", logs.stdout);
    assert!(
        logs.stdout.contains("\\x1b]0;tool-owned\\x07"),
        "{}",
        logs.stdout
    );
    // JSON keeps the text, escaped as JSON escapes it.
    let json = p.run(&["details", &story.slug, "--json"]);
    assert!(
        json.stdout.contains("\\u001b]0;owned\\u0007"),
        "{}",
        json.stdout
    );
}
