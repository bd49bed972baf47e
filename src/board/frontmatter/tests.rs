use super::*;

const TEXT: &str = "id: story-1\ntitle: \"Quoted: title\"\n# a comment\ncustom_key: keep me   # trailing\nlabels:\n- a\n- b\npriority: 10\n";

#[test]
fn untouched_text_round_trips() {
    let fm = Frontmatter::parse(TEXT).unwrap();
    assert_eq!(fm.to_text(), TEXT);
    assert_eq!(
        fm.keys().collect::<Vec<_>>(),
        ["id", "title", "custom_key", "labels", "priority"]
    );
}

#[test]
fn get_parses_values() {
    let fm = Frontmatter::parse(TEXT).unwrap();
    assert_eq!(
        fm.get::<String>("title").unwrap().as_deref(),
        Some("Quoted: title")
    );
    assert_eq!(
        fm.get::<Vec<String>>("labels").unwrap().unwrap(),
        ["a", "b"]
    );
    assert_eq!(fm.get::<i64>("priority").unwrap(), Some(10));
    assert_eq!(fm.get::<i64>("missing").unwrap(), None);
}

#[test]
fn set_changes_only_that_entry() {
    let mut fm = Frontmatter::parse(TEXT).unwrap();
    fm.set("priority", &5);
    fm.set("title", &"Quoted: title");
    assert_eq!(fm.to_text(), TEXT.replace("priority: 10", "priority: 5"));
    fm.set("new_key", &true);
    assert!(fm.to_text().ends_with("priority: 5\nnew_key: true\n"));
}

#[test]
fn comments_after_a_changed_or_removed_key_stay() {
    let text = "status: ready\n# status is set by the tool\n\n# second note\nowner: bob\nnotes: |+\n  kept\n\n# after a block\nz: 1\n";
    let mut fm = Frontmatter::parse(text).unwrap();
    fm.set("status", &"done");
    fm.set("notes", &"new\n\n");
    assert_eq!(
        fm.to_text(),
        text.replace("status: ready", "status: done")
            .replace("  kept\n", "  new\n")
    );
    fm.remove("status");
    fm.remove("notes");
    assert_eq!(
        fm.to_text(),
        "# status is set by the tool\n\n# second note\nowner: bob\n# after a block\nz: 1\n"
    );
    assert_eq!(
        fm.line_of("z"),
        Some(9),
        "lines still count from the original text"
    );
    assert_eq!(fm.get::<String>("owner").unwrap().as_deref(), Some("bob"));
}

#[test]
fn written_entries_follow_the_line_ending() {
    let mut fm = Frontmatter::parse("id: a\r\nstatus: ready\r\n").unwrap();
    fm.set("status", &"done");
    fm.set("labels", &["x", "y"]);
    assert_eq!(
        fm.to_text(),
        "id: a\r\nstatus: done\r\nlabels:\r\n- x\r\n- y\r\n"
    );
    assert_eq!(
        fm.get::<Vec<String>>("labels").unwrap().unwrap(),
        ["x", "y"]
    );
}

#[test]
fn set_none_removes() {
    let mut fm = Frontmatter::parse(TEXT).unwrap();
    fm.set_opt::<String>("custom_key", None);
    assert!(!fm.to_text().contains("custom_key"));
}

#[test]
fn dates_are_quoted() {
    let mut fm = Frontmatter::empty();
    fm.set("created", &"2026-11-22");
    assert_eq!(fm.to_text(), "created: '2026-11-22'\n");
    #[derive(serde::Serialize)]
    struct At {
        #[serde(rename = "startedAt")]
        started_at: &'static str,
        note: &'static str,
    }
    fm.set(
        "items",
        &vec![At {
            started_at: "2026-11-22T10:00:00.000Z",
            note: "2026-11-22 was a Sunday",
        }],
    );
    assert!(
        fm.to_text()
            .contains("- startedAt: '2026-11-22T10:00:00.000Z'\n  note: 2026-11-22 was a Sunday\n"),
        "{}",
        fm.to_text()
    );
    assert_eq!(
        fm.get::<String>("created").unwrap().as_deref(),
        Some("2026-11-22")
    );
}

