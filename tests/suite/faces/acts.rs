//! Acting from the page over plain HTTP: adding, editing, moving and unblocking go through the
//! command line's rules and writes, each refusal is answered with its reason, and a post from
//! another site, or without the token, changes nothing. Then searching and filtering the board.

use serde_json::Value as Json;

use super::serve::{client, get};
use super::{column_of, details, Served};
use crate::suite::common::TestEnv;

/// A form's body as a browser encodes it.
fn encoded(form: &[(&str, &str)]) -> String {
    let escape = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                b' ' => "+".to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    form.iter()
        .map(|(key, value)| format!("{}={}", escape(key), escape(value)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A POST of `form` to `url`, as a browser sends a form.
fn form_post(url: &str, form: &[(&str, &str)]) -> reqwest::RequestBuilder {
    client()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encoded(form))
}

/// Posts a form as the page's script does (asking for JSON): the status and the answer.
async fn act(served: &Served, path: &str, form: &[(&str, &str)]) -> (u16, Json) {
    let response = form_post(&served.at(path), form)
        .header("accept", "application/json")
        .header("origin", served.url.trim_end_matches('/'))
        .send()
        .await
        .expect("POST");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let answer = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{path} answered no JSON ({e}): {text}"));
    (status, answer)
}

/// The story files on the board, by path, with their text.
fn story_files(env: &TestEnv) -> Vec<(std::path::PathBuf, String)> {
    let mut files: Vec<_> = ["backlog", "ready", "in-progress", "done", "blocked"]
        .iter()
        .flat_map(|column| std::fs::read_dir(env.board().join(column)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            (path, text)
        })
        .collect();
    files.sort();
    files
}

fn message(answer: &Json) -> &str {
    answer["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_story_added_edited_and_moved_from_the_page_follows_the_command_lines_rules() {
    let env = TestEnv::init();
    env.configure_json(&serde_json::json!({"defaultLabels": ["team"]}));
    let served = Served::start(&env, None, &[]);

    // Add: the fields of `add`, written where `add` writes.
    let (status, added) = act(
        &served,
        "/stories",
        &[
            ("title", "Export the report"),
            ("type", "bug"),
            ("priority", "5"),
            ("labels", " ui, export ,"),
            ("body", "Plain words become the summary."),
        ],
    )
    .await;
    assert_eq!(status, 200, "{added}");
    assert!(
        message(&added).starts_with("Created export-the-report"),
        "{added}"
    );
    let id = added["story"]["id"].as_str().unwrap().to_string();
    assert_eq!(added["story"]["column"], "backlog");
    assert_eq!(column_of(&env, "export-the-report"), "backlog");
    let story = details(&env, &id);
    assert_eq!(story["title"], "Export the report");
    assert_eq!(story["type"], "bug");
    assert_eq!(story["priority"], 5);
    assert_eq!(story["labels"], serde_json::json!(["team", "ui", "export"]));
    assert!(
        story["sections"]["Summary"]
            .as_str()
            .unwrap()
            .contains("Plain words become the summary."),
        "{story}"
    );

    // Refusals say why and write nothing.
    let before = story_files(&env);
    for (form, status, why) in [
        (vec![("title", "   ")], 400, "the title must not be empty"),
        (
            vec![("title", "Two\u{7}bells")],
            400,
            "the title must be one line without control characters",
        ),
        (
            vec![("title", "Typed"), ("type", "epic")],
            400,
            "type `epic`",
        ),
        (
            vec![("title", "Soon"), ("priority", "soon")],
            400,
            "priority `soon`",
        ),
    ] {
        let (got, answer) = act(&served, "/stories", &form).await;
        assert_eq!(got, status, "{form:?}: {answer}");
        assert!(message(&answer).contains(why), "{form:?}: {answer}");
    }
    assert_eq!(story_files(&env), before, "a refused add writes nothing");

    // Edit: title, priority and labels, checked as the MCP tool checks them.
    let edit = format!("/story/{id}/edit");
    let (status, refused) = act(
        &served,
        &edit,
        &[("title", "Changed"), ("priority", "high"), ("labels", "x")],
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert!(message(&refused).contains("key `priority`"), "{refused}");
    assert_eq!(story_files(&env), before, "a refused edit writes nothing");
    let (status, edited) = act(
        &served,
        &edit,
        &[
            ("title", "Export the report as CSV"),
            ("priority", "-3"),
            ("labels", "csv"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{edited}");
    let story = details(&env, &id);
    assert_eq!(story["title"], "Export the report as CSV");
    assert_eq!(story["priority"], -3);
    assert_eq!(story["labels"], serde_json::json!(["csv"]));
    assert_eq!(story["type"], "bug", "what the form does not name is kept");
    assert!(
        story["sections"]["Summary"]
            .as_str()
            .unwrap()
            .contains("Plain words"),
        "the sections are kept"
    );

    // Move: `move`'s rules, and its words for a column it does not know.
    let moving = format!("/story/{id}/move");
    let (status, refused) = act(&served, &moving, &[("column", "archive")]).await;
    assert_eq!(status, 400, "{refused}");
    let cli = env.run(&["move", &id, "archive"]);
    cli.code(2);
    assert!(
        cli.stderr.contains(message(&refused)),
        "the page refuses in the command line's words: {refused} / {}",
        cli.stderr
    );
    let (status, moved) = act(&served, &moving, &[("column", "in_progress")]).await;
    assert_eq!(status, 200, "{moved}");
    assert_eq!(
        message(&moved),
        "Moved export-the-report from backlog to in-progress"
    );
    assert_eq!(column_of(&env, "export-the-report"), "in-progress");
    let (status, missing) = act(&served, "/story/no-such-story/move", &[("column", "ready")]).await;
    assert_eq!(status, 404, "{missing}");

    // Unblock: a story that is not blocked is refused, as `unblock` refuses it.
    let (status, refused) = act(&served, &format!("/story/{id}/unblock"), &[]).await;
    assert_eq!(status, 409, "{refused}");
    assert!(message(&refused).contains("is not blocked"), "{refused}");
    let (status, _) = act(&served, &moving, &[("column", "blocked")]).await;
    assert_eq!(status, 200);
    assert_eq!(
        details(&env, &id)["blocked_reason"],
        "Moved to blocked by hand"
    );
    // Its own page offers the button the strip has.
    let (_, page) = super::serve::get(&served.at(&format!("/story/{id}"))).await;
    assert!(
        page.contains(&format!("action=\"/story/{id}/unblock\"")),
        "{page}"
    );
    let (status, unblocked) = act(&served, &format!("/story/{id}/unblock"), &[]).await;
    assert_eq!(status, 200, "{unblocked}");
    assert_ne!(column_of(&env, "export-the-report"), "blocked");

    // A browser's plain form post (no script) is answered with a redirect.
    let plain = form_post(&served.at(&edit), &[("priority", "4")])
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status().as_u16(), 303);
    assert_eq!(plain.headers()["location"], format!("/story/{id}").as_str());
    assert_eq!(details(&env, &id)["priority"], 4);
}

#[tokio::test]
async fn an_action_from_another_site_or_without_the_token_changes_nothing() {
    let env = TestEnv::init();
    let (id, slug, _) = env.add("Stays where it is", &["--priority", "10"]);
    let served = Served::start(&env, None, &["--token", "page t0ken"]);
    let before = story_files(&env);
    let post = |path: &str, origin: Option<&str>, bearer: Option<&str>| {
        let mut request = form_post(
            &served.at(path),
            &[
                ("title", "Written anyway"),
                ("column", "done"),
                ("priority", "1"),
            ],
        )
        .header("accept", "application/json");
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(token) = bearer {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        request.send()
    };
    let paths = [
        "/stories".to_string(),
        format!("/story/{id}/edit"),
        format!("/story/{id}/move"),
        format!("/story/{id}/unblock"),
    ];
    for path in &paths {
        // The page's own origin without the token: refused, as every request without it is.
        let own = served.url.trim_end_matches('/');
        let response = post(path, Some(own), None).await.unwrap();
        assert_eq!(response.status().as_u16(), 401, "{path} without the token");
        // With the token, from another site: a form that site made the browser post.
        let response = post(path, Some("https://elsewhere.example"), Some("page t0ken"))
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 403, "{path} from another site");
        let text = response.text().await.unwrap();
        assert!(text.contains("another site"), "{path}: {text}");
    }
    assert_eq!(story_files(&env), before, "nothing was written");
    assert_eq!(column_of(&env, &slug), "backlog");

    // The same move with the token, from the page's origin, goes through.
    let response = post(
        &format!("/story/{id}/move"),
        Some(served.url.trim_end_matches('/')),
        Some("page t0ken"),
    )
    .await
    .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(column_of(&env, &slug), "done");
}

#[tokio::test]
async fn the_board_is_searched_and_filtered_on_the_server() {
    let env = TestEnv::init();
    let (csv, _, _) = env.add("Export as CSV", &["--label", "export"]);
    let (pdf, pdf_slug, _) = env.add("Export as PDF", &["--label", "export", "--label", "pdf"]);
    let (import, _, _) = env.add("Import users", &["--label", "import"]);
    env.run(&["move", &pdf_slug, "ready"]).success();
    let served = Served::start(&env, None, &[]);
    let cards = |page: &str| -> Vec<String> {
        page.split("<article class=\"card\" id=\"card-")
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .map(str::to_string)
            .collect()
    };

    for (query, listed) in [
        ("", vec![&csv, &import, &pdf]),
        ("?q=export", vec![&csv, &pdf]),
        ("?q=EXPORT+pdf", vec![&pdf]),
        ("?label=Export", vec![&csv, &pdf]),
        ("?q=export&label=import", vec![]),
        ("?column=ready", vec![&pdf]),
        // A short word may be part of a story's random id (`story-…-pas4` for "as"): the
        // test words are longer than the id's random part.
        ("?q=export&column=backlog", vec![&csv]),
    ] {
        for page in ["/", "/fragment/board"] {
            let (status, html) = get(&served.at(&format!("{page}{query}"))).await;
            assert_eq!(status, 200, "{page}{query}");
            let mut shown = cards(&html);
            shown.sort();
            let mut wanted: Vec<String> = listed.iter().map(|id| id.to_string()).collect();
            wanted.sort();
            // Whole page on failure: the message alone did not say why `as` also listed
            // "Import users" (its id ended in `pas4`).
            assert_eq!(shown, wanted, "{page}{query}:\n{html}");
        }
    }
    // The counts say how many of each column the filter lists.
    let (_, filtered) = get(&served.at("/fragment/board?q=export")).await;
    assert!(
        filtered.contains("backlog <span class=\"count\">1 of 2</span>"),
        "{filtered}"
    );
    assert!(
        filtered.contains("ready <span class=\"count\">1</span>"),
        "{filtered}"
    );
    // The page's search form shows what it searches for.
    let (_, page) = get(&served.at("/?q=export&label=pdf")).await;
    assert!(page.contains("id=\"q\" name=\"q\""), "{page}");
    assert!(page.contains("value=\"export\""), "{page}");
    assert!(page.contains("value=\"pdf\""), "{page}");
    let (status, refused) = get(&served.at("/fragment/board?column=archive")).await;
    assert_eq!(status, 400);
    assert!(refused.contains("unknown column `archive`"), "{refused}");
}
