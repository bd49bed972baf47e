//! The API key: required for a remote endpoint, sent as a bearer token, and written nowhere,
//! not even into the environment of the commands the agent runs.

use serde_json::json;

use super::{files_containing, tool_results, Project, OFF_ACCEPTANCE};
use crate::suite::common::outcome;
use crate::suite::fake_llm::Reply;

const KEY_VAR: &str = "AGENTIC_E2E_TEST_KEY";
const KEY: &str = "sk-e2e-SECRET-4f9a2c71d0b8";

#[tokio::test]
async fn a_remote_endpoint_without_its_key_stops_before_any_work() {
    let p = Project::new().await;
    p.config(&[
        ("llm.baseUrl", "https://api.example.invalid/v1"),
        ("llm.apiKeyEnv", KEY_VAR),
    ]);
    let story = p.story(
        "Needs a key",
        "A summary.",
        "- [ ] It works",
        "backlog",
        &[],
    );
    let before = p.env.files();

    let out = outcome(p.env.cmd(&["run"]).env_remove(KEY_VAR));

    out.code(2).stderr_has(KEY_VAR);
    assert_eq!(p.env.files(), before, "the run changed files");
    assert_eq!(p.column(&story), "backlog");
}

#[tokio::test]
async fn the_key_is_sent_as_a_bearer_token_and_written_nowhere() {
    let p = Project::new().await;
    let url = p.fake.base_url();
    // The review's test command fails if it can see the key.
    let test_command = format!("env > test-env.txt; test -z \"${KEY_VAR}\"");
    p.config(&[
        ("llm.baseUrl", url.as_str()),
        ("llm.apiKeyEnv", KEY_VAR),
        ("review.testCommand", test_command.as_str()),
        OFF_ACCEPTANCE,
    ]);
    let story = p.story(
        "Keep the key",
        "A summary.",
        "- [ ] It works",
        "backlog",
        &[],
    );
    p.fake
        .push(
            "implement",
            Reply::ToolCalls(vec![
                ("run_command".into(), json!({"command": "env"})),
                (
                    "run_command".into(),
                    json!({"command": format!("echo \"[${KEY_VAR}]\"")}),
                ),
                (
                    "run_command".into(),
                    json!({"command": "env > env-dump.txt; echo dumped"}),
                ),
            ]),
        )
        .push("implement", Reply::text("Looked at the environment."));

    let out = outcome(
        p.env
            .cmd(&["run", "--auto", "--story", &story.id, "-v"])
            .env(KEY_VAR, KEY),
    );

    out.success();
    assert_eq!(p.column(&story), "done");
    let requests = p.fake.requests();
    assert!(requests.len() >= 7, "{} requests", requests.len());
    for request in &requests {
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str()),
            "{}",
            request.role
        );
        assert!(
            !request.body.to_string().contains(KEY),
            "{} sent the key",
            request.role
        );
    }
    // The commands ran with an environment, but without the key variable.
    let results = tool_results(&p.fake.requests_for("implement")[1]);
    assert_eq!(results.len(), 3);
    assert!(results[0].1.contains("PATH="), "{}", results[0].1);
    assert!(!results[0].1.contains(KEY_VAR), "{}", results[0].1);
    assert!(results[1].1.contains("[]"), "{}", results[1].1);
    for dump in ["env-dump.txt", "test-env.txt"] {
        let dump = p.env.read(dump);
        assert!(dump.contains("PATH=") && !dump.contains(KEY_VAR), "{dump}");
    }
    assert_eq!(p.last_review(&story)["decision"], "APPROVED");

    // A server that echoes the key in its refusal: the error is kept, the key is not.
    let refused = p.ready("Refused");
    p.fake.push(
        "research",
        Reply::Status {
            code: 401,
            body: json!({"error": {"message": format!("Incorrect API key provided: {KEY}")}})
                .to_string(),
            retry_after: None,
        },
    );
    let failed = outcome(
        p.env
            .cmd(&["run", "--story", &refused.id, "-v"])
            .env(KEY_VAR, KEY),
    );
    failed.code(1);
    let error = p.last_error(&refused);
    assert!(error.contains("401"), "{error}");

    // No file of the project holds it: stories, config, checkpoint, transcripts, the dumps.
    let files = p.env.files();
    assert!(files.keys().any(|f| f.starts_with(".agentic-sdlc/logs")));
    assert_eq!(
        files_containing(&files, KEY),
        Vec::<std::path::PathBuf>::new()
    );
    for out in [out, failed] {
        assert!(
            !out.stdout.contains(KEY) && !out.stderr.contains(KEY),
            "{out:?}"
        );
    }
}
