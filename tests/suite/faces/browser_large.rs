//! A long column in a real browser (headless Chromium): it shows its first cards and a button
//! that says how many it holds back; the button unfolds the next ones; live changes keep what
//! is shown the head of the column, unfolded or not.

use std::time::Duration;

use serde_json::json;

use super::browser::LIVE;
use super::cdp::{chromium, Browser};
use super::{write_stories, Served};
use crate::suite::common::TestEnv;

fn backlog_ids(browser: &mut Browser) -> Vec<String> {
    let ids = browser.eval(
        "[...document.querySelectorAll('section[data-column=backlog] article.card')].map(c => c.dataset.story)",
    );
    serde_json::from_value(ids).unwrap()
}

fn more_text(browser: &mut Browser) -> serde_json::Value {
    browser.eval(
        "document.querySelector('section[data-column=backlog] button.more')?.textContent ?? null",
    )
}

#[tokio::test]
async fn a_long_column_unfolds_and_stays_the_head_of_the_column_as_the_board_changes() {
    let binary = chromium();
    let env = TestEnv::init();
    let ids = write_stories(&env, "backlog", 70);
    let served = Served::start(&env, None, &[]);
    let mut browser = Browser::launch(&binary);
    browser.open(&served.url);
    browser
        .wait_for(
            "document.getElementById('live').classList.contains('on')",
            Duration::from_secs(10),
        )
        .expect("the page listens to the board's events");
    assert_eq!(backlog_ids(&mut browser), ids[..30]);
    assert_eq!(more_text(&mut browser), json!("40 more"));
    assert_eq!(
        browser.eval("document.querySelector('section[data-column=backlog] .count').textContent"),
        json!("70")
    );

    // A change below the fold stays folded; one above it shows; the count follows.
    let board = env.board().join("backlog");
    env.edit(
        board.join("backlog-story-0050.md"),
        "title: backlog story 50",
        "title: Edited below the fold",
    );
    env.edit(
        board.join("backlog-story-0005.md"),
        "title: backlog story 5",
        "title: Edited above the fold",
    );
    browser
        .wait_for(
            &format!(
                "document.querySelector('#card-{} .title').textContent === 'Edited above the fold'",
                ids[5]
            ),
            LIVE,
        )
        .expect("the change above the fold shows");
    assert_eq!(
        backlog_ids(&mut browser),
        ids[..30],
        "nothing below the fold came up"
    );
    let (first, _, _) = env.add("Comes first", &["--priority", "1"]);
    browser
        .wait_for(
            "document.querySelector('section[data-column=backlog] .count').textContent === '71'",
            LIVE,
        )
        .expect("the count follows the board");
    let shown = backlog_ids(&mut browser);
    assert_eq!(shown[0], first);
    assert_eq!(shown[1..], ids[..30]);
    assert_eq!(more_text(&mut browser), json!("40 more"));

    // The button unfolds the next cards in order, and goes once nothing is held back.
    browser.click("section[data-column=backlog] button.more");
    browser
        .wait_for(
            "document.querySelectorAll('section[data-column=backlog] article.card').length === 71",
            LIVE,
        )
        .expect("the column unfolds");
    let shown = backlog_ids(&mut browser);
    assert_eq!(shown[1..], ids[..]);
    assert_eq!(more_text(&mut browser), json!(null));
    assert_eq!(
        browser.eval(&format!(
            "document.querySelector('#card-{} .title').textContent",
            ids[50]
        )),
        json!("Edited below the fold"),
        "an unfolded card is as the board has it now"
    );

    // Unfolded, a change far down shows in place.
    env.edit(
        board.join("backlog-story-0065.md"),
        "title: backlog story 65",
        "title: Edited once unfolded",
    );
    browser
        .wait_for(
            &format!(
                "document.querySelector('#card-{} .title').textContent === 'Edited once unfolded'",
                ids[65]
            ),
            LIVE,
        )
        .expect("a change to an unfolded card shows");
    assert_eq!(backlog_ids(&mut browser)[1..], ids[..]);
}
