//! Property tests of the story parser and writer (docs/design.md §13): arbitrary bytes, arbitrary
//! nested YAML and arbitrary section text. CI runs a bounded number of cases (a few seconds);
//! `AGENTIC_SDLC_FUZZ_CASES=100000 cargo test --test all -- story_safety::fuzz` runs longer.
//!
//! Invariants: nothing panics; a story that parses is written back byte for byte; a parse
//! error names a line of the file; parse(write(story)) keeps every key and section; a change
//! touches only the key or section it means to touch.

use std::path::PathBuf;

use agentic_sdlc::board::frontmatter::Frontmatter;
use agentic_sdlc::board::sections::STANDARD_SECTIONS;
use agentic_sdlc::board::{sections, Column, Story};
use proptest::prelude::*;
use serde_norway::Value;

fn config() -> ProptestConfig {
    let cases = std::env::var("AGENTIC_SDLC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Pieces of text that mean something to YAML, Markdown or the tool, so that random text
/// reaches the interesting paths far more often than random bytes alone.
const TOKENS: &[&str] = &[
    "\n",
    "\r\n",
    "  ",
    "    ",
    "\t",
    "- ",
    "-",
    ": ",
    ":",
    "? ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "'",
    "\"",
    "\\",
    "#",
    " #",
    "|",
    "|-",
    ">",
    "&a ",
    "*a",
    "!!str ",
    "%",
    "@",
    "`",
    "```",
    "~~~",
    "````",
    "---",
    "...",
    "## ",
    "# ",
    "### ",
    "Summary",
    "Research",
    "id: ",
    "story-1",
    "review_history:",
    "refinement_iterations:",
    "phase_reviews:",
    "usage:",
    "decision: ",
    "APPROVED",
    "timestamp: ",
    "startedAt: ",
    "2026-11-22",
    "2026-11-22T10:00:00.000Z",
    "priority: ",
    "10",
    "-3",
    "true",
    "null",
    "~",
    "labels:",
    "x",
    "é",
    "\u{feff}",
    "\u{E000}",
    "\u{85}",
    "\u{2028}",
    "\0",
];

fn token_text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..max).prop_map(|t| t.concat())
}

/// A file that starts like a story, so the frontmatter reader sees most inputs.
fn story_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        (token_text(120), token_text(60)).prop_map(|(front, body)| {
            format!("---\nid: story-1\n{front}\n---\n{body}").into_bytes()
        }),
        (token_text(120), prop::collection::vec(any::<u8>(), 0..40)).prop_map(|(front, tail)| {
            let mut bytes = format!("---\r\nid: a\r\n{front}\r\n---\r\n").into_bytes();
            bytes.extend(tail);
            bytes
        }),
    ]
}

/// Reads everything any command reads from a story; none of it may panic. The quick reads of
/// the latest review and rework must agree with the full ones.
fn read_everything(story: &Story) {
    if let (Ok(progress), Ok(history)) = (story.progress(), story.review_history()) {
        let latest = history.last().map(|r| (r.decision, r.timestamp.clone()));
        assert_eq!(progress.latest_review, latest, "{}", story.to_text());
    }
    if let (Ok(progress), Ok(iterations)) = (story.progress(), story.refinement_iterations()) {
        let latest = iterations.last().map(|i| i.started_at.clone());
        assert_eq!(
            progress.latest_rework_started,
            latest,
            "{}",
            story.to_text()
        );
    }
    let board = agentic_sdlc::board::Board {
        dir: PathBuf::from("."),
        stories: vec![story.clone()],
        broken: Vec::new(),
    };
    let _ = agentic_sdlc::board::validate::check_board(&board);
    let _ = agentic_sdlc::board::lookup::find(&board.stories, "story");
    let _ = story.review_history();
    let _ = story.latest_review();
    let _ = story.refinement_iterations();
    let _ = story.latest_iteration();
    let _ = story.phase_reviews();
    let _ = story.usage();
    let _ = story.frontmatter().to_mapping();
    let _ = story.non_empty_sections();
    let _ = story.resume_column();
    let _ = agentic_sdlc::board::StorySummary::from(story.clone());
}

/// YAML values as the tool and people write them: scalars, lists and mappings, nested.
fn yaml_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| Value::Number(n.into())),
        token_text(8).prop_map(Value::String),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Sequence),
            prop::collection::vec((token_text(4), inner), 0..5).prop_map(|pairs| {
                Value::Mapping(
                    pairs
                        .into_iter()
                        .map(|(k, v)| (Value::String(k), v))
                        .collect(),
                )
            }),
        ]
    })
}

