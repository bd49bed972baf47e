//! The morning after: `report --run X` tells what run X did and nothing later runs did, and
//! the HTML page shows why things went wrong. The page is checked with an XML parser over its
//! structure, not by looking for substrings.

use std::collections::HashMap;

use serde_json::json;

use super::make_repository;
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

/// Run ids, oldest first.
fn run_ids(env: &TestEnv) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(env.board().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        // Journals are `.jsonl`; the folder also remembers the model's tool protocol.
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .map(|path| path.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test]
async fn a_report_credits_a_run_with_its_own_merges_and_blocks_only() {
    let env = TestEnv::init();
    make_repository(&env, true);
    let llm = FakeLlm::start().await;
    env.configure_json(&json!({"phases": {"plan": {"review": {"reviewer": "ai"}}}}));
    let (_, merged, _) = env.add("Merged later", &["--priority", "10"]);
    let (_, rejected, _) = env.add("Rejected first", &["--priority", "20"]);
    llm.push_for(
        "phase-review",
        "Rejected first",
        Reply::text("REJECT: Too vague"),
    );

    // The first run stops early: refine and research of the first story only.
    env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "2"])
        .success();
    // The second blocks the other story at its plan gate, and merges nothing yet.
    env.run_with_llm(&llm, &["run", "--auto", "--story", &rejected])
        .code(3);
    // A person answers the rejection; the third run finishes both.
    env.run(&["unblock", &rejected]).success();
    env.run_with_llm(&llm, &["run", "--auto"]).success();
    let runs = run_ids(&env);
    assert_eq!(runs.len(), 3);

    let first = env.run_json(&["report", "--run", &runs[0]]);
    let story = &first["stories"][0];
    assert_eq!(story["slug"], merged.as_str());
    assert_eq!(story["outcome"], "progressed");
    assert!(
        story["mergedCommit"].is_null(),
        "a later merge is not this run's: {story}"
    );
    let text = env.run(&["report", "--run", &runs[0]]);
    assert!(!text.stdout.contains("merged "), "{}", text.stdout);

    let second = env.run_json(&["report", "--run", &runs[1]]);
    let story = &second["stories"][0];
    assert_eq!(
        story["outcome"], "blocked",
        "the board moved on; the run did not"
    );
    assert_eq!(
        story["blockedReason"],
        "Phase plan rejected by review: Too vague"
    );

    let third = env.run_json(&["report", "--run", &runs[2]]);
    let done: Vec<&serde_json::Value> = third["stories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "done")
        .collect();
    assert_eq!(done.len(), 2, "{third}");
    assert!(done
        .iter()
        .all(|s| s["mergedCommit"].as_str().is_some_and(|c| c.len() == 40)));
}

/// A night with a merged story, one whose review rejected it before a rework made it pass,
/// one its plan gate rejected, and one whose research failed.
async fn eventful_night(env: &TestEnv) -> FakeLlm {
    make_repository(env, true);
    let llm = FakeLlm::start().await;
    env.configure_json(&json!({"phases": {"plan": {"review": {"reviewer": "ai"}}}}));
    llm.push_for(
        "code-review",
        "Reworked story",
        Reply::verdict(
            false,
            json!([{"severity": "blocker", "category": "testing",
                    "description": "No test covers the limit\nand the reset is untested"}]),
        ),
    )
    .push_for(
        "phase-review",
        "Blocked story",
        Reply::text("REJECT: Out of scope for this quarter\nask the PO"),
    )
    .push_for(
        "research",
        "Failed story",
        Reply::bad_request("model is overloaded"),
    );
    for (title, priority) in [
        ("Merged story", "10"),
        ("Reworked story", "20"),
        ("Blocked story", "30"),
        ("Failed story", "40"),
    ] {
        env.add(title, &["--priority", priority]);
    }
    env.run_with_llm(&llm, &["run", "--auto"]).code(1);
    llm
}

/// A table's rows as their cells' text, by the table's class.
fn rows<'a>(document: &'a roxmltree::Document<'a>, class: &str) -> Vec<Vec<(String, String)>> {
    let table = document
        .descendants()
        .find(|n| n.has_tag_name("table") && n.attribute("class") == Some(class))
        .unwrap_or_else(|| panic!("no table.{class}"));
    table
        .descendants()
        .filter(|n| n.has_tag_name("tr") && n.parent().is_some_and(|p| p.has_tag_name("tbody")))
        .map(|tr| {
            tr.children()
                .filter(|c| c.has_tag_name("td"))
                .map(|td| {
                    let text: String = td
                        .descendants()
                        .filter(|n| n.is_text())
                        .filter_map(|n| n.text())
                        .collect::<Vec<_>>()
                        .join("");
                    (td.attribute("class").unwrap_or("").to_string(), text)
                })
                .collect()
        })
        .collect()
}

