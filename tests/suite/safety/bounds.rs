//! Bounds (docs/design.md §13): only regular files are read, reads stop at `tools.maxReadBytes`,
//! every call ends within `tools.timeoutSeconds`, and a reply has a deadline and a 16 MiB cap.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::json;

use crate::suite::agents_e2e::{results_by_tool, Made, Project};
use crate::suite::common::{outcome, Outcome};
use crate::suite::fake_llm::Reply;

/// A command that would hang on the old code is killed after this, so the test fails instead.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// Runs the story's `step`, killed after [`HANG_GUARD`] if it hangs.
fn step_guarded(p: &Project, story: &Made, step: &str) -> Outcome {
    outcome(
        p.cmd(&["run", "--story", &story.id, "--step", step])
            .timeout(HANG_GUARD),
    )
}

fn ready_for_research(p: &Project) -> Made {
    p.ready("Read the logs")
}

#[tokio::test]
async fn a_fifo_is_refused_at_once_by_read_file_and_search() {
    let p = Project::new().await;
    let fifo = p.env.path("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    let story = ready_for_research(&p);
    p.fake
        .push(
            "research",
            Reply::ToolCalls(vec![
                ("read_file".into(), json!({"path": "pipe"})),
                ("search".into(), json!({"pattern": "x", "path": "pipe"})),
            ]),
        )
        .push("research", Reply::text("Findings."));

    let out = step_guarded(&p, &story, "research");

    out.success();
    let results = results_by_tool(p.fake.requests_for("research").last().unwrap());
    assert_eq!(results.len(), 2, "{results:?}");
    for (name, content) in &results {
        assert!(
            content.starts_with("Error: 'pipe' is a FIFO"),
            "{name}: {content}"
        );
    }
}

#[tokio::test]
async fn read_file_never_reads_a_huge_file_whole() {
    let p = Project::new().await;
    // 3 GB that cost no disk: text at the start, a hole after it.
    let big = p.env.path("huge.log");
    let mut file = std::fs::File::create(&big).unwrap();
    for i in 0..20_000 {
        writeln!(file, "log line {i:06} with some words in it").unwrap();
    }
    file.set_len(3 << 30).unwrap();
    drop(file);
    let story = ready_for_research(&p);
    p.fake
        .push(
            "research",
            Reply::tool("read_file", json!({"path": "huge.log", "limit": 100_000})),
        )
        .push("research", Reply::text("Findings."));

    let child = p.env.spawn_with_llm(
        &p.fake,
        &["run", "--story", &story.id, "--step", "research"],
    );
    let (out, peak_kib) = finish_with_peak_memory(child);

    out.success();
    assert!(peak_kib < 300 * 1024, "peak memory {peak_kib} KiB");
    let results = results_by_tool(p.fake.requests_for("research").last().unwrap());
    let (_, content) = &results[0];
    assert!(content.starts_with("log line 000000"), "{}", &content[..80]);
    assert!(content.len() <= 262_144 + 200, "{} bytes", content.len());
    assert!(
        content.ends_with("of a 3221225472-byte file; read on with offset=6898]"),
        "{}",
        &content[content.len() - 120..]
    );
}

/// Waits for the child and returns its output and its peak resident memory, in KiB.
///
/// The peak is the kernel's high-water mark of the child's own memory (`VmHWM`), read while it
/// runs. `wait4`'s `ru_maxrss` would not do: a child started by vfork and exec is charged its
/// parent's peak, and this parent is the whole test suite.
fn finish_with_peak_memory(mut child: std::process::Child) -> (Outcome, i64) {
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let readers = std::thread::spawn(move || {
        let (mut out, mut err) = (String::new(), String::new());
        let _ = stdout.read_to_string(&mut out);
        let _ = stderr.read_to_string(&mut err);
        (out, err)
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|status| high_water_kib(&status))
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let (stdout, stderr) = readers.join().unwrap();
    let out = Outcome {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr,
    };
    (out, peak)
}

/// `VmHWM` of a `/proc/<pid>/status`, in KiB.
fn high_water_kib(status: &str) -> Option<i64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

#[tokio::test]
async fn a_dripping_reply_ends_at_llm_timeout_seconds() {
    let p = Project::new().await;
    let drip = DripServer::start();
    let url = drip.base_url();
    p.config(&[
        ("llm.baseUrl", url.as_str()),
        ("llm.timeoutSeconds", "2"),
        ("llm.maxRetries", "0"),
    ]);
    let story = ready_for_research(&p);

    // The file names the dripping server; the environment would win over it.
    let out = outcome(
        p.cmd(&["run", "--story", &story.id, "--step", "research"])
            .env_remove("OPENAI_BASE_URL")
            .timeout(HANG_GUARD),
    );

    out.code(1);
    let error = p.last_error(&story);
    assert!(error.contains("within 2s"), "{error}");
    assert!(error.contains("llm.timeoutSeconds"), "{error}");
}

#[tokio::test]
async fn a_reply_over_16_mib_is_an_error_and_not_retried() {
    let p = Project::new().await;
    let story = ready_for_research(&p);
    p.fake
        .push("research", Reply::text("x".repeat(17 << 20)))
        .push("research", Reply::text("Findings."));

    let out = p.run(&["run", "--story", &story.id, "--step", "research"]);

    out.code(1);
    let error = p.last_error(&story);
    assert!(error.contains("larger than 16 MiB"), "{error}");
    assert_eq!(p.fake.requests_for("research").len(), 1);
}

#[tokio::test]
async fn tool_bounds_follow_the_config() {
    let p = Project::new().await;
    p.config(&[
        ("tools.maxReadBytes", "2048"),
        ("tools.timeoutSeconds", "2"),
    ]);
    p.env.write("notes.txt", &"a line of notes\n".repeat(700));
    let story = p.planned("Bounded");
    p.fake
        .push(
            "implement",
            Reply::ToolCalls(vec![
                ("read_file".into(), json!({"path": "notes.txt"})),
                (
                    "run_command".into(),
                    json!({"command": "echo waiting; sleep 30", "timeout_seconds": 100}),
                ),
            ]),
        )
        .push("implement", Reply::text("Done."));

    let out = step_guarded(&p, &story, "implement");

    out.success();
    // The request that answers the scripted tool calls; an implement that changed nothing
    // is then retried (docs/design.md §15), which makes more requests after it.
    let results = results_by_tool(&p.fake.requests_for("implement")[1]);
    let read = &results[0].1;
    assert!(read.len() <= 2048 + 100, "{} bytes", read.len());
    assert!(
        read.ends_with("[cut: showed lines 1-128 of 700; read on with offset=128]"),
        "{read}"
    );
    let ran = &results[1].1;
    assert!(
        ran.starts_with("Error: command timed out after 2s"),
        "{ran}"
    );
    assert!(ran.contains("waiting"), "{ran}");

    for (key, value) in [
        ("tools.maxReadBytes", "10"),
        ("tools.timeoutSeconds", "0"),
        ("tools.timeoutSeconds", "\"soon\""),
    ] {
        let out = p.env.run(&["config", key, value]);
        out.code(2).stderr_has(key);
    }
}

/// A server that answers every request with a 200 and then one byte every 100 ms, forever:
/// the connection is never silent long enough for a read timeout.
struct DripServer {
    address: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl DripServer {
    fn start() -> DripServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = std::sync::Arc::clone(&stop);
        std::thread::spawn(move || {
            for connection in listener.incoming() {
                if stopping.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                let Ok(mut stream) = connection else { continue };
                let stopping = std::sync::Arc::clone(&stopping);
                std::thread::spawn(move || {
                    let mut request = [0u8; 65536];
                    let _ = stream.read(&mut request);
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{";
                    if stream.write_all(head.as_bytes()).is_err() {
                        return;
                    }
                    while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(100));
                        if stream.write_all(b" ").is_err() {
                            return;
                        }
                    }
                });
            }
        });
        DripServer { address, stop }
    }

    fn base_url(&self) -> String {
        format!("http://{}/v1", self.address)
    }
}

impl Drop for DripServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // Wakes the accept loop so its thread ends.
        let _ = std::net::TcpStream::connect(self.address);
    }
}
