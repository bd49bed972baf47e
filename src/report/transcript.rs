//! Transcripts made readable for `logs` (docs/design.md §14): each model call with its role, the
//! messages (long ones folded), the tool calls and their results, tokens and duration.
//!
//! A transcript is JSON Lines written by `agents/transcript.rs`; this reads it one line at a
//! time, so `logs --follow` can print a call while the run is still making it.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::run_report::parse_time;
use crate::board::StoryId;
use crate::protocol::{TranscriptEntry, TranscriptLine};

/// Lines of a message shown before it is folded.
const FOLD_LINES: usize = 6;
/// Characters of a message shown before it is folded.
const FOLD_CHARS: usize = 480;

/// The transcripts of a story, oldest first, optionally only those of one phase.
pub fn transcripts(board_dir: &Path, story_id: &StoryId, phase: Option<&str>) -> Vec<PathBuf> {
    let dir = board_dir.join("logs").join(story_id);
    let Ok(entries) = fs_err::read_dir(&dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| phase.is_none_or(|wanted| phase_of(p).as_deref() == Some(wanted)))
        .collect();
    paths.sort();
    paths
}

/// `2026-11-23T10-00-00Z-research-2.jsonl` → `research`.
pub fn phase_of(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let (_, rest) = stem.split_once("Z-")?;
    let phase = match rest.rsplit_once('-') {
        Some((phase, n)) if n.bytes().all(|b| b.is_ascii_digit()) => phase,
        _ => rest,
    };
    Some(phase.to_string())
}

/// Renders one transcript's lines as they come.
#[derive(Default)]
pub struct Renderer {
    /// Fold long messages; `false` shows everything.
    pub fold: bool,
    request_at: Option<DateTime<Utc>>,
}

impl Renderer {
    pub fn new(fold: bool) -> Renderer {
        Renderer {
            fold,
            request_at: None,
        }
    }

    /// The heading of one transcript file.
    pub fn header(&mut self, path: &Path) -> String {
        self.request_at = None;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let phase = phase_of(path).unwrap_or_else(|| "transcript".into());
        format!("━━ {phase} ━━ {name}")
    }

