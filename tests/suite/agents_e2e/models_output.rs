//! What a person reads about the model (docs/design.md §15): transcripts that name their agent and
//! hold JSON, a missing key reported as the variable it is, and log lines without colour codes
//! where the rest of the output has none.

use serde_json::{json, Value};

use super::{Project, OFF_ACCEPTANCE};
use crate::suite::common::outcome;
use crate::suite::fake_llm::Reply;

#[tokio::test]
async fn every_transcript_entry_names_its_agent_and_results_are_json() {
    let p = Project::new().await;
    p.config(&[("review.testCommand", "echo TESTS-RAN"), OFF_ACCEPTANCE]);
    let story = p.planned("Logged");
    p.fake
        .push(
            "implement",
            Reply::tool("write_file", json!({"path": "src/a.txt", "content": "a"})),
        )
        .push(
            "code-review",
            Reply::tool("read_file", json!({"path": "src/a.txt"})),
        );

    p.step(&story, "implement").success();
    p.step(&story, "review").success();

    let lines = p.env.transcript_lines(&story.id);
    assert!(!lines.is_empty());
    for line in &lines {
        let agent = line["agent"].as_str().unwrap_or_default();
        assert!(!agent.is_empty(), "no agent in {line}");
        assert!(!line.to_string().contains("Ok(ShellOutput"), "{line}");
    }
    let agents_of = |event: &str| -> Vec<String> {
        let mut agents: Vec<String> = lines
            .iter()
            .filter(|l| l["event"] == event)
            .map(|l| l["agent"].as_str().unwrap().to_string())
            .collect();
        agents.sort();
        agents.dedup();
        agents
    };
    assert_eq!(
        agents_of("response"),
        ["code-review", "implement", "po-review", "security-review"]
    );
    let tool_calls: Vec<&Value> = lines.iter().filter(|l| l["event"] == "tool_call").collect();
    assert_eq!(tool_calls.len(), 2, "{tool_calls:#?}");
    assert_eq!(tool_calls[0]["agent"], "implement");
    // The arguments exactly as the model wrote them (JSON text), the result as the model read it.
    let arguments: Value =
        serde_json::from_str(tool_calls[0]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"path": "src/a.txt", "content": "a"}));
    assert!(tool_calls[0]["result"].is_string());
    assert_eq!(tool_calls[1]["agent"], "code-review");
    let test = lines
        .iter()
        .find(|l| l["event"] == "test_command")
        .expect("test_command entry");
    assert_eq!(test["result"]["exit_code"], 0, "{test}");
    assert_eq!(test["result"]["timed_out"], false, "{test}");
    assert!(test["result"]["output"]
        .as_str()
        .unwrap()
        .contains("TESTS-RAN"));
}

#[tokio::test]
async fn a_missing_key_is_reported_as_the_environment_variable_it_is() {
    let p = Project::new().await;
    p.config(&[
        ("llm.baseUrl", "https://llm.example.invalid/v1"),
        ("llm.apiKeyEnv", "MY_LLM_KEY"),
    ]);
    let story = p.ready("Keyless");

    let out = p.env.run(&["run", "--story", &story.id]);

    out.code(2);
    assert!(
        out.stderr
            .contains("the environment variable MY_LLM_KEY is not set"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("https://llm.example.invalid/v1"));
    assert!(!out.stderr.contains("config error"), "{}", out.stderr);
    assert!(p.fake.requests().is_empty());
}

#[tokio::test]
async fn warnings_carry_colour_codes_only_when_the_output_may() {
    let p = Project::new().await;
    let run = |color: &str| {
        let story = p.ready(&format!("Warned {color}"));
        p.fake.push("research", Reply::status(500));
        let mut cmd = p.cmd(&[
            "--color", color, "run", "--story", &story.id, "--step", "research",
        ]);
        cmd.env_remove("NO_COLOR");
        let out = outcome(&mut cmd);
        out.success();
        assert!(out.stderr.contains("WARN"), "{}", out.stderr);
        out.stderr
    };
    // stderr is a pipe here: `auto` and `never` write no escape codes; `always` does.
    for color in ["auto", "never"] {
        let stderr = run(color);
        assert!(!stderr.contains('\u{1b}'), "--color {color}: {stderr:?}");
    }
    assert!(run("always").contains('\u{1b}'));
    // `theme: none` turns colour off everywhere, log lines included.
    p.config(&[("theme", "none")]);
    let stderr = run("always");
    assert!(!stderr.contains('\u{1b}'), "theme none: {stderr:?}");
}
