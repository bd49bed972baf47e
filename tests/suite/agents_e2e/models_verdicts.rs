//! Verdicts and gate decisions mean what they say (docs/design.md §15): a cut-off answer is asked
//! again, a failure without issues is never an approval, each perspective's flag is its own,
//! and nothing re-sends a runaway answer whole.

use serde_json::json;

use super::{section, Project};
use crate::suite::fake_llm::Reply;

fn issue(severity: &str, description: &str) -> serde_json::Value {
    json!({"severity": severity, "category": "correctness", "description": description})
}

#[tokio::test]
async fn a_verdict_cut_off_by_the_cap_is_asked_again_without_quoting_it() {
    let p = Project::new().await;
    let story = p.implemented("Cut off");
    // Complete JSON, but the reply ran into the cap: it is still no verdict.
    p.fake
        .push(
            "code-review",
            Reply::truncated(r#"{"passed": true, "issues": []} RUNAWAY-TEXT"#),
        )
        .push(
            "code-review",
            Reply::verdict(false, json!([issue("blocker", "Counter never resets")])),
        );

    p.step(&story, "review").success();

    let asks = p.fake.requests_for("code-review");
    assert_eq!(asks.len(), 2);
    let again = asks[1].user_message();
    assert!(again.contains("cut off at the reply limit"), "{again}");
    assert!(!again.contains("RUNAWAY-TEXT"), "{again}");
    let review = p.last_review(&story);
    assert_eq!(review["decision"], "REJECTED", "{review}");
    assert_eq!(review["codeReviewPassed"], false);
}

#[tokio::test]
async fn a_failure_without_issues_is_asked_for_them_and_is_never_an_approval() {
    let p = Project::new().await;

    // It names its issues when asked: they count.
    let named = p.implemented("Names them");
    p.fake
        .push("security-review", Reply::verdict(false, json!([])))
        .push(
            "security-review",
            Reply::verdict(false, json!([issue("blocker", "Secrets in the log")])),
        );
    p.step(&named, "review").success();
    let asks = p.fake.requests_for("security-review");
    assert_eq!(asks.len(), 2);
    assert!(asks[1].user_message().contains("listed no issues"));
    let review = p.last_review(&named);
    assert_eq!(review["decision"], "REJECTED", "{review}");
    assert_eq!(review["blockers"], json!(["Secrets in the log"]));

    // It names none, even when it now says it passed: no verdict, a FAILED review.
    let silent = p.implemented("Names none");
    p.fake
        .push("security-review", Reply::verdict(false, json!([])))
        .push("security-review", Reply::verdict(true, json!([])));
    p.step(&silent, "review").code(1);
    let review = p.last_review(&silent);
    assert_eq!(review["decision"], "FAILED", "{review}");
    assert_eq!(p.front(&silent)["reviews_complete"], false);
    let error = p.last_error(&silent);
    assert!(error.contains("security-review"), "{error}");
    let notes: Vec<(String, String)> = p
        .env
        .transcript_lines(&silent.id)
        .into_iter()
        .filter(|l| l["event"] == "reask" || l["event"] == "no_verdict")
        .map(|l| {
            (
                format!(
                    "{}/{}",
                    l["agent"].as_str().unwrap(),
                    l["event"].as_str().unwrap()
                ),
                l["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        notes,
        [
            (
                "security-review/reask".to_string(),
                "failed_without_issues".to_string()
            ),
            (
                "security-review/no_verdict".to_string(),
                "failed_without_issues".to_string()
            ),
        ]
    );
}

#[tokio::test]
async fn each_perspective_flag_follows_its_own_result() {
    let p = Project::new().await;
    let story = p.implemented("Own flags");
    // "passed" with a blocker of its own is no pass; the other two pass.
    p.fake.push(
        "code-review",
        Reply::verdict(true, json!([issue("blocker", "Data race")])),
    );

    p.step(&story, "review").success();

    let review = p.last_review(&story);
    assert_eq!(review["decision"], "REJECTED");
    assert_eq!(review["codeReviewPassed"], false);
    assert_eq!(review["securityReviewPassed"], true);
    assert_eq!(review["poReviewPassed"], true);
    let notes = section(&p.body(&story), "Review Notes");
    assert!(notes.contains("- code review: failed"), "{notes}");
    assert!(notes.contains("- security review: passed"), "{notes}");
}

#[tokio::test]
async fn the_reminder_quotes_only_the_head_and_tail_of_a_runaway_answer() {
    let p = Project::new().await;
    let story = p.implemented("Runaway");
    let runaway = format!(
        "HEAD-MARK {} MIDDLE-MARK {} TAIL-MARK",
        "blah ".repeat(20_000),
        "blah ".repeat(20_000)
    );
    p.fake.push("po-review", Reply::text(runaway.clone()));

    p.step(&story, "review").success();

    let asks = p.fake.requests_for("po-review");
    assert_eq!(asks.len(), 2);
    let first = asks[0].user_message();
    let again = asks[1].user_message();
    assert!(again.contains("HEAD-MARK") && again.contains("TAIL-MARK"));
    assert!(!again.contains("MIDDLE-MARK"));
    assert!(
        again.len() < first.len() + 3_000,
        "the reminder grew the prompt by {} bytes",
        again.len() - first.len()
    );
    assert!(runaway.len() > 100_000);
}

#[tokio::test]
async fn gate_decisions_come_as_json_and_are_recorded_in_the_text_format() {
    let p = Project::new().await;
    p.config(&[("phases.research.review", r#"{"reviewer": "ai"}"#)]);
    let story = p.ready("Gated research");
    // The re-run says something new, or it would be "No progress" (docs/design.md §14).
    p.fake
        .set_default("research", Reply::text("Research findings, take {call}."));
    p.fake
        .push(
            "phase-review",
            Reply::text(
                json!({"decision": "RETRY", "phase": null, "feedback": "Name the files you read"})
                    .to_string(),
            ),
        )
        // A decision cut off by the cap is asked again, never taken.
        .push(
            "phase-review",
            Reply::truncated(r#"{"decision": "REJECT", "phase": null, "feedback": "Because"#),
        )
        .push(
            "phase-review",
            Reply::text(json!({"decision": "APPROVE", "phase": null, "feedback": ""}).to_string()),
        );

    p.step(&story, "research").success();

    let research = p.fake.requests_for("research");
    assert_eq!(research.len(), 2);
    assert!(
        research[1]
            .user_message()
            .contains("### Feedback\nName the files you read\n"),
        "{}",
        research[1].user_message()
    );
    let gates = p.fake.requests_for("phase-review");
    assert_eq!(gates.len(), 3);
    assert!(gates[2]
        .user_message()
        .contains("cut off at the reply limit"));
    let record = &p.details(&story)["phase_reviews"]["research"];
    assert_eq!(record["decision"], "APPROVE", "{record}");
    assert_eq!(record["attempts"], 2, "{record}");
    assert_eq!(p.front(&story)["research_complete"], true);
    assert_ne!(p.column(&story), "blocked");
}
