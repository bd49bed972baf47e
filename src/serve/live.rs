//! Live work, read from the transcripts a run writes as it goes (`<board>/logs/<story-id>/`, one
//! JSON line per model call and tool call): for each running story, the tokens its running
//! action has spent so far and its last tool call; for a story's page, its transcripts' new
//! lines as they are written. Nothing here asks a model anything, and each file is read from
//! where the last look stopped, so a long transcript is not read again every second.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::board::StoryId;
use crate::protocol::{TranscriptEntry, TranscriptLine};
use crate::report::transcript::{transcripts, Renderer};

/// The most of a tool call's arguments a card shows (in its tooltip).
const ARGUMENTS_SHOWN: usize = 160;

/// What a running story is doing, as its card shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Work {
    pub story: StoryId,
    /// The running action (`implement`, `research`, …).
    pub action: &'static str,
    /// When it began (RFC 3339); the page counts the time since.
    pub since: Option<String>,
    /// Tokens its model calls have used so far, prompt and completion.
    pub tokens: u64,
    /// Its model calls answered so far.
    pub requests: u64,
    /// Its last tool call: asked for by the model, or run.
    pub tool: Option<ToolSeen>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct ToolSeen {
    pub name: String,
    /// The beginning of its arguments, on one line.
    pub arguments: String,
    pub state: ToolState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum ToolState {
    /// The model asked for it; its result is not written yet.
    Asked,
    Done,
    Failed,
}

/// A running action, as the run's journal tells it.
#[derive(Debug, Clone)]
pub(super) struct Running {
    pub story: StoryId,
    pub action: &'static str,
    pub since: Option<String>,
}

/// What one transcript file came to so far.
#[derive(Debug, Default, Clone)]
struct FileSums {
    /// Bytes read: up to the end of the last complete line.
    read: u64,
    tokens: u64,
    requests: u64,
    tool: Option<ToolSeen>,
}

/// Sums each running story's transcripts, reading each file on from where it stopped.
#[derive(Default)]
pub(super) struct Tracker {
    files: HashMap<PathBuf, FileSums>,
}

impl Tracker {
    /// The work of each running action now.
    pub(super) fn look(&mut self, board_dir: &Path, running: &[Running]) -> Vec<Work> {
        let mut kept = HashMap::new();
        let works = running
            .iter()
            .map(|action| {
                let mut work = Work {
                    story: action.story.clone(),
                    action: action.action,
                    since: action.since.clone(),
                    tokens: 0,
                    requests: 0,
                    tool: None,
                };
                // The action's own transcripts: those begun since it started (their names
                // start with the second they were created, in UTC).
                let first = action.since.as_deref().and_then(file_stamp);
                for path in transcripts(board_dir, &action.story, None) {
                    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if first.as_deref().is_some_and(|first| name < first) {
                        continue;
                    }
                    let mut sums = self.files.remove(&path).unwrap_or_default();
                    let mut read = sums.read;
                    read_on(&path, &mut read, |_, _, line| sums_add(&mut sums, line));
                    sums.read = read;
                    work.tokens += sums.tokens;
                    work.requests += sums.requests;
                    if sums.tool.is_some() {
                        work.tool.clone_from(&sums.tool);
                    }
                    kept.insert(path, sums);
                }
                work
            })
            .collect();
        // Files of actions that ended are forgotten.
        self.files = kept;
        works
    }
}

/// What one transcript line adds to its file's sums.
fn sums_add(sums: &mut FileSums, raw: &str) {
    let Ok(line) = serde_json::from_str::<TranscriptLine>(raw) else {
        return;
    };
    match line.entry {
        TranscriptEntry::Response {
            usage, tool_calls, ..
        } => {
            sums.tokens += usage.tokens();
            sums.requests += 1;
            if let Some(call) = tool_calls.last() {
                sums.tool = Some(ToolSeen {
                    name: call.name.clone(),
                    arguments: short(&call.arguments),
                    state: ToolState::Asked,
                });
            }
        }
        TranscriptEntry::ToolCall {
            name,
            arguments,
            is_error,
            ..
        } => {
            sums.tool = Some(ToolSeen {
                name,
                arguments: short(&arguments),
                state: if is_error {
                    ToolState::Failed
                } else {
                    ToolState::Done
                },
            });
        }
        _ => {}
    }
}

/// The beginning of a tool call's arguments, on one line.
fn short(arguments: &str) -> String {
    let one_line: String = arguments.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(ARGUMENTS_SHOWN) {
        Some((cut, _)) => format!("{}…", &one_line[..cut]),
        None => one_line,
    }
}

/// `2026-11-25T10:00:00.123Z` → `2026-11-25T10-00-00Z`, the start of the names of the
/// transcripts begun in that second or after.
fn file_stamp(rfc3339: &str) -> Option<String> {
    let at = crate::report::parse_time(rfc3339)?;
    Some(at.format("%Y-%m-%dT%H-%M-%SZ").to_string())
}

/// Reads `path` on from `*read`, hands each complete line to `line` with where it starts and
/// ends in the file, and moves `*read` past them; a line still being written (no newline yet)
/// is left for the next look.
fn read_on(path: &Path, read: &mut u64, mut line: impl FnMut(u64, u64, &str)) {
    let Ok(mut file) = std::fs::File::open(path) else {
        return;
    };
    // A file shorter than what was read was replaced: read it again from its start.
    if file.metadata().is_ok_and(|m| m.len() < *read) {
        *read = 0;
    }
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(*read)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return;
    }
    let complete = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |end| end + 1);
    let mut start = *read;
    for raw in bytes[..complete].split_inclusive(|b| *b == b'\n') {
        let end = start + raw.len() as u64;
        let text = String::from_utf8_lossy(raw);
        if !text.trim().is_empty() {
            line(start, end, text.trim_end());
        }
        start = end;
    }
    *read += complete as u64;
}

