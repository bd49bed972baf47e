//! `llm.provider: "local"`: a run with work starts the model server itself on a loopback port,
//! waits for it, uses it, and stops it at its end, Ctrl-C included; after a `kill -9` of the
//! run, the next command stops the server nobody uses. The server is a stand-in `llama-server`
//! on PATH (a small Python HTTP server) that records what it was asked.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::suite::common::{outcome, path_with, write_program, TestEnv};

/// A `llama-server` that answers `/health`, `/v1/models` and every chat completion with a
/// refined story, after `STUB_DELAY` seconds; with `STUB_LOADING` set, `/health` says it is
/// still loading. It writes its pid, its arguments and each request into `STUB_LOG`.
const STUB: &str = r###"#!/usr/bin/env python3
import json, os, sys, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
log = os.environ["STUB_LOG"]
def note(line):
    with open(log, "a") as f:
        f.write(line + "\n")
note("started " + str(os.getpid()) + " " + " ".join(sys.argv[1:]))
port = int(sys.argv[sys.argv.index("--port") + 1])
REPLY = "## Summary\nUsers can switch the app to a dark theme.\n\n## Acceptance Criteria\n- [ ] A toggle switches the theme to dark\n"
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        if self.path == "/health":
            if os.environ.get("STUB_LOADING"):
                self.answer(503, {"error": {"message": "Loading model"}})
            else:
                self.answer(200, {"status": "ok"})
        else:
            self.answer(200, {"object": "list", "data": [{"id": "local", "object": "model"}]})
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        note("chat model=" + str(body.get("model")))
        time.sleep(float(os.environ.get("STUB_DELAY", "0")))
        self.answer(200, {"id": "c", "object": "chat.completion", "created": 0, "model": "local",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": REPLY}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}})
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"###;

/// A project whose config serves its own tiny model, with the stand-in server on PATH.
struct Local {
    env: TestEnv,
    bin: tempfile::TempDir,
    cache: tempfile::TempDir,
    log: PathBuf,
}

impl Local {
    fn new() -> Local {
        let env = TestEnv::init();
        env.configure_json(&json!({"llm": {"provider": "local", "localModel": "tiny"}}));
        let bin = tempfile::tempdir().unwrap();
        write_program(bin.path(), "llama-server", STUB);
        let cache = tempfile::tempdir().unwrap();
        let log = cache.path().join("stub.log");
        let local = Local {
            env,
            bin,
            cache,
            log,
        };
        let weights = local.cache.path().join("tiny-source.gguf");
        std::fs::write(&weights, b"GGUF tiny weights").unwrap();
        local
            .command(&["model", "pull", "tiny", "--from", weights.to_str().unwrap()])
            .success();
        local
    }

    fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = self.env.cmd(args);
        cmd.env("PATH", path_with(self.bin.path()))
            .env("AGENTIC_SDLC_MODEL_CACHE", self.cache.path())
            .env("STUB_LOG", &self.log)
            .timeout(Duration::from_secs(120));
        cmd
    }

    fn command(&self, args: &[&str]) -> crate::suite::common::Outcome {
        outcome(&mut self.cmd(args))
    }

    /// A run whose server is answering its first request (slowly), and the server's pid.
    fn run_in_the_middle_of_an_answer() -> (Local, std::process::Child, i32) {
        let local = Local::new();
        local.env.add("Dark mode", &[]);
        let child = local.spawn_slow_run();
        wait_until("a chat request reaches the server", || {
            local.stub_log().contains("chat model=")
        });
        let server = local.server_pid();
        (local, child, server)
    }

    /// `run --step refine` in the background, the server taking 30 s per answer.
    fn spawn_slow_run(&self) -> std::process::Child {
        self.spawn_run(&[("STUB_DELAY", "30")])
    }

    /// `run --step refine` in the background, with the stand-in server's settings.
    fn spawn_run(&self, stub: &[(&str, &str)]) -> std::process::Child {
        std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"))
            .current_dir(self.env.root())
            .args(["run", "--step", "refine"])
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .env("NO_COLOR", "1")
            .env("PATH", path_with(self.bin.path()))
            .env("AGENTIC_SDLC_MODEL_CACHE", self.cache.path())
            .env("STUB_LOG", &self.log)
            .envs(stub.iter().copied())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    }

    fn stub_log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The pid of the stand-in server the log names last.
    fn server_pid(&self) -> i32 {
        let log = self.stub_log();
        let line = log
            .lines()
            .rev()
            .find(|l| l.starts_with("started "))
            .expect("a server started");
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    fn state_files(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.cache.path().join("servers"))
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Whatever a test started, it stops: a stand-in server the tool failed to stop (a failing
/// test) does not outlive the test.
impl Drop for Local {
    fn drop(&mut self) {
        for line in self.stub_log().lines() {
            let pid = line
                .strip_prefix("started ")
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|pid| pid.parse::<i32>().ok());
            if let Some(pid) = pid.filter(|pid| alive(*pid)) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_run_starts_the_local_model_server_uses_it_and_stops_it() {
    let local = Local::new();
    let (_, slug, _) = local.env.add("Dark mode", &[]);
    let out = local.command(&["run", "--step", "refine"]);
    out.success()
        .stderr_has("starting the tiny server on 127.0.0.1:");
    let log = local.stub_log();
    // Started with the model from the cache, on loopback, answering as `local`.
    let started = log.lines().next().unwrap();
    let model = local.cache.path().join("tiny.gguf");
    for expected in [
        format!("--model {}", model.display()),
        "--host 127.0.0.1".to_string(),
        "--alias local".to_string(),
    ] {
        assert!(started.contains(&expected), "{expected}: {started}");
    }
    assert!(log.contains("chat model=local"), "{log}");
    assert!(
        local
            .env
            .read(format!(".agentic-sdlc/ready/{slug}.md"))
            .contains("A toggle switches the theme to dark"),
        "the story was refined by the served model"
    );
    // The server's log is in the runs folder; nothing is left running.
    assert!(local
        .env
        .path(".agentic-sdlc/runs/model-server-tiny.log")
        .is_file());
    assert!(!alive(local.server_pid()), "the server outlived the run");
    assert!(local.state_files().is_empty());
}

#[test]
fn ctrl_c_of_a_run_stops_its_server() {
    let (local, mut child, server) = Local::run_in_the_middle_of_an_answer();
    assert!(alive(server));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!alive(server), "Ctrl-C left the server running");
    assert!(local.state_files().is_empty());
}

#[test]
fn after_a_kill_9_of_the_run_the_next_command_stops_the_server_it_left() {
    let (local, mut child, server) = Local::run_in_the_middle_of_an_answer();
    child.kill().unwrap();
    child.wait().unwrap();
    // Nobody could stop it: the run was killed outright.
    assert!(alive(server));
    local
        .command(&["model", "list"])
        .success()
        .stderr_has("stopped the tiny server a killed run had left");
    wait_until("the left server ends", || !alive(server));
    assert!(local.state_files().is_empty());
}

#[test]
fn two_runs_of_one_machine_share_one_server_and_the_last_to_end_stops_it() {
    let (first, mut first_run, server) = Local::run_in_the_middle_of_an_answer();
    // A second project on the same machine, with the same cache and model.
    let second = TestEnv::init();
    second.configure_json(&json!({"llm": {"provider": "local", "localModel": "tiny"}}));
    second.add("Light mode", &[]);
    // The same PATH and cache as the first run.
    let mut second_run = std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"))
        .current_dir(second.root())
        .args(["run", "--step", "refine"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env("PATH", path_with(first.bin.path()))
        .env("AGENTIC_SDLC_MODEL_CACHE", first.cache.path())
        .env("STUB_LOG", &first.log)
        .env("STUB_DELAY", "30")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the second run's request reaches the server", || {
        first.stub_log().matches("chat model=").count() >= 2
    });
    assert_eq!(
        first.stub_log().matches("started ").count(),
        1,
        "one server for both runs"
    );
    let interrupt = |child: &std::process::Child| {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::Signal::SIGINT,
        )
        .unwrap()
    };
    interrupt(&first_run);
    assert_eq!(first_run.wait().unwrap().code(), Some(130));
    assert!(alive(server), "the second run still uses it");
    interrupt(&second_run);
    assert_eq!(second_run.wait().unwrap().code(), Some(130));
    assert!(!alive(server), "the last run to end stops the server");
    assert!(first.state_files().is_empty());
}

#[test]
fn ctrl_c_while_the_model_loads_ends_the_run_and_stops_the_server() {
    let local = Local::new();
    local.env.add("Dark mode", &[]);
    // The server never finishes loading (503 "Loading model" on /health).
    let mut run = local.spawn_run(&[("STUB_LOADING", "1")]);
    wait_until("the server starts", || {
        local.stub_log().contains("started ")
    });
    let server = local.server_pid();
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(run.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    assert_eq!(run.wait().unwrap().code(), Some(130));
    assert!(!alive(server), "the loading server outlived the run");
    assert!(local.state_files().is_empty());
    assert!(
        !local.stub_log().contains("chat model="),
        "no model call was made"
    );
}

#[test]
fn model_serve_ends_when_its_server_dies_and_the_next_start_does_not_join_it() {
    let local = Local::new();
    let mut serve = std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"))
        .current_dir(local.env.root())
        .args(["model", "serve", "tiny"])
        .env("NO_COLOR", "1")
        .env("PATH", path_with(local.bin.path()))
        .env("AGENTIC_SDLC_MODEL_CACHE", local.cache.path())
        .env("STUB_LOG", &local.log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the server starts", || {
        local.stub_log().contains("started ")
    });
    let server = local.server_pid();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server),
        nix::sys::signal::Signal::SIGKILL,
    );

    // `model serve` notices and ends with the server's failure, instead of serving nothing.
    let mut ended = None;
    for _ in 0..200 {
        ended = serve.try_wait().unwrap();
        if ended.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let Some(status) = ended else {
        let _ = serve.kill();
        panic!("model serve went on after its server died");
    };
    assert!(!status.success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(serve.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains("stopped"), "{stderr}");

    // A run after it starts a server of its own instead of joining the dead one.
    local.env.add("Dark mode", &[]);
    local.command(&["run", "--step", "refine"]).success();
    assert_ne!(local.server_pid(), server);
}
