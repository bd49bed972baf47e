//! A large board over plain HTTP: the page shows the first cards of each column and the count
//! of every one, stays far below a megabyte, and unfolds a column a page at a time.

use serde_json::Value as Json;

use super::serve::{client, get};
use super::{write_stories, Served};
use crate::suite::common::TestEnv;

/// The first cards a column shows, and how many one "more" unfolds (`serve/pages/board.rs`).
const FIRST: usize = 30;
const MORE: usize = 100;

/// The contract's bound for the first page of a 10,000-story board.
const MEGABYTE: usize = 1_000_000;

/// The ids of the cards in one column of a board page or fragment, in order.
fn cards_in(page: &str, column: &str) -> Vec<String> {
    let start = format!("<section class=\"column\" data-column=\"{column}\"");
    let section = page
        .split(&start)
        .nth(1)
        .and_then(|rest| rest.split("</section>").next())
        .unwrap_or_else(|| panic!("no {column} column in the page"));
    ids_of(section)
}

fn ids_of(html: &str) -> Vec<String> {
    html.split("<article class=\"card\" id=\"card-")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_string)
        .collect()
}

async fn more(served: &Served, column: &str, query: &str) -> (u16, Json) {
    let response = client()
        .get(served.at(&format!("/fragment/column/{column}?{query}")))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Json::String(text)),
    )
}

#[tokio::test]
async fn a_large_board_page_shows_each_columns_head_and_count_and_unfolds_on_demand() {
    let env = TestEnv::init();
    let columns = [
        ("backlog", 800),
        ("ready", 500),
        ("in-progress", 300),
        ("done", 300),
        ("blocked", 100),
    ];
    let ids: Vec<(&str, Vec<String>)> = columns
        .iter()
        .map(|(column, count)| (*column, write_stories(&env, column, *count)))
        .collect();
    let served = Served::start(&env, None, &[]);

    let (status, page) = get(&served.url).await;
    assert_eq!(status, 200);
    assert!(
        page.len() < MEGABYTE / 4,
        "the first page of 2,000 stories is {} bytes",
        page.len()
    );
    for (column, column_ids) in &ids {
        let total = column_ids.len();
        assert!(
            page.contains(&format!(
                "{column} <span class=\"count\">{total}</span></h2>"
            )),
            "{column} shows its count"
        );
        assert_eq!(
            cards_in(&page, column),
            column_ids[..FIRST],
            "{column} shows its first cards, in order"
        );
        assert!(
            page.contains(&format!(
                "class=\"more\" data-column=\"{column}\" title=\"Show the next {MORE}\">{} more</button>",
                total - FIRST
            )),
            "{column} says how many it holds back"
        );
    }
    // The strip of 100 blocked stories names 50 and counts the rest.
    assert!(page.contains("Needs you <span class=\"count\">100</span>"));
    assert!(page.contains("<li>and 50 more</li>"));
    // Folding is what keeps it small: the same board unfolded is over the bound.
    let (_, unfolded) = get(&served.at("/?show=800,500,300,300,100")).await;
    assert!(unfolded.len() > MEGABYTE, "{} bytes", unfolded.len());
    assert_eq!(cards_in(&unfolded, "backlog").len(), 800);

    // "More" unfolds the next cards after the last one shown, and says what is left.
    let backlog = &ids[0].1;
    let (status, next) = more(&served, "backlog", &format!("after={}", backlog[FIRST - 1])).await;
    assert_eq!(status, 200, "{next}");
    assert_eq!(
        ids_of(next["cards"].as_str().unwrap()),
        backlog[FIRST..FIRST + MORE]
    );
    assert_eq!(next["left"], 800 - FIRST - MORE);
    let (_, last) = more(&served, "backlog", &format!("after={}", backlog[780])).await;
    assert_eq!(ids_of(last["cards"].as_str().unwrap()), backlog[781..]);
    assert_eq!(last["left"], 0);
    // A card the column no longer lists: the page must ask for the board again.
    let (status, _) = more(&served, "backlog", "after=story-nowhere").await;
    assert_eq!(status, 409);
    // A page that unfolded keeps what it unfolded when it is sent the board whole again.
    let (_, again) = get(&served.at("/fragment/board?show=130,30")).await;
    assert_eq!(cards_in(&again, "backlog"), backlog[..130]);
    assert_eq!(cards_in(&again, "ready").len(), FIRST);
    assert!(again.contains("670 more</button>"));

    // Filtered and folded: the count and the fold are of what the filter lists.
    let (_, even) = get(&served.at("/fragment/board?label=even")).await;
    assert!(even.contains("backlog <span class=\"count\">400 of 800</span>"));
    let evens: Vec<String> = backlog.iter().step_by(2).cloned().collect();
    assert_eq!(cards_in(&even, "backlog"), evens[..FIRST]);
    assert!(even.contains("370 more</button>"));
    let (_, next) = more(
        &served,
        "backlog",
        &format!("after={}&label=even", evens[FIRST - 1]),
    )
    .await;
    assert_eq!(
        ids_of(next["cards"].as_str().unwrap()),
        evens[FIRST..FIRST + MORE]
    );
}
