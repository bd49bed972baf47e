//! `mcp`: the board as a Model Context Protocol server over stdio, for other agents and
//! editors.
//!
//! Seven tools, each a thin face on what the command line does: the same documents as
//! `status --json`, `details --json` and `report --json`, the same story creation as `add`,
//! the same decision path as `decide`, and a run of one story bounded like
//! `run --story S --auto --max-actions N`. A failure is an MCP error whose message is the
//! command line's own error text and whose data carries the exit code the command would have
//! given; the server goes on serving.
//!
//! Stdout belongs to the protocol: [`protocol_stdout`] moves everything else that would write
//! there (a library's stray print, a child process) to stderr before the server starts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{schemars, tool, tool_handler, tool_router, ErrorData, ServerHandler};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::board::{lookup, Board, Column};
use crate::config::Project;
use crate::error::{Error, Hint, Result};
use crate::front::new_story::{create, type_named, NewStory};
use crate::front::{launch, moving};
use crate::workflow::assessor::{assess, Policy};
use crate::workflow::blocking::off_the_runtime;
use crate::workflow::checkpoint::RunOptions;
use crate::workflow::events::{RunEvent, RunRenderer};
use crate::workflow::runner::RunRequest;
use crate::workflow::{lock, person_decides};

/// The most actions one `run_story` call may take.
const MAX_ACTIONS: u32 = 50;

