//! The managed model server (docs/design.md, "A model out of the box"): llama.cpp's server on a
//! free loopback port, started for a run that has work, shared by the runs of this machine that
//! use the same model, and stopped when the last of them ends.
//!
//! The state of a model's server is a small file beside the cache, read and written under a
//! lock: the server's pid and port and the pids of the runs using it. A run adds itself when it
//! starts or joins the server and takes itself off at its end, Ctrl-C included; the last one
//! stops the server. A run killed with `kill -9` stays on the list until the next run or
//! `model` command, which drops the dead and stops a server nobody uses.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};

use super::cache::{Cache, Model};
use super::download::{Progress, Report};
use super::error::ModelError;
use super::lock::CacheLock;
use super::python;

/// The model name the server answers to, whatever file it serves.
pub const SERVED_NAME: &str = "local";

/// The context a managed server gives the model: `AGENTIC_SDLC_MODEL_CTX`, else 16k tokens,
/// which the benchmark's conversations fit (docs/benchmarks.md).
fn context_size() -> u32 {
    std::env::var("AGENTIC_SDLC_MODEL_CTX")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(16_384)
}

/// How often the wait asks the server whether it has loaded, and how often it says so.
const POLL: Duration = Duration::from_millis(250);
const NEWS: Duration = Duration::from_secs(5);
/// How long a server has to end after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// What serves: llama.cpp's own `llama-server`, or its Python wheel in the cache's venv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launcher {
    LlamaServer(PathBuf),
    Python(PathBuf),
}

impl Launcher {
    /// `llama-server` from PATH when there is one, else the wheel, installed on first use.
    pub fn find(cache: &Cache, report: Report<'_>) -> Result<Launcher, ModelError> {
        if let Some(found) = on_path("llama-server") {
            return Ok(Launcher::LlamaServer(found));
        }
        python::environment(cache, &[python::XLLAMACPP], report).map(Launcher::Python)
    }

    fn command(&self, gguf: &Path, port: u16) -> Command {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let ctx = context_size();
        match self {
            Launcher::LlamaServer(binary) => {
                let mut command = Command::new(binary);
                command
                    .arg("--model")
                    .arg(gguf)
                    .args(["--host", "127.0.0.1", "--port", &port.to_string()])
                    .args(["--ctx-size", &ctx.to_string(), "--alias", SERVED_NAME])
                    .args([
                        "--jinja",
                        "--parallel",
                        "1",
                        "--threads",
                        &threads.to_string(),
                    ]);
                command
            }
            Launcher::Python(python) => {
                let mut command = Command::new(python);
                command.args(["-c", python::SERVE]).arg(gguf).args([
                    port.to_string(),
                    ctx.to_string(),
                    threads.to_string(),
                ]);
                command
            }
        }
    }
}

/// The first executable of this name on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// A model's server as its state file records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct State {
    pid: i32,
    port: u16,
    /// The runs using it.
    users: Vec<i32>,
    log: PathBuf,
}

fn alive(pid: i32) -> bool {
    pid > 0 && kill(Pid::from_raw(pid), None).is_ok() && !exited_unreaped(pid)
}

/// Whether `pid` has exited but was never reaped (a zombie): signals still reach its entry, yet
/// it serves nothing. Where nothing reaps orphans (a container whose first process does not),
/// a server killed with its `model serve` stays so for good, and its state file would send
/// every later run to a port nobody listens on.
fn exited_unreaped(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// Where and how a server is started.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The folder of its log (the board's runs folder).
    pub log_dir: &'a Path,
    /// The port it must listen on; `None` for any free one.
    pub port: Option<u16>,
    /// How long it may take to load the model.
    pub load_seconds: u64,
}

/// A run's hold on a model server; the server stops when the last hold is dropped.
#[derive(Debug)]
pub struct Managed {
    name: String,
    port: u16,
    state_file: PathBuf,
    lock_file: PathBuf,
    /// The server, when this process started it: reaped here if it stops it.
    child: Option<Child>,
    log: PathBuf,
}

