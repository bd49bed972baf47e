//! Phase review gates (docs/design.md §8, §9), dependencies and concurrency (§6, §11), through the
//! real binary and the fake model.

mod ai_gate;
mod command_gate;
mod concurrency;
mod config;
mod dependencies;
mod human_gate;
mod predecessor;
mod reject;
mod worktrees;

use std::path::Path;

use serde_json::{json, Value as Json};

use crate::suite::common::{outcome, Outcome, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Recorded};

/// The heading that opens the feedback of a re-run phase (docs/design.md §9).
const REVISION: &str = "## Revision Instructions";

/// A story as the tests name it.
pub(super) struct Story {
    pub id: String,
    pub slug: String,
    pub title: String,
}

/// Runs the binary against the fake model.
pub(super) fn run_llm(env: &TestEnv, fake: &FakeLlm, args: &[&str]) -> Outcome {
    outcome(env.cmd(args).env("OPENAI_BASE_URL", fake.base_url()))
}

/// Merges `patch` into `.agentic-sdlc.json`, the way a person edits the file.
pub(super) fn configure(env: &TestEnv, patch: Json) {
    env.configure_json(&patch);
}

/// Puts a review gate on `phase`.
pub(super) fn gate(env: &TestEnv, phase: &str, review: Json) {
    configure(env, json!({ "phases": { phase: { "review": review } } }));
}

/// A story in backlog.
#[track_caller]
pub(super) fn backlog_story(env: &TestEnv, title: &str, extra: &[&str]) -> Story {
    let (id, slug, _) = env.add(title, extra);
    Story {
        id,
        slug,
        title: title.to_string(),
    }
}

/// A refined story: in ready, so its next action is research.
#[track_caller]
pub(super) fn ready_story(env: &TestEnv, title: &str) -> Story {
    let story = backlog_story(env, title, &[]);
    env.run(&["move", &story.slug, "ready"]).success();
    story
}

/// A story in ready whose earlier phases are done, with `sections` written: `[("Research",
/// "…")]` makes plan its next action.
#[track_caller]
pub(super) fn story_with(env: &TestEnv, title: &str, sections: &[(&str, &str, &str)]) -> Story {
    let body: String = sections
        .iter()
        .map(|(name, _, text)| format!("## {name}\n{text}\n\n"))
        .collect();
    let file = env.write(format!("body-{}.md", sections.len()), &body);
    let story = backlog_story(env, title, &["--body-file", file.to_str().unwrap()]);
    std::fs::remove_file(file).unwrap();
    env.run(&["move", &story.slug, "ready"]).success();
    let path = env.story_path(&story.slug);
    for (_, flag, _) in sections {
        env.edit(&path, &format!("{flag}: false"), &format!("{flag}: true"));
    }
    story
}

/// `details --json`: every frontmatter key plus `sections`, `slug` and `path`.
#[track_caller]
pub(super) fn details(env: &TestEnv, slug: &str) -> Json {
    env.run_json(&["details", slug])["story"].clone()
}

/// A section of the story as the tool reads it, trimmed.
#[track_caller]
pub(super) fn section(env: &TestEnv, slug: &str, name: &str) -> String {
    details(env, slug)["sections"][name]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The column folder the story file sits in.
#[track_caller]
pub(super) fn column(env: &TestEnv, slug: &str) -> String {
    let path = env.story_path(slug);
    column_of(&path)
}

fn column_of(path: &Path) -> String {
    path.parent()
        .and_then(Path::file_name)
        .and_then(|name| name.to_str())
        .unwrap_or_default()
        .to_string()
}

/// The story title a request is about (`# Story: <title>` in its user message).
pub(super) fn story_title(request: &Recorded) -> Option<String> {
    let user = request.user_message();
    let start = user.find("# Story: ")? + "# Story: ".len();
    Some(user[start..].lines().next()?.trim().to_string())
}

/// The requests of `role` about one story.
pub(super) fn requests_about(fake: &FakeLlm, role: &str, story: &Story) -> Vec<Recorded> {
    fake.requests_for(role)
        .into_iter()
        .filter(|r| story_title(r).as_deref() == Some(story.title.as_str()))
        .collect()
}

/// The Revision Instructions of a prompt, from their heading up to and including `## Task`.
pub(super) fn revision_of(prompt: &str) -> Option<&str> {
    let start = prompt.find(REVISION)?;
    let end = prompt[start..].find("\n## Task\n")? + start + "\n## Task\n".len();
    Some(&prompt[start..end])
}

/// The Revision Instructions of docs/design.md §9, exactly, ending with the `## Task` heading.
pub(super) fn expected_revision(attempt: u32, feedback: &str, previous: Option<&str>) -> String {
    let mut text = format!(
        "{REVISION} (Attempt {attempt})\nThis task is being re-executed based on reviewer feedback.\nIncorporate the feedback below into your response.\n\n### Feedback\n{feedback}\n"
    );
    if let Some(previous) = previous {
        text.push_str(&format!("\n### Previous Output\n{previous}\n"));
    }
    text.push_str("\n## Task\n");
    text
}

/// Asserts that a prompt carries exactly these Revision Instructions, directly before `## Task`.
#[track_caller]
pub(super) fn assert_revision(prompt: &str, attempt: u32, feedback: &str, previous: Option<&str>) {
    let expected = expected_revision(attempt, feedback, previous);
    assert_eq!(
        revision_of(prompt),
        Some(expected.as_str()),
        "--- prompt\n{prompt}"
    );
}

#[track_caller]
pub(super) fn assert_no_revision(prompt: &str) {
    assert!(
        !prompt.contains(REVISION),
        "unexpected Revision Instructions in\n{prompt}"
    );
}

/// The `run --json` events of a finished run, one object per line.
#[track_caller]
pub(super) fn events(out: &Outcome) -> Vec<Json> {
    out.stdout
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("not a JSON event: {e}\n{line}\n--- stderr\n{}", out.stderr)
            })
        })
        .collect()
}
