//! `serve` in a real browser: headless Chromium over the DevTools protocol. A story added on
//! the command line appears, a run moves its card to done, and a human gate is decided with a
//! click. A screenshot of the board is left in the target folder.

use std::time::Duration;

use serde_json::json;

use super::cdp::{chromium, Browser};
use super::{details, stopped_for_a_person, Served};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

/// docs/design.md §19: a change shows on the page within 2 s.
pub(super) const LIVE: Duration = Duration::from_secs(2);

/// Where a card sits on the page, or null.
pub(super) fn card_column(id: &str) -> String {
    format!("((document.getElementById('card-{id}') || {{closest: () => null}}).closest('section[data-column]')?.dataset.column ?? null)")
}

#[tokio::test]
async fn the_board_page_follows_the_board_and_decides_a_gate_with_a_click() {
    let binary = chromium();
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let served = Served::start(&env, Some(&llm), &[]);
    let mut browser = Browser::launch(&binary);
    browser.open(&served.url);
    assert_eq!(
        browser.eval("document.querySelectorAll('section[data-column]').length"),
        json!(5)
    );
    browser
        .wait_for(
            "document.getElementById('live').classList.contains('on')",
            Duration::from_secs(10),
        )
        .expect("the page listens to the board's events");

    // A story added from the command line appears.
    let (id, _, _) = env.add("Shown <live> in the browser", &[]);
    let appeared = browser.wait_for(&format!("{} === 'backlog'", card_column(&id)), LIVE);
    assert!(
        appeared.is_some(),
        "the new card did not appear within {LIVE:?}"
    );
    assert_eq!(
        browser.eval(&format!(
            "document.querySelector('#card-{id} .title').textContent"
        )),
        json!("Shown <live> in the browser"),
        "story text is shown as text, not markup"
    );

    // A run moves it to done.
    env.run_with_llm(&llm, &["run", "--auto"]).success();
    let moved = browser.wait_for(&format!("{} === 'done'", card_column(&id)), LIVE);
    assert!(
        moved.is_some(),
        "the card did not move to done within {LIVE:?}"
    );
    assert_eq!(
        browser.eval(&format!(
            "document.querySelectorAll('#card-{id} .flag.on').length"
        )),
        json!(4),
        "every phase flag is lit: {}",
        browser.eval(&format!("document.getElementById('card-{id}').outerHTML"))
    );

    // A human gate, decided with a click on the story's page.
    env.configure_json(&json!({"phases": {"research": {"review": {"reviewer": "human"}}}}));
    let (gated, gated_slug, _) = env.add("Needs a person's yes", &[]);
    stopped_for_a_person(&env.run_with_llm(&llm, &["run", "--auto"]));
    browser.open(&served.at(&format!("/story/{gated}")));
    let offered = browser.wait_for("!!document.getElementById('approve')", LIVE);
    assert!(
        offered.is_some(),
        "the story page offers no decision: {}",
        browser.eval("document.body.innerText")
    );
    assert!(
        browser
            .eval("document.querySelector('#gate .output').textContent")
            .as_str()
            .unwrap()
            .contains("Research findings"),
        "the page shows what is to be judged"
    );
    save(&mut browser, "faces-story.png");
    browser.click("#approve");
    browser
        .wait_for(
            "!!document.getElementById('notice')",
            Duration::from_secs(10),
        )
        .expect("the decision was answered");
    assert!(browser
        .eval("document.getElementById('notice').textContent")
        .as_str()
        .unwrap()
        .starts_with("APPROVE"));
    let story = details(&env, &gated_slug);
    assert_eq!(story["phase_reviews"]["research"]["decision"], "APPROVE");
    assert_eq!(story["research_complete"], true);
    assert!(
        browser.eval("!document.getElementById('approve')") == json!(true),
        "nothing is left to decide"
    );
    browser.open(&served.url);
    assert_eq!(browser.eval(&card_column(&id)), json!("done"));
    assert_eq!(browser.eval(&card_column(&gated)), json!("ready"));
    save(&mut browser, "faces-board.png");
}

/// Keeps a screenshot of the page in the target folder, for a person to look at.
pub(super) fn save(browser: &mut Browser, name: &str) {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, browser.screenshot())
        .unwrap_or_else(|e| panic!("save {}: {e}", path.display()));
}

