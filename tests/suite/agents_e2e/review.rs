//! The review action: the test command first, then three perspectives that see the story's
//! diff, verdicts read tolerantly, one reminder, and the decision rules.

use serde_json::{json, Value};

use super::{Project, OFF_ACCEPTANCE};
use crate::suite::fake_llm::Reply;

const REVIEWERS: [&str; 3] = ["code-review", "security-review", "po-review"];

fn issue(severity: &str, description: &str) -> Value {
    json!({"severity": severity, "category": "correctness", "description": description})
}

#[tokio::test]
async fn a_failing_test_command_rejects_with_one_testing_blocker_and_no_model_call() {
    let p = Project::new().await;
    p.config(&[(
        "review.testCommand",
        "echo TEST-OUTPUT-MARK; echo oops >&2; exit 1",
    )]);
    p.config(&[OFF_ACCEPTANCE]);
    let story = p.implemented("Tested");

    p.step(&story, "review").success();

    for role in REVIEWERS {
        assert!(p.fake.requests_for(role).is_empty(), "{role} was asked");
    }
    let review = p.last_review(&story);
    assert_eq!(review["decision"], "REJECTED", "{review}");
    assert_eq!(review["severity"], "CRITICAL", "{review}");
    let blockers = review["blockers"].as_array().unwrap();
    assert_eq!(blockers.len(), 1, "{review}");
    let blocker = blockers[0].as_str().unwrap();
    assert!(
        blocker.contains("TEST-OUTPUT-MARK") && blocker.contains("oops"),
        "{blocker}"
    );
    let issues = review["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 1, "{review}");
    assert_eq!(issues[0]["category"], "testing");
    assert_eq!(issues[0]["severity"], "blocker");
    assert_eq!(p.front(&story)["reviews_complete"], false);
}

#[tokio::test]
async fn a_passing_review_asks_three_perspectives_that_see_the_diff_of_the_work() {
    let p = Project::new().await;
    p.env.write("src/lib.rs", "pub fn base() {}\n");
    p.git_init(false);
    p.config(&[
        ("review.testCommand", "test -f src/feature.rs"),
        OFF_ACCEPTANCE,
    ]);
    let story = p.story(
        "Reviewed",
        "A summary.",
        "- [ ] Works",
        "ready",
        &["research", "plan"],
    );
    p.story(
        "Bystander BYSTANDER-MARK",
        "BYSTANDER-SUMMARY",
        "- [ ] x",
        "ready",
        &[],
    );
    p.fake
        .push(
            "implement",
            Reply::tool(
                "write_file",
                json!({"path": "src/feature.rs", "content": "pub fn feature() { /* DIFF-MARK */ }\n"}),
            ),
        )
        .push("implement", Reply::text("Added feature()."));
    p.step(&story, "implement").success();

    p.step(&story, "review").success();

    for role in REVIEWERS {
        let requests = p.fake.requests_for(role);
        assert_eq!(requests.len(), 1, "{role}");
        let prompt = requests[0].user_message();
        assert!(
            prompt.contains("DIFF-MARK"),
            "{role} did not see the diff:\n{prompt}"
        );
        assert!(prompt.contains("src/feature.rs"), "{role}:\n{prompt}");
        assert!(prompt.contains("# Story: Reviewed"), "{role}:\n{prompt}");
        let whole = requests[0].body.to_string();
        assert!(
            !whole.contains("BYSTANDER"),
            "{role} saw another story:\n{prompt}"
        );
    }
    let review = p.last_review(&story);
    assert_eq!(review["decision"], "APPROVED", "{review}");
    assert_eq!(review["severity"], "LOW", "{review}");
    for key in ["codeReviewPassed", "securityReviewPassed", "poReviewPassed"] {
        assert_eq!(review[key], true, "{key}: {review}");
    }
    assert_eq!(p.front(&story)["reviews_complete"], true);
}

#[tokio::test]
async fn verdicts_are_read_in_fences_with_prose_null_fields_and_any_case() {
    let p = Project::new().await;
    let story = p.implemented("Tolerant");
    p.fake
        .push(
            "code-review",
            Reply::text(
                "Here is my review.\n\n```json\n{\"passed\": true, \"issues\": [{\"severity\": \"minor\", \"category\": \"style\", \"description\": \"FENCED-ISSUE\"}]}\n```\n\nThanks!",
            ),
        )
        .push(
            "security-review",
            Reply::text(
                "I looked carefully. {\"Passed\": true, \"issues\": [{\"severity\": \"MAJOR\", \"category\": \"security\", \"description\": \"NULL-FIELDS-ISSUE\", \"file\": null, \"line\": null, \"suggestedFix\": null}], \"target_phase\": null} That is all.",
            ),
        )
        .push(
            "po-review",
            Reply::text(
                "{\"PASSED\": false, \"Issues\": [{\"severity\": \"BLOCKER\", \"Category\": \"Requirements\", \"Description\": \"UPPER-CASE-ISSUE\"}]}",
            ),
        );

    p.step(&story, "review").success();

    for role in REVIEWERS {
        assert_eq!(
            p.fake.requests_for(role).len(),
            1,
            "{role} needed a reminder"
        );
    }
    let review = p.last_review(&story);
    assert_eq!(review["decision"], "REJECTED", "{review}");
    assert_eq!(review["severity"], "CRITICAL", "{review}");
    assert_eq!(review["codeReviewPassed"], true, "{review}");
    assert_eq!(review["securityReviewPassed"], true, "{review}");
    assert_eq!(review["poReviewPassed"], false, "{review}");
    assert_eq!(review["blockers"], json!(["UPPER-CASE-ISSUE"]), "{review}");
    let issues: Vec<(String, String)> = review["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["severity"].as_str().unwrap().to_string(),
                i["description"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for expected in [
        ("minor", "FENCED-ISSUE"),
        ("major", "NULL-FIELDS-ISSUE"),
        ("blocker", "UPPER-CASE-ISSUE"),
    ] {
        assert!(
            issues.contains(&(expected.0.to_string(), expected.1.to_string())),
            "{expected:?} missing in {issues:?}"
        );
    }
}

#[tokio::test]
async fn a_perspective_without_a_verdict_is_reminded_once_then_the_review_fails() {
    let p = Project::new().await;
    let reminded = p.implemented("Reminded");
    let silent = p.implemented("Silent");

    // Answers prose, then a verdict after the reminder: the review goes on.
    p.fake
        .push("code-review", Reply::text("Looks fine to me."))
        .push("code-review", Reply::verdict(true, json!([])));
    p.step(&reminded, "review").success();

    let requests = p.fake.requests_for("code-review");
    assert_eq!(requests.len(), 2);
    let reminder = requests[1].user_message();
    assert!(reminder.contains("Looks fine to me."), "{reminder}");
    assert!(reminder.contains("JSON"), "{reminder}");
    assert_eq!(p.last_review(&reminded)["decision"], "APPROVED");

    // Prose twice: FAILED, neither an approval nor a rejection.
    p.fake
        .set_default("code-review", Reply::text("Still just prose, no verdict."));
    let out = p.step(&silent, "review");

    out.code(1);
    assert_eq!(p.fake.requests_for("code-review").len(), 4);
    let review = p.last_review(&silent);
    assert_eq!(review["decision"], "FAILED", "{review}");
    let front = p.front(&silent);
    assert_eq!(front["reviews_complete"], false);
    let error = front["last_error"].as_str().unwrap_or_default();
    assert!(error.contains("code-review"), "last_error: {error:?}");
    // A FAILED review asks for no rework.
    let plan = p.env.run_json(&["run", "--dry-run", "--story", &silent.id]);
    assert_eq!(plan["actions"][0]["type"], "review", "{plan}");
}

#[tokio::test]
async fn decision_and_severity_follow_the_issue_counts() {
    let p = Project::new().await;
    let none = json!([]);
    let rows = [
        // (issues of code-review, of security-review, decision, severity)
        (
            json!([issue("blocker", "b")]),
            none.clone(),
            "REJECTED",
            "CRITICAL",
        ),
        (
            json!([issue("critical", "c1"), issue("critical", "c2")]),
            none.clone(),
            "REJECTED",
            "HIGH",
        ),
        // Counted over all perspectives together.
        (
            json!([issue("critical", "c1")]),
            json!([issue("critical", "c2")]),
            "REJECTED",
            "HIGH",
        ),
        (
            json!([issue("critical", "c1")]),
            none.clone(),
            "APPROVED",
            "MEDIUM",
        ),
        (
            json!([issue("major", "m")]),
            none.clone(),
            "APPROVED",
            "MEDIUM",
        ),
        (
            json!([issue("minor", "m1")]),
            json!([issue("minor", "m2")]),
            "APPROVED",
            "LOW",
        ),
    ];
    for (index, (code, security, decision, severity)) in rows.into_iter().enumerate() {
        let story = p.implemented(&format!("Row {index}"));
        // A perspective with no issues passes: `"passed": false` without issues is no
        // verdict at all (docs/design.md §15).
        let passed = |issues: &serde_json::Value| issues.as_array().unwrap().is_empty();
        p.fake
            .push("code-review", Reply::verdict(passed(&code), code.clone()))
            .push(
                "security-review",
                Reply::verdict(passed(&security), security.clone()),
            );

        p.step(&story, "review").success();

        let review = p.last_review(&story);
        assert_eq!(
            (review["decision"].as_str(), review["severity"].as_str()),
            (Some(decision), Some(severity)),
            "row {index}: {code} {security}\n{review}"
        );
        assert_eq!(p.front(&story)["reviews_complete"], decision == "APPROVED");
    }
}

#[tokio::test]
async fn a_server_on_this_machine_is_asked_one_perspective_at_a_time() {
    let p = Project::new().await;
    p.config(&[OFF_ACCEPTANCE]);
    let story = p.implemented("One at a time");
    let answer = std::time::Duration::from_millis(800);
    p.fake.push(
        "code-review",
        Reply::delayed(answer, Reply::verdict(true, json!([]))),
    );

    p.step(&story, "review").success();

    // The fake listens on 127.0.0.1: the next perspective is asked only once the one before
    // it has answered.
    let arrived = |role: &str| p.fake.requests_for(role)[0].received;
    assert!(
        arrived("security-review").duration_since(arrived("code-review")) >= answer,
        "security-review was asked before code-review answered"
    );
    assert!(arrived("po-review") >= arrived("security-review"));
    assert_eq!(p.last_review(&story)["decision"], "APPROVED");
}