/// The board of the project found from `cwd`, served as MCP tools.
#[derive(Clone)]
pub struct BoardServer {
    /// Where the project is looked for on every call, so an edited config applies at once.
    cwd: PathBuf,
    tool_router: ToolRouter<BoardServer>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ListArgs {
    /// Only this column: backlog, ready, in-progress, done or blocked.
    #[serde(default)]
    pub column: Option<String>,
    /// Leave out the done column (like `status --active`).
    #[serde(default)]
    pub active: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct StoryArgs {
    /// The story: its id or slug (any case), or a unique prefix of either.
    pub story: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AddArgs {
    /// The story's title, one line.
    pub title: String,
    /// feature (default), bug, chore or spike.
    #[serde(default, rename = "type")]
    pub story_type: Option<String>,
    /// Lower runs first; by default the story goes after every story on the board.
    #[serde(default)]
    pub priority: Option<i64>,
    /// Labels, added to the project's default labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Stories (ids or slugs) that must be done before this one goes past refinement.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// What the story is about, in Markdown: plain text becomes its Summary; text with its own
    /// `## ` sections (Summary, Acceptance Criteria, …) is used as written.
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct EditArgs {
    /// The story: its id or slug, or a unique prefix of either.
    pub story: String,
    /// Frontmatter keys to set, with their new values; null removes an optional key. Keys a
    /// person may edit: title (string), priority (integer, lower runs first), type (feature,
    /// bug, chore, spike), labels (list of strings), assignee (string), estimated_effort
    /// (small, medium, large), depends_on (list of story ids or slugs),
    /// max_refinement_attempts (integer ≥ 1). The tool's own keys (status, phase flags,
    /// records) are refused.
    pub set: BTreeMap<String, Value>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DecideArgs {
    /// The story whose human phase review waits for a decision (id, slug or prefix).
    pub story: String,
    /// APPROVE, "RETRY: <feedback>", "RETRY_PREDECESSOR <phase>: <feedback>" or
    /// "REJECT: <reason>".
    pub decision: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct MoveArgs {
    /// The story to move (id, slug or prefix).
    pub story: String,
    /// The column to move it to: backlog, ready, in-progress, done or blocked.
    pub column: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UnblockArgs {
    /// The blocked story (id, slug or prefix).
    pub story: String,
    /// Also set refinement_count to 0, re-opening a story whose circuit breaker tripped.
    #[serde(default)]
    pub reset: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RunArgs {
    /// The story to work on (id, slug or prefix).
    pub story: String,
    /// The most actions to take (1 to 50, default 1): refine, research, plan, implement,
    /// review, … each count as one.
    #[serde(default)]
    pub max_actions: Option<u32>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReportArgs {
    /// The run to report on (the journal's name in <board>/runs/ without .jsonl); the latest
    /// run by default.
    #[serde(default)]
    pub run: Option<String>,
}

#[tool_router]
impl BoardServer {
    pub fn new(cwd: PathBuf) -> BoardServer {
        BoardServer {
            cwd,
            tool_router: Self::tool_router(),
        }
    }

    fn project(&self) -> Result<Project> {
        let project = Project::discover(&self.cwd)?;
        crate::vcs::withhold_from_git(&project.config.llm.api_key_env);
        Ok(project)
    }

    #[tool(
        description = "List the board's stories column by column (backlog, ready, in-progress, done, blocked), each with id, slug, title, priority, type, phase flags, branch and errors; then the recommended next actions and the stories that wait (on dependencies or on a person). The same document as `agentic-sdlc status --json`.",
        annotations(read_only_hint = true)
    )]
    async fn list_stories(&self, Parameters(args): Parameters<ListArgs>) -> Reply {
        answer(self.list_stories_document(args).await)
    }

    #[tool(
        description = "Show one story: every frontmatter key (phase flags, dependencies, reviews, gate records, usage, errors), its column and path, and its Markdown sections. The same document as `agentic-sdlc details <story> --json`.",
        annotations(read_only_hint = true)
    )]
    async fn show_story(&self, Parameters(args): Parameters<StoryArgs>) -> Reply {
        answer(self.show_story_document(args).await)
    }

    #[tool(
        description = "Add a story to the backlog, like `agentic-sdlc add`. Returns its id, slug and path; the next run refines it.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false
        )
    )]
    async fn add_story(&self, Parameters(args): Parameters<AddArgs>) -> Reply {
        answer(self.add_story_document(args).await)
    }

    #[tool(
        description = "Change frontmatter keys of a story that a person may edit: title, priority, type, labels, assignee, estimated_effort, depends_on, max_refinement_attempts. Null removes an optional key. The write keeps every other key, the sections and any edit made meanwhile. Returns the story as show_story does.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true
        )
    )]
    async fn edit_story(&self, Parameters(args): Parameters<EditArgs>) -> Reply {
        answer(self.edit_story_document(args).await)
    }

    #[tool(
        description = "Give a pending human phase review its decision, like `agentic-sdlc decide`: APPROVE writes the waiting output into the story; \"RETRY: <feedback>\" or \"RETRY_PREDECESSOR <phase>: <feedback>\" is carried out by the next run; \"REJECT: <reason>\" moves the story to blocked. Fails when no gate waits.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false
        )
    )]
    async fn decide(&self, Parameters(args): Parameters<DecideArgs>) -> Reply {
        answer(self.decide_document(args).await)
    }

    #[tool(
        description = "Move a story to another column by hand, like `agentic-sdlc move`: into blocked with a reason, out of it without. Returns its id, slug, the column it came from and the one it is in.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true
        )
    )]
    async fn move_story(&self, Parameters(args): Parameters<MoveArgs>) -> Reply {
        answer(self.move_story_document(args).await)
    }

    #[tool(
        description = "Move a blocked story back to the column its phase flags call for, like `agentic-sdlc unblock`; reset also sets refinement_count to 0. Refused when the story is not blocked.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false
        )
    )]
    async fn unblock_story(&self, Parameters(args): Parameters<UnblockArgs>) -> Reply {
        answer(self.unblock_story_document(args).await)
    }

    #[tool(
        description = "Run one story's life cycle with the project's model, at most max_actions actions (1 to 50, default 1), like `agentic-sdlc run --story S --auto --max-actions N`. Waits until they are done; may take minutes. Human gates are not prompted: the story waits for `decide`. Returns the exit code (0 done, 1 an action failed, 3 a story needs a person), the run's events and the story afterwards. Fails at once when another run holds the board.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false
        )
    )]
    async fn run_story(&self, Parameters(args): Parameters<RunArgs>) -> Reply {
        answer(self.run_story_document(args).await)
    }

    #[tool(
        description = "What a run did, story by story: actions with outcome and duration, reworks, gate decisions, tokens and cost, merged commit or blocked reason and the command that moves each story on, and totals. The latest run unless `run` names one. The same document as `agentic-sdlc report --json`.",
        annotations(read_only_hint = true)
    )]
    async fn last_report(&self, Parameters(args): Parameters<ReportArgs>) -> Reply {
        answer(self.last_report_document(args).await)
    }
}

/// What each tool does, in the library's own terms; the tools above turn its errors into
/// answers a caller can act on.
impl BoardServer {
    async fn move_story_document(&self, args: MoveArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let column = moving::column_named(&args.column)?;
        let moved = off_the_runtime(move || {
            let moved = moving::move_story(&project.board_dir(), &args.story, column)?;
            to_value(crate::front::envelope("moved", moved.view()))
        })
        .await?;
        Ok(structured(moved))
    }

    async fn unblock_story_document(&self, args: UnblockArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let moved = off_the_runtime(move || {
            let moved = moving::unblock(&project.board_dir(), &args.story, args.reset)?;
            to_value(crate::front::envelope("unblocked", moved.view()))
        })
        .await?;
        Ok(structured(moved))
    }

