//! A run whose model server dies stops with one line (docs/design.md §22): the story whose
//! action could not reach it keeps `last_error`, the stories it never started are untouched.

use std::io::{Read, Write};
use std::net::TcpListener;

use super::board_files;
use crate::suite::common::TestEnv;

/// A model server that answers the run's first question (`GET /models`, its check before
/// spending) and then is gone, as a server killed a few seconds into the night.
fn server_that_dies_after_the_check() -> (String, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = [0u8; 4096];
        let _ = stream.read(&mut request);
        let body = r#"{"object":"list","data":[{"id":"gpt-4o-mini","object":"model"}]}"#;
        let _ = write!(
            stream,
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        // The listener closes with the thread: every later connection is refused.
    });
    (url, server)
}

#[test]
fn a_run_that_loses_its_server_stops_with_one_line_and_leaves_the_rest_untouched() {
    let env = TestEnv::init();
    env.configure_json(&serde_json::json!({"llm": {"maxRetries": 0}}));
    let mut ids = Vec::new();
    for title in ["First story", "Second story", "Third story"] {
        let (id, _, _) = env.add(title, &[]);
        ids.push(id);
    }
    let (url, server) = server_that_dies_after_the_check();
    let before = board_files(&env);

    let out = env
        .cmd(&["run", "--auto"])
        .env("OPENAI_BASE_URL", &url)
        .output()
        .unwrap();
    server.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let last = stdout.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!(
            "Stopped: the LLM server at {url} stopped answering"
        )),
        "{stdout}"
    );
    assert!(last.contains("2 stories not started"), "{last}");

    // One story was started and failed; the two others are byte for byte as they were.
    let after = board_files(&env);
    let changed: Vec<_> = after
        .iter()
        .filter(|(path, bytes)| {
            before.get(*path) != Some(*bytes) && path.extension().is_some_and(|e| e == "md")
        })
        .map(|(path, _)| path.clone())
        .collect();
    assert_eq!(
        changed.len(),
        1,
        "only the started story changed: {changed:?}"
    );
    let status = env.status_json();
    let with_error: Vec<&str> = status["columns"]["backlog"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|story| !story["last_error"].is_null())
        .map(|story| story["id"].as_str().unwrap())
        .collect();
    assert_eq!(with_error.len(), 1, "{status}");
    assert!(ids.contains(&with_error[0].to_string()));
}
