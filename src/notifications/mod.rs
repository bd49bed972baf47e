//! Notifications: a run's news reaches people who are not watching the terminal.
//!
//! Four kinds of news matter to someone away from the screen: a story merged, a story blocked,
//! a human gate waiting for a decision, and the end of a run. For each, the `notify.command` the
//! user configured runs with the notice's JSON on its stdin, and `notify.webhook` receives the
//! same JSON as a POST; its `text` field is a one-line message that Slack and similar tools show
//! as it is.
//!
//! The run never waits for a notifier and never depends on one: notices are queued as the run
//! emits its events and delivered one at a time by a task of their own, each within
//! `notify.timeoutSeconds`. A notifier that fails, hangs or is missing is logged, and the run's
//! outcome stays what it was.

mod deliver;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

pub use deliver::Notice;

use crate::board::{store, Column, Story};
use crate::config::{NoticeKind, Project};
use crate::workflow::events::{RunEvent, RunRenderer};

/// The kind of notice a run event may become; `None` for events nobody is notified of.
/// A story that waits becomes a notice only when a human gate is what it waits for, which
/// is read from the story itself ([`Notices::notice_for`]).
fn notice_kind(event: &RunEvent) -> Option<NoticeKind> {
    match event {
        RunEvent::StoryMerged { .. } => Some(NoticeKind::StoryMerged),
        RunEvent::StoryBlocked { .. } => Some(NoticeKind::StoryBlocked),
        RunEvent::StoryWaiting { .. } => Some(NoticeKind::GateWaiting),
        RunEvent::ActionFailed { .. } => Some(NoticeKind::ActionFailed),
        RunEvent::RunFinished { .. } => Some(NoticeKind::RunFinished),
        _ => None,
    }
}

/// What the notices say about where they come from and how to read a story.
struct Notices {
    /// The project folder's name, so a channel that hears from several projects can tell them
    /// apart.
    project: String,
    board_dir: PathBuf,
}

impl Notices {
    /// The notice an event of `kind` makes, or `None` when it makes none (a story that waits
    /// on its dependencies rather than on a person).
    fn notice_for(&self, kind: NoticeKind, event: &RunEvent) -> Option<Notice> {
        let story = event
            .story_id()
            .and_then(|id| self.story(id, story_slug(event)));
        let title = story.as_ref().map(|s| s.meta.title.clone());
        let mut fields = Map::new();
        let text = match event {
            RunEvent::StoryMerged {
                slug, commit, base, ..
            } => {
                fields.insert("commit".into(), commit.clone().into());
                fields.insert("base".into(), base.to_string().into());
                format!(
                    "✅ {slug} merged into {base} as {}",
                    &commit[..commit.len().min(7)]
                )
            }
            RunEvent::StoryBlocked { slug, reason, .. } => {
                fields.insert("reason".into(), reason.clone().into());
                fields.insert(
                    "command".into(),
                    format!("agentic-sdlc unblock {slug}").into(),
                );
                format!("⛔ {slug} is blocked: {}", first_line(reason))
            }
            RunEvent::StoryWaiting { slug, reason, .. } => {
                let phase = story
                    .as_ref()
                    .and_then(|s| s.progress().ok())
                    .and_then(|p| p.pending_gate)?;
                let command = format!("agentic-sdlc decide {slug} \"APPROVE\"");
                fields.insert("phase".into(), phase.clone().into());
                fields.insert("reason".into(), reason.clone().into());
                fields.insert("command".into(), command.clone().into());
                format!(
                    "⏸ {slug} waits for a person: the {phase} review needs a decision ({command})"
                )
            }
            RunEvent::ActionFailed { action, error, .. } => {
                let slug = &action.slug;
                let command = format!("agentic-sdlc details {slug}");
                fields.insert("action".into(), action.action_type.name().into());
                fields.insert("error".into(), error.clone().into());
                fields.insert("command".into(), command.clone().into());
                format!(
                    "✗ {slug}: {} failed: {} ({command})",
                    action.action_type.name(),
                    first_line(error)
                )
            }
            RunEvent::RunFinished {
                actions,
                failed,
                exit_code,
                message,
                attention,
                ..
            } => {
                // Who needs a person, by slug, with what to read and the command.
                if let Ok(value) = serde_json::to_value(attention) {
                    fields.insert("attention".into(), value);
                }
                fields.insert("actions".into(), (*actions).into());
                fields.insert("failed".into(), (*failed).into());
                fields.insert("exitCode".into(), (*exit_code).into());
                fields.insert("message".into(), message.clone().into());
                let mark = if *exit_code == 0 { "🏁" } else { "⚠️" };
                // Each story that needs a person, by name, with why: the message only counts them.
                let who: Vec<String> = attention
                    .iter()
                    .map(|story| format!("{} ({})", story.slug, first_line(&story.why)))
                    .collect();
                match who.is_empty() {
                    true => format!("{mark} run finished (exit {exit_code}): {message}"),
                    false => format!(
                        "{mark} run finished (exit {exit_code}): {} {}",
                        message.trim_end_matches(':'),
                        who.join("; ")
                    ),
                }
            }
            _ => return None,
        };
        let mut json = Map::new();
        json.insert("event".into(), kind.name().into());
        json.insert("project".into(), self.project.clone().into());
        json.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                .into(),
        );
        if let Some(id) = event.story_id() {
            json.insert("storyId".into(), id.into());
            json.insert("slug".into(), story_slug(event).into());
            json.insert("title".into(), json!(title));
        }
        json.append(&mut fields);
        let text = match &title {
            Some(title) if !title.is_empty() => format!("[{}] {text} — {title}", self.project),
            _ => format!("[{}] {text}", self.project),
        };
        json.insert("text".into(), text.into());
        Some(Notice {
            kind,
            json: Value::Object(json),
        })
    }
}