    async fn list_stories_document(&self, args: ListArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let columns: Vec<Column> = match &args.column {
            Some(name) => vec![Column::parse(name).ok_or_else(|| {
                Error::Usage(format!(
                    "column `{name}`: use backlog, ready, in-progress, done or blocked"
                ))
            })?],
            None => Column::ALL
                .iter()
                .copied()
                .filter(|c| !(args.active && *c == Column::Done))
                .collect(),
        };
        let document = off_the_runtime(move || {
            let board = Board::load(&project.board_dir())?;
            let assessment = assess(&board, Policy::from_config(&project.config));
            let claims = crate::front::status::known_claims(&project.root);
            let status = crate::front::status::status_json(&board, &assessment, &columns, &claims);
            serde_json::to_value(&status).map_err(|e| Error::Other(e.to_string()))
        })
        .await?;
        Ok(structured(document))
    }

    async fn show_story_document(&self, args: StoryArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let story = off_the_runtime(move || story_document(&project, &args.story)).await?;
        Ok(structured(story))
    }

    async fn add_story_document(&self, args: AddArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let story_type = type_named(args.story_type.as_deref())?;
        let new = NewStory {
            title: args.title,
            story_type,
            priority: args.priority,
            labels: args.labels,
            depends_on: args.depends_on,
            description: args.description,
        };
        let added = off_the_runtime(move || {
            let story = create(&project, new)?;
            Ok(json!({ "id": story.id(), "slug": story.slug, "path": story.path, "title": story.meta.title }))
        })
        .await?;
        Ok(structured(added))
    }

    async fn edit_story_document(&self, args: EditArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let story = off_the_runtime(move || {
            let id = crate::front::editing::apply(&project, &args.story, &args.set)?;
            story_document(&project, &id)
        })
        .await?;
        Ok(structured(story))
    }

    async fn decide_document(&self, args: DecideArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let decided = off_the_runtime(move || {
            person_decides::decide(
                &project.board_dir(),
                &args.story,
                &args.decision,
                crate::board::records::DecidedBy::Mcp,
            )
        })
        .await?;
        Ok(structured(json!({
            "id": decided.story_id,
            "slug": decided.slug,
            "phase": decided.phase,
            "decision": decided.decision,
            "message": decided.message,
        })))
    }

    async fn run_story_document(&self, args: RunArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let max_actions = args.max_actions.unwrap_or(1);
        if !(1..=MAX_ACTIONS).contains(&max_actions) {
            return Err(Error::Usage(format!(
                "max_actions {max_actions}: give 1 to {MAX_ACTIONS}"
            )));
        }
        // The story must exist before anything starts; the run works with its id.
        let id = {
            let (project, query) = (project.clone(), args.story.clone());
            off_the_runtime(move || {
                let board = Board::load(&project.board_dir())?;
                Ok(lookup::find_on_board(&board, &query)?.id().to_string())
            })
            .await?
        };
        let events = Arc::new(Collected::default());
        let request = RunRequest {
            options: RunOptions {
                auto: true,
                story: Some(id.clone()),
                max_actions: Some(max_actions),
                ..RunOptions::default()
            },
            resume: false,
            watch: false,
            remote: None,
        };
        // MCP speaks on stdout: the pull and load of a local model are told on the log.
        let serving = launch::Serving::new(Arc::new(|progress| {
            if let crate::model::Progress::Step(line) = progress {
                tracing::info!("{line}");
            }
        }));
        let exit = launch::run_notified(
            &project,
            Arc::clone(&events) as Arc<dyn RunRenderer>,
            request,
            launch::llm_agents(&serving),
            None,
        )
        .await;
        serving.stop();
        let exit = exit?;
        let story = off_the_runtime(move || story_document(&project, &id)).await?;
        Ok(structured(json!({
            "exitCode": exit.code(),
            "events": events.take(),
            "story": story,
        })))
    }

