//! `config [key] [value]` and what a hand-broken `.agentic-sdlc.json` does to every command.

use serde_json::{json, Value};

use crate::suite::common::TestEnv;

fn config_file(env: &TestEnv) -> Value {
    serde_json::from_str(&env.read(".agentic-sdlc.json")).expect("the config is JSON")
}

#[test]
fn config_without_a_key_prints_the_merged_config() {
    let env = TestEnv::new();
    env.write(
        ".agentic-sdlc.json",
        r#"{"refinement": {"maxIterations": 7}}"#,
    );
    for args in [&["config"][..], &["config", "--json"]] {
        let out = env.run(args);
        out.success();
        let merged = out.json();
        assert_eq!(merged["refinement"]["maxIterations"], 7, "{merged}");
        assert_eq!(merged["refinement"]["enableCircuitBreaker"], true);
        assert_eq!(merged["sdlcFolder"], ".agentic-sdlc");
        assert_eq!(merged["llm"]["model"], "gpt-4o-mini");
        assert_eq!(merged["review"]["testCommand"], Value::Null);
    }
}

#[test]
fn config_prints_one_key() {
    let env = TestEnv::init();
    let cases = [
        ("refinement.maxIterations", "3\n"),
        ("sdlcFolder", ".agentic-sdlc\n"),
        ("git.integrate", "merge\n"),
        ("review.testCommand", "null\n"),
    ];
    for (key, expected) in cases {
        let out = env.run(&["config", key]);
        out.success();
        assert_eq!(out.stdout, expected, "config {key}");
    }
    let llm = env.run(&["config", "llm"]);
    llm.success();
    assert_eq!(llm.json()["maxTurns"], 50);
}

#[test]
fn config_set_persists_only_that_key() {
    let env = TestEnv::new();
    env.write(".agentic-sdlc.json", r#"{"theme": "dark"}"#);
    env.run(&["config", "refinement.maxIterations", "5"])
        .success();
    assert_eq!(
        config_file(&env),
        json!({"theme": "dark", "refinement": {"maxIterations": 5}}),
        "a partial file stays partial"
    );
    let out = env.run(&["config", "refinement.maxIterations"]);
    out.success();
    assert_eq!(out.stdout, "5\n");
    let out = env.run(&["config", "refinement.escalateOnMaxAttempts"]);
    assert_eq!(out.stdout, "manual\n", "sibling keys keep their defaults");

    env.run(&["config", "llm.baseUrl", "http://localhost:8080/v1"])
        .success();
    env.run(&["config", "defaultLabels", r#"["a","b"]"#])
        .success();
    assert_eq!(
        config_file(&env),
        json!({
            "theme": "dark",
            "refinement": {"maxIterations": 5},
            "llm": {"baseUrl": "http://localhost:8080/v1"},
            "defaultLabels": ["a", "b"],
        })
    );
}

#[test]
fn config_set_and_get_read_as_git_and_npm_spell_them() {
    let env = TestEnv::init();
    env.run(&["config", "set", "llm.model", "qwen2.5-coder"])
        .success();
    assert_eq!(config_file(&env)["llm"]["model"], "qwen2.5-coder");
    let out = env.run(&["config", "get", "llm.model"]);
    out.success();
    assert_eq!(out.stdout, "qwen2.5-coder\n");

    let before = env.read(".agentic-sdlc.json");
    let half = env.run(&["config", "set", "llm.model"]);
    assert_eq!(half.code, 2);
    assert!(
        half.stderr.contains("`config set` takes a key and a value"),
        "{}",
        half.stderr
    );
    let extra = env.run(&["config", "llm.model", "a", "b"]);
    assert_eq!(extra.code, 2);
    assert!(
        extra.stderr.contains("unexpected argument `b`"),
        "{}",
        extra.stderr
    );
    assert_eq!(env.read(".agentic-sdlc.json"), before, "nothing written");
}

#[test]
fn config_set_json_reports_the_key_and_value() {
    let env = TestEnv::init();
    let out = env.run_json(&["config", "concurrency", "4"]);
    assert_eq!(
        out,
        json!({"schemaVersion": 1, "kind": "config", "key": "concurrency", "value": 4})
    );
}

#[test]
fn config_rejects_invalid_values_naming_the_key() {
    let env = TestEnv::init();
    let before = env.read(".agentic-sdlc.json");
    let cases = [
        (
            "refinement.maxIterations",
            "many",
            "refinement.maxIterations",
        ),
        ("refinement.maxIterations", "0", "refinement.maxIterations"),
        ("concurrency", "-1", "concurrency"),
        (
            "refinement.maxIterations",
            "true",
            "refinement.maxIterations",
        ),
        (
            "refinement.escalateOnMaxAttempts",
            "panic",
            "escalateOnMaxAttempts",
        ),
        ("llm.bogus", "1", "llm.bogus"),
        ("bogus", "1", "bogus"),
        ("theme", "pink", "theme"),
        ("concurrency", "0", "concurrency"),
        ("llm.baseUrl", "localhost:8080", "llm.baseUrl"),
        ("git.createPr", "yes", "git.createPr"),
    ];
    for (key, value, named) in cases {
        env.run(&["config", key, value]).code(2).stderr_has(named);
        assert_eq!(
            env.read(".agentic-sdlc.json"),
            before,
            "`config {key} {value}` must not write"
        );
    }
    env.run(&["config", "llm.bogus"])
        .code(2)
        .stderr_has("llm.bogus");
}

#[test]
fn a_broken_config_stops_every_command_with_exit_2() {
    let cases = [
        (
            "{\n  \"theme\": \"dark\"\n  \"concurrency\": 2\n}\n",
            "line 3",
        ),
        ("{\"theme\": \"dark\", \"bogus\": 1}", "bogus"),
        ("{\"llm\": {\"modle\": \"gpt-4o\"}}", "modle"),
        (
            "{\"refinement\": {\"maxIterations\": \"many\"}}",
            "refinement.maxIterations",
        ),
        ("{\"theme\": \"pink\"}", "theme"),
        ("[1, 2]", "object"),
    ];
    let commands: [&[&str]; 7] = [
        &["status"],
        &["add", "New story"],
        &["details", "x"],
        &["config"],
        &["move", "x", "done"],
        &["unblock", "x"],
        &["validate"],
    ];
    for (text, named) in cases {
        let env = TestEnv::init();
        env.write(".agentic-sdlc.json", text);
        for args in commands {
            env.run(args)
                .code(2)
                .stderr_has(".agentic-sdlc.json")
                .stderr_has(named);
        }
        env.run(&["status", "--json"]).code(2).stdout_empty();
    }
}