/// A transcript as a story page shows it: its file's name, how far it was read, and its lines
/// as `logs` prints them (the first is its heading).
#[derive(Debug, Clone)]
pub(crate) struct TranscriptShown {
    pub file: String,
    pub end: u64,
    pub lines: Vec<String>,
}

/// A whole transcript as `logs` renders it, and where its complete lines end.
pub(crate) fn transcript_shown(path: &Path) -> TranscriptShown {
    let mut renderer = Renderer::new(true);
    let mut lines = vec![renderer.header(path)];
    let mut end = 0;
    read_on(path, &mut end, |_, _, raw| lines.extend(renderer.line(raw)));
    TranscriptShown {
        file: file_name(path),
        end,
        lines,
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string()
}

/// New lines of a story's transcripts, as a story page adds them: one per line of the file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct TailLine {
    pub file: String,
    /// The transcript's heading, for a page that does not show the file yet.
    pub heading: String,
    /// Where the line starts and ends in its file: a page that already shows up to `end`
    /// skips it, and one that shows up to `start` adds it.
    pub start: u64,
    pub end: u64,
    /// The line as `logs` prints it (one line of the file may make several).
    pub lines: Vec<String>,
}

/// Follows a story's transcripts for a page: from where the page's newest one ends, and every
/// newer one from its start.
pub(super) struct Tail {
    board_dir: PathBuf,
    story: StoryId,
    /// The page's newest transcript and where it ends there; none when it shows none.
    from: Option<(String, u64)>,
    followed: HashMap<PathBuf, (u64, Renderer)>,
}

impl Tail {
    pub(super) fn new(board_dir: PathBuf, story: StoryId, from: Option<(String, u64)>) -> Tail {
        Tail {
            board_dir,
            story,
            from,
            followed: HashMap::new(),
        }
    }