#[tokio::test]
async fn the_html_page_shows_why_things_went_wrong() {
    let env = TestEnv::init();
    let _llm = eventful_night(&env).await;
    let text = env.run(&["report"]);
    text.success();
    env.run(&["report", "--html", "night.html"]).success();
    let page = env.read("night.html");
    let document = roxmltree::Document::parse_with_options(
        &page,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|err| panic!("not well-formed: {err}"));

    // Stories: title next to slug, outcome, the result and the way on.
    let stories: HashMap<String, Vec<(String, String)>> = rows(&document, "stories")
        .into_iter()
        .map(|cells| (cells[0].1.clone(), cells))
        .collect();
    assert_eq!(stories.len(), 4, "{}", text.stdout);
    let cell = |slug: &str, index: usize| stories[slug][index].clone();
    for (slug, title) in [
        ("merged-story", "Merged story"),
        ("reworked-story", "Reworked story"),
        ("blocked-story", "Blocked story"),
        ("failed-story", "Failed story"),
    ] {
        assert_eq!(cell(slug, 1).1, title, "{slug}");
    }
    assert!(
        cell("merged-story", 7).1.starts_with("merged "),
        "{:?}",
        cell("merged-story", 7)
    );
    assert!(cell("reworked-story", 7).1.starts_with("merged "));
    assert_eq!(cell("reworked-story", 4).1, "1", "one rework");
    assert_eq!(
        cell("blocked-story", 2),
        ("outcome blocked".into(), "blocked".into())
    );
    assert_eq!(
        cell("blocked-story", 7).1,
        "Phase plan rejected by review: Out of scope for this quarter",
        "the first line of the reason"
    );
    assert!(cell("blocked-story", 8)
        .1
        .contains("agentic-sdlc unblock blocked-story"));
    assert_eq!(
        cell("failed-story", 2),
        ("outcome failed".into(), "failed".into())
    );
    let failure = cell("failed-story", 7).1;
    assert!(
        failure.contains("model is overloaded"),
        "the failed story's Result: {failure:?}"
    );

    // Actions: a rejected review and a gate's REJECT are rejections, with their first line;
    // a failed action shows its error.
    let actions = rows(&document, "actions");
    let action = |slug: &str, kind: &str| -> Vec<Vec<(String, String)>> {
        actions
            .iter()
            .filter(|r| r[0].1 == slug && r[1].1 == kind)
            .cloned()
            .collect()
    };
    let reviews = action("reworked-story", "review");
    assert_eq!(reviews.len(), 2);
    assert_eq!(
        reviews[0][2],
        ("outcome rejected".into(), "rejected".into())
    );
    assert!(
        reviews[0][6].1.contains("No test covers the limit"),
        "{:?}",
        reviews[0]
    );
    assert!(
        !reviews[0][6].1.contains("reset is untested"),
        "first line only"
    );
    assert_eq!(reviews[1][2].1, "completed");
    let plan = action("blocked-story", "plan");
    assert_eq!(plan[0][2].1, "rejected");
    assert!(plan[0][6].1.contains("Out of scope for this quarter"));
    let research = action("failed-story", "research");
    assert_eq!(research[0][2].1, "failed");
    assert!(research[0][6].1.contains("model is overloaded"));

    // The reviews table keeps the rejection and its feedback.
    let review_rows = rows(&document, "reviews");
    assert!(review_rows.iter().any(|r| r[0].1 == "reworked-story"
        && r[1].1 == "REJECTED"
        && r[3].1.contains("No test covers the limit")
        && !r[3].1.contains("reset is untested")));

    // The timeline: every rejection and block is wide enough to see.
    let bars: Vec<roxmltree::Node> = document
        .descendants()
        .filter(|n| n.has_tag_name("rect"))
        .collect();
    for outcome in ["rejected", "failed"] {
        let found: Vec<f64> = bars
            .iter()
            .filter(|b| b.attribute("class") == Some(outcome))
            .map(|b| b.attribute("width").unwrap().parse().unwrap())
            .collect();
        assert!(!found.is_empty(), "no {outcome} bar");
        assert!(found.iter().all(|w| *w >= 14.0), "{outcome}: {found:?}");
    }

    // The style colours the outcome cell by its own class, not a column number.
    let style = document
        .descendants()
        .find(|n| n.has_tag_name("style"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(!style.contains("nth-child"), "{style}");
    assert!(style.contains("td.outcome.failed"), "{style}");
}
