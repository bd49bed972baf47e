//! API failures through the real client: what is retried, what is not, and what a failed
//! action leaves behind.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{section, Made, Project};
use crate::suite::common::{assert_contains_all, split_frontmatter};
use crate::suite::fake_llm::Reply;

const RESEARCH: &str = "RESEARCH-AFTER-RETRY";

async fn ready_for_research() -> (Project, Made) {
    let p = Project::new().await;
    let story = p.ready("Flaky server");
    p.fake.set_default("research", Reply::text(RESEARCH));
    (p, story)
}

#[tokio::test]
async fn a_server_error_is_retried_and_the_story_goes_on() {
    let (p, story) = ready_for_research().await;
    p.fake.push("research", Reply::status(500));

    p.step(&story, "research").success();

    assert_eq!(p.fake.requests_for("research").len(), 2);
    assert_eq!(section(&p.body(&story), "Research"), RESEARCH);
    assert_eq!(p.front(&story)["research_complete"], true);
    assert!(p.front(&story).get("last_error").is_none());
}

#[tokio::test]
async fn a_rate_limit_is_retried_after_the_time_the_server_asks_for() {
    let (p, story) = ready_for_research().await;
    p.fake.push(
        "research",
        Reply::Status {
            code: 429,
            body: json!({"error": {"message": "Rate limit reached", "type": "requests"}})
                .to_string(),
            retry_after: Some("1".into()),
        },
    );

    let started = Instant::now();
    p.step(&story, "research").success();
    let elapsed = started.elapsed();

    // Without the header the first backoff is well under a second.
    assert!(
        elapsed >= Duration::from_secs(1),
        "retried after {elapsed:?}"
    );
    assert_eq!(p.fake.requests_for("research").len(), 2);
    assert_eq!(section(&p.body(&story), "Research"), RESEARCH);
}

/// A non-retryable failure: one request, exit 1, last_error naming `expect`, and the story
/// otherwise exactly as it was.
async fn fails_without_retry(reply: Reply, expect: &[&str]) {
    let (p, story) = ready_for_research().await;
    p.fake.push("research", reply);
    let before = p.env.read(p.path_of(&story));

    let out = p.step(&story, "research");

    out.code(1);
    assert_eq!(p.fake.requests_for("research").len(), 1, "retried");
    let mut front = p.front(&story);
    assert_contains_all(&p.last_error(&story), expect);
    assert_eq!(p.column(&story), "ready");
    // The request sent is counted even though it was not answered (docs/design.md §15).
    assert_eq!(front["usage"]["requests"], 1, "{front:?}");
    // Apart from last_error, usage (and the date of the change), the file is unchanged.
    let (old_front, old_body) = split_frontmatter(&before);
    let mut old: serde_norway::Value = serde_norway::from_str(old_front).unwrap();
    for key in ["last_error", "updated", "usage"] {
        front.as_mapping_mut().unwrap().remove(key);
        old.as_mapping_mut().unwrap().remove(key);
    }
    assert_eq!(front, old);
    assert_eq!(p.body(&story), old_body);
}

#[tokio::test]
async fn an_authentication_error_is_not_retried() {
    fails_without_retry(
        Reply::Status {
            code: 401,
            body: json!({"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}})
                .to_string(),
            retry_after: None,
        },
        &["401"],
    )
    .await;
}

#[tokio::test]
async fn a_context_length_error_is_not_retried() {
    fails_without_retry(
        Reply::Status {
            code: 400,
            body: json!({"error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 200000 tokens.",
                "type": "invalid_request_error", "code": "context_length_exceeded"}})
            .to_string(),
            retry_after: None,
        },
        &["context"],
    )
    .await;
}
