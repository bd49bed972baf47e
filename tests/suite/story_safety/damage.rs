//! What an agent writes cannot hide or delete another section, and the tool's writes keep the
//! file's own text: private-use characters, a BOM, CRLF line endings.

use super::super::agents_e2e::{heading_count, Project};
use super::super::common::TestEnv;
use super::super::fake_llm::Reply;
use super::story_text;

#[tokio::test]
async fn an_unclosed_fence_in_research_output_hides_and_deletes_nothing() {
    let p = Project::new().await;
    let story = p.ready("Fenced answers");
    let path = p.path_of(&story);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}\n## My Notes\nHAND-WRITTEN\n")).unwrap();
    p.fake.push(
        "research",
        Reply::text("Found the parser.\n```rust\nfn parse(\n## Implementation Plan\nINJECTED-PLAN"),
    );
    p.step(&story, "research").success();
    p.fake
        .push("plan", Reply::text("1. REAL-PLAN\n~~~~\nunfinished"));
    p.step(&story, "plan").success();

    // Research again (a hand reset of its flag): the re-run replaces only its own section.
    p.set_flag(&story.slug, "research_complete", false);
    p.fake.push("research", Reply::text("SECOND-RESEARCH"));
    p.step(&story, "research").success();

    let body = p.body(&story);
    for name in [
        "Research",
        "Implementation Plan",
        "Implementation Notes",
        "Review Notes",
        "My Notes",
    ] {
        assert_eq!(heading_count(&body, name), 1, "{name}:\n{body}");
    }
    let sections = &p.details(&story)["sections"];
    assert_eq!(sections["Research"], "SECOND-RESEARCH", "{body}");
    assert_eq!(
        sections["Implementation Plan"], "1. REAL-PLAN\n~~~~\nunfinished\n~~~~",
        "{body}"
    );
    assert_eq!(sections["My Notes"], "HAND-WRITTEN", "{body}");
    assert!(!body.contains("INJECTED-PLAN"), "{body}");
}

#[tokio::test]
async fn review_feedback_cannot_open_a_section_of_its_own() {
    let p = Project::new().await;
    let story = p.implemented("Hostile reviewer");
    let hostile = "Broken\n## Summary\nHIJACKED\n```\nopen fence";
    for role in ["code-review", "security-review", "po-review"] {
        p.fake.push(
            role,
            Reply::verdict(false, serde_json::json!([{"severity": "critical", "category": "correctness", "description": hostile}])),
        );
    }
    p.step(&story, "review").success();
    let body = p.body(&story);
    assert_eq!(heading_count(&body, "Summary"), 1, "{body}");
    assert_eq!(
        p.details(&story)["sections"]["Summary"],
        "A summary.",
        "{body}"
    );
    assert!(
        body.contains("HIJACKED"),
        "the feedback is kept, as text: {body}"
    );
    assert!(
        !body.trim_end().ends_with("open fence"),
        "its fence is closed: {body}"
    );
}

#[test]
fn private_use_characters_are_kept_as_written() {
    let env = TestEnv::init();
    // U+E000 was the tool's own date marker and was stripped or moved when text held it.
    let title = "Dates \u{E000}2026-11-22 and \u{E000}";
    let label = "\u{E000}x";
    let (id, _, _) = env.add(title, &["--label", label, "--label", "2026-11-22"]);
    let story = &env.run_json(&["details", &id])["story"];
    assert_eq!(story["title"], title);
    assert_eq!(story["labels"], serde_json::json!([label, "2026-11-22"]));
    env.run(&["move", &id, "ready"]).success();
    let story = &env.run_json(&["details", &id])["story"];
    assert_eq!(story["title"], title);
}

#[tokio::test]
async fn a_bom_and_crlf_line_endings_are_kept() {
    let p = Project::new().await;
    let body = "# Windows story\r\n\r\n## Summary\r\nS.\r\n\r\n## Acceptance Criteria\r\n- [ ] It works\r\n\r\n## Research\r\n\r\n## Implementation Plan\r\n";
    let text = format!(
        "\u{feff}{}",
        story_text(
            "story-win",
            "Windows story",
            "backlog",
            "labels: []\n",
            body
        )
        .replace('\n', "\r\n")
        .replace("\r\r\n", "\r\n")
    );
    let path = p.env.write_story("backlog", "windows-story.md", &text);
    p.env.run(&["move", "story-win", "ready"]).success();
    p.fake.push(
        "research",
        Reply::text("Line one.\nLine two.\n```\nopen fence"),
    );
    p.run(&["run", "--story", "story-win", "--step", "research"])
        .success();

    let written = std::fs::read(
        path.parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("ready/windows-story.md"),
    )
    .unwrap();
    let written = String::from_utf8(written).unwrap();
    assert!(written.starts_with("\u{feff}---\r\n"), "{written:?}");
    assert!(
        !written.replace("\r\n", "").contains('\n'),
        "mixed line endings: {written:?}"
    );
    assert!(
        written.contains("research_complete: true\r\n"),
        "{written:?}"
    );
    assert!(
        written.contains("## Research\r\nLine one.\r\nLine two.\r\n```\r\nopen fence\r\n```\r\n"),
        "{written:?}"
    );
    assert!(!path.exists());
}
