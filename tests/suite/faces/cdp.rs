//! A headless Chromium driven over the DevTools protocol, through the pipe Chromium opens with
//! `--remote-debugging-pipe` (JSON messages ended by a NUL byte on descriptors 3 and 4). The
//! protocol is the one chromiumoxide and headless_chrome speak over a WebSocket; the few
//! commands a test needs (open a page, evaluate, click, take a screenshot) do not need a
//! client library, a WebSocket or a network port.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value as Json};

/// How long one protocol command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The flags that let Chromium run headless as root, on a machine without a network, without
/// reaching out on its own.
const FLAGS: [&str; 11] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
    "--remote-debugging-pipe",
];

type Waiting = Arc<Mutex<HashMap<u64, Sender<Json>>>>;

/// A browser and the one page a test drives.
pub(super) struct Browser {
    child: Child,
    commands: std::fs::File,
    waiting: Waiting,
    next_id: u64,
    session: String,
    _profile: tempfile::TempDir,
}

/// The Chromium binary Debian installs, or a clear failure: CI installs it (`.ci/run`), and a
/// browser test that cannot run must not pass.
pub(super) fn chromium() -> PathBuf {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|name| {
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
                .map(move |dir| dir.join(name))
        })
        .find(|path| path.is_file());
    found.unwrap_or_else(|| {
        panic!(
            "no chromium on PATH: the browser tests need it. Install it with \
             `apt-get install -y chromium` (.ci/run does this)"
        )
    })
}

