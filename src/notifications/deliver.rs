//! Delivering one notice: the user's `notify.command` and `notify.webhook`, each within the
//! timeout, each failure logged and nothing more.
//!
//! The command is the user's own, written in their config; no agent can reach it, so it runs as
//! a plain child process in the project folder. It still gets the tool's environment without
//! the model's key and without anything that looks like a secret: a notifier has no use for
//! them, and a script that logs its environment should not leak them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use serde_json::Value;

use crate::config::{NoticeKind, NotifyConfig};

/// One notice, as the command reads it on stdin and the webhook receives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    pub kind: NoticeKind,
    /// The JSON document: `event`, `project`, `timestamp`, the story (`storyId`, `slug`,
    /// `title`) when there is one, the event's own fields, and `text`.
    pub json: Value,
}

/// How much of a failing command's stderr the log quotes.
const STDERR_TAIL: usize = 400;

pub(super) struct Targets {
    command: Option<Command>,
    webhook: Option<Webhook>,
    timeout: Duration,
}

struct Command {
    line: String,
    folder: PathBuf,
    env: Vec<(OsString, OsString)>,
}

struct Webhook {
    url: String,
    client: Option<reqwest::Client>,
}

impl Targets {
    pub(super) fn new(config: &NotifyConfig, api_key_env: &str, root: &Path) -> Targets {
        let timeout = Duration::from_secs(config.timeout_seconds);
        Targets {
            command: config.command.clone().map(|line| Command {
                line,
                folder: root.to_path_buf(),
                env: scrubbed_environment(api_key_env),
            }),
            webhook: config.webhook.clone().map(|url| Webhook {
                url,
                client: crate::agents::llm::http_client(timeout, timeout)
                    .map_err(|err| {
                        tracing::warn!("notify.webhook: cannot build an HTTP client: {err}")
                    })
                    .ok(),
            }),
            timeout,
        }
    }

    /// Runs the command and posts to the webhook, side by side; returns when both are done or
    /// given up.
    pub(super) async fn deliver(&self, notice: &Notice) {
        let body = notice.json.to_string();
        let command = async {
            if let Some(command) = &self.command {
                if let Err(why) = command.run(&body, notice, self.timeout).await {
                    tracing::warn!("notify.command failed for {}: {why}", notice.kind.name());
                }
            }
        };
        let webhook = async {
            if let Some(webhook) = &self.webhook {
                if let Err(why) = webhook.post(&body, self.timeout).await {
                    tracing::warn!(
                        "notify.webhook ({}) failed for {}: {why}",
                        webhook.host(),
                        notice.kind.name()
                    );
                }
            }
        };
        tokio::join!(command, webhook);
    }
}

impl Command {
    async fn run(&self, body: &str, notice: &Notice, timeout: Duration) -> Result<(), String> {
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&self.line)
            .current_dir(&self.folder)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("AGENTIC_SDLC_EVENT", notice.kind.name())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group, so that a timeout takes whatever it started along with it.
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| format!("cannot start `sh -c {}`: {err}", self.line))?;
        let group = child.id();
        let mut stdin = child.stdin.take();
        let finished = tokio::time::timeout(timeout, async {
            if let Some(stdin) = stdin.as_mut() {
                // A command that does not read its stdin is fine: a closed pipe is not an error.
                let _ = stdin.write_all(body.as_bytes()).await;
                let _ = stdin.shutdown().await;
            }
            drop(stdin.take());
            child.wait_with_output().await
        })
        .await;
        match finished {
            Ok(Ok(output)) if output.status.success() => Ok(()),
            Ok(Ok(output)) => {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let stderr = stderr.trim();
                let mut start = stderr.len().saturating_sub(STDERR_TAIL);
                while !stderr.is_char_boundary(start) {
                    start += 1;
                }
                let tail = &stderr[start..];
                Err(match output.status.code() {
                    Some(code) if tail.is_empty() => format!("exit {code}"),
                    Some(code) => format!("exit {code}: {tail}"),
                    None => "killed by a signal".to_string(),
                })
            }
            Ok(Err(err)) => Err(format!("cannot wait for it: {err}")),
            Err(_) => {
                if let Some(group) = group {
                    kill_group(group);
                }
                Err(format!(
                    "no answer within {}s (notify.timeoutSeconds); stopped it",
                    timeout.as_secs()
                ))
            }
        }
    }
}

impl Webhook {
    async fn post(&self, body: &str, timeout: Duration) -> Result<(), String> {
        let client = self
            .client
            .as_ref()
            .ok_or_else(|| "no HTTP client".to_string())?;
        let request = client
            .post(&self.url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(body.to_string())
            .send();
        let response = tokio::time::timeout(timeout, request)
            .await
            .map_err(|_| {
                format!(
                    "no answer within {}s (notify.timeoutSeconds)",
                    timeout.as_secs()
                )
            })?
            .map_err(|err| err.without_url().to_string())?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("HTTP {status}"))
        }
    }

    /// The webhook's host: the URL itself often holds a secret (Slack puts it in the path, a
    /// proxy its `user:password@`), so logs name only the host and port.
    fn host(&self) -> &str {
        let rest = self.url.split_once("://").map_or(&*self.url, |(_, r)| r);
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host)
    }
}

/// The tool's environment without `llm.apiKeyEnv` and without any variable whose name looks
/// like a secret.
fn scrubbed_environment(api_key_env: &str) -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, _)| !is_secret(&name.to_string_lossy(), api_key_env))
        .collect()
}

fn is_secret(name: &str, api_key_env: &str) -> bool {
    name.eq_ignore_ascii_case(api_key_env) || crate::exec::named_like_secret(name)
}

/// Ends a process group that outlived its timeout.
fn kill_group(leader: u32) {
    if let Ok(pid) = i32::try_from(leader) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_the_command_environment() {
        for (name, secret) in [
            ("PATH", false),
            ("HOME", false),
            ("my_llm", true),
            ("OPENAI_API_KEY", true),
            ("github_token", true),
            ("DB_PASSWORD", true),
            ("AWS_SECRET_ACCESS_KEY", true),
            ("GOOGLE_APPLICATION_CREDENTIALS", true),
        ] {
            assert_eq!(is_secret(name, "MY_LLM"), secret, "{name}");
        }
    }

    #[test]
    fn logs_name_the_webhook_host_only() {
        let hook = |url: &str| Webhook {
            url: url.into(),
            client: None,
        };
        assert_eq!(
            hook("https://hooks.slack.com/services/T0/B0/secret").host(),
            "hooks.slack.com"
        );
        assert_eq!(hook("http://127.0.0.1:9000?x=1").host(), "127.0.0.1:9000");
        assert_eq!(
            hook("https://user:pa@ss@hooks.example.com/x").host(),
            "hooks.example.com"
        );
    }
}
