//! `serve` over plain HTTP: what the pages hold, bad input, the token, and events that follow
//! hand edits.

use std::time::Duration;

use serde_json::json;

use super::{column_of, details, stopped_for_a_person, Served};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

pub(super) fn client() -> reqwest::Client {
    // reqwest is built without a TLS provider of its own (the tool installs ring's).
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .expect("an HTTP client")
}

pub(super) async fn get(url: &str) -> (u16, String) {
    let response = client().get(url).send().await.expect("GET");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

#[tokio::test]
async fn pages_escape_story_text_and_unknown_stories_are_404() {
    let env = TestEnv::init();
    let (id, slug, path) = env.add("Make <script>alert(1)</script> & co safe", &[]);
    env.edit(
        &path,
        "## Summary\n",
        "## Summary\nA summary with <img src=x onerror=alert(2)> in it.\n",
    );
    // Text a person wrote above the sections by hand is shown too, rendered the same way.
    env.edit(
        &path,
        "## Summary\nA summary",
        "Written *above* the sections <img src=y onerror=alert(3)>.\n\n## Summary\nA summary",
    );
    let served = Served::start(&env, None, &[]);

    let (status, board) = get(&served.url).await;
    assert_eq!(status, 200);
    assert!(
        board.contains("Make &lt;script&gt;alert(1)&lt;/script&gt; &amp; co safe"),
        "{board}"
    );
    assert!(!board.contains("<script>alert"), "{board}");
    assert!(board.contains(&format!("id=\"card-{id}\"")), "{board}");

    for query in [id.as_str(), slug.as_str()] {
        let (status, page) = get(&served.at(&format!("/story/{query}"))).await;
        assert_eq!(status, 200, "{query}");
        // Sections are Markdown, rendered and sanitised: the text stays, the handler goes.
        assert!(page.contains("A summary with"), "{page}");
        assert!(
            page.contains("Written <em>above</em> the sections"),
            "{page}"
        );
        assert!(!page.contains("onerror"), "{page}");
        assert!(!page.contains("<script>alert"), "{page}");
    }

    for missing in [
        "/story/no-such-story",
        "/fragment/story/no-such-story",
        "/nowhere",
    ] {
        let (status, page) = get(&served.at(missing)).await;
        assert_eq!(status, 404, "{missing}: {page}");
    }
    let (status, _) = get(&served.at("/assets/app.js")).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn a_bind_beyond_localhost_needs_a_token_that_every_request_carries() {
    let env = TestEnv::init();
    let refused = env.run(&["serve", "--host", "0.0.0.0", "--port", "0"]);
    refused.code(2);
    assert_eq!(
        refused.stderr.trim().lines().count(),
        1,
        "{}",
        refused.stderr
    );
    refused.stderr_has("--token");
    for guessable in [" ", "        ", "short"] {
        let refused = env.run(&[
            "serve", "--host", "0.0.0.0", "--port", "0", "--token", guessable,
        ]);
        refused.code(2);
        refused.stderr_has("--token: a token must be at least 8 characters");
    }

    let served = Served::start(
        &env,
        None,
        &["--host", "0.0.0.0", "--token", "s3cret t0ken"],
    );
    let port = served.url.rsplit(':').next().unwrap().trim_end_matches('/');
    let local = format!("http://127.0.0.1:{port}");
    for path in [
        "/",
        "/events",
        "/assets/app.css",
        "/fragment/board",
        "/story/x",
    ] {
        let (status, _) = get(&format!("{local}{path}")).await;
        assert_eq!(status, 401, "{path} without the token");
    }
    let (status, _) = get(&format!("{local}/?token=wrong")).await;
    assert_eq!(status, 401);

    let opened = client()
        .get(format!("{local}/?token=s3cret%20t0ken"))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status().as_u16(), 200);
    let cookie = opened
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .expect("the token is kept in a cookie")
        .to_string();
    assert!(cookie.contains("HttpOnly"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();
    let with_cookie = client()
        .get(format!("{local}/fragment/board"))
        .header("cookie", pair)
        .send()
        .await
        .unwrap();
    assert_eq!(with_cookie.status().as_u16(), 200);
    let with_bearer = client()
        .get(format!("{local}/assets/app.css"))
        .header("authorization", "Bearer s3cret t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(with_bearer.status().as_u16(), 200);
}

#[tokio::test]
async fn a_port_in_use_exits_2_with_one_line() {
    let env = TestEnv::init();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();

    let out = env.run(&["serve", "--port", &port]);
    out.code(2).stdout_empty();
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    out.stderr_has("in use");
}

#[tokio::test]
async fn events_follow_a_hand_edit_and_the_fragment_shows_it() {
    let env = TestEnv::init();
    let (_, slug, path) = env.add("Before the edit", &[]);
    let served = Served::start(&env, None, &[]);
    let mut events = client().get(served.at("/events")).send().await.unwrap();
    assert_eq!(
        events
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/event-stream")
    );
    let first = String::from_utf8_lossy(&events.chunk().await.unwrap().unwrap()).to_string();
    assert!(first.contains("event: change\ndata: "), "{first}");

    env.edit(&path, "title: Before the edit", "title: After the edit");
    let mut seen = String::new();
    let changed = tokio::time::timeout(Duration::from_secs(10), async {
        while !seen.contains("event: change") {
            let chunk = events
                .chunk()
                .await
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(
        changed.is_ok(),
        "no change event after a hand edit: {seen:?}"
    );
    let (_, fragment) = get(&served.at("/fragment/board")).await;
    assert!(fragment.contains("After the edit"), "{fragment}");
    assert_eq!(column_of(&env, &slug), "backlog");
}

#[tokio::test]
async fn an_open_page_is_sent_only_the_cards_that_changed() {
    let env = TestEnv::init();
    let (_, _, unchanged) = env.add("Stays as it is", &[]);
    let (id, slug, path) = env.add("Will be edited", &[]);
    let served = Served::start(&env, None, &[]);
    let (_, page) = get(&served.url).await;
    let render = page
        .split("data-render=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the board page says which render it shows")
        .to_string();

    env.edit(&path, "title: Will be edited", "title: Was edited");
    env.run(&["move", &slug, "ready"]).success();
    std::fs::remove_file(unchanged).unwrap();
    let response = client()
        .get(served.at(&format!("/fragment/board?since={render}")))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let patch: serde_json::Value = response.json().await.unwrap();
    assert_eq!(patch["changed"].as_array().unwrap().len(), 1, "{patch}");
    let card = &patch["changed"][0];
    assert_eq!(card["id"], id.as_str());
    assert_eq!(card["column"], "ready");
    assert!(
        card["html"].as_str().unwrap().contains("Was edited"),
        "{card}"
    );
    assert_eq!(patch["removed"].as_array().unwrap().len(), 1, "{patch}");
    assert_eq!(
        patch["counts"][0],
        json!({"column": "backlog", "listed": 0, "text": "0"})
    );
    assert_eq!(
        patch["counts"][1],
        json!({"column": "ready", "listed": 1, "text": "1"})
    );

    // A page too far behind (or from another server) gets the whole board.
    let (status, whole) = get(&served.at("/fragment/board?since=999999")).await;
    assert_eq!(status, 200);
    assert!(whole.contains("<div class=\"board\">"), "{whole}");
}

#[tokio::test]
async fn a_decision_from_the_page_goes_through_decide() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.configure_json(&json!({"phases": {"research": {"review": {"reviewer": "human"}}}}));
    let (id, slug, _) = env.add("Gated story", &[]);
    let (other, _, _) = env.add("Ungated story", &[]);
    stopped_for_a_person(&env.run_with_llm(&llm, &["run", "--auto", "--story", &slug]));
    assert_eq!(
        details(&env, &slug)["phase_reviews"]["research"]["decision"],
        "PENDING"
    );
    let served = Served::start(&env, None, &[]);
    let (status, page) = get(&served.at(&format!("/story/{id}"))).await;
    assert_eq!(status, 200);
    assert!(page.contains("id=\"approve\""), "{page}");

    let post = |origin: Option<&str>, story: &str, form: &[(&str, &str)]| {
        let mut request = client()
            .post(served.at(&format!("/story/{story}/decide")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                form.iter()
                    .map(|(k, v)| format!("{k}={}", v.replace(' ', "+")))
                    .collect::<Vec<_>>()
                    .join("&"),
            );
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        request.send()
    };
    let foreign = post(
        Some("https://elsewhere.example"),
        &id,
        &[("decision", "APPROVE")],
    )
    .await
    .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);
    let nothing_waits = post(None, &other, &[("decision", "APPROVE")])
        .await
        .unwrap();
    assert_eq!(nothing_waits.status().as_u16(), 409);
    let nonsense = post(None, &id, &[("decision", "MAYBE")]).await.unwrap();
    assert_eq!(nonsense.status().as_u16(), 400);
    // A rejection with an empty box is refused: the reason is what the morning reads.
    let unexplained = post(None, &id, &[("decision", "REJECT"), ("feedback", "  ")])
        .await
        .unwrap();
    assert_eq!(unexplained.status().as_u16(), 400);
    assert!(unexplained.text().await.unwrap().contains("needs a reason"));
    assert_eq!(
        details(&env, &slug)["phase_reviews"]["research"]["decision"],
        "PENDING",
        "refused requests decide nothing"
    );

    let origin = served.url.trim_end_matches('/').to_string();
    let decided = post(
        Some(&origin),
        &id,
        &[("decision", "REJECT"), ("feedback", "not this way")],
    )
    .await
    .unwrap();
    assert_eq!(decided.status().as_u16(), 303);
    let location = decided.headers()["location"].to_str().unwrap().to_string();
    assert!(
        location.starts_with(&format!("/story/{id}?notice=")),
        "{location}"
    );
    assert_eq!(column_of(&env, &slug), "blocked");
    let story = details(&env, &slug);
    assert_eq!(
        story["blocked_reason"],
        "Phase research rejected by review: not this way"
    );
    assert_eq!(story["phase_reviews"]["research"]["decided_by"], "web");
    let (_, page) = get(&served.at(&location)).await;
    assert!(page.contains("REJECT"), "{page}");
}