    async fn last_report_document(&self, args: ReportArgs) -> Result<CallToolResult> {
        let project = self.project()?;
        let report = off_the_runtime(move || {
            let board_dir = project.board_dir();
            let path = crate::report::find_journal(&board_dir, args.run.as_deref())?;
            let board = Board::load(&board_dir).ok();
            let report = crate::report::read(
                &path,
                board.as_ref().map(|b| (b, project.root.as_path())),
                lock::holder(&board_dir),
            )?;
            serde_json::to_value(crate::front::envelope("report", &report)).map_err(|err| {
                crate::Error::Other(format!("cannot write the report as JSON: {err}"))
            })
        })
        .await?;
        Ok(structured(report))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for BoardServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("agentic-sdlc", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "The agentic-sdlc board of this project: software stories that an AI-driven life cycle \
                 refines, researches, plans, implements, reviews and merges. Stories are Markdown files \
                 in column folders; anyone may edit them. Use list_stories to see the board and the next \
                 actions, show_story for one story, add_story and edit_story to shape the work, decide \
                 to answer a human review gate, run_story to move one story on with the project's model, \
                 and last_report to read what the latest run did.",
            )
    }
}

/// What a tool answers: a JSON document, or an MCP error.
type Reply = std::result::Result<CallToolResult, ErrorData>;

fn to_value(document: impl serde::Serialize) -> Result<Value> {
    serde_json::to_value(document).map_err(|err| Error::Other(format!("cannot write JSON: {err}")))
}

fn structured(document: Value) -> CallToolResult {
    CallToolResult::structured(document)
}

/// The story `query` names, as `details --json` shows it.
fn story_document(project: &Project, query: &str) -> Result<Value> {
    let story = crate::front::story::find(&project.board_dir(), query)?;
    crate::front::story::story_json(&story)
}

/// A tool's answer: its document, or a caller's mistake (a story not found, a bad value, a
/// refusal the command line would give) as an `isError` result the caller's model can read and
/// act on, with the command line's exit code and hint. Only the tool's own failures (a file it
/// cannot read) are protocol errors.
fn answer(result: Result<CallToolResult>) -> Reply {
    match result {
        Ok(result) => Ok(result),
        Err(err) if is_mistake(&err) => {
            let mut document = json!({
                "error": err.to_string(),
                "exitCode": err.exit_status().code(),
            });
            if let Some(hint) = err.hint() {
                document["hint"] = hint.into();
            }
            Ok(CallToolResult::structured_error(document))
        }
        Err(err) => Err(fail(err)),
    }
}

/// Whether the caller can set it right: what the command line refuses as asked.
fn is_mistake(err: &Error) -> bool {
    matches!(
        err.unhinted(),
        Error::Usage(_)
            | Error::Config { .. }
            | Error::StoryNotFound { .. }
            | Error::AmbiguousStory { .. }
            | Error::ActionFailed(_)
            | Error::LockHeld { .. }
            | Error::StoryParse { .. }
    )
}

/// The tool's own failure as an MCP error; the data says which exit code the command line
/// would give, and what to do about it when the error knows.
fn fail(err: Error) -> ErrorData {
    let exit_code = err.exit_status().code();
    let data = Some(match err.hint() {
        Some(hint) => json!({ "exitCode": exit_code, "hint": hint }),
        None => json!({ "exitCode": exit_code }),
    });
    match err.unhinted() {
        Error::Usage(_)
        | Error::Config { .. }
        | Error::StoryNotFound { .. }
        | Error::AmbiguousStory { .. } => ErrorData::invalid_params(err.to_string(), data),
        _ => ErrorData::internal_error(err.to_string(), data),
    }
}

impl From<Error> for ErrorData {
    fn from(err: Error) -> ErrorData {
        fail(err)
    }
}

/// The run's events, as `run --json` writes them, for the tool's answer.
#[derive(Default)]
struct Collected(Mutex<Vec<Value>>);

impl Collected {
    fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl RunRenderer for Collected {
    fn begin(&self, _concurrency: usize) {}

    fn render(&self, event: &RunEvent) {
        // Tool calls and token counts are in the transcripts; the answer keeps to what happened.
        if !event.is_progress() {
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(event.to_json());
        }
    }
}

/// Makes the process's stdout the protocol's alone: the real stdout is kept on a new
/// descriptor (closed in child processes) for the protocol, and descriptor 1 becomes stderr,
/// so a stray print or a child process that writes to its stdout cannot break a message.
pub fn protocol_stdout() -> Result<tokio::fs::File> {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    use std::os::fd::AsFd;
    let failed = |what: &str, errno: nix::errno::Errno| Error::io(what, errno.into());
    let protocol = nix::unistd::dup(std::io::stdout().as_fd())
        .map_err(|e| failed("cannot keep stdout for the protocol", e))?;
    fcntl(&protocol, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))
        .map_err(|e| failed("cannot keep stdout for the protocol", e))?;
    nix::unistd::dup2_stdout(std::io::stderr().as_fd())
        .map_err(|e| failed("cannot point stdout at stderr", e))?;
    Ok(tokio::fs::File::from_std(std::fs::File::from(protocol)))
}