impl Browser {
    pub fn launch(binary: &Path) -> Browser {
        let profile = tempfile::tempdir().expect("a fresh profile folder");
        let (to_browser_read, to_browser_write) = pipe();
        let (from_browser_read, from_browser_write) = pipe();
        let mut command = Command::new(binary);
        command
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let (read_fd, write_fd) = (to_browser_read.as_raw_fd(), from_browser_write.as_raw_fd());
        // SAFETY: between fork and exec only async-signal-safe calls are made (fcntl, dup2),
        // on descriptors this process owns and keeps open until the child is spawned.
        unsafe {
            command.pre_exec(move || {
                // Out of the way first, so that neither lands on 3 or 4 before it is moved there.
                let read = libc::fcntl(read_fd, libc::F_DUPFD_CLOEXEC, 10);
                let write = libc::fcntl(write_fd, libc::F_DUPFD_CLOEXEC, 10);
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start chromium");
        drop((to_browser_read, from_browser_write));
        let waiting: Waiting = Arc::default();
        let replies = Arc::clone(&waiting);
        let reader = BufReader::new(std::fs::File::from(from_browser_read));
        std::thread::spawn(move || read_messages(reader, replies));
        let mut browser = Browser {
            child,
            commands: std::fs::File::from(to_browser_write),
            waiting,
            next_id: 0,
            session: String::new(),
            _profile: profile,
        };
        let target = browser.send(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().expect("a target").to_string();
        let attached = browser.send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"]
            .as_str()
            .expect("a session")
            .to_string();
        browser.command("Page.enable", json!({}));
        browser
    }

    fn send(&mut self, session: Option<&str>, method: &str, params: Json) -> Json {
        self.try_send(session, method, params)
            .unwrap_or_else(|error| panic!("{method} failed: {error}"))
    }

    /// The browser's answer to `method`, or the error it answered with.
    fn try_send(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Json,
    ) -> Result<Json, Json> {
        self.next_id += 1;
        let id = self.next_id;
        let (reply, answer) = channel();
        self.waiting.lock().unwrap().insert(id, reply);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .unwrap_or_else(|e| panic!("{method}: the browser is gone ({e})"));
        let answer: Receiver<Json> = answer;
        let response = answer
            .recv_timeout(COMMAND_TIMEOUT)
            .unwrap_or_else(|_| panic!("{method}: no answer from the browser"));
        match response.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(response["result"].clone()),
        }
    }

    /// A command to the page.
    pub fn command(&mut self, method: &str, params: Json) -> Json {
        let session = self.session.clone();
        self.send(Some(&session), method, params)
    }

    /// Opens `url` and waits for the page to finish loading.
    pub fn open(&mut self, url: &str) {
        self.command("Page.navigate", json!({"url": url}));
        self.wait_for(
            "document.readyState === 'complete' && !!document.body",
            Duration::from_secs(20),
        )
        .unwrap_or_else(|| panic!("{url} did not load"));
    }

    /// The value of a JavaScript expression in the page (promises are awaited).
    pub fn eval(&mut self, expression: &str) -> Json {
        let result = self.command(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(thrown) = result.get("exceptionDetails") {
            panic!("`{expression}` threw: {thrown}");
        }
        result["result"]["value"].clone()
    }

    /// Polls `condition` (a JavaScript expression) until it is true; how long that took. A
    /// poll made while the page navigates (a form posted, a reload) counts as not yet: on a
    /// busy machine the browser answers it with "Inspected target navigated or closed".
    pub fn wait_for(&mut self, condition: &str, limit: Duration) -> Option<Duration> {
        let start = std::time::Instant::now();
        let session = self.session.clone();
        loop {
            let answer = self.try_send(
                Some(&session),
                "Runtime.evaluate",
                json!({"expression": format!("Boolean({condition})"), "returnByValue": true}),
            );
            let navigating = |error: &Json| {
                let message = error["message"].as_str().unwrap_or("");
                message.contains("navigated or closed") || message.contains("context")
            };
            match answer {
                Ok(result) if result["result"]["value"] == json!(true) => {
                    return Some(start.elapsed())
                }
                Ok(result) if result.get("exceptionDetails").is_some() => {
                    panic!("`{condition}` threw: {}", result["exceptionDetails"])
                }
                Err(error) if !navigating(&error) => panic!("Runtime.evaluate failed: {error}"),
                _ => {}
            }
            if start.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Clicks the middle of the element `selector` finds, as a mouse does.
    pub fn click(&mut self, selector: &str) {
        let rect = self.eval(&format!(
            "(() => {{ const e = document.querySelector({selector:?}); if (!e) return null; \
              e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
              return {{x: r.x + r.width / 2, y: r.y + r.height / 2}}; }})()"
        ));
        assert!(!rect.is_null(), "nothing matches {selector}");
        for kind in ["mousePressed", "mouseReleased"] {
            self.command(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": rect["x"], "y": rect["y"], "button": "left", "clickCount": 1}),
            );
        }
    }

    /// Presses and releases one key, as a keyboard does: a printable character (typed into
    /// whatever has focus unless the page stops it) or `Escape`.
    pub fn press(&mut self, key: &str) {
        let (code, virtual_code, text) = match key {
            "Escape" => ("Escape".to_string(), 27, None),
            "/" => ("Slash".to_string(), 191, Some(key)),
            letter if letter.len() == 1 && letter.as_bytes()[0].is_ascii_alphabetic() => {
                let upper = letter.to_ascii_uppercase();
                (format!("Key{upper}"), upper.as_bytes()[0] as u32, Some(key))
            }
            other => panic!("no key `{other}` in this test keyboard"),
        };
        let mut down = json!({
            "type": if text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": key, "code": code, "windowsVirtualKeyCode": virtual_code,
        });
        if let Some(text) = text {
            down["text"] = json!(text);
        }
        self.command("Input.dispatchKeyEvent", down);
        self.command(
            "Input.dispatchKeyEvent",
            json!({"type": "keyUp", "key": key, "code": code, "windowsVirtualKeyCode": virtual_code}),
        );
    }

    /// Types `text` into whatever has focus, as a keyboard's input method commits it.
    pub fn type_text(&mut self, text: &str) {
        self.command("Input.insertText", json!({"text": text}));
    }

    /// A PNG of the page as it is shown.
    pub fn screenshot(&mut self) -> Vec<u8> {
        let shot = self.command(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        base64_decode(shot["data"].as_str().expect("screenshot data"))
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let mut close = json!({"id": u64::MAX, "method": "Browser.close", "params": {}})
            .to_string()
            .into_bytes();
        close.push(0);
        let _ = self.commands.write_all(&close);
        for _ in 0..100 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Hands each answer to the command waiting for it; events are not needed.
fn read_messages(mut reader: BufReader<std::fs::File>, waiting: Waiting) {
    let mut message = Vec::new();
    loop {
        message.clear();
        match reader.read_until(0, &mut message) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if message.last() == Some(&0) {
            message.pop();
        }
        let Ok(value) = serde_json::from_slice::<Json>(&message) else {
            continue;
        };
        if let Some(id) = value.get("id").and_then(Json::as_u64) {
            if let Some(reply) = waiting.lock().unwrap().remove(&id) {
                let _ = reply.send(value);
            }
        }
    }
}

fn pipe() -> (OwnedFd, OwnedFd) {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).expect("a pipe")
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut buffer, mut bits) = (0u32, 0);
    for sextet in text.bytes().filter_map(value) {
        buffer = (buffer << 6) | sextet;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    out
}