/// Keys a change sets to any value: the tool's own records and keys of a person's. (Keys the
/// loader types, such as `labels`, take only their type; a change never writes another.)
const KEYS: &[&str] = &[
    "custom_key",
    "review_history",
    "phase_reviews",
    "notes",
    "created",
    "x-extra",
];
/// Sections a change writes: the standard ones and one a person added.
fn section_name() -> impl Strategy<Value = &'static str> {
    let names: Vec<&'static str> = STANDARD_SECTIONS.into_iter().chain(["My Notes"]).collect();
    prop::sample::select(names)
}

/// A story written the way the tool writes a new one, with hand-written text in its sections.
fn base_story(crlf: bool, hand: &str) -> Story {
    let mut front = Frontmatter::empty();
    front.set("id", &"story-1");
    front.set("title", &"Fuzzed");
    front.set("status", &"ready");
    let mut body = sections::template("Fuzzed", Some(hand));
    body.push_str("\n## My Notes\nkept by hand\n");
    let story = Story::new(front, body, Column::Ready, "fuzzed".into()).unwrap();
    let mut text = story.to_text();
    if crlf {
        text = text.replace('\n', "\r\n");
    }
    Story::parse(&text, PathBuf::from("ready/fuzzed.md"), Column::Ready).unwrap()
}

fn reparse(story: &Story) -> Story {
    Story::parse(&story.to_text(), story.path.clone(), story.column)
        .unwrap_or_else(|err| panic!("{err}\n{}", story.to_text()))
}