impl Managed {
    /// Starts the server of `model` (pulled already), or joins the one another run started, and
    /// waits until it has loaded the model, saying so every few seconds.
    pub fn start(
        cache: &Cache,
        model: &Model,
        at: Place<'_>,
        report: Report<'_>,
        stop_asked: &dyn Fn() -> bool,
    ) -> Result<Managed, ModelError> {
        let gguf = cache.pulled(model).ok_or_else(|| ModelError::NotCached {
            name: model.name().into(),
            path: cache.gguf(model),
        })?;
        let servers = cache.servers();
        let state_file = servers.join(format!("{}.json", model.name()));
        let lock_file = servers.join(format!("{}.lock", model.name()));
        let me = std::process::id() as i32;
        let lock = CacheLock::wait(&lock_file)?;
        let mut state = read_state(&state_file);
        state.users.retain(|pid| alive(*pid) && *pid != me);
        let running = alive(state.pid) && state.port != 0;
        // A `model serve --port 18090` beside a server on 8090 is refused (it once waited on
        // its own lock for ever, dropping `managed` with the lock held).
        if running && at.port.is_some_and(|port| port != state.port) {
            return Err(ModelError::ServedElsewhere {
                name: model.name().into(),
                port: state.port,
            });
        }
        let mut managed = Managed {
            name: model.name().into(),
            port: state.port,
            state_file,
            lock_file,
            child: None,
            log: state.log.clone(),
        };
        // Every way out of here lets go of the lock before `managed` can drop: its release
        // takes the lock again, and a process waits on its own lock for ever.
        let registered = (|| -> Result<(), ModelError> {
            if running {
                report(Progress::Step(format!(
                    "using the {} server another run started (port {})",
                    model.name(),
                    state.port
                )));
            } else {
                let launcher = Launcher::find(cache, report)?;
                let port = match at.port {
                    Some(port) => port,
                    None => free_port().map_err(|err| ModelError::io("127.0.0.1:0", err))?,
                };
                fs_err::create_dir_all(at.log_dir)
                    .map_err(|err| ModelError::io(at.log_dir, err))?;
                let log = at
                    .log_dir
                    .join(format!("model-server-{}.log", model.name()));
                let out = fs_err::File::create(&log).map_err(|err| ModelError::io(&log, err))?;
                let err_out = out
                    .file()
                    .try_clone()
                    .map_err(|err| ModelError::io(&log, err))?;
                report(Progress::Step(format!(
                    "starting the {} server on 127.0.0.1:{port} (log: {})",
                    model.name(),
                    log.display()
                )));
                let mut command = launcher.command(&gguf, port);
                // A process group of its own: a Ctrl-C at the terminal reaches the run, which
                // stops the server when its last user is done, not the server in the middle of
                // an answer.
                std::os::unix::process::CommandExt::process_group(&mut command, 0);
                let child = command
                    .stdin(Stdio::null())
                    .stdout(out.into_parts().0)
                    .stderr(err_out)
                    .spawn()
                    .map_err(|err| ModelError::Command {
                        command: format!("{launcher:?}"),
                        detail: err.to_string(),
                    })?;
                state = State {
                    pid: child.id() as i32,
                    port,
                    users: Vec::new(),
                    log: log.clone(),
                };
                managed.port = port;
                managed.log = log;
                managed.child = Some(child);
            }
            state.users.push(me);
            write_state(&managed.state_file, &state)
        })();
        drop(lock);
        registered?;
        managed.wait_loaded(state.pid, at.load_seconds, report, stop_asked)?;
        Ok(managed)
    }

    /// The OpenAI-compatible address the run talks to.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    fn wait_loaded(
        &mut self,
        pid: i32,
        load_seconds: u64,
        report: Report<'_>,
        stop_asked: &dyn Fn() -> bool,
    ) -> Result<(), ModelError> {
        let started = Instant::now();
        let mut said = Instant::now();
        loop {
            if health(self.port) == Some(200) {
                report(Progress::Step(format!(
                    "the {} server is ready after {:.1}s",
                    self.name,
                    started.elapsed().as_secs_f64()
                )));
                return Ok(());
            }
            let exited = match &mut self.child {
                Some(child) => child.try_wait().ok().flatten().is_some(),
                None => !alive(pid),
            };
            if exited {
                return Err(ModelError::ServerStopped {
                    name: self.name.clone(),
                    log: self.log.clone(),
                    tail: tail(&self.log, 12),
                });
            }
            if stop_asked() {
                return Err(ModelError::Interrupted);
            }
            if started.elapsed() > Duration::from_secs(load_seconds) {
                return Err(ModelError::LoadTimedOut {
                    name: self.name.clone(),
                    seconds: load_seconds,
                    log: self.log.clone(),
                });
            }
            if said.elapsed() >= NEWS {
                said = Instant::now();
                report(Progress::Step(format!(
                    "the {} server is loading the model ({}s)",
                    self.name,
                    started.elapsed().as_secs()
                )));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Takes this run off the server's users; the last one stops it.
    fn release(&mut self) {
        let Ok(_lock) = CacheLock::wait(&self.lock_file) else {
            return;
        };
        let me = std::process::id() as i32;
        let mut state = read_state(&self.state_file);
        state.users.retain(|pid| alive(*pid) && *pid != me);
        if state.users.is_empty() {
            stop(state.pid, self.child.as_mut());
            let _ = fs_err::remove_file(&self.state_file);
        } else {
            let _ = write_state(&self.state_file, &state);
        }
    }
}

impl Managed {
    /// Why the server this process started is gone, once it has exited by itself, with the
    /// end of its log (a joined server is never this process's to watch).
    pub fn stopped(&mut self) -> Option<ModelError> {
        let exited = match &mut self.child {
            Some(child) => child.try_wait().ok().flatten().is_some(),
            None => false,
        };
        exited.then(|| ModelError::ServerStopped {
            name: self.name.clone(),
            log: self.log.clone(),
            tail: tail(&self.log, 12),
        })
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        self.release();
    }
}

/// Stops the servers nobody uses any more: those whose runs were killed before they could.
/// Returns the models whose server was stopped.
pub fn sweep(cache: &Cache) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(cache.servers()) else {
        return Vec::new();
    };
    let mut stopped = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|ext| ext != "json") {
            continue;
        }
        let Ok(_lock) = CacheLock::wait(&path.with_extension("lock")) else {
            continue;
        };
        let mut state = read_state(&path);
        state.users.retain(|pid| alive(*pid));
        if state.users.is_empty() {
            if alive(state.pid) {
                stop(state.pid, None);
                stopped.push(
                    path.file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                );
            }
            let _ = fs_err::remove_file(&path);
        }
    }
    stopped
}

