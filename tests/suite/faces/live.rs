//! Live work over plain HTTP: while a run is at work on a story, its card says what it runs and
//! since when, `/events` sends the tokens and the last tool call as its transcript grows, and
//! its page's tail sends each new transcript line.
//!
//! The run is played by the test: it holds the board's lock with its own pid and writes the
//! journal and the transcript lines a run writes, so that what the page shows is compared with
//! exactly what was written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value as Json};

use super::serve::{client, get};
use super::Served;
use crate::suite::common::TestEnv;

/// A run at work on one story, as the test plays it.
pub(super) struct PlayedRun {
    /// When its action began (RFC 3339).
    pub since: String,
    /// The transcript its action writes.
    pub transcript: PathBuf,
}

/// Makes the board look as a run leaves it while at work on `story` (`action` began 75 s ago):
/// the lock held by this process, a journal whose last action has not ended, and an empty
/// transcript begun a second after the action.
pub(super) fn play_running(env: &TestEnv, story: &str, slug: &str, action: &str) -> PlayedRun {
    let board = env.board();
    let pid = std::process::id();
    std::fs::write(board.join(".lock"), format!("{pid}\n")).unwrap();
    let started = chrono::Utc::now() - chrono::Duration::seconds(75);
    let since = started.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let run_id = started.format("%Y%m%dT%H%M%SZ").to_string();
    let lines = [
        json!({"event": "run_started", "storyId": null, "runId": run_id, "pid": pid,
               "model": "test-model", "price": null, "options": {"auto": true},
               "timestamp": since}),
        json!({"event": "action_started", "storyId": story,
               "action": {"type": action, "storyId": story, "slug": slug},
               "title": "Being worked on", "detail": null, "timestamp": since}),
    ];
    let journal: String = lines.iter().map(|l| format!("{l}\n")).collect();
    env.write(board.join("runs").join(format!("{run_id}.jsonl")), &journal);
    let stamp = (started + chrono::Duration::seconds(1)).format("%Y-%m-%dT%H-%M-%SZ");
    let transcript = env.write(
        board
            .join("logs")
            .join(story)
            .join(format!("{stamp}-{action}.jsonl")),
        "",
    );
    PlayedRun { since, transcript }
}

/// Appends transcript lines as the agent writes them, one JSON object a line.
pub(super) fn write_lines(path: &Path, lines: &[Json]) {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
}

