use super::*;

const FILE: &str = "---\nid: story-a\ntitle: Add dark mode\npriority: 10\nstatus: ready\nmy_key: kept  # note\nresearch_complete: false\n---\n# Add dark mode\n\n## Summary\nHand written.\n\n## Research\n";

fn story() -> Story {
    Story::parse(FILE, PathBuf::from("ready/add-dark-mode.md"), Column::Ready).unwrap()
}

#[test]
fn round_trips_byte_for_byte() {
    assert_eq!(story().to_text(), FILE);
    let crlf = FILE.replace('\n', "\r\n");
    let parsed = Story::parse(&crlf, PathBuf::from("x.md"), Column::Ready).unwrap();
    assert_eq!(parsed.to_text(), crlf);
    assert_eq!(parsed.meta.title, "Add dark mode");
}

#[test]
fn changes_touch_only_their_keys_and_sections() {
    let mut s = story();
    s.set_phase_flag(crate::board::Phase::Research, true);
    s.set_section("Research", "Findings.");
    let expected = FILE
        .replace("research_complete: false", "research_complete: true")
        .replace("## Research\n", "## Research\nFindings.\n");
    assert_eq!(s.to_text(), expected);
    assert!(s.meta.completed.contains(crate::board::Phase::Research));
}

#[test]
fn a_bom_and_crlf_survive_a_rewrite() {
    let crlf = format!("\u{feff}{}", FILE.replace('\n', "\r\n"));
    let mut s = Story::parse(&crlf, PathBuf::from("x.md"), Column::Ready).unwrap();
    assert_eq!(s.to_text(), crlf);
    s.set("priority", &5);
    s.set("labels", &["a", "b"]);
    s.set_section("Research", "Line one\nLine two");
    s.append_to_section("Review Notes", "Noted.");
    let text = s.to_text();
    assert!(text.starts_with("\u{feff}---\r\n"), "{text:?}");
    assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
    let again = Story::parse(&text, PathBuf::from("x.md"), Column::Ready).unwrap();
    assert_eq!(again.meta.priority, 5);
    assert_eq!(again.section("Research"), Some("Line one\r\nLine two"));
}

#[test]
fn a_blank_line_inside_the_last_record_is_no_panic() {
    for key in ["review_history", "refinement_iterations"] {
        let text = format!(
            "---\nid: a\n{key}:\n- decision: APPROVED\n  \n  timestamp: '2026-11-22T10:00:00Z'\n  startedAt: x\n---\n"
        );
        let story = Story::parse(&text, PathBuf::from("x.md"), Column::Ready).unwrap();
        let _ = story.progress();
        let _ = crate::board::StorySummary::from(story.clone());
    }
}

#[test]
fn deep_frontmatter_and_bad_bytes_are_errors_with_lines() {
    let deep = format!("---\nid: a\nx: {}\n---\n", "[".repeat(100_000));
    let err = Story::parse(&deep, PathBuf::from("x.md"), Column::Ready).unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(err.message.contains("64 levels"), "{err}");
    let err = Story::parse_bytes(
        b"---\nid: a\ntitle: \xff\n---\n",
        PathBuf::from("x.md"),
        Column::Ready,
    )
    .unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(err.message.contains("UTF-8"), "{err}");
}

#[test]
fn changes_replay_onto_a_fresher_copy() {
    let mut ours = story();
    ours.set("priority", &1);
    ours.append_to_section("Summary", "Tool note.");
    ours.set_column(Column::InProgress);
    let edited = FILE.replace("Hand written.", "Hand written, then edited.");
    let mut theirs = Story::parse(
        &edited,
        PathBuf::from("ready/add-dark-mode.md"),
        Column::Ready,
    )
    .unwrap();
    theirs.replay(ours.changes()).unwrap();
    assert_eq!(theirs.column, Column::InProgress);
    assert_eq!(theirs.meta.priority, 1);
    assert_eq!(
        theirs.section("Summary"),
        Some("Hand written, then edited.\n\nTool note.")
    );
}

#[test]
fn closing_delimiter_skips_lookalikes() {
    let text = "---\nid: a\n----\nx: '---'\n--- not\n---\r\nbody\n";
    let (start, end) = closing_delimiter(text, 4).unwrap();
    assert_eq!(&text[start..end], "---\r\n");
    assert_eq!(closing_delimiter("---\nid: a\n", 4), None);
    assert_eq!(closing_delimiter("---\n---", 4), Some((4, 7)));
}

#[test]
fn old_layout_slug() {
    assert_eq!(
        slug_from_path(Path::new("backlog/03-add-login.md")),
        "add-login"
    );
    assert_eq!(
        slug_from_path(Path::new("backlog/add-login.md")),
        "add-login"
    );
    assert_eq!(
        slug_from_path(Path::new("backlog/2026-plan.md")),
        "2026-plan"
    );
}

#[test]
fn errors_point_at_file_lines() {
    let err = Story::parse(
        "---\nid: a\npriority: high\n---\n",
        PathBuf::from("x.md"),
        Column::Ready,
    )
    .unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(err.message.contains("priority"));
    let err = Story::parse("no frontmatter", PathBuf::from("x.md"), Column::Ready).unwrap_err();
    assert_eq!(err.line, 1);
    let err =
        Story::parse("---\ntitle: x\n---\n", PathBuf::from("x.md"), Column::Ready).unwrap_err();
    assert!(err.message.contains("id"));
}
