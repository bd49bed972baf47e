//! What the tool asks of a real (and small) model server (docs/design.md §15): a reply cap on every
//! request, a JSON schema for machine-read answers with a remembered fallback, one retry for a
//! timed-out reply, every attempt counted, and a context-length error that says what to change.

use std::time::Duration;

use serde_json::{json, Value};

use super::Project;
use crate::suite::common::assert_contains_all;
use crate::suite::fake_llm::Reply;

fn schema_name(body: &Value) -> Option<&str> {
    body["response_format"]["json_schema"]["name"].as_str()
}

#[tokio::test]
async fn every_request_carries_its_cap_and_machine_read_answers_carry_a_schema() {
    let p = Project::new().await;
    p.config(&[
        ("llm.maxTokens", "1000"),
        ("phases.plan.maxTokens", "300"),
        ("phases.plan.review", r#"{"reviewer": "ai"}"#),
    ]);
    let story = p.story("Capped", "A summary.", "- [ ] It works", "ready", &[]);

    p.run(&["run", "--auto", "--story", &story.id]).success();

    assert_eq!(p.column(&story), "done");
    let requests = p.fake.requests();
    assert!(!requests.is_empty());
    for request in &requests {
        let expected = if request.role == "plan" { 300 } else { 1000 };
        assert_eq!(request.body["max_tokens"], expected, "{}", request.role);
        let schema = schema_name(&request.body);
        match request.role.as_str() {
            "code-review" | "security-review" | "po-review" => {
                assert_eq!(schema, Some("review_verdict"));
                let format = &request.body["response_format"];
                assert_eq!(format["type"], "json_schema");
                assert_eq!(format["json_schema"]["strict"], true);
                let issue = &format["json_schema"]["schema"]["properties"]["issues"];
                assert!(issue["maxItems"].is_u64(), "{issue}");
                assert!(
                    issue["items"]["properties"]["description"]["maxLength"].is_u64(),
                    "{issue}"
                );
            }
            "phase-review" => {
                assert_eq!(schema, Some("phase_gate_decision"));
                let feedback = &request.body["response_format"]["json_schema"]["schema"]
                    ["properties"]["feedback"];
                assert!(feedback["maxLength"].is_u64(), "{feedback}");
            }
            // The phases write prose: no schema.
            _ => assert_eq!(schema, None, "{}", request.role),
        }
    }
    let roles = p.fake.roles();
    assert!(roles.contains(&"phase-review".to_string()), "{roles:?}");

    // With structured outputs off, nothing asks for a schema.
    p.config(&[("llm.structuredOutputs", "off")]);
    let other = p.implemented("Unstructured");
    let before = p.fake.requests().len();
    p.step(&other, "review").success();
    let later = &p.fake.requests()[before..];
    assert_eq!(later.len(), 3);
    assert!(later
        .iter()
        .all(|r| r.body.get("response_format").is_none()));
}

/// The requests of the three review perspectives.
fn reviewer_requests(p: &Project) -> Vec<crate::suite::fake_llm::Recorded> {
    p.fake
        .requests()
        .into_iter()
        .filter(|r| r.role.ends_with("-review") && r.role != "phase-review")
        .collect()
}

fn gate_feedback_schema(body: &Value) -> Value {
    body["response_format"]["json_schema"]["schema"]["properties"]["feedback"].clone()
}

#[tokio::test]
async fn a_server_that_refuses_the_schema_is_prompted_instead_for_the_rest_of_the_run() {
    let p = Project::new().await;
    p.config(&[("phases.plan.review", r#"{"reviewer": "ai"}"#)]);
    let story = p.researched("No schemas here");
    let refusal =
        || Reply::bad_request("response_format json_schema is not supported by this server");
    p.fake.push("phase-review", refusal());

    p.run(&["run", "--auto", "--story", &story.id]).success();

    assert_eq!(p.column(&story), "done");
    let gates = p.fake.requests_for("phase-review");
    assert_eq!(gates.len(), 2, "asked once more, without the schema");
    assert_eq!(schema_name(&gates[0].body), Some("phase_gate_decision"));
    assert!(gates[1].body.get("response_format").is_none());
    // Remembered: the reviewers later in the run were not asked for a schema at all.
    let reviews = reviewer_requests(&p);
    assert_eq!(reviews.len(), 3);
    assert!(reviews
        .iter()
        .all(|r| r.body.get("response_format").is_none()));
    assert_eq!(p.last_review(&story)["decision"], "APPROVED");

    // With structuredOutputs "on", the same refusal fails the action and says what to change.
    let strict = p.researched("Strict");
    p.config(&[("llm.structuredOutputs", "on")]);
    p.fake.push("plan", Reply::text("1. A plan step"));
    p.fake.push("phase-review", refusal());
    p.step(&strict, "plan").code(1);
    let error = p.last_error(&strict);
    assert!(error.contains("llm.structuredOutputs"), "{error}");
    assert_eq!(p.front(&strict)["plan_complete"], false);
}

#[tokio::test]
async fn a_server_that_refuses_the_bounds_gets_the_schema_without_them_for_the_run() {
    let p = Project::new().await;
    p.config(&[("phases.plan.review", r#"{"reviewer": "ai"}"#)]);
    let story = p.researched("Hosted strict mode");
    p.fake.push(
        "phase-review",
        Reply::bad_request(
            "Invalid schema for response_format 'phase_gate_decision': 'maxLength' is not permitted.",
        ),
    );

    p.run(&["run", "--auto", "--story", &story.id]).success();

    let gates = p.fake.requests_for("phase-review");
    assert_eq!(gates.len(), 2);
    assert!(gate_feedback_schema(&gates[0].body)["maxLength"].is_u64());
    assert_eq!(schema_name(&gates[1].body), Some("phase_gate_decision"));
    assert_eq!(
        gate_feedback_schema(&gates[1].body),
        json!({"type": "string"})
    );
    // Remembered: the reviewers got their schema, without bounds, at the first try.
    let reviews = reviewer_requests(&p);
    assert_eq!(reviews.len(), 3);
    for review in &reviews {
        assert_eq!(schema_name(&review.body), Some("review_verdict"));
        assert!(!review.body["response_format"]
            .to_string()
            .contains("maxLength"));
    }
    assert_eq!(p.last_review(&story)["decision"], "APPROVED");
}

#[tokio::test]
async fn a_server_that_wants_max_completion_tokens_gets_the_cap_under_that_name() {
    let p = Project::new().await;
    let story = p.ready("Reasoning model");
    p.fake.push(
        "research",
        Reply::bad_request(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
        ),
    );

    p.run(&["run", "--auto", "--story", &story.id]).success();

    assert_eq!(p.column(&story), "done");
    let requests = p.fake.requests();
    assert!(requests.len() > 5, "{}", requests.len());
    // The read-only phases' cap is smaller than llm.maxTokens (docs/design.md §21).
    let cap = |role: &str| match role {
        "refine" | "research" | "plan" => 1536,
        _ => 4096,
    };
    assert_eq!(requests[0].body["max_tokens"], 1536);
    for later in &requests[1..] {
        assert_eq!(
            later.body["max_completion_tokens"],
            cap(&later.role),
            "{}",
            later.role
        );
        assert!(later.body.get("max_tokens").is_none());
    }
    // The refused request is in the transcript as a failed attempt, and in the usage.
    let attempts: Vec<Value> = p
        .env
        .transcript_lines(&story.id)
        .into_iter()
        .filter(|l| l["event"] == "attempt" && l["agent"] == "research")
        .collect();
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    assert_eq!(attempts[0]["outcome"], "failed");
    assert!(attempts[0]["error"]
        .as_str()
        .unwrap()
        .contains("max_completion_tokens"));
    assert!(attempts[0]["duration_ms"].is_u64());
    assert_eq!(attempts[1]["outcome"], "answered");
    assert_eq!(
        p.details(&story)["usage"]["requests"],
        requests.len() as u64
    );
}

#[tokio::test]
async fn a_timed_out_reply_is_retried_once_and_every_attempt_is_recorded_and_counted() {
    let p = Project::new().await;
    p.config(&[("llm.timeoutSeconds", "1")]);
    let slow = || Reply::delayed(Duration::from_secs(4), Reply::text("Too late."));

    // One timeout, then an answer: the story goes on.
    let story = p.ready("Slow then fine");
    p.fake.push("research", slow());
    p.step(&story, "research").success();
    assert_eq!(p.front(&story)["research_complete"], true);
    assert_eq!(p.details(&story)["usage"]["requests"], 2);

    // Two timeouts: no third try, although llm.maxRetries is 3.
    let stuck = p.ready("Always slow");
    p.fake.push("research", slow()).push("research", slow());
    let before = p.fake.requests().len();
    p.step(&stuck, "research").code(1);
    assert_eq!(p.fake.requests().len() - before, 2);
    let front = p.front(&stuck);
    let error = front["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("did not answer in time"), "{error}");
    assert!(error.contains("llm.timeoutSeconds"), "{error}");
    assert_eq!(front["research_complete"], false);
    // Both requests were sent, and both count.
    assert_eq!(p.details(&stuck)["usage"]["requests"], 2);

    let attempts: Vec<Value> = p
        .env
        .transcript_lines(&stuck.id)
        .into_iter()
        .filter(|l| l["event"] == "attempt")
        .collect();
    assert_eq!(attempts.len(), 2, "{attempts:#?}");
    for attempt in &attempts {
        assert_eq!(attempt["outcome"], "timed_out", "{attempt}");
        assert_eq!(attempt["agent"], "research");
        assert!(attempt["duration_ms"].as_u64().unwrap() >= 900, "{attempt}");
        assert!(attempt["error"].as_str().unwrap().contains("in time"));
    }
}

#[tokio::test]
async fn a_context_length_error_names_the_sizes_and_what_to_change() {
    let p = Project::new().await;
    let story = p.ready("Too long for a small model");
    p.fake.push(
        "research",
        Reply::Status {
            code: 400,
            body: json!({"error": {"code": 400, "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it",
                "n_prompt_tokens": 5012, "n_ctx": 4096}})
            .to_string(),
            retry_after: None,
        },
    );

    p.step(&story, "research").code(1);

    assert_eq!(p.fake.requests().len(), 1, "not retried");
    let error = p.last_error(&story);
    assert_contains_all(
        &error,
        &[
            "5012 tokens",
            "context of 4096 tokens",
            "1536 tokens kept for the reply",
            "llm.maxTokens",
            "--ctx-size",
            "shorten the story",
        ],
    );
}