/// One change a run or a person makes.
#[derive(Debug, Clone)]
enum Op {
    Set(&'static str, Value),
    Remove(&'static str),
    Section(&'static str, String),
    Append(&'static str, String),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (prop::sample::select(KEYS), yaml_value()).prop_map(|(k, v)| Op::Set(k, v)),
        prop::sample::select(KEYS).prop_map(Op::Remove),
        (section_name(), section_text()).prop_map(|(s, t)| Op::Section(s, t)),
        (section_name(), section_text()).prop_map(|(s, t)| Op::Append(s, t)),
    ]
}

fn section_text() -> impl Strategy<Value = String> {
    prop_oneof![token_text(40), any::<String>()]
}

fn section_names(story: &Story) -> Vec<String> {
    sections::all(story.body())
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// One `review_history` item as a person or another tool might format it.
fn review_item() -> impl Strategy<Value = String> {
    let decision = prop::sample::select(
        &[
            "APPROVED",
            "REJECTED",
            "FAILED",
            "'APPROVED'",
            "\"REJECTED\"",
            "APPROVED # by hand",
            "approved",
            "",
        ][..],
    );
    let timestamp = prop::sample::select(
        &[
            "'2026-11-22T10:00:00.000Z'",
            "2026-11-22T10:00:00.000Z",
            "\"2026-11-23\"",
            "x",
            "",
            "'a: b'",
            "[]",
        ][..],
    );
    let extra = prop::collection::vec(
        prop::sample::select(
            &[
                "feedback: fine",
                "feedback: |\n    decision: REJECTED\n    timestamp: y",
                "blockers: []",
                "blockers:\n  - a",
                "codeReviewPassed: true",
                "  ",
                "# note",
                "issues:\n  - decision: nested",
                "severity: LOW",
                "",
            ][..],
        ),
        0..4,
    );
    (decision, timestamp, extra, any::<bool>()).prop_map(|(decision, timestamp, extra, first)| {
        let mut fields = vec![
            format!("decision: {decision}"),
            format!("timestamp: {timestamp}"),
        ];
        if first {
            fields.reverse();
        }
        fields.extend(extra.into_iter().map(str::to_string));
        let body = fields.join("\n").replace('\n', "\n  ");
        format!("- {body}\n")
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn quick_reads_of_the_latest_review_agree_with_full_ones(
        items in prop::collection::vec(review_item(), 0..4),
        indented in any::<bool>(),
    ) {
        let mut history = items.concat();
        if indented {
            history = history.lines().map(|l| format!("  {l}\n")).collect();
        }
        let text = format!("---\nid: a\nreview_history:\n{history}refinement_iterations:\n- startedAt: x\n  iteration: 1\n---\n");
        if let Ok(story) = Story::parse(&text, PathBuf::from("ready/x.md"), Column::Ready) {
            read_everything(&story);
        }
    }

    #[test]
    fn any_bytes_give_a_story_or_an_error_with_a_line(bytes in story_like_bytes()) {
        match Story::parse_bytes(&bytes, PathBuf::from("ready/x.md"), Column::Ready) {
            Ok(story) => {
                prop_assert_eq!(story.to_text().into_bytes(), bytes, "written back byte for byte");
                read_everything(&story);
            }
            Err(err) => {
                let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
                prop_assert!(err.line >= 1 && err.line <= lines, "line {} of {}: {}", err.line, lines, err);
            }
        }
    }

    #[test]
    fn any_value_round_trips_through_the_frontmatter(value in yaml_value(), crlf in any::<bool>()) {
        let mut story = base_story(crlf, "");
        story.set("custom_key", &value);
        let again = reparse(&story);
        let read: Option<Value> = again.get("custom_key").unwrap();
        prop_assert_eq!(read.unwrap_or(Value::Null), value);
        prop_assert_eq!(again.to_text(), story.to_text());
    }

    #[test]
    fn nesting_past_the_bound_is_an_error_on_its_line(depth in 1usize..130, block in any::<bool>()) {
        let value = if block {
            (0..depth).map(|i| format!("{}k{i}:\n", " ".repeat(i + 1))).collect::<String>()
                + &" ".repeat(depth + 1) + "leaf: 1\n"
        } else {
            format!(" {}{}\n", "[".repeat(depth), "]".repeat(depth))
        };
        let text = format!("---\nid: a\ndeep:{}{value}---\n", if block { "\n" } else { "" });
        let levels = depth + 2 - usize::from(!block);
        match Story::parse(&text, PathBuf::from("x.md"), Column::Ready) {
            Ok(story) => {
                prop_assert!(levels <= 64, "{levels} levels accepted");
                let _ = story.frontmatter().to_mapping().unwrap();
            }
            Err(err) => {
                prop_assert!(levels > 64, "{levels} levels refused: {err}");
                prop_assert!(err.message.contains("64 levels"), "{err}");
            }
        }
    }

    #[test]
    fn changes_touch_only_their_key_or_section_and_survive_a_rewrite(
        crlf in any::<bool>(),
        hand in section_text(),
        ops in prop::collection::vec(op(), 1..8),
    ) {
        let mut story = base_story(crlf, &hand);
        for op in ops {
            let before = story.clone();
            match &op {
                Op::Set(key, value) => story.set(key, value),
                Op::Remove(key) => story.remove(key),
                Op::Section(name, text) => story.set_section(name, text),
                Op::Append(name, text) => story.append_to_section(name, text),
            }
            match &op {
                Op::Set(key, _) | Op::Remove(key) => {
                    prop_assert_eq!(story.body(), before.body());
                    for other in before.frontmatter().keys().filter(|k| k != key) {
                        prop_assert_eq!(story.frontmatter().raw_entry(other), before.frontmatter().raw_entry(other), "{}", other);
                    }
                }
                Op::Section(name, text) | Op::Append(name, text) => {
                    prop_assert_eq!(story.frontmatter().to_text(), before.frontmatter().to_text());
                    let mut names = section_names(&before);
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_string());
                    }
                    prop_assert_eq!(section_names(&story), names, "no section appears or vanishes");
                    // Sections by position: a person may have written a heading twice, and
                    // the tool writes the first section of a name.
                    let old = sections::all(before.body());
                    let target = old.iter().position(|(n, _)| n.eq_ignore_ascii_case(name));
                    for (index, ((other, content), (_, now))) in
                        old.iter().zip(sections::all(story.body())).enumerate()
                    {
                        if Some(index) == target {
                            continue;
                        }
                        // A fence a person left open is closed at the end of its section.
                        let added = now.strip_prefix(content.as_str()).map(str::trim);
                        prop_assert!(
                            added.is_some_and(|a| a.chars().all(|c| c == '`' || c == '~')),
                            "{} changed from {:?} to {:?}", other, content, now
                        );
                    }

                    if let Op::Section(..) = op {
                        let expected = sections::contain(text.trim()).replace("\r\n", "\n");
                        let got = story.section(name).unwrap().replace("\r\n", "\n");
                        prop_assert_eq!(got.as_str(), expected.trim());
                    }
                }
            }
            if crlf {
                prop_assert!(!story.to_text().replace("\r\n", "").contains('\n'), "mixed line endings");
            }
        }
        let again = reparse(&story);
        prop_assert_eq!(again.to_text(), story.to_text());
        prop_assert_eq!(again.frontmatter().to_mapping().unwrap(), story.frontmatter().to_mapping().unwrap());
        prop_assert_eq!(sections::all(again.body()), sections::all(story.body()));
        read_everything(&again);
    }
}
