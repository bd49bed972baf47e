//! `notify.webhook` and `notify.command`: one notice per event, and a notifier that fails or
//! hangs changes nothing about the run.

use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::{column_of, stopped_for_a_person};
use crate::suite::common::TestEnv;
use crate::suite::delivery::Repo;
use crate::suite::fake_llm::{FakeLlm, Reply};

/// The notices a receiver got, in order.
async fn notices(receiver: &MockServer) -> Vec<Json> {
    receiver
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).expect("a notice is JSON"))
        .collect()
}

fn kinds(notices: &[Json]) -> Vec<&str> {
    notices
        .iter()
        .map(|n| n["event"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_webhook_gets_exactly_one_notice_per_event() {
    let repo = Repo::new().await;
    let receiver = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&receiver)
        .await;
    repo.configure(json!({
        "notify": {"webhook": format!("{}/hook", receiver.uri())},
        "phases": {"research": {"review": {"reviewer": "ai"}}},
    }));
    repo.fake.when(
        "phase-review",
        "# Story: Rejected idea",
        Reply::text("REJECT: out of scope"),
    );
    let merged = repo.story("Merged feature", &[]);
    let rejected = repo.story("Rejected idea", &[]);
    stopped_for_a_person(&repo.run(&["run", "--auto"]));
    assert_eq!(repo.column(&merged), "done");
    assert_eq!(repo.column(&rejected), "blocked");

    let first = notices(&receiver).await;
    let mut got = kinds(&first);
    got.sort();
    assert_eq!(
        got,
        ["run_finished", "story_blocked", "story_merged"],
        "{first:#?}"
    );
    let of = |kind: &str| first.iter().find(|n| n["event"] == kind).unwrap().clone();
    let merge = of("story_merged");
    assert_eq!(merge["storyId"], merged.id.as_str());
    assert_eq!(merge["slug"], merged.slug.as_str());
    assert_eq!(merge["title"], "Merged feature");
    assert_eq!(merge["base"], "main");
    assert_eq!(merge["commit"], repo.git(&["rev-parse", "main"]).as_str());
    let text = merge["text"].as_str().unwrap();
    assert!(
        text.contains(&merged.slug) && text.contains("merged into main"),
        "{text}"
    );
    let block = of("story_blocked");
    assert_eq!(block["slug"], rejected.slug.as_str());
    assert_eq!(
        block["reason"],
        "Phase research rejected by review: out of scope"
    );
    assert!(block["text"].as_str().unwrap().contains("out of scope"));
    let finished = of("run_finished");
    assert!(finished.get("storyId").is_none(), "{finished}");
    assert_eq!(finished["exitCode"], 3, "a rejection needs a person");
    assert!(finished["text"].as_str().unwrap().contains("exit 3"));

    // A human gate that holds a new story: one notice for the wait, one for the run's end.
    repo.configure(json!({"phases": {"plan": {"review": {"reviewer": "human"}}}}));
    let gated = repo.story("Gated feature", &[]);
    stopped_for_a_person(&repo.run(&["run", "--auto"]));
    let all = notices(&receiver).await;
    let second: Vec<&Json> = all[first.len()..].iter().collect();
    let got: Vec<&str> = second
        .iter()
        .map(|n| n["event"].as_str().unwrap())
        .collect();
    assert_eq!(got, ["gate_waiting", "run_finished"], "{second:#?}");
    let finished = second[1]["text"].as_str().unwrap();
    assert!(
        finished.contains(&format!("{} (", gated.slug)),
        "run_finished names who needs a person: {finished}"
    );
    let waiting = second[0];
    assert_eq!(waiting["slug"], gated.slug.as_str());
    assert_eq!(waiting["phase"], "plan");
    assert_eq!(
        waiting["command"],
        format!("agentic-sdlc decide {} \"APPROVE\"", gated.slug).as_str()
    );
}

#[tokio::test]
async fn a_notify_command_reads_the_notice_and_keeps_no_secret() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    env.configure_json(&json!({"notify": {
        "command": "cat >> notices.jsonl; echo >> notices.jsonl; env > notify-env.txt",
        "events": ["run_finished"],
    }}));
    let (_, slug, _) = env.add("Quiet feature", &[]);
    env.cmd_with_llm(&llm, &["run", "--auto"])
        .env("OPENAI_API_KEY", "sk-not-for-notifiers")
        .env("DEPLOY_TOKEN", "not-for-notifiers-either")
        .assert()
        .success();
    assert_eq!(column_of(&env, &slug), "done");

    let lines = written_notices(&env);
    assert_eq!(kinds(&lines), ["run_finished"], "only the events asked for");
    assert_eq!(lines[0]["exitCode"], 0);
    assert!(lines[0]["text"].as_str().unwrap().contains("run finished"));
    let environment = env.read("notify-env.txt");
    assert!(environment.contains("AGENTIC_SDLC_EVENT=run_finished"));
    assert!(environment.contains("PATH="));
    for secret in ["sk-not-for-notifiers", "not-for-notifiers-either"] {
        assert!(!environment.contains(secret), "{environment}");
    }
}

#[tokio::test]
async fn a_failing_or_hanging_notifier_does_not_change_the_run() {
    for (command, says) in [
        ("echo broken >&2; exit 1", "exit 1: broken"),
        ("sleep 60", "no answer within 1s"),
    ] {
        let env = TestEnv::init();
        let llm = FakeLlm::start().await;
        env.configure_json(&json!({"notify": {
            "command": command,
            "timeoutSeconds": 1,
            // Nothing listens there: the webhook fails too.
            "webhook": "http://127.0.0.1:9/hook",
        }}));
        let (_, slug, _) = env.add("Robust feature", &[]);
        let started = Instant::now();
        let out = env.run_with_llm(&llm, &["run", "--auto"]);
        out.success()
            .stderr_has("notify.command failed for run_finished")
            .stderr_has(says)
            .stderr_has("notify.webhook (127.0.0.1:9) failed");
        assert_eq!(column_of(&env, &slug), "done", "{command}");
        assert!(
            started.elapsed() < Duration::from_secs(45),
            "`{command}` held the run up"
        );
    }
}

#[tokio::test]
async fn a_failed_action_is_a_notice_naming_the_story_and_where_to_read_why() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.push("refine", Reply::bad_request("the context is too small"));
    env.configure_json(&json!({"notify": {
        "command": "cat >> notices.jsonl; echo >> notices.jsonl",
        "events": ["action_failed"],
    }}));
    let (_, slug, _) = env.add("Failing story", &[]);
    env.cmd_with_llm(&llm, &["run", "--auto"]).assert().code(1);
    let lines = written_notices(&env);
    assert_eq!(kinds(&lines), ["action_failed"], "{lines:#?}");
    let failed = &lines[0];
    assert_eq!(failed["slug"], slug.as_str());
    assert_eq!(failed["action"], "refine");
    assert_eq!(
        failed["command"],
        format!("agentic-sdlc details {slug}").as_str()
    );
    assert!(failed["error"]
        .as_str()
        .unwrap()
        .contains("the context is too small"));
    assert!(failed["text"]
        .as_str()
        .unwrap()
        .contains(&format!("✗ {slug}: refine failed")));
}

/// The notices a `notify.command` of `cat >> notices.jsonl` wrote, one JSON document a line.
fn written_notices(env: &TestEnv) -> Vec<Json> {
    env.read("notices.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
