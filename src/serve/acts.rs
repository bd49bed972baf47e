//! What a person does from the page: decide a gate, unblock, add, edit and move a story. Each
//! goes through the function the command line (or MCP) uses for it, with its rules, its
//! refusals and its atomic writes (`person_decides::decide`, `front::moving`,
//! `front::new_story::create`, `front::editing::apply`); nothing here writes a story itself.
//!
//! A form posted as a browser posts it is answered with a redirect, or a page that says why it
//! was refused. The page's script asks for JSON (`Accept: application/json`) and shows the
//! answer, or the refusal, beside the form.

use std::collections::BTreeMap;

use axum::extract::{Form, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::app::{problem, problem_status, Shared};
use super::guard;
use crate::board::Phase;
use crate::error::{Error, Result};
use crate::front::moving::{self, column_named};
use crate::front::new_story::{create, type_named, NewStory};
use crate::hint::told;
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::person_decides;

/// The answer to an action, as the page's script reads it.
#[derive(Debug, Serialize)]
struct Answer {
    /// What was done, or why it was refused, in words.
    message: String,
    /// The story acted on, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    story: Option<StoryRef>,
}

#[derive(Debug, Serialize)]
struct StoryRef {
    id: String,
    slug: String,
    column: &'static str,
}

impl StoryRef {
    fn of(story: &crate::board::Story) -> StoryRef {
        StoryRef {
            id: story.id().to_string(),
            slug: story.slug.to_string(),
            column: story.column.name(),
        }
    }
}

/// Whether the caller is the page's script, which reads JSON.
fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("application/json"))
}

/// An action's outcome as its caller reads it: done (JSON, or a redirect to `then`), or
/// refused with the status and words of a problem page.
fn answer(
    headers: &HeaderMap,
    outcome: Result<(String, Option<StoryRef>)>,
    then: impl FnOnce(&Option<StoryRef>) -> String,
) -> Response {
    let json = wants_json(headers);
    match outcome {
        Ok((message, story)) if json => json_answer(StatusCode::OK, &Answer { message, story }),
        Ok((_, story)) => Redirect::to(&then(&story)).into_response(),
        Err(err) if json => json_answer(
            problem_status(&err).0,
            &Answer {
                message: told(&err),
                story: None,
            },
        ),
        Err(err) => problem(&err),
    }
}

