//! Live work in a real browser (headless Chromium): a running story's card counts its time,
//! and shows its tokens and last tool call as its transcript grows; its page adds transcript
//! lines as they are written. No reload in between: a mark left on the page stays.

use std::time::Duration;

use serde_json::json;

use super::browser::LIVE;
use super::cdp::{chromium, Browser};
use super::live::{play_running, reply, tool_ran, write_lines};
use super::Served;
use crate::suite::common::TestEnv;

fn text(browser: &mut Browser, selector: &str) -> String {
    browser
        .eval(&format!(
            "document.querySelector({selector:?})?.textContent ?? ''"
        ))
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_running_story_shows_its_time_tokens_and_last_tool_and_its_page_tails_the_transcript() {
    let binary = chromium();
    let env = TestEnv::init();
    let (id, slug, _) = env.add("Being worked on", &[]);
    let played = play_running(&env, &id, &slug, "implement");
    write_lines(
        &played.transcript,
        &[reply(
            100,
            20,
            Some(("read_file", r#"{"path": "src/lib.rs"}"#)),
        )],
    );
    let served = Served::start(&env, None, &[]);
    let mut browser = Browser::launch(&binary);
    browser.open(&served.url);
    browser.eval("window.notReloaded = true");
    let card = format!("#card-{id}");
    browser
        .wait_for(
            &format!("document.querySelector('{card} .tokens')?.textContent === ' · 120 tokens'"),
            LIVE,
        )
        .unwrap_or_else(|| panic!("no tokens on the card: {}", text(&mut browser, &card)));
    assert_eq!(
        text(&mut browser, &format!("{card} .tool")),
        " · calling read_file"
    );
    // The action began 75 s ago; the card counts on, second by second.
    let elapsed = text(&mut browser, &format!("{card} .elapsed"));
    assert!(
        elapsed.starts_with("for 1m ") || elapsed.starts_with("for 2m "),
        "{elapsed}"
    );
    browser
        .wait_for(
            &format!("document.querySelector('{card} .elapsed').textContent !== {elapsed:?}"),
            Duration::from_secs(3),
        )
        .expect("the elapsed time counts on");

    write_lines(
        &played.transcript,
        &[
            tool_ran("read_file", false),
            reply(300, 40, Some(("write_file", r#"{"path": "src/new.rs"}"#))),
            tool_ran("write_file", true),
        ],
    );
    browser
        .wait_for(
            &format!("document.querySelector('{card} .tokens').textContent === ' · 460 tokens'"),
            LIVE,
        )
        .unwrap_or_else(|| panic!("the tokens did not follow: {}", text(&mut browser, &card)));
    assert_eq!(
        text(&mut browser, &format!("{card} .tool")),
        " · last: write_file (failed)"
    );
    assert_eq!(browser.eval("window.notReloaded === true"), json!(true));
    super::browser::save(&mut browser, "faces-live-card.png");

    // The story's page: the transcript grows as it is written, and a new one appears.
    browser.open(&served.at(&format!("/story/{id}")));
    browser.eval("window.notReloaded = true");
    let pre = "#transcripts pre";
    assert!(text(&mut browser, pre).contains("→ read_file"));
    // Give the page a moment to listen before the lines come.
    std::thread::sleep(Duration::from_millis(500));
    write_lines(&played.transcript, &[reply(500, 60, None)]);
    browser
        .wait_for(
            &format!(
                "document.querySelector({pre:?}).textContent.includes('tokens: 500 in, 60 out')"
            ),
            LIVE,
        )
        .unwrap_or_else(|| panic!("the transcript was not tailed: {}", text(&mut browser, pre)));
    let review = played.transcript.with_file_name(
        played
            .transcript
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .replace("implement", "review"),
    );
    std::fs::write(&review, "").unwrap();
    write_lines(&review, &[reply(7, 3, None)]);
    browser
        .wait_for(
            "document.querySelectorAll('#transcripts details').length === 2 && document.querySelector('#transcripts details:last-of-type pre').textContent.includes('tokens: 7 in, 3 out')",
            LIVE,
        )
        .unwrap_or_else(|| {
            panic!(
                "the new transcript did not appear: {}",
                text(&mut browser, "#transcripts")
            )
        });
    assert!(text(&mut browser, "#transcripts details:last-of-type summary").contains("review"));
    // Each line once, in order.
    assert_eq!(
        browser.eval(&format!(
            "document.querySelector({pre:?}).textContent.split('tokens: 500 in, 60 out').length"
        )),
        json!(2)
    );
    assert_eq!(browser.eval("window.notReloaded === true"), json!(true));
    super::browser::save(&mut browser, "faces-live-story.png");
}