#[tokio::test]
async fn an_implement_gate_is_decided_after_reading_its_diff_and_an_empty_rejection_is_refused() {
    let binary = chromium();
    let env = TestEnv::init();
    crate::suite::night::make_repository(&env, true);
    env.configure_json(&json!({"phases": {"implement": {"review": {
        "reviewer": "human", "criteria": "The change stays in src/"
    }}}}));
    let (id, slug, _) = env.add("Change a file", &["--priority", "10"]);
    env.run(&["move", &slug, "ready"]).success();
    let path = env.story_path(&slug);
    env.edit(&path, "research_complete: false", "research_complete: true");
    env.edit(&path, "plan_complete: false", "plan_complete: true");
    let llm = FakeLlm::start().await;
    llm.push(
        "implement",
        crate::suite::fake_llm::Reply::tool(
            "write_file",
            json!({"path": "src/shown.rs", "content": "pub fn shown_on_the_page() {}\n"}),
        ),
    )
    .push(
        "implement",
        crate::suite::fake_llm::Reply::text("Added src/shown.rs."),
    );
    stopped_for_a_person(&env.run_with_llm(&llm, &["run", "--story", &slug]));

    let served = Served::start(&env, Some(&llm), &[]);
    let mut browser = Browser::launch(&binary);
    browser.open(&served.at(&format!("/story/{id}")));
    browser
        .wait_for("!!document.getElementById('gate-diff')", LIVE)
        .expect("the implement gate shows the change");
    let text = |browser: &mut Browser, selector: &str| {
        browser
            .eval(&format!("document.querySelector('{selector}').textContent"))
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(text(&mut browser, "#gate-criteria").contains("The change stays in src/"));
    assert_eq!(text(&mut browser, "#gate-attempt"), "Attempt 1");
    let listed = text(&mut browser, "#gate-diff ul.files");
    assert!(
        listed.contains("src/shown.rs") && listed.contains("+1"),
        "{listed}"
    );
    // Each file's diff is folded until the person opens it.
    assert_eq!(
        browser.eval("document.querySelector('#gate details.file-diff').open"),
        json!(false)
    );
    browser.click("#gate details.file-diff summary");
    assert_eq!(
        browser.eval("document.querySelector('#gate details.file-diff').open"),
        json!(true)
    );
    assert!(text(&mut browser, "#gate details.file-diff pre")
        .contains("+pub fn shown_on_the_page() {}"));
    save(&mut browser, "faces-implement-gate.png");

    // Reject with an empty box: refused, and nothing is decided.
    browser.click("#reject");
    browser
        .wait_for(
            "!!document.body && document.body.innerText.includes('needs a reason')",
            Duration::from_secs(10),
        )
        .expect("an empty rejection is refused with why");
    assert_eq!(
        details(&env, &slug)["phase_reviews"]["implement"]["decision"],
        "PENDING"
    );
    // With a reason, the rejection goes through, recorded as given on the page.
    browser.open(&served.at(&format!("/story/{id}")));
    browser
        .wait_for("!!document.getElementById('reject')", LIVE)
        .expect("the gate is offered again");
    browser.eval("document.getElementById('feedback').value = 'keep it in lib.rs'");
    browser.click("#reject");
    browser
        .wait_for(
            "!!document.getElementById('notice')",
            Duration::from_secs(10),
        )
        .expect("the decision was answered");
    let story = details(&env, &slug);
    assert_eq!(story["phase_reviews"]["implement"]["decision"], "REJECT");
    assert_eq!(story["phase_reviews"]["implement"]["decided_by"], "web");
    assert_eq!(
        story["blocked_reason"],
        "Phase implement rejected by review: keep it in lib.rs"
    );
}

#[tokio::test]
async fn the_needs_you_strip_follows_the_board_live_and_unblocks_with_a_click() {
    let binary = chromium();
    let env = TestEnv::init();
    let (id, slug, _) = env.add("Stuck story", &[]);
    env.add("Fine story", &[]);
    let served = Served::start(&env, None, &[]);
    let mut browser = Browser::launch(&binary);
    browser.open(&served.url);
    browser
        .wait_for(
            "document.getElementById('live').classList.contains('on')",
            Duration::from_secs(10),
        )
        .expect("the page listens to the board's events");
    assert_eq!(
        browser.eval("!!document.getElementById('needs-you')"),
        json!(false),
        "nobody is needed yet"
    );

    // A story blocks: the strip appears without a reload, above the columns, saying why.
    env.run(&["move", &slug, "blocked"]).success();
    let shown = browser.wait_for(
        &format!("!!document.querySelector('#needs-you li[data-story=\"{id}\"]')"),
        LIVE,
    );
    assert!(
        shown.is_some(),
        "the strip did not show the blocked story within {LIVE:?}"
    );
    let strip = browser
        .eval("document.getElementById('needs-you').innerText")
        .as_str()
        .unwrap()
        .to_string();
    assert!(strip.contains("Needs you 1"), "{strip}");
    assert!(strip.contains("1 blocked"), "{strip}");
    assert!(strip.contains("Moved to blocked by hand"), "{strip}");
    assert_eq!(
        browser.eval(
            "document.getElementById('needs-you').compareDocumentPosition(document.querySelector('.board')) & Node.DOCUMENT_POSITION_FOLLOWING"
        ),
        json!(4),
        "the strip comes before the columns"
    );
    save(&mut browser, "faces-needs-you.png");
    // Another change patches the page again: the strip is replaced, not added to.
    let (other, _, _) = env.add("Comes later", &[]);
    browser
        .wait_for(&format!("!!document.getElementById('card-{other}')"), LIVE)
        .expect("the page follows the board");
    assert_eq!(
        browser.eval("document.querySelectorAll('section.needs-you').length"),
        json!(1),
        "one strip after two patches"
    );

    // Unblock with a click: the story leaves blocked, and the strip empties.
    browser.click(&format!(
        "#needs-you li[data-story=\"{id}\"] button.unblock"
    ));
    let cleared = browser.wait_for(
        "!document.getElementById('needs-you')",
        Duration::from_secs(10),
    );
    assert!(
        cleared.is_some(),
        "the strip still shows: {}",
        browser.eval("document.body.innerText")
    );
    assert_ne!(details(&env, &slug)["status"], "blocked");
}
