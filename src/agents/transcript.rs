//! The record of one agent call: JSON Lines under `<board>/logs/<story-id>/` (docs/design.md §2),
//! so a person can see what the model was sent and what it did.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::board::StoryId;
use crate::protocol::{TranscriptEntry, TranscriptLine};

/// Appends one JSON object per line to a transcript file, flushed per line so that a run that
/// is killed leaves everything up to that point. Cloning shares the file.
#[derive(Clone)]
pub struct Transcript {
    sink: Option<Arc<Sink>>,
    /// Written into every entry: the three reviewers share one file and run at once, so each
    /// line must say whose it is.
    agent: Arc<str>,
    /// Told of every tool call as it is recorded, so a run can show what its agents do.
    observer: Option<Arc<dyn ToolCallObserver>>,
}

/// Hears of the tool calls recorded in a transcript (the run's event stream listens).
pub trait ToolCallObserver: Send + Sync {
    fn tool_called(&self, agent: &str, name: &str, is_error: bool);
}

impl std::fmt::Debug for Transcript {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transcript")
            .field(
                "path",
                &self.sink.as_deref().map(|sink| sink.path.as_path()),
            )
            .field("agent", &self.agent)
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

#[derive(Debug)]
struct Sink {
    path: PathBuf,
    file: Mutex<fs_err::File>,
}

impl Transcript {
    /// Creates `<board_dir>/logs/<story_id>/<UTC time>-<phase>.jsonl`; a second call in the same
    /// second gets `-2`, `-3`… rather than writing into the first one's file.
    pub fn create(board_dir: &Path, story_id: &StoryId, phase: &str) -> io::Result<Transcript> {
        let dir = board_dir.join("logs").join(path_safe(story_id));
        fs_err::create_dir_all(&dir)?;
        let label = format!(
            "{}-{}",
            chrono::Utc::now().format("%Y-%m-%dT%H-%M-%SZ"),
            path_safe(phase)
        );
        for attempt in 1u32.. {
            let name = match attempt {
                1 => format!("{label}.jsonl"),
                n => format!("{label}-{n}.jsonl"),
            };
            let path = dir.join(name);
            match fs_err::OpenOptions::new()
                .append(true)
                .create_new(true)
                .open(&path)
            {
                Ok(file) => {
                    return Ok(Transcript {
                        sink: Some(Arc::new(Sink {
                            path,
                            file: Mutex::new(file),
                        })),
                        agent: Arc::from(phase),
                        observer: None,
                    })
                }
                Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 1000 => {
                    continue
                }
                Err(err) => return Err(err),
            }
        }
        unreachable!("the loop returns on every path")
    }

    /// A transcript that records nothing, for tests.
    #[cfg(test)]
    pub fn disabled() -> Transcript {
        Transcript {
            sink: None,
            agent: Arc::from(""),
            observer: None,
        }
    }

    /// This transcript, telling `observer` of every tool call it records.
    pub fn observed_by(mut self, observer: Arc<dyn ToolCallObserver>) -> Transcript {
        self.observer = Some(observer);
        self
    }

    /// The same file, with entries labelled as `agent`'s (a role such as `code-review`).
    pub fn for_agent(&self, agent: &str) -> Transcript {
        Transcript {
            sink: self.sink.clone(),
            agent: Arc::from(agent),
            observer: self.observer.clone(),
        }
    }

    #[cfg(test)]
    pub fn path(&self) -> Option<&Path> {
        self.sink.as_deref().map(|sink| sink.path.as_path())
    }

    /// Records one tool call with its arguments, its result, and the protocol and form it came
    /// through (a native call, or one read from the reply's text), and tells the observer.
    pub fn record_tool_call(
        &self,
        id: &str,
        name: &str,
        arguments: &str,
        result: &str,
        is_error: bool,
        form: crate::agents::text_calls::CallForm,
    ) {
        self.entry(TranscriptEntry::ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            result: result.to_string(),
            is_error,
            protocol: form.protocol().to_string(),
            form: form.name().to_string(),
        });
        if let Some(observer) = &self.observer {
            observer.tool_called(&self.agent, name, is_error);
        }
    }

    /// Records one of the entries `logs` reads back.
    pub fn entry(&self, entry: TranscriptEntry) {
        if self.sink.is_none() {
            return;
        }
        let line = TranscriptLine {
            timestamp: now(),
            agent: self.agent.to_string(),
            entry,
        };
        match serde_json::to_string(&line) {
            Ok(text) => self.append(text),
            Err(err) => tracing::warn!("could not record a transcript entry: {err}"),
        }
    }

    /// Records a note: `{"timestamp", "agent", "event", ...data}`, with a `data` that is not an
    /// object under `"data"`. Notes are for a person reading the file; nothing reads them back
    /// by key (what is read back is a [`TranscriptEntry`]).
    pub fn record(&self, event: &str, data: Value) {
        if self.sink.is_none() {
            return;
        }
        let mut line = Map::new();
        line.insert("timestamp".into(), Value::String(now()));
        line.insert("agent".into(), Value::String(self.agent.to_string()));
        line.insert("event".into(), Value::String(event.to_string()));
        match data {
            Value::Object(fields) => line.extend(fields),
            Value::Null => {}
            other => {
                line.insert("data".into(), other);
            }
        }
        self.append(Value::Object(line).to_string());
    }

    /// Appends one line. A transcript that cannot be written is worth a warning, not a failed
    /// action.
    fn append(&self, mut text: String) {
        let Some(sink) = &self.sink else { return };
        text.push('\n');
        // A panic elsewhere while holding the lock leaves a file that is still fine to append to.
        let mut file = sink
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Err(err) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
            tracing::warn!(
                "could not write the transcript {}: {err}",
                sink.path.display()
            );
        }
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Keeps an id or phase name from escaping its folder.
fn path_safe(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() {
        "unnamed".to_string()
    } else {
        safe
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn records_json_lines_in_the_story_folder() {
        let board = tempfile::tempdir().unwrap();
        let transcript =
            Transcript::create(board.path(), &StoryId::from("story-abc-1234"), "research").unwrap();
        let again =
            Transcript::create(board.path(), &StoryId::from("story-abc-1234"), "research").unwrap();
        assert_ne!(transcript.path(), again.path());

        let path = transcript.path().unwrap().to_path_buf();
        assert_eq!(
            path.parent().unwrap(),
            board.path().join("logs/story-abc-1234")
        );
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            name.ends_with("Z-research.jsonl")
                && name.len() == "2026-11-22T10-00-00Z-research.jsonl".len(),
            "{name}"
        );

        transcript.clone().record("request", json!({"turn": 1}));
        transcript
            .for_agent("code-review")
            .record("note", json!("plain"));
        let lines: Vec<Value> = fs_err::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            (lines[0]["event"].as_str(), lines[0]["turn"].as_u64()),
            (Some("request"), Some(1))
        );
        assert!(lines[0]["timestamp"].as_str().unwrap().ends_with('Z'));
        assert_eq!(lines[1]["data"], "plain");
        assert_eq!(
            lines[0]["agent"], "research",
            "the action's own agent by default"
        );
        assert_eq!(lines[1]["agent"], "code-review");
    }

    #[test]
    fn ids_cannot_escape_the_logs_folder() {
        let board = tempfile::tempdir().unwrap();
        let transcript =
            Transcript::create(board.path(), &StoryId::from("../../etc"), "x/y").unwrap();
        assert!(transcript
            .path()
            .unwrap()
            .starts_with(board.path().join("logs")));
        Transcript::disabled().record("ignored", json!({}));
    }
}
