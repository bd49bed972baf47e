//! The run's event stream (docs/design.md §8, §14): `run --json` lines and the journal come from
//! the same typed events; tool calls and per-call usage are progress, shown with `-v`.

use serde_json::{json, Value as Json};

use super::{blocker_verdict, COMPLETION_TOKENS, PROMPT_TOKENS};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

fn json_lines(stdout: &str) -> Vec<Json> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: not JSON: {line}")))
        .collect()
}

fn kinds(events: &[Json]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect()
}

fn journal(env: &TestEnv) -> Vec<Json> {
    let dir = env.board().join("runs");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    paths.sort();
    json_lines(&env.read(paths.last().expect("a journal")))
}

/// A story in backlog whose refine agent lists the files once before it answers.
async fn refine_with_a_tool_call() -> (TestEnv, FakeLlm, String, String) {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.push("refine", Reply::tool("list_files", json!({})));
    let (id, slug, _) = env.add("Add a rate limiter", &[]);
    (env, llm, id, slug)
}

#[tokio::test]
async fn verbose_json_adds_tool_calls_and_the_usage_of_every_model_call() {
    let (env, llm, id, _) = refine_with_a_tool_call().await;

    let out = env.run_with_llm(&llm, &["run", "--json", "-v"]);
    out.success();
    let mut events = json_lines(&out.stdout);
    // First, how the model makes tool calls, as the run's probe found (docs/design.md §21).
    let notice = events.remove(0);
    assert_eq!(notice["event"], "notice", "{notice}");
    assert!(
        notice["message"]
            .as_str()
            .unwrap()
            .contains("tool calls native"),
        "{notice}"
    );
    // Then, once, that without a test command the stories get no acceptance tests.
    let skipped = events.remove(0);
    assert_eq!(skipped["event"], "notice", "{skipped}");
    assert!(
        skipped["message"]
            .as_str()
            .unwrap()
            .contains("acceptance phase is skipped: review.testCommand is not set"),
        "{skipped}"
    );
    assert!(
        !events.iter().any(|e| e["event"] == "notice"),
        "said once: {events:#?}"
    );
    assert_eq!(llm.probes(), 1);
    let calls = llm.requests_for("refine").len();
    assert_eq!(calls, 2, "a tool turn, then the answer");
    let mut expected = vec!["action_started", "usage", "tool_call"];
    expected.extend(std::iter::repeat_n("usage", calls - 1));
    expected.extend(["action_completed", "run_finished"]);
    assert_eq!(kinds(&events), expected, "{events:#?}");

    let tool = &events[2];
    assert_eq!(
        tool,
        &json!({"event": "tool_call", "storyId": id, "agent": "refine", "name": "list_files", "isError": false})
    );
    let total = PROMPT_TOKENS + COMPLETION_TOKENS;
    for usage in events.iter().filter(|e| e["event"] == "usage") {
        assert_eq!(usage["storyId"], id.as_str());
        assert_eq!(
            usage["tokens"],
            json!({"prompt": PROMPT_TOKENS, "completion": COMPLETION_TOKENS, "total": total})
        );
    }

    // The journal keeps the action's totals, not the progress within it.
    let journal = journal(&env);
    assert_eq!(
        kinds(&journal),
        [
            "run_started",
            "action_started",
            "action_completed",
            "run_finished"
        ]
    );
    assert_eq!(journal[2]["tokens"]["total"], total * calls as i64);
}

#[tokio::test]
async fn plain_json_has_no_progress_lines() {
    let (env, llm, _, _) = refine_with_a_tool_call().await;

    let out = env.run_with_llm(&llm, &["run", "--json"]);
    out.success();
    assert_eq!(
        kinds(&json_lines(&out.stdout)),
        ["action_started", "action_completed", "run_finished"]
    );
}

#[tokio::test]
async fn verbose_lines_name_each_tool_an_agent_runs() {
    let (env, llm, _, slug) = refine_with_a_tool_call().await;

    let out = env.run_with_llm(&llm, &["run", "-v"]);
    out.success()
        .stderr_has(&format!("  {slug} refine: list_files\n"));
    assert!(
        !env.run_with_llm(&llm, &["run"])
            .stderr
            .contains("list_files"),
        "without -v no tool line"
    );
}

#[tokio::test]
async fn a_rework_reports_its_iteration_and_target() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    llm.push("code-review", blocker_verdict());
    let write = json!({"path": "src/limiter.rs", "content": "// limiter\n"});
    llm.push("implement", Reply::tool("write_file", write))
        .push("implement", Reply::text("Implemented the story."));
    let (id, slug, _) = env.add("Add a rate limiter", &[]);
    for _ in ["refine", "research", "plan", "implement", "review"] {
        env.run_with_llm(&llm, &["run"]).success();
    }

    let out = env.run_with_llm(&llm, &["run", "--json"]);
    out.success();
    let events = json_lines(&out.stdout);
    assert_eq!(
        kinds(&events),
        [
            "action_started",
            "rework_started",
            "action_completed",
            "run_finished"
        ]
    );
    assert_eq!(events[0]["detail"], "iteration 1/3, target: implement");
    assert_eq!(
        events[1],
        json!({"event": "rework_started", "storyId": id, "slug": slug,
               "iteration": 1, "limit": 3, "target": "implement"})
    );
    assert_eq!(kinds(&journal(&env))[2], "rework_started");
}
