//! `init`: the default config, the five columns and the board's `.gitignore`; idempotent.

use serde_json::json;

use crate::suite::common::{outcome, TestEnv, COLUMNS};

#[test]
fn init_writes_the_default_config_and_the_columns() {
    let env = TestEnv::new();
    // With a key for the default API, init writes the defaults as they are.
    outcome(env.cmd(&["init"]).env("OPENAI_API_KEY", "sk-test"))
        .success()
        .stdout_has("created .agentic-sdlc.json");

    let config: serde_json::Value =
        serde_json::from_str(&env.read(".agentic-sdlc.json")).expect("config is JSON");
    // The defaults have one source, the library; docs/reference.md is checked against it.
    assert_eq!(config, agentic_sdlc::config::default_value());
    for column in COLUMNS {
        let folder = env.path(format!(".agentic-sdlc/{column}"));
        assert!(folder.is_dir(), "{} missing", folder.display());
    }
    let ignored: Vec<String> = env
        .read(".agentic-sdlc/.gitignore")
        .lines()
        .map(str::to_string)
        .collect();
    for entry in [".workflow-state.json", ".lock", "logs/"] {
        assert!(ignored.iter().any(|l| l == entry), "{entry} not ignored");
    }
}

#[test]
fn init_json_reports_what_it_created() {
    let env = TestEnv::new();
    let report = env.run_json(&["init"]);
    assert_eq!(report["schemaVersion"], 1);
    assert_eq!(report["kind"], "init");
    let created = report["created"].as_array().expect("created is a list");
    assert!(created.contains(&json!(".agentic-sdlc.json")), "{report}");
    assert!(
        created.contains(&json!(".agentic-sdlc/backlog/")),
        "{report}"
    );

    let again = env.run_json(&["init"]);
    assert_eq!(again["created"], json!([]), "{again}");
}

#[test]
fn init_twice_changes_no_byte() {
    let env = TestEnv::init();
    env.add("Keep me", &[]);
    let before = env.files();
    env.run(&["init"])
        .success()
        .stdout_has("already initialised");
    assert_eq!(env.files(), before);
}

#[test]
fn init_repairs_a_missing_column_without_touching_the_rest() {
    let env = TestEnv::init();
    std::fs::remove_dir(env.path(".agentic-sdlc/blocked")).unwrap();
    let config = env.read(".agentic-sdlc.json");
    env.run(&["init"])
        .success()
        .stdout_has("created .agentic-sdlc/blocked/");
    assert!(env.path(".agentic-sdlc/blocked").is_dir());
    assert_eq!(env.read(".agentic-sdlc.json"), config);
}

#[test]
fn init_honours_an_existing_config() {
    let env = TestEnv::new();
    let config = "{\"sdlcFolder\": \"stories\"}\n";
    env.write(".agentic-sdlc.json", config);
    env.run(&["init"]).success();

    assert_eq!(
        env.read(".agentic-sdlc.json"),
        config,
        "a partial config is kept as written"
    );
    for column in COLUMNS {
        assert!(env.path(format!("stories/{column}")).is_dir(), "{column}");
    }
    assert!(env.path("stories/.gitignore").is_file());
    assert!(!env.path(".agentic-sdlc").exists());

    let (_, _, path) = env.add("Lives in stories", &[]);
    assert_eq!(path, env.path("stories/backlog/lives-in-stories.md"));
}

#[test]
fn init_refuses_a_broken_config() {
    let env = TestEnv::new();
    env.write(".agentic-sdlc.json", "{\"theme\": \"pink\"}");
    env.run(&["init"]).code(2).stderr_has("theme");
    assert!(!env.path(".agentic-sdlc").exists());
}

/// A loopback port nobody listens on.
fn unused_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn with_no_key_and_no_server_init_chooses_the_local_model_and_says_so_in_one_line() {
    let env = TestEnv::new();
    let port = unused_port().to_string();
    let out = outcome(env.cmd(&["init"]).env("AGENTIC_SDLC_LOCAL_PORTS", &port));
    out.success();
    let said: Vec<&str> = out
        .stdout
        .lines()
        .filter(|line| line.contains("llm.provider"))
        .collect();
    assert_eq!(said.len(), 1, "{}", out.stdout);
    assert!(
        said[0].contains("\"local\"") && said[0].contains("qwen-coder-1.5b (1.1 GB)"),
        "{}",
        said[0]
    );
    let config: serde_json::Value = serde_json::from_str(&env.read(".agentic-sdlc.json")).unwrap();
    assert_eq!(config["llm"]["provider"], "local");
    let mut expected = agentic_sdlc::config::default_value();
    expected["llm"]["provider"] = "local".into();
    assert_eq!(
        config, expected,
        "only the provider differs from the defaults"
    );
}

#[test]
fn a_model_server_answering_on_a_usual_port_keeps_the_api_provider() {
    let env = TestEnv::new();
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = server.local_addr().unwrap().port().to_string();
    let out = outcome(env.cmd(&["init"]).env("AGENTIC_SDLC_LOCAL_PORTS", &port));
    out.success();
    assert!(!out.stdout.contains("llm.provider"), "{}", out.stdout);
    let config: serde_json::Value = serde_json::from_str(&env.read(".agentic-sdlc.json")).unwrap();
    assert_eq!(config, agentic_sdlc::config::default_value());
}
