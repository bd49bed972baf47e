//! Acting from the page in a real browser (headless Chromium): a story added with the form the
//! "n" key opens lands in backlog, on disk and on the board; moved with its card's button, its
//! file moves and its card follows; a refusal is shown in the form; the board is searched and
//! filtered, and stays filtered while it refreshes live.

use std::time::Duration;

use serde_json::json;

use super::browser::{card_column, save, LIVE};
use super::cdp::{chromium, Browser};
use super::{column_of, Served};
use crate::suite::common::TestEnv;

/// How long an action from the page may take to be answered.
const ANSWERED: Duration = Duration::from_secs(10);

/// The story files of one column, with their text.
fn files_in(env: &TestEnv, column: &str) -> Vec<(std::path::PathBuf, String)> {
    std::fs::read_dir(env.board().join(column))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect()
}

/// The page open on the board, listening to its events.
fn open_board(binary: &std::path::Path, served: &Served, path: &str) -> Browser {
    let mut browser = Browser::launch(binary);
    browser.open(&served.at(path));
    browser
        .wait_for(
            "document.getElementById('live').classList.contains('on')",
            Duration::from_secs(10),
        )
        .expect("the page listens to the board's events");
    browser
}

fn text(browser: &mut Browser, expression: &str) -> String {
    browser
        .eval(expression)
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn a_story_added_and_moved_from_the_page_lands_on_disk_and_in_its_column() {
    let binary = chromium();
    let env = TestEnv::init();
    let served = Served::start(&env, None, &[]);
    let mut browser = open_board(&binary, &served, "/");
    assert!(files_in(&env, "backlog").is_empty());

    // "n" opens the add form with the title focused; Escape closes it.
    browser.press("n");
    browser
        .wait_for("document.getElementById('add-dialog').open", ANSWERED)
        .expect("n opens the add form");
    assert_eq!(
        browser.eval("document.activeElement.id"),
        json!("add-title")
    );
    browser.press("Escape");
    browser
        .wait_for("!document.getElementById('add-dialog').open", ANSWERED)
        .expect("Escape closes the add form");

    // A title of blanks passes the browser's own check and is refused by `add`'s rule, in the
    // form, which stays open; nothing is written.
    browser.click("#new-story");
    browser.type_text("   ");
    browser.click("#add-submit");
    browser
        .wait_for(
            "!document.querySelector('#add-dialog .dialog-error').hidden",
            ANSWERED,
        )
        .expect("the refusal is shown");
    assert!(text(
        &mut browser,
        "document.querySelector('#add-dialog .dialog-error').textContent"
    )
    .contains("the title must not be empty"));
    assert_eq!(
        browser.eval("document.getElementById('add-dialog').open"),
        json!(true)
    );
    assert!(
        files_in(&env, "backlog").is_empty(),
        "a refused add writes nothing"
    );

    // Filled in and sent: in backlog on disk, and on the board without a reload.
    browser.eval("document.getElementById('add-title').value = ''");
    browser.click("#add-title");
    browser.type_text("Added from the <page>");
    browser.eval(
        "document.getElementById('add-type').value = 'bug'; \
         document.getElementById('add-priority').value = '7'; \
         document.getElementById('add-labels').value = 'ui, web'; \
         document.getElementById('add-body').value = 'Typed in a browser.'",
    );
    save(&mut browser, "faces-add-form.png");
    browser.click("#add-submit");
    browser
        .wait_for(
            "!document.getElementById('act-message').hidden && !document.getElementById('add-dialog').open",
            ANSWERED,
        )
        .expect("the add was answered");
    let said = text(
        &mut browser,
        "document.getElementById('act-message').textContent",
    );
    assert!(said.starts_with("Created added-from-the-page"), "{said}");
    let written = files_in(&env, "backlog");
    assert_eq!(written.len(), 1, "{written:?}");
    let (path, story) = &written[0];
    assert!(path.ends_with("backlog/added-from-the-page.md"), "{path:?}");
    assert!(story.contains("title: Added from the <page>"), "{story}");
    assert!(
        story.contains("type: bug") && story.contains("priority: 7"),
        "{story}"
    );
    assert!(story.contains("- ui\n- web"), "{story}");
    assert!(story.contains("Typed in a browser."), "{story}");
    let id = story
        .lines()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap()
        .trim()
        .to_string();
    let appeared = browser.wait_for(&format!("{} === 'backlog'", card_column(&id)), LIVE);
    assert!(
        appeared.is_some(),
        "the card did not appear within {LIVE:?}"
    );
    assert_eq!(
        text(
            &mut browser,
            &format!("document.querySelector('#card-{id} .title').textContent")
        ),
        "Added from the <page>"
    );

    // Moved with its card's button: the file moves, and so does the card.
    browser.click(&format!("#card-{id} .card-move"));
    browser
        .wait_for("document.getElementById('move-dialog').open", ANSWERED)
        .expect("the move form opens");
    assert_eq!(
        browser.eval("document.getElementById('move-to-backlog').disabled"),
        json!(true),
        "its own column is not offered"
    );
    browser.click("#move-to-ready");
    let moved = browser.wait_for(&format!("{} === 'ready'", card_column(&id)), LIVE);
    assert!(
        moved.is_some(),
        "the card did not move: {}",
        browser.eval("document.body.innerText")
    );
    assert_eq!(column_of(&env, "added-from-the-page"), "ready");
    assert!(files_in(&env, "backlog").is_empty());
    assert!(text(
        &mut browser,
        "document.getElementById('act-message').textContent"
    )
    .contains("Moved added-from-the-page from backlog to ready"));
    save(&mut browser, "faces-moved.png");

    // Edited on its own page: "e" opens the form with the story's values.
    browser.open(&served.at(&format!("/story/{id}")));
    browser.press("e");
    browser
        .wait_for("document.getElementById('edit-dialog').open", ANSWERED)
        .expect("e opens the edit form");
    assert_eq!(
        browser.eval("document.getElementById('edit-priority').value"),
        json!("7")
    );
    browser.eval("document.getElementById('edit-priority').value = '2'");
    browser.eval("document.getElementById('edit-labels').value = 'web'");
    browser.click("#edit-submit");
    browser
        .wait_for(
            "document.getElementById('story-head').getAttribute('data-priority') === '2'",
            LIVE,
        )
        .expect("the story page shows the edit");
    let story = std::fs::read_to_string(env.story_path("added-from-the-page")).unwrap();
    assert!(story.contains("priority: 2"), "{story}");
    assert!(story.contains("labels:\n- web\n"), "{story}");
}

#[tokio::test]
async fn the_board_is_searched_and_filtered_and_stays_filtered_as_it_refreshes() {
    let binary = chromium();
    let env = TestEnv::init();
    let (csv, _, _) = env.add("Export as CSV", &["--label", "export"]);
    let (pdf, _, _) = env.add("Export as PDF", &["--label", "export", "--label", "pdf"]);
    let (import, _, import_path) = env.add("Import users", &["--label", "import"]);
    let served = Served::start(&env, None, &[]);
    let mut browser = open_board(&binary, &served, "/");
    let shown = |browser: &mut Browser| -> Vec<String> {
        let ids = browser.eval(
            "[...document.querySelectorAll('article.card')].map(c => c.dataset.story).sort()",
        );
        serde_json::from_value(ids).unwrap()
    };
    let sorted = |ids: &[&String]| -> Vec<String> {
        let mut ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
        ids.sort();
        ids
    };
    assert_eq!(shown(&mut browser), sorted(&[&csv, &pdf, &import]));

    // "/" goes to the search; what is typed there filters the board.
    browser.press("/");
    assert_eq!(browser.eval("document.activeElement.id"), json!("q"));
    browser.type_text("export");
    let only_export = format!(
        "JSON.stringify([...document.querySelectorAll('article.card')].map(c => c.dataset.story).sort()) === {:?}",
        serde_json::to_string(&sorted(&[&csv, &pdf])).unwrap()
    );
    browser
        .wait_for(&only_export, LIVE)
        .unwrap_or_else(|| panic!("the search did not filter: {:?}", shown(&mut browser)));
    assert_eq!(
        browser.eval("document.getElementById('q').value"),
        json!("export"),
        "the typed '/' was not typed into the search"
    );
    // And a label.
    browser.eval("const l = document.getElementById('label'); l.value = 'PDF'; l.dispatchEvent(new Event('input', {bubbles: true}))");
    browser
        .wait_for(
            &format!("document.querySelectorAll('article.card').length === 1 && !!document.getElementById('card-{pdf}')"),
            LIVE,
        )
        .unwrap_or_else(|| panic!("the label did not filter: {:?}", shown(&mut browser)));
    assert!(
        text(&mut browser, "location.search").contains("q=export&label=PDF"),
        "the address keeps the filter"
    );
    assert_eq!(
        text(
            &mut browser,
            "document.querySelector('section[data-column=backlog] .count').textContent"
        ),
        "1 of 3"
    );

    // The board changes: a live refresh keeps the filter. A new matching story shows, one
    // that does not match stays out, and an edit that makes a story match brings it in.
    let (logs, _, _) = env.add("Export the logs", &["--label", "pdf"]);
    env.add("Unrelated work", &["--label", "pdf"]);
    browser
        .wait_for(&format!("!!document.getElementById('card-{logs}')"), LIVE)
        .unwrap_or_else(|| {
            panic!(
                "the new matching story did not show: {:?}",
                shown(&mut browser)
            )
        });
    env.edit(
        &import_path,
        "title: Import users",
        "title: Import and export users",
    );
    env.edit(&import_path, "- import", "- pdf");
    browser
        .wait_for(&format!("!!document.getElementById('card-{import}')"), LIVE)
        .unwrap_or_else(|| panic!("the edited story did not show: {:?}", shown(&mut browser)));
    assert_eq!(shown(&mut browser), sorted(&[&pdf, &logs, &import]));
    assert_eq!(
        text(
            &mut browser,
            "document.querySelector('section[data-column=backlog] .count').textContent"
        ),
        "3 of 5"
    );
    save(&mut browser, "faces-filtered.png");

    // A column: the others are hidden.
    browser.eval("const c = document.getElementById('column'); c.value = 'ready'; c.dispatchEvent(new Event('change', {bubbles: true}))");
    browser
        .wait_for(
            "document.querySelector('section[data-column=backlog]').hidden && document.querySelectorAll('article.card').length === 0",
            LIVE,
        )
        .expect("the column filter hides the other columns");

    // A reload keeps the search: it is in the address.
    browser.open(&served.at("/?q=csv"));
    assert_eq!(shown(&mut browser), sorted(&[&csv]));
    assert_eq!(
        browser.eval("document.getElementById('q').value"),
        json!("csv")
    );
}