/// SIGTERM to the server's process group, then SIGKILL after the grace period.
fn stop(pid: i32, child: Option<&mut Child>) {
    if pid <= 0 {
        return;
    }
    let group = Pid::from_raw(-pid);
    let _ = kill(group, Signal::SIGTERM);
    let deadline = Instant::now() + STOP_GRACE;
    let mut child = child;
    loop {
        let gone = match child.as_deref_mut() {
            Some(child) => child.try_wait().ok().flatten().is_some(),
            None => !alive(pid),
        };
        if gone {
            return;
        }
        if Instant::now() > deadline {
            let _ = kill(group, Signal::SIGKILL);
            if let Some(child) = child {
                let _ = child.wait();
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_state(path: &Path) -> State {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn write_state(path: &Path, state: &State) -> Result<(), ModelError> {
    let text = serde_json::to_vec_pretty(state).unwrap_or_default();
    crate::atomic_file::write(path, &text).map_err(|err| ModelError::io(path, err))
}

/// A port nobody listens on now; the server binds it a moment later.
fn free_port() -> std::io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

/// The status of `GET /health` (llama.cpp answers 503 while it loads, 200 once ready), or
/// `None` while nothing answers.
fn health(port: u16) -> Option<u16> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&address, Duration::from_millis(500)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    stream
        .write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .ok()?;
    let mut head = [0u8; 32];
    let read = stream.read(&mut head).ok()?;
    let line = std::str::from_utf8(&head[..read]).ok()?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The last lines of a log, for a message.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_other_than_the_running_servers_is_refused_at_once_and_the_lock_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let model = Model::Own("mine".into());
        std::fs::write(cache.gguf(&model), b"gguf").unwrap();
        std::fs::create_dir_all(cache.servers()).unwrap();
        // A live server of another run on 8090 (this test's own process stands in for it).
        let state = State {
            pid: std::process::id() as i32,
            port: 8090,
            users: Vec::new(),
            log: dir.path().join("server.log"),
        };
        write_state(&cache.servers().join("mine.json"), &state).unwrap();
        let (sent, answer) = std::sync::mpsc::channel();
        let logs = dir.path().join("logs");
        std::thread::spawn(move || {
            let place = Place {
                log_dir: &logs,
                port: Some(18090),
                load_seconds: 1,
            };
            let started = Managed::start(&cache, &model, place, &|_| {}, &|| false);
            let _ = sent.send(started.err().map(|err| err.to_string()));
        });
        // It once waited on its own lock for ever.
        let refused = answer
            .recv_timeout(Duration::from_secs(20))
            .expect("no answer: the start waits on its own lock");
        assert!(refused.unwrap().contains("8090"));
        let lock = CacheLock::wait(&dir.path().join("servers/mine.lock"));
        assert!(lock.is_ok());
    }

    #[test]
    fn health_reads_the_status_and_nothing_listening_is_none() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let answer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = [0u8; 256];
            let _ = stream.read(&mut request).unwrap();
            stream
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\n\r\n{\"error\":\"Loading model\"}")
                .unwrap();
            String::from_utf8_lossy(&request).into_owned()
        });
        assert_eq!(health(port), Some(503));
        assert!(answer.join().unwrap().starts_with("GET /health HTTP/1.0"));
        let unused = free_port().unwrap();
        assert_eq!(health(unused), None);
    }

    #[test]
    fn the_state_of_a_server_survives_a_round_trip_and_a_missing_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        assert_eq!(read_state(&path), State::default());
        let state = State {
            pid: 7,
            port: 8080,
            users: vec![1, 2],
            log: "l".into(),
        };
        write_state(&path, &state).unwrap();
        assert_eq!(read_state(&path), state);
    }

    #[test]
    fn a_llama_server_on_path_is_started_on_loopback_with_the_model_named_local() {
        let command = Launcher::LlamaServer("/usr/bin/llama-server".into())
            .command(Path::new("/c/m.gguf"), 4242);
        let args: Vec<String> = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        for expected in [
            "--model /c/m.gguf",
            "--host 127.0.0.1",
            "--port 4242",
            "--alias local",
            "--jinja",
        ] {
            assert!(joined.contains(expected), "{expected}: {joined}");
        }
    }

    #[test]
    fn a_process_that_exited_unreaped_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id() as i32;
        // Not waited for: once it exits it stays a zombie until `wait` below.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !exited_unreaped(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(exited_unreaped(pid), "`true` exited and was not reaped");
        assert!(!alive(pid));
        child.wait().unwrap();
        assert!(alive(std::process::id() as i32));
    }
}
