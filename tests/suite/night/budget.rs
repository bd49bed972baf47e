//! Budgets hold within one request: the reply cap is what the budget leaves, a prompt that
//! alone would pass the budget is never sent, and a server that sends no token counts is
//! counted from the size of the text.

use serde_json::{json, Value as Json};

use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{request_chars, FakeLlm, Reply, UsageReport};

const FILES: usize = 20;
const FILE_BYTES: usize = 12_000;

/// A refined story whose next action is research, in a project with twenty large files.
fn project_with_large_files() -> (TestEnv, String) {
    let env = TestEnv::init();
    let line = "fn spread_out_over_the_file() { let words = \"filler text\"; }\n";
    for n in 0..FILES {
        env.write(
            format!("src/part{n}.rs"),
            &line.repeat(FILE_BYTES / line.len()),
        );
    }
    let (_, slug, _) = env.add("Survey the parts", &[]);
    env.run(&["move", &slug, "ready"]).success();
    (env, slug)
}

fn front(env: &TestEnv, slug: &str) -> Json {
    serde_json::to_value(env.frontmatter(env.story_path(slug))).unwrap()
}

#[tokio::test]
async fn twenty_large_reads_in_one_turn_stop_at_the_budget() {
    let (env, slug) = project_with_large_files();
    let budget = 3000;
    env.configure_json(&json!({"budget": {"storyTokens": budget}}));
    let llm = FakeLlm::start().await;
    llm.report_usage(UsageReport::BySize);
    let reads: Vec<(String, Json)> = (0..FILES)
        .map(|n| {
            (
                "read_file".to_string(),
                json!({"path": format!("src/part{n}.rs")}),
            )
        })
        .collect();
    llm.push("research", Reply::ToolCalls(reads));

    let out = env.run_with_llm(&llm, &["run", "--auto", "--story", &slug]);

    out.code(3);
    // One request went out; the one carrying twenty files' worth of results did not.
    let sent = llm.requests_for("research");
    assert_eq!(sent.len(), 1, "the oversized prompt was not sent");
    let first = &sent[0].body;
    let prompt = request_chars(first).div_ceil(4) as u64;
    let cap = first["max_tokens"].as_u64().unwrap();
    assert!(cap < 4096, "the reply cap is what the budget leaves: {cap}");
    assert!(prompt + cap <= budget, "{prompt} + {cap}");
    let story = front(&env, &slug);
    let reason = story["blocked_reason"].as_str().unwrap();
    assert!(reason.starts_with("Budget: "), "{reason}");
    assert!(
        reason.contains(&format!(
            "of {budget} tokens; the next request's prompt alone is about"
        )),
        "{reason}"
    );
    let spent = story["usage"]["prompt_tokens"].as_u64().unwrap()
        + story["usage"]["completion_tokens"].as_u64().unwrap();
    assert!(spent <= budget + cap, "{spent}");
    assert_eq!(
        env.status_json()["columns"]["blocked"][0]["slug"],
        slug.as_str()
    );
}

#[tokio::test]
async fn replies_without_usage_are_estimated_and_said_once() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.report_usage(UsageReport::Omitted);
    let (id, slug, _) = env.add("Count me", &[]);

    let out = env.run_with_llm(&llm, &["run", "--auto", "--story", &slug]);

    out.success();
    let usage = &front(&env, &slug)["usage"];
    assert_eq!(usage["estimated"], true, "{usage}");
    assert!(usage["prompt_tokens"].as_u64().unwrap() > 100, "{usage}");
    assert!(usage["completion_tokens"].as_u64().unwrap() > 0, "{usage}");
    assert_eq!(
        usage["requests"].as_u64().unwrap(),
        llm.requests().len() as u64
    );
    let warnings = out.stderr.matches("sent no token counts").count();
    assert_eq!(warnings, 1, "one warning per run:\n{}", out.stderr);
    // The transcripts mark each estimated count.
    let logs = env.board().join("logs").join(&id);
    let responses: Vec<Json> = std::fs::read_dir(&logs)
        .unwrap()
        .flat_map(|entry| {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            text.lines()
                .map(|l| serde_json::from_str::<Json>(l).unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|line| line["event"] == "response")
        .collect();
    assert!(!responses.is_empty());
    for response in &responses {
        assert_eq!(response["usage"]["estimated"], true, "{response}");
    }
}

#[tokio::test]
async fn a_budget_holds_against_a_server_without_usage() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.report_usage(UsageReport::Omitted);
    env.configure_json(&json!({"budget": {"storyTokens": 2500}}));
    let (_, slug, _) = env.add("Count me too", &[]);

    env.run_with_llm(&llm, &["run", "--auto", "--story", &slug])
        .code(3);

    let story = front(&env, &slug);
    assert!(
        story["blocked_reason"]
            .as_str()
            .unwrap()
            .starts_with("Budget: "),
        "{story}"
    );
    assert!(
        llm.requests_for("code-review").is_empty(),
        "the estimate stopped the story before its review"
    );
}
