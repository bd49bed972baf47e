//! The conventions of a command-line tool: the environment over the config file (as cargo
//! does) with `config` saying where each value comes from; shell completions, a manual page,
//! `--help` that keeps global options apart; and a dry run that says what it lists.

use serde_json::{json, Value as Json};

use crate::suite::common::{outcome, TestEnv};
use crate::suite::fake_llm::FakeLlm;

#[tokio::test]
async fn the_environment_wins_over_the_file_for_the_server_and_the_model() {
    let env = TestEnv::init();
    env.configure_json(
        &json!({"llm": {"baseUrl": "http://127.0.0.1:9/v1", "model": "file-model"}}),
    );
    let llm = FakeLlm::start().await;
    env.add("Env over file", &[]);

    let out = outcome(
        env.cmd_with_llm(&llm, &["run"])
            .env("AGENTIC_SDLC_MODEL", "env-model"),
    );

    out.success();
    assert_eq!(
        llm.requests().len(),
        1,
        "the run talked to the server named in the environment"
    );
    assert_eq!(llm.requests()[0].body["model"], "env-model");
}

#[test]
fn config_shows_the_effective_value_and_where_it_comes_from() {
    // A partial file: what it leaves out keeps its default.
    let env = TestEnv::new();
    env.write(
        ".agentic-sdlc.json",
        r#"{"llm": {"baseUrl": "http://file.example/v1"}}"#,
    );
    let from_env = |args: &[&str]| {
        outcome(
            env.cmd(args)
                .env("OPENAI_BASE_URL", "http://env.example/v1")
                .env("AGENTIC_SDLC_MODEL", "env-model"),
        )
    };

    let one = from_env(&["config", "llm.baseUrl"]);
    one.success();
    assert_eq!(
        one.stdout, "http://env.example/v1\n",
        "the value a run uses"
    );
    one.stderr_has("OPENAI_BASE_URL")
        .stderr_has("http://file.example/v1");
    let file = env.run(&["config", "llm.baseUrl"]);
    assert_eq!(file.stdout, "http://file.example/v1\n");
    file.stderr_has(".agentic-sdlc.json");
    env.run(&["config", "llm.maxTokens"]).stderr_has("default");

    // The whole config: the effective values, as JSON on stdout.
    let all = from_env(&["config"]);
    let merged: Json = serde_json::from_str(&all.stdout).unwrap();
    assert_eq!(merged["llm"]["baseUrl"], "http://env.example/v1");
    assert_eq!(merged["llm"]["model"], "env-model");
    all.stderr_has("AGENTIC_SDLC_MODEL");
    let json = from_env(&["config", "--json"]);
    assert_eq!(json.json()["llm"]["model"], "env-model");

    // Every setting with its origin, for a person and for a program.
    let listed = from_env(&["config", "--show-origin"]);
    listed.success();
    assert!(listed
        .stdout
        .lines()
        .any(|l| l == r#"llm.model = "env-model"  # environment variable AGENTIC_SDLC_MODEL"#));
    assert!(listed
        .stdout
        .lines()
        .any(|l| l == "concurrency = 1  # default"));
    let origins = from_env(&["config", "--show-origin", "--json", "llm"]).json();
    assert_eq!(origins["kind"], "config-origins");
    let settings = origins["settings"].as_array().unwrap();
    let find = |key: &str| settings.iter().find(|s| s["key"] == key).unwrap().clone();
    assert_eq!(
        find("llm.baseUrl"),
        json!({"key": "llm.baseUrl", "value": "http://env.example/v1",
               "origin": {"source": "env", "variable": "OPENAI_BASE_URL"}})
    );
    assert_eq!(
        find("llm.maxTokens")["origin"],
        json!({"source": "default"})
    );
    assert!(settings
        .iter()
        .all(|s| s["key"].as_str().unwrap().starts_with("llm.")));
}

#[test]
fn a_bad_value_in_an_overriding_variable_is_named() {
    let env = TestEnv::init();
    let out = outcome(
        env.cmd(&["status"])
            .env("OPENAI_BASE_URL", "localhost:8080"),
    );
    out.code(2)
        .stderr_has("environment variable OPENAI_BASE_URL")
        .stderr_has("localhost:8080");
}

#[test]
fn setting_a_key_a_variable_overrides_says_so() {
    let env = TestEnv::init();
    let out = outcome(
        env.cmd(&["config", "llm.model", "gpt-4o"])
            .env("AGENTIC_SDLC_MODEL", "local"),
    );
    out.success()
        .stderr_has("AGENTIC_SDLC_MODEL is set and overrides llm.model");
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let env = TestEnv::new();
    for (shell, marker) in [
        ("bash", "-F _clap_complete_agentic_sdlc agentic-sdlc"),
        ("zsh", "#compdef agentic-sdlc"),
        (
            "fish",
            "complete --keep-order --exclusive --command agentic-sdlc",
        ),
    ] {
        let out = env.run(&["completions", shell]);
        out.success();
        assert!(out.stdout.contains(marker), "{shell}:\n{}", out.stdout);
        // The script asks this very binary for each completion.
        assert!(
            out.stdout.contains(env!("CARGO_BIN_EXE_agentic-sdlc")),
            "{shell} calls the binary back"
        );
    }
    if std::path::Path::new("/bin/bash").exists() {
        let script = env.write("completion.bash", &env.run(&["completions", "bash"]).stdout);
        let parsed = std::process::Command::new("/bin/bash")
            .args(["-n", script.to_str().unwrap()])
            .status()
            .unwrap();
        assert!(parsed.success(), "bash cannot parse the script");
    }
    env.run(&["completions", "tcsh"]).code(2);
}

/// What the binary offers for the word at `index` of `words`, asked as the bash script asks.
fn completed(env: &TestEnv, words: &[&str]) -> Vec<String> {
    let mut cmd = env.cmd(&[]);
    cmd.env("COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "false")
        .arg("--")
        .args(words);
    let out = outcome(&mut cmd);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout.lines().map(str::to_string).collect()
}

#[test]
fn completions_offer_commands_slugs_columns_phases_and_config_keys() {
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    env.add("Data export", &[]);
    let offered = |words: &[&str]| completed(&env, words);
    assert_eq!(
        offered(&["agentic-sdlc", "details", "da"]),
        ["dark-mode", "data-export"]
    );
    assert_eq!(
        offered(&["agentic-sdlc", "run", "--story", "dar"]),
        ["dark-mode"]
    );
    assert_eq!(
        offered(&["agentic-sdlc", "move", "dark-mode", "in"]),
        ["in-progress"]
    );
    assert_eq!(
        offered(&["agentic-sdlc", "run", "--step", "acc"]),
        ["acceptance"]
    );
    assert_eq!(
        offered(&["agentic-sdlc", "logs", "dark-mode", "--phase", "im"]),
        ["implement"]
    );
    assert_eq!(
        offered(&["agentic-sdlc", "config", "llm.local"]),
        ["llm.localModel"]
    );
    assert!(offered(&["agentic-sdlc", "de"]).contains(&"decide".to_string()));
    assert!(offered(&["agentic-sdlc", "run", "--no-"]).contains(&"--no-input".to_string()));
}

#[test]
fn tab_completes_a_slug_after_details_in_bash() {
    use super::pty::Pty;
    if !std::path::Path::new("/bin/bash").exists() {
        return;
    }
    let env = TestEnv::init();
    env.add("Dark mode", &[]);
    let script = env.write("completion.bash", &env.run(&["completions", "bash"]).stdout);
    let mut bash = std::process::Command::new("/bin/bash");
    bash.args(["--norc", "--noprofile", "-i"])
        .current_dir(env.root())
        .env("PS1", "$ ")
        .env("TERM", "dumb")
        .env("NO_COLOR", "1");
    let mut pty = Pty::spawn(bash);
    let wait = std::time::Duration::from_secs(30);
    pty.expect("$ ", wait);
    pty.send(format!("source {}\n", script.display()).as_bytes());
    pty.send(b"agentic-sdlc details dar\t");
    pty.expect("agentic-sdlc details dark-mode", wait);
    // Ctrl-U clears the line, and the shell ends.
    pty.send(b"\x15exit\n");
    let (code, output) = pty.finish(wait);
    assert_eq!(code, 0, "{output}");
}

#[test]
fn the_manual_page_is_roff_and_one_page_per_command_on_request() {
    let env = TestEnv::new();
    let page = env.run(&["man"]);
    page.success();
    assert!(
        page.stdout.contains(".TH agentic-sdlc 1"),
        "{}",
        page.stdout
    );
    assert!(page.stdout.contains(".SH SUBCOMMANDS"), "{}", page.stdout);
    env.run(&["man", "--out-dir", "pages"]).success();
    for name in [
        "agentic-sdlc.1",
        "agentic-sdlc-run.1",
        "agentic-sdlc-decide.1",
    ] {
        let text = env.read(format!("pages/{name}"));
        assert!(text.contains(".TH"), "{name}");
    }
    assert!(env.read("pages/agentic-sdlc-run.1").contains("no\\-input"));
}

#[test]
fn help_keeps_global_options_apart_from_the_commands_own() {
    let env = TestEnv::new();
    let help = env.run(&["run", "--help"]);
    help.success();
    let text = &help.stdout;
    let global = text
        .find("Global options:")
        .expect("a heading for global options");
    let own = text.find("--auto").unwrap();
    let json = text.find("--json").unwrap();
    assert!(own < global && global < json, "{text}");
    assert!(text[..global].find("--quiet").is_none(), "{text}");
}

#[test]
fn a_dry_run_says_it_lists_each_story_s_next_action_only() {
    let env = TestEnv::init();
    env.add("First", &[]);
    env.add("Second", &[]);
    env.run(&["run", "--dry-run", "--auto"])
        .success()
        .stdout_has("Would run 2 action(s):")
        .stdout_has("each story's next action only");
    env.run(&["run", "--dry-run"])
        .success()
        .stdout_has("the next action only");
}