    /// One transcript line as readable lines; a line that is not JSON is shown as it is, a
    /// note (an event no [`TranscriptEntry`] is) as its fields.
    pub fn line(&mut self, raw: &str) -> Vec<String> {
        if let Ok(line) = serde_json::from_str::<TranscriptLine>(raw) {
            let at = parse_time(&line.timestamp);
            return self.entry(at, &line.agent, line.entry);
        }
        let Ok(note) = serde_json::from_str::<Value>(raw) else {
            return vec![format!("  (unreadable line) {raw}")];
        };
        let at = note
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_time);
        let mut rest = note.clone();
        let event = match rest.as_object_mut() {
            Some(map) => {
                map.remove("timestamp");
                map.remove("agent");
                map.remove("event")
            }
            None => None,
        };
        let event = event.as_ref().and_then(Value::as_str).unwrap_or("note");
        vec![format!(
            "{} · {event}: {}",
            clock(at),
            self.fold_inline(&rest.to_string())
        )]
    }

    fn entry(
        &mut self,
        at: Option<DateTime<Utc>>,
        agent: &str,
        entry: TranscriptEntry,
    ) -> Vec<String> {
        let clock = clock(at);
        let mut out = Vec::new();
        match entry {
            TranscriptEntry::Request {
                turn,
                messages,
                tools,
                ..
            } => {
                self.request_at = at;
                let role = if agent.is_empty() {
                    String::new()
                } else {
                    format!(" · {agent} agent")
                };
                out.push(format!("{clock} ▶ call {turn}{role}"));
                if turn == 1 && !tools.is_empty() {
                    out.push(format!("    tools: {}", tools.join(", ")));
                }
                // Assistant and tool messages were shown as the response and tool results.
                for message in messages
                    .iter()
                    .filter(|m| m["role"] == "system" || m["role"] == "user")
                {
                    let role = message["role"].as_str().unwrap_or("?");
                    let content = message["content"].as_str().unwrap_or("");
                    out.extend(self.block(&format!("    {role}: "), content));
                }
            }
            TranscriptEntry::Response {
                content,
                tool_calls,
                usage,
                finish_reason,
                ..
            } => {
                let content = content.unwrap_or_default();
                if !content.trim().is_empty() {
                    out.extend(self.block("    assistant: ", &content));
                }
                for call in &tool_calls {
                    out.push(format!(
                        "    → {} {}",
                        call.name,
                        self.fold_inline(&call.arguments)
                    ));
                }
                let duration = match (self.request_at, at) {
                    (Some(sent), Some(answered)) => format!(
                        " · {}",
                        super::format_duration(
                            u64::try_from((answered - sent).num_milliseconds()).ok()
                        )
                    ),
                    _ => String::new(),
                };
                out.push(format!(
                    "    tokens: {} in, {} out{duration}{}",
                    usage.prompt_tokens,
                    usage.completion_tokens,
                    finish_reason.map_or(String::new(), |r| format!(" · finish: {r}")),
                ));
            }
            TranscriptEntry::ToolCall {
                name,
                result,
                is_error,
                protocol,
                form,
                ..
            } => {
                let mark = if is_error { "✗" } else { "←" };
                // A call the model wrote in its text says how it was read.
                let via = if protocol == "text" {
                    format!(" (from text: {form})")
                } else {
                    String::new()
                };
                out.extend(self.block(&format!("    {mark} {name}{via}: "), &result));
            }
            TranscriptEntry::Error { error, .. } => out.push(format!("{clock} ✗ error: {error}")),
            TranscriptEntry::Done {
                turns,
                tool_calls,
                usage,
                ..
            } => out.push(format!(
                "{clock} ■ done: {turns} call(s), {tool_calls} tool call(s), {} tokens in, {} out",
                usage.prompt_tokens, usage.completion_tokens,
            )),
            TranscriptEntry::PhaseOutput {
                phase,
                attempt,
                text,
                ..
            } => out.extend(self.block(
                &format!("{clock} ◆ {phase} output, attempt {attempt}: "),
                &text,
            )),
            TranscriptEntry::GateDecision {
                attempt, decision, ..
            } => out.push(format!("{clock} ◆ gate, attempt {attempt}: {decision}")),
        }
        out
    }

    /// A message under a label, its continuation lines indented, folded when long.
    fn block(&self, label: &str, text: &str) -> Vec<String> {
        let text = text.trim_end();
        let lines: Vec<&str> = text.lines().collect();
        let indent = " ".repeat(label.chars().count().min(8));
        let (shown, hidden_lines) =
            if self.fold && (lines.len() > FOLD_LINES || text.len() > FOLD_CHARS) {
                let mut kept = Vec::new();
                let mut chars = 0;
                for line in lines.iter().take(FOLD_LINES) {
                    if chars + line.len() > FOLD_CHARS {
                        let room = FOLD_CHARS.saturating_sub(chars);
                        kept.push(line.chars().take(room).collect::<String>() + "…");
                        break;
                    }
                    chars += line.len();
                    kept.push(line.to_string());
                }
                let hidden = lines.len().saturating_sub(kept.len());
                (kept, Some((hidden, text.chars().count())))
            } else {
                (lines.iter().map(|l| l.to_string()).collect(), None)
            };
        let mut out = Vec::new();
        for (index, line) in shown.iter().enumerate() {
            if index == 0 {
                out.push(format!("{label}{line}"));
            } else {
                out.push(format!("{indent}{line}"));
            }
        }
        if out.is_empty() {
            out.push(label.trim_end().to_string());
        }
        if let Some((hidden, total)) = hidden_lines {
            out.push(format!(
                "{indent}… folded: {hidden} more line(s), {total} characters in all (--full shows everything)"
            ));
        }
        out
    }

    fn fold_inline(&self, text: &str) -> String {
        if self.fold && text.chars().count() > 160 {
            let cut: String = text.chars().take(160).collect();
            format!("{cut}… ({} characters)", text.chars().count())
        } else {
            text.to_string()
        }
    }
}

/// `10:00:01`, or nothing for a line without a readable time.
fn clock(at: Option<DateTime<Utc>>) -> String {
    at.map_or(String::new(), |t| t.format("%H:%M:%S").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_reads_as_role_messages_tools_tokens_and_duration() {
        let mut renderer = Renderer::new(true);
        let long = (1..=20)
            .map(|n| format!("line {n}"))
            .collect::<Vec<_>>()
            .join("\n");
        let request = serde_json::json!({"timestamp": "2026-11-23T10:00:00.000Z", "agent": "plan", "event": "request", "turn": 1,
            "messages": [{"role": "system", "content": "You plan.\nRules."},
                         {"role": "user", "content": long}], "tools": ["read_file"]});
        let response = serde_json::json!({"timestamp": "2026-11-23T10:00:01.500Z", "agent": "plan", "event": "response", "turn": 1,
            "content": null, "tool_calls": [{"id": "c1", "name": "read_file", "arguments": "{\"path\":\"a\"}"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20}, "finish_reason": "tool_calls"});
        let mut text = renderer.line(&request.to_string());
        text.extend(renderer.line(&response.to_string()));
        let text = text.join("\n");
        assert!(text.contains("▶ call 1 · plan agent"), "{text}");
        assert!(text.contains("user: line 1"), "{text}");
        assert!(!text.contains("line 20"), "{text}");
        assert!(text.contains("folded: 14 more line(s)"), "{text}");
        assert!(text.contains("→ read_file {\"path\":\"a\"}"), "{text}");
        assert!(text.contains("tokens: 100 in, 20 out · 1.5s"), "{text}");
    }

    #[test]
    fn phases_come_from_file_names() {
        let cases = [
            ("2026-11-23T10-00-00Z-research.jsonl", Some("research")),
            ("2026-11-23T10-00-00Z-review-2.jsonl", Some("review")),
            ("pending-plan.md", None),
        ];
        for (name, phase) in cases {
            assert_eq!(phase_of(Path::new(name)).as_deref(), phase, "{name}");
        }
    }
}