fn json_answer(status: StatusCode, answer: &Answer) -> Response {
    let body = serde_json::to_string(answer).unwrap_or_else(|_| "{}".to_string());
    (
        status,
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}

#[derive(Deserialize)]
pub(super) struct DecisionForm {
    /// APPROVE, RETRY, REJECT or `RETRY_PREDECESSOR <phase>`: the button pressed.
    decision: String,
    /// The feedback of a retry, or the reason of a rejection.
    #[serde(default)]
    feedback: String,
}

impl DecisionForm {
    /// The decision as `decide` reads it.
    fn text(&self) -> Option<String> {
        let feedback = self.feedback.trim();
        match self.decision.trim().split_once(' ') {
            None => match self.decision.trim() {
                "APPROVE" => Some("APPROVE".to_string()),
                word @ ("RETRY" | "REJECT") => Some(format!("{word}: {feedback}")),
                _ => None,
            },
            Some(("RETRY_PREDECESSOR", phase)) => {
                let phase = Phase::parse(phase)?;
                Some(format!("RETRY_PREDECESSOR {phase}: {feedback}"))
            }
            Some(_) => None,
        }
    }
}

/// A decision from the story page: the same path as `decide`, then back to the story, which
/// says what the decision did.
pub(super) async fn decide(
    State(app): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<DecisionForm>,
) -> Response {
    let board_dir = app.board_dir.clone();
    let decided = off_the_runtime(move || {
        let Some(text) = form.text() else {
            return Err(Error::Usage(format!(
                "`{}` is not a decision; use {}",
                form.decision,
                person_decides::DECISION_FORMS
            )));
        };
        let decided = person_decides::decide(
            &board_dir,
            &id,
            &text,
            crate::board::records::DecidedBy::Web,
        )?;
        let story = crate::front::story::find(&board_dir, &decided.story_id)?;
        Ok((
            format!("{}: {}", decided.decision, decided.message),
            Some(StoryRef::of(&story)),
        ))
    })
    .await;
    let notice = match &decided {
        Ok((message, _)) => guard::percent_encode(message),
        Err(_) => String::new(),
    };
    answer(&headers, decided, |story| match story {
        Some(story) => format!(
            "/story/{}?notice={notice}",
            guard::percent_encode(&story.id)
        ),
        None => "/".to_string(),
    })
}

/// Unblocking from the page: the same path as `unblock`, then back to the board.
pub(super) async fn unblock(
    State(app): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let board_dir = app.board_dir.clone();
    let moved = off_the_runtime(move || {
        let moved = moving::unblock(&board_dir, &id, false)?;
        Ok(moved_words(&moved))
    })
    .await;
    answer(&headers, moved, |_| "/".to_string())
}

/// What a move did, in the words `move` prints.
fn moved_words(moved: &moving::Moved) -> (String, Option<StoryRef>) {
    (
        format!(
            "Moved {} from {} to {}",
            moved.story.slug, moved.from, moved.story.column
        ),
        Some(StoryRef::of(&moved.story)),
    )
}

/// The add form: `add`'s arguments, as a form sends them.
#[derive(Deserialize)]
pub(super) struct AddForm {
    title: String,
    #[serde(default, rename = "type")]
    story_type: String,
    /// Empty: after every story on the board.
    #[serde(default)]
    priority: String,
    /// Separated by commas.
    #[serde(default)]
    labels: String,
    /// Markdown: its own `## ` sections, or the summary.
    #[serde(default)]
    body: String,
}

/// A priority as typed in a form: an integer, or nothing.
fn priority_of(typed: &str) -> Result<Option<i64>> {
    match typed.trim() {
        "" => Ok(None),
        number => number.parse().map(Some).map_err(|_| {
            Error::Usage(format!(
                "priority `{number}`: takes an integer (lower runs first)"
            ))
        }),
    }
}

/// Labels as typed in a form: separated by commas, blanks dropped.
fn labels_of(typed: &str) -> Vec<String> {
    typed
        .split(',')
        .map(str::trim)
        .filter(|label| !label.is_empty())
        .map(str::to_string)
        .collect()
}

/// Adding a story from the page: `add`'s path (`front::new_story::create`).
pub(super) async fn add(
    State(app): Shared,
    headers: HeaderMap,
    Form(form): Form<AddForm>,
) -> Response {
    let project = app.project.clone();
    let added = off_the_runtime(move || {
        let new = NewStory {
            story_type: type_named(Some(&form.story_type))?,
            priority: priority_of(&form.priority)?,
            labels: labels_of(&form.labels),
            depends_on: Vec::new(),
            description: Some(form.body).filter(|body| !body.trim().is_empty()),
            title: form.title,
        };
        let story = create(&project, new)?;
        Ok((
            format!("Created {} ({}) in backlog", story.slug, story.id()),
            Some(StoryRef::of(&story)),
        ))
    })
    .await;
    answer(&headers, added, |_| "/".to_string())
}

/// The edit form: the keys a person edits from the page. A key the form leaves out is kept.
#[derive(Deserialize)]
pub(super) struct EditForm {
    title: Option<String>,
    priority: Option<String>,
    /// Separated by commas; empty removes them all.
    labels: Option<String>,
}

impl EditForm {
    /// The form as the changes `front::editing::apply` checks: a priority that is no integer
    /// goes as typed, and is refused there with the key and what it takes.
    fn changes(self) -> BTreeMap<String, Value> {
        let mut changes = BTreeMap::new();
        if let Some(title) = self.title {
            changes.insert("title".to_string(), Value::String(title));
        }
        if let Some(priority) = self.priority {
            let value = match priority.trim().parse::<i64>() {
                Ok(number) => Value::from(number),
                Err(_) => Value::String(priority),
            };
            changes.insert("priority".to_string(), value);
        }
        if let Some(labels) = self.labels {
            let labels = labels_of(&labels).into_iter().map(Value::String).collect();
            changes.insert("labels".to_string(), Value::Array(labels));
        }
        changes
    }
}

/// Editing a story from its page: the MCP tool's path (`front::editing::apply`).
pub(super) async fn edit(
    State(app): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<EditForm>,
) -> Response {
    let project = app.project.clone();
    let board_dir = app.board_dir.clone();
    let edited = off_the_runtime(move || {
        let id = crate::front::editing::apply(&project, &id, &form.changes())?;
        let story = crate::front::story::find(&board_dir, &id)?;
        Ok((format!("Saved {}", story.slug), Some(StoryRef::of(&story))))
    })
    .await;
    answer(&headers, edited, |story| match story {
        Some(story) => format!("/story/{}", guard::percent_encode(&story.id)),
        None => "/".to_string(),
    })
}

#[derive(Deserialize)]
pub(super) struct MoveForm {
    column: String,
}

/// Moving a story from the page: `move`'s path (`front::moving::move_story`).
pub(super) async fn move_to(
    State(app): Shared,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<MoveForm>,
) -> Response {
    let board_dir = app.board_dir.clone();
    let moved = off_the_runtime(move || {
        let column = column_named(&form.column)?;
        let moved = moving::move_story(&board_dir, &id, column)?;
        Ok(moved_words(&moved))
    })
    .await;
    answer(&headers, moved, |_| "/".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_read_as_the_command_line_reads_its_arguments() {
        assert_eq!(priority_of(" 20 ").unwrap(), Some(20));
        assert_eq!(priority_of("-5").unwrap(), Some(-5));
        assert_eq!(priority_of("  ").unwrap(), None);
        let err = priority_of("soon").unwrap_err();
        assert!(err.to_string().contains("priority `soon`"), "{err}");
        assert_eq!(labels_of(" ui, ,export ,"), ["ui", "export"]);
        assert!(labels_of("").is_empty());

        let changes = EditForm {
            title: Some("New".into()),
            priority: Some("high".into()),
            labels: Some(String::new()),
        }
        .changes();
        assert_eq!(changes["title"], Value::from("New"));
        assert_eq!(
            changes["priority"],
            Value::from("high"),
            "refused by the edit"
        );
        assert_eq!(changes["labels"], Value::Array(Vec::new()));
        let only_priority = EditForm {
            title: None,
            priority: Some("7".into()),
            labels: None,
        }
        .changes();
        assert_eq!(only_priority.len(), 1);
        assert_eq!(only_priority["priority"], Value::from(7));
    }

    #[test]
    fn decisions_read_as_decide_reads_them() {
        let form = |decision: &str, feedback: &str| DecisionForm {
            decision: decision.into(),
            feedback: feedback.into(),
        };
        assert_eq!(form("APPROVE", "x").text().as_deref(), Some("APPROVE"));
        assert_eq!(
            form("REJECT", " not so ").text().as_deref(),
            Some("REJECT: not so")
        );
        assert_eq!(
            form("RETRY_PREDECESSOR plan", "again").text().as_deref(),
            Some("RETRY_PREDECESSOR plan: again")
        );
        assert_eq!(form("MAYBE", "").text(), None);
        assert_eq!(form("RETRY_PREDECESSOR nowhere", "").text(), None);
    }
}