/// A model's reply: its usage, and a tool call it asks for.
pub(super) fn reply(prompt: u64, completion: u64, tool: Option<(&str, &str)>) -> Json {
    let calls = match tool {
        Some((name, arguments)) => json!([{"id": "c1", "name": name, "arguments": arguments}]),
        None => json!([]),
    };
    json!({"timestamp": "2026-11-28T10:00:02.000Z", "agent": "implement", "event": "response",
           "turn": 1, "content": null, "tool_calls": calls,
           "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "requests": 1}})
}

/// A tool call that ran, with its result.
pub(super) fn tool_ran(name: &str, is_error: bool) -> Json {
    json!({"timestamp": "2026-11-28T10:00:03.000Z", "agent": "implement", "event": "tool_call",
           "id": "c1", "name": name, "arguments": "{}", "result": "done", "is_error": is_error,
           "protocol": "native", "form": "native"})
}

/// Reads server-sent events until one of `kind` whose data satisfies `wanted`.
async fn next_event(
    stream: &mut reqwest::Response,
    seen: &mut String,
    kind: &str,
    wanted: impl Fn(&Json) -> bool,
) -> Json {
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            while let Some(end) = seen.find("\n\n") {
                let block: String = seen.drain(..end + 2).collect();
                let is_kind = block.lines().any(|l| l == format!("event: {kind}"));
                let data = block.lines().find_map(|l| l.strip_prefix("data: "));
                if let (true, Some(data)) = (is_kind, data) {
                    let value: Json = serde_json::from_str(data).unwrap();
                    if wanted(&value) {
                        return value;
                    }
                }
            }
            let chunk = stream
                .chunk()
                .await
                .unwrap()
                .expect("the stream stays open");
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no `{kind}` event as wanted; last seen: {seen:?}"))
}

#[tokio::test]
async fn a_running_storys_card_and_page_follow_its_transcript_as_it_is_written() {
    let env = TestEnv::init();
    let (id, slug, _) = env.add("Being worked on", &[]);
    let (idle, _, _) = env.add("Waits its turn", &[]);
    let played = play_running(&env, &id, &slug, "implement");
    write_lines(
        &played.transcript,
        &[reply(
            100,
            20,
            Some(("read_file", r#"{"path": "src/lib.rs"}"#)),
        )],
    );
    let served = Served::start(&env, None, &[]);

    // The card says what runs and since when; the page counts the time from there.
    let (_, board) = get(&served.url).await;
    let card = board
        .split(&format!("id=\"card-{id}\""))
        .nth(1)
        .and_then(|rest| rest.split("</article>").next())
        .unwrap();
    assert!(card.contains(&format!("data-work=\"{id}\"")), "{card}");
    assert!(
        card.contains("aria-label=\"running\" role=\"img\"")
            && card.contains("</svg> implement running"),
        "{card}"
    );
    assert!(
        card.contains(&format!("data-since=\"{}\"", played.since)),
        "{card}"
    );
    assert!(!board.contains(&format!("data-work=\"{idle}\"")));

    // `/events` sends the work so far, then again as the transcript grows.
    let mut events = client().get(served.at("/events")).send().await.unwrap();
    let mut seen = String::new();
    let of_story = |work: &Json| -> Option<Json> {
        work.as_array()?
            .iter()
            .find(|w| w["story"] == id.as_str())
            .cloned()
    };
    let first = next_event(&mut events, &mut seen, "work", |w| {
        of_story(w).is_some_and(|w| w["tokens"] == 120)
    })
    .await;
    let work = of_story(&first).unwrap();
    assert_eq!(work["action"], "implement");
    assert_eq!(work["since"], played.since.as_str());
    assert_eq!(work["requests"], 1);
    assert_eq!(
        work["tool"],
        json!({"name": "read_file", "arguments": "{\"path\": \"src/lib.rs\"}", "state": "asked"})
    );
    assert_eq!(first.as_array().unwrap().len(), 1, "only the running story");

    write_lines(
        &played.transcript,
        &[
            tool_ran("read_file", false),
            reply(300, 40, Some(("write_file", r#"{"path": "src/new.rs"}"#))),
            tool_ran("write_file", true),
        ],
    );
    let later = next_event(&mut events, &mut seen, "work", |w| {
        of_story(w).is_some_and(|w| w["tokens"] == 460)
    })
    .await;
    let work = of_story(&later).unwrap();
    assert_eq!(work["requests"], 2);
    assert_eq!(work["tool"]["name"], "write_file");
    assert_eq!(work["tool"]["state"], "failed");

    // The story's page shows the transcript as far as it is written, and its tail sends
    // each line written after, rendered as `logs` renders it.
    let (_, page) = get(&served.at(&format!("/story/{id}"))).await;
    let file = played
        .transcript
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let end = std::fs::metadata(&played.transcript).unwrap().len();
    assert!(
        page.contains(&format!("data-file=\"{file}\" data-end=\"{end}\"")),
        "{page}"
    );
    assert!(page.contains("✗ write_file"), "{page}");
    let mut tail = client()
        .get(served.at(&format!("/events/story/{slug}?from={file}:{end}")))
        .send()
        .await
        .unwrap();
    assert_eq!(tail.status().as_u16(), 200);
    write_lines(&played.transcript, &[reply(500, 60, None)]);
    let mut tail_seen = String::new();
    let lines = next_event(&mut tail, &mut tail_seen, "lines", |_| true).await;
    let lines = lines.as_array().unwrap();
    assert_eq!(lines.len(), 1, "only what was written since: {lines:?}");
    assert_eq!(lines[0]["file"], file.as_str());
    assert_eq!(lines[0]["start"], end);
    assert_eq!(
        lines[0]["end"],
        std::fs::metadata(&played.transcript).unwrap().len()
    );
    let text: Vec<&str> = lines[0]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert!(
        text.iter().any(|l| l.contains("tokens: 500 in, 60 out")),
        "{text:?}"
    );
    // And the card's work follows that line too.
    next_event(&mut events, &mut seen, "work", |w| {
        of_story(w).is_some_and(|w| w["tokens"] == 1020)
    })
    .await;

    // An unknown story has no tail.
    let (status, _) = get(&served.at("/events/story/no-such-story")).await;
    assert_eq!(status, 404);
}