#[test]
fn text_with_private_use_characters_is_written_as_it_is() {
    // U+E000 was once the tool's own date marker; text holding it came back mangled.
    let mut fm = Frontmatter::empty();
    let note = "\u{E000}2026-11-22 \u{E000} datez0q0x";
    fm.set("items", &vec![("2026-11-23", note)]);
    fm.set("updated", &"2026-11-22");
    assert!(fm.to_text().contains("'2026-11-23'"), "{}", fm.to_text());
    assert_eq!(
        fm.get::<Vec<(String, String)>>("items").unwrap().unwrap(),
        [("2026-11-23".to_string(), note.to_string())]
    );
    assert_eq!(fm.to_text().lines().last(), Some("updated: '2026-11-22'"));
}

#[test]
fn values_libyaml_would_misread_are_written_in_flow_style() {
    let mut fm = Frontmatter::parse("id: a\r\n").unwrap();
    let value = vec![vec!["\n\u{2028}", "\u{85}x"]];
    fm.set("k", &value);
    let text = fm.to_text();
    assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
    let again = Frontmatter::parse(&text).unwrap();
    assert_eq!(again.get::<Vec<Vec<String>>>("k").unwrap().unwrap(), value);
}

#[test]
fn unicode_spaces_are_part_of_a_value_as_in_yaml() {
    // Found by the fuzz test: the fast path trimmed U+2000, which YAML keeps.
    let mut fm = Frontmatter::empty();
    fm.set("k", &"\u{2000}a\u{2000}");
    assert_eq!(
        fm.get::<String>("k").unwrap().as_deref(),
        Some("\u{2000}a\u{2000}")
    );
    let fm = Frontmatter::parse("k: \u{3000}\nh:\n- decision: \u{2000}A\n").unwrap();
    assert_eq!(fm.get::<String>("k").unwrap().as_deref(), Some("\u{3000}"));
    assert_eq!(fm.last_item_fields("h", &["decision"]), None);
}

#[test]
fn last_item_reads_only_the_tail() {
    let text = "h:\n- n: 1\n  s: a\n- n: 2\n  s: b\nz: 1\n";
    let fm = Frontmatter::parse(text).unwrap();
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Item {
        n: u32,
        s: String,
    }
    assert_eq!(
        fm.last_item::<Item>("h").unwrap(),
        Some(Item {
            n: 2,
            s: "b".into()
        })
    );
    let indented = Frontmatter::parse("h:\n  - n: 1\n    s: a\n  - n: 3\n    s: c\n").unwrap();
    assert_eq!(indented.last_item::<Item>("h").unwrap().unwrap().n, 3);
    let flow = Frontmatter::parse("h: [{n: 4, s: d}]\n").unwrap();
    assert_eq!(flow.last_item::<Item>("h").unwrap().unwrap().n, 4);
    let empty = Frontmatter::parse("h: []\n").unwrap();
    assert_eq!(empty.last_item::<Item>("h").unwrap(), None);
}

#[test]
fn last_item_fields_reads_simple_values_or_declines() {
    let text = "h:\n- timestamp: '2026-11-22T10:00:00.000Z'\n  decision: REJECTED\n  issues:\n  - decision: nested\n- timestamp: '2026-11-23T10:00:00.000Z'\n  blockers: []\n  decision: APPROVED\nz: 1\n";
    let fm = Frontmatter::parse(text).unwrap();
    assert_eq!(
        fm.last_item_fields("h", &["timestamp", "decision"]),
        Some(vec![
            "2026-11-23T10:00:00.000Z".to_string(),
            "APPROVED".to_string()
        ])
    );
    let missing = Frontmatter::parse("h:\n- timestamp: x\n").unwrap();
    assert_eq!(
        missing.last_item_fields("h", &["timestamp", "decision"]),
        None
    );
    let escaped = Frontmatter::parse("h:\n- decision: \"A\\u0042\"\n").unwrap();
    assert_eq!(escaped.last_item_fields("h", &["decision"]), None);
    let flow = Frontmatter::parse("h: [{decision: A}]\n").unwrap();
    assert_eq!(flow.last_item_fields("h", &["decision"]), None);
}

#[test]
fn errors_carry_lines() {
    let err = Frontmatter::parse("id: 1\nid: 2\n").unwrap_err();
    assert_eq!(err.line, 1);
    let fm = Frontmatter::parse("id: x\nlabels: [a, b\npriority: 1\n").unwrap();
    let err = fm.get::<Vec<String>>("labels").unwrap_err();
    assert_eq!(err.line, 1, "{err:?}");
    let err = fm.get::<i64>("id").unwrap_err();
    assert_eq!(err.line, 0);
    assert!(err.message.contains("id"));
}