    /// The lines written since the last look, oldest file first.
    pub(super) fn look(&mut self) -> Vec<TailLine> {
        let mut out = Vec::new();
        for path in transcripts(&self.board_dir, &self.story, None) {
            let name = file_name(&path);
            let from = match &self.from {
                Some((newest, _)) if name < *newest => continue,
                Some((newest, end)) if name == *newest => *end,
                _ => 0,
            };
            let (read, renderer) = self.followed.entry(path.clone()).or_insert_with(|| {
                let mut renderer = Renderer::new(true);
                renderer.header(&path);
                // The lines the page has shape how the next ones read (a reply's duration
                // counts from its request): read them without sending them.
                let mut primed = 0;
                if from > 0 {
                    read_on(&path, &mut primed, |_, end, raw| {
                        if end <= from {
                            renderer.line(raw);
                        }
                    });
                }
                (from, renderer)
            });
            let heading = Renderer::new(true).header(&path);
            read_on(&path, read, |start, end, raw| {
                out.push(TailLine {
                    file: name.clone(),
                    heading: heading.clone(),
                    start,
                    end,
                    lines: renderer.line(raw),
                });
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(tokens: (u64, u64), tool: Option<&str>) -> String {
        let calls = match tool {
            Some(name) => format!(
                r#"[{{"id": "c1", "name": "{name}", "arguments": "{{\"path\":\n \"src/lib.rs\"}}"}}]"#
            ),
            None => "[]".to_string(),
        };
        format!(
            r#"{{"timestamp": "2026-11-28T10:00:02.000Z", "agent": "implement", "event": "response", "turn": 1, "content": null, "tool_calls": {calls}, "usage": {{"prompt_tokens": {}, "completion_tokens": {}, "requests": 1}}}}"#,
            tokens.0, tokens.1
        ) + "\n"
    }

    fn tool_call(name: &str, is_error: bool) -> String {
        format!(
            r#"{{"timestamp": "2026-11-28T10:00:03.000Z", "agent": "implement", "event": "tool_call", "id": "c1", "name": "{name}", "arguments": "{{}}", "result": "ok", "is_error": {is_error}, "protocol": "native", "form": "native"}}"#
        ) + "\n"
    }

    fn append(path: &Path, text: &str) {
        use std::io::Write;
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }

    #[test]
    fn a_running_action_sums_its_own_transcripts_as_they_grow() {
        let board = tempfile::tempdir().unwrap();
        let logs = board.path().join("logs").join("story-a");
        std::fs::create_dir_all(&logs).unwrap();
        // An earlier action's transcript: not this action's work.
        append(
            &logs.join("2026-11-28T09-00-00Z-research.jsonl"),
            &response((5000, 500), Some("grep")),
        );
        let now = logs.join("2026-11-28T10-00-00Z-implement.jsonl");
        append(&now, &response((100, 20), Some("read_file")));
        let running = [Running {
            story: "story-a".into(),
            action: "implement",
            since: Some("2026-11-28T10:00:00.250Z".into()),
        }];
        let mut tracker = Tracker::default();
        let work = tracker.look(board.path(), &running).remove(0);
        assert_eq!((work.tokens, work.requests), (120, 1));
        let tool = work.tool.unwrap();
        assert_eq!(
            (tool.name.as_str(), tool.state),
            ("read_file", ToolState::Asked)
        );
        assert_eq!(tool.arguments, r#"{"path": "src/lib.rs"}"#);

        // The tool ran, a second call came back, and a third is half written.
        append(&now, &tool_call("read_file", false));
        append(&now, &response((300, 40), None));
        append(&now, &tool_call("write_file", true));
        append(
            &now,
            r#"{"timestamp": "2026-11-28T10:00:09.000Z", "event": "resp"#,
        );
        let work = tracker.look(board.path(), &running).remove(0);
        assert_eq!((work.tokens, work.requests), (460, 2));
        let tool = work.tool.unwrap();
        assert_eq!(
            (tool.name.as_str(), tool.state),
            ("write_file", ToolState::Failed)
        );
        // A reviewer's transcript of the same action adds to it.
        append(
            &logs.join("2026-11-28T10-05-00Z-review.jsonl"),
            &response((1000, 0), None),
        );
        let work = tracker.look(board.path(), &running).remove(0);
        assert_eq!((work.tokens, work.requests), (1460, 3));
        assert_eq!(
            work.tool.unwrap().name,
            "write_file",
            "the last call seen stays"
        );

        // The action ended: its files are forgotten.
        assert!(tracker.look(board.path(), &[]).is_empty());
        assert!(tracker.files.is_empty());
    }

    #[test]
    fn a_tail_sends_what_the_page_does_not_show_yet() {
        let board = tempfile::tempdir().unwrap();
        let logs = board.path().join("logs").join("story-a");
        std::fs::create_dir_all(&logs).unwrap();
        let first = logs.join("2026-11-28T10-00-00Z-implement.jsonl");
        append(&first, &response((100, 20), Some("read_file")));
        let shown = transcript_shown(&first);
        assert_eq!(shown.file, "2026-11-28T10-00-00Z-implement.jsonl");
        assert!(shown.lines[0].contains("implement"), "{:?}", shown.lines);
        assert!(shown.lines.iter().any(|l| l.contains("→ read_file")));

        let mut tail = Tail::new(
            board.path().to_path_buf(),
            "story-a".into(),
            Some((shown.file.clone(), shown.end)),
        );
        assert!(tail.look().is_empty(), "the page shows it all");
        append(&first, &tool_call("read_file", false));
        let second = logs.join("2026-11-28T10-01-00Z-review.jsonl");
        append(&second, &response((7, 3), None));
        let lines = tail.look();
        let seen: Vec<(&str, u64)> = lines.iter().map(|l| (l.file.as_str(), l.start)).collect();
        assert_eq!(
            seen,
            [
                ("2026-11-28T10-00-00Z-implement.jsonl", shown.end),
                ("2026-11-28T10-01-00Z-review.jsonl", 0)
            ]
        );
        assert!(
            lines[0].lines.iter().any(|l| l.contains("← read_file")),
            "{lines:?}"
        );
        assert!(lines[1].heading.contains("review"));
        assert!(lines[1]
            .lines
            .iter()
            .any(|l| l.contains("tokens: 7 in, 3 out")));
        assert_eq!(lines[0].end, transcript_shown(&first).end);
        assert!(tail.look().is_empty(), "each line once");
    }
}