impl Notices {
    /// The story as it is now. Its file is most likely `<column>/<slug>.md`; only when it is not
    /// there is the board searched.
    fn story(&self, id: &str, slug: &str) -> Option<Story> {
        let file = format!("{slug}.md");
        let hint = Column::ALL
            .iter()
            .map(|column| self.board_dir.join(column.name()).join(&file))
            .find(|path| path.is_file());
        store::locate(&self.board_dir, id, hint.as_deref()).ok()
    }
}

fn story_slug(event: &RunEvent) -> &str {
    match event {
        RunEvent::StoryMerged { slug, .. }
        | RunEvent::StoryBlocked { slug, .. }
        | RunEvent::StoryWaiting { slug, .. } => slug,
        RunEvent::ActionFailed { action, .. } => &action.slug,
        _ => "",
    }
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// The notifiers of one run: a queue the run's events go into, and the task that works it off.
pub struct Notifier {
    queue: mpsc::UnboundedSender<RunEvent>,
    wanted: Vec<NoticeKind>,
    worker: tokio::task::JoinHandle<()>,
}

impl Notifier {
    /// Starts the delivery task on the current tokio runtime; `None` when the config names no
    /// command and no webhook, or wants no event.
    pub fn start(project: &Project) -> Option<Notifier> {
        let config = &project.config.notify;
        if (config.command.is_none() && config.webhook.is_none()) || config.events.is_empty() {
            return None;
        }
        let (queue, mut events) = mpsc::unbounded_channel::<RunEvent>();
        let notices = Notices {
            project: project.name(),
            board_dir: project.board_dir(),
        };
        let targets = deliver::Targets::new(config, &project.config.llm.api_key_env, &project.root);
        let worker = tokio::spawn(async move {
            let notices = Arc::new(notices);
            while let Some(event) = events.recv().await {
                let Some(kind) = notice_kind(&event) else {
                    continue;
                };
                // Reading the story is file I/O; it stays off the runtime's worker threads.
                let reader = Arc::clone(&notices);
                let notice =
                    tokio::task::spawn_blocking(move || reader.notice_for(kind, &event)).await;
                if let Ok(Some(notice)) = notice {
                    targets.deliver(&notice).await;
                }
            }
        });
        Some(Notifier {
            queue,
            wanted: config.events.clone(),
            worker,
        })
    }

    /// What the run's event sink hands its events to.
    pub fn observer(&self) -> Arc<dyn RunRenderer> {
        Arc::new(Observer {
            queue: self.queue.clone(),
            wanted: self.wanted.clone(),
        })
    }

    /// Lets the notices already queued go out, then stops. Each delivery is bounded by
    /// `notify.timeoutSeconds`, so this ends.
    pub async fn finish(self) {
        let Notifier { queue, worker, .. } = self;
        drop(queue);
        let _ = worker.await;
    }
}

/// Puts the events that make notices into the notifier's queue; never blocks the run.
struct Observer {
    queue: mpsc::UnboundedSender<RunEvent>,
    wanted: Vec<NoticeKind>,
}

impl RunRenderer for Observer {
    fn begin(&self, _concurrency: usize) {}

    fn render(&self, event: &RunEvent) {
        if notice_kind(event).is_some_and(|kind| self.wanted.contains(&kind)) {
            let _ = self.queue.send(event.clone());
        }
    }
}
