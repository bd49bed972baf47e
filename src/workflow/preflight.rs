//! Checks before spending: before a run's first action, what its actions will need is checked
//! once, so a night does not spend refine, research and plan calls on every story only to fail
//! at implement for a reason that held from the start.
//!
//! Each check is one variant of [`Check`] with one function. A check applies only when the
//! run's actions need it ([`Needs`]): a run that only refines never switches branches, and a
//! `move_to_done` alone calls no model. A failure is one line, and never a story's
//! `last_error`: nothing has been written yet when it is found.
//!
//! To add a check: a variant, its place in [`Check::ALL`], an arm in [`Check::applies`] and
//! one in [`Check::run`] calling its function.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::OnceCell;

use super::assessor::ActionType;
use super::events::{EventSink, RunEvent};
use crate::agents::llm::{list_models, LlmSettings, ModelList, ProbeError};
use crate::config::{Config, Project, CONFIG_FILE};
use crate::exec::{BoxedCommand, ExecError, Sandbox};
use crate::protocol::NoStory;
use crate::vcs as git;

/// What a run's actions will need from the machine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Needs {
    /// An action calls the model: refine, research, plan, implement, review.
    pub model: bool,
    /// An action works on a story's branch in the working tree: implement, review, and
    /// delivery (pull request or merge).
    pub tree: bool,
    /// An action runs `review.testCommand`: a review, or a merge tested on the base.
    pub tests: bool,
}

impl Needs {
    /// What actions of these types need.
    pub fn of(types: impl IntoIterator<Item = ActionType>) -> Needs {
        let mut needs = Needs::default();
        for action in types {
            if let Some(phase) = action.phase() {
                // A phase that writes works on the story's branch; one that runs tests, there.
                needs.model = true;
                needs.tree |= !phase.reads_only();
                needs.tests |= phase.runs_tests();
                continue;
            }
            match action {
                ActionType::Review => {
                    needs.model = true;
                    needs.tree = true;
                    needs.tests = true;
                }
                ActionType::CreatePr => needs.tree = true,
                ActionType::MoveToDone => {
                    needs.tree = true;
                    needs.tests = true;
                }
                _ => {}
            }
        }
        needs
    }

    /// Whether an action may start a boxed process: implement (run_command), a review or a
    /// merge with a test command, a command gate.
    fn commands(self, config: &Config) -> bool {
        let gate_commands = crate::board::Phase::ALL.iter().any(|phase| {
            config
                .phases
                .gate(*phase)
                .is_some_and(|gate| gate.reviewer == crate::config::Reviewer::Command)
        });
        (self.model && self.tree)
            || (self.tests && config.review.test_command.is_some())
            || (self.model && gate_commands)
    }

    /// What a run may need: one action's type without `--auto`, else every type the filter
    /// lets through, since a story's life cycle takes it through all of them.
    pub fn of_run(auto: bool, step: Option<ActionType>, first: ActionType) -> Needs {
        match (auto, step) {
            (false, _) => Needs::of([first]),
            (true, Some(step)) => Needs::of([step]),
            (true, None) => Needs::of(ActionType::ALL.iter().copied()),
        }
    }
}

/// One check, in the order [`Check::ALL`] runs them: the local ones first, then the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A git repository with at least one commit, unless stories get no branches.
    Repository,
    /// No uncommitted change to a tracked file outside the board and the config, unless each
    /// story gets a worktree of its own.
    CleanTree,
    /// The box `tools.sandbox` asks for can be built here: a boxed `true` runs.
    Sandbox,
    /// `review.testCommand`, when set, parses and its program exists.
    TestCommand,
    /// The LLM server answers `GET /models`.
    ServerAnswers,
    /// The server accepts the key.
    KeyAccepted,
    /// A server that lists its models lists the configured one.
    ModelKnown,
}

impl Check {
    pub const ALL: [Check; 7] = [
        Check::Repository,
        Check::CleanTree,
        Check::Sandbox,
        Check::TestCommand,
        Check::ServerAnswers,
        Check::KeyAccepted,
        Check::ModelKnown,
    ];

    /// The check's name, for logs and tests.
    pub fn name(self) -> &'static str {
        match self {
            Check::Repository => "repository",
            Check::CleanTree => "clean-tree",
            Check::Sandbox => "sandbox",
            Check::TestCommand => "test-command",
            Check::ServerAnswers => "server",
            Check::KeyAccepted => "key",
            Check::ModelKnown => "model",
        }
    }

    fn applies(self, needs: Needs, config: &Config, endpoint: bool) -> bool {
        let branches = config.git.branch_per_story || config.git.worktrees;
        match self {
            Check::Repository => needs.tree && branches,
            Check::CleanTree => needs.tree && branches && !config.git.worktrees,
            Check::Sandbox => needs.commands(config),
            Check::TestCommand => needs.tests && config.review.test_command.is_some(),
            Check::ServerAnswers | Check::KeyAccepted | Check::ModelKnown => {
                needs.model && endpoint
            }
        }
    }

    async fn run(self, context: &Checker<'_>) -> Result<(), String> {
        match self {
            Check::Repository => repository(context.project),
            Check::CleanTree => clean_tree(context.project),
            Check::Sandbox => sandbox(context).await,
            Check::TestCommand => test_command(context).await,
            Check::ServerAnswers => server_answers(context).await,
            Check::KeyAccepted => key_accepted(context).await,
            Check::ModelKnown => model_known(context).await,
        }
    }
}

/// A check that failed, with the one line that says why and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub check: Check,
    pub message: String,
}

/// Runs every check the run's needs call for, stopping at the first failure. `endpoint` is
/// the model server the run's agents talk to (`None` for agents that need none).
pub async fn check(
    project: &Project,
    needs: Needs,
    endpoint: Option<&LlmSettings>,
    sandbox: &Sandbox,
    events: &EventSink,
) -> Result<(), Failure> {
    let context = Checker {
        project,
        endpoint,
        sandbox,
        events,
        probe: OnceCell::new(),
    };
    for check in Check::ALL {
        if !check.applies(needs, &project.config, endpoint.is_some()) {
            continue;
        }
        tracing::debug!("preflight: {}", check.name());
        check.run(&context).await.map_err(|message| Failure {
            check,
            // One line: a person reads it first thing in the morning, a script greps it.
            message: message.split_whitespace().collect::<Vec<_>>().join(" "),
        })?;
    }
    Ok(())
}

/// How often the wait for a loading server asks again, and says it still waits.
const LOAD_POLL: Duration = Duration::from_secs(1);
const LOAD_NEWS: Duration = Duration::from_secs(15);

impl Checker<'_> {
    /// The server's answer once it has loaded its model: a 503 (llama.cpp's "Loading model")
    /// is asked again every second for up to `llm.loadSeconds`, and the wait is shown.
    async fn loaded(&self, settings: &LlmSettings) -> Result<ModelList, ProbeError> {
        let limit = Duration::from_secs(self.project.config.llm.load_seconds);
        let started = std::time::Instant::now();
        let mut shown: Option<Duration> = None;
        loop {
            let answer = list_models(settings).await;
            let loading = matches!(&answer, Err(ProbeError::Failed { status: 503, .. }));
            let waited = started.elapsed();
            if !loading || waited + LOAD_POLL > limit {
                return answer;
            }
            if shown.is_none_or(|at| waited >= at + LOAD_NEWS) {
                shown = Some(waited);
                self.events.emit(RunEvent::Notice {
                    story_id: NoStory,
                    message: format!(
                        "the LLM server at {} is loading its model; waiting ({}s so far, up to {}s: llm.loadSeconds)",
                        settings.base_url,
                        waited.as_secs(),
                        limit.as_secs()
                    ),
                });
            }
            tokio::time::sleep(LOAD_POLL).await;
        }
    }
}

/// The agent factory's refusal to build a client without a key, as the key check's one line.
pub fn missing_key(variable: &str, endpoint: &str) -> crate::Error {
    crate::Error::Preflight {
        check: Check::KeyAccepted.name(),
        message: format!(
            "the LLM endpoint {endpoint} needs an API key: the environment variable {variable} \
             is not set. Export {variable}=<your key>, name another variable in llm.apiKeyEnv, \
             or point llm.baseUrl at a local server"
        ),
    }
}

/// What the checks share: the project, the model server, and its answer once asked.
struct Checker<'a> {
    project: &'a Project,
    endpoint: Option<&'a LlmSettings>,
    /// The run's box: the test command's probe runs in it, as the review would run it.
    sandbox: &'a Sandbox,
    /// Where the wait for a loading server is shown.
    events: &'a EventSink,
    probe: OnceCell<Option<Result<ModelList, ProbeError>>>,
}

impl Checker<'_> {
    /// The server's settings and its answer, asked once for all three server checks.
    async fn probe(&self) -> Option<(&LlmSettings, &Result<ModelList, ProbeError>)> {
        let answer = self
            .probe
            .get_or_init(|| async {
                match self.endpoint {
                    Some(settings) => Some(self.loaded(settings).await),
                    None => None,
                }
            })
            .await;
        self.endpoint.zip(answer.as_ref())
    }
}

fn repository(project: &Project) -> Result<(), String> {
    let root = &project.root;
    if !git::is_repo(root) {
        return Err(format!(
            "{} is not a git repository, and git.branchPerStory is on: each story's work goes \
             on a branch of its own. Run `git init` and make a first commit, or set \
             git.branchPerStory to false (`agentic-sdlc config git.branchPerStory false`) to \
             work in the tree as it is",
            root.display()
        ));
    }
    match git::head_commit(root) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(format!(
            "the git repository at {} has no commit yet, so a story's branch has nothing to \
             start from. Make a first commit (`git commit --allow-empty -m \"Initial commit\"`), \
             or set git.branchPerStory to false",
            root.display()
        )),
        Err(err) => Err(format!(
            "cannot read the repository at {}: {err}",
            root.display()
        )),
    }
}

fn clean_tree(project: &Project) -> Result<(), String> {
    // A merge or rebase a person started is theirs to finish; its conflicts are no "changes".
    if let Ok(Some(operation)) = git::operation_in_progress(&project.root) {
        return Err(format!(
            "a {operation} is in progress in {} (started outside agentic-sdlc), so the tool \
             leaves that tree alone. Finish it (`git {operation} --continue`) or abort it \
             (`git {operation} --abort`), then run again",
            project.root.display()
        ));
    }
    let own = own_paths(project);
    let ignore: Vec<&Path> = own.iter().map(PathBuf::as_path).collect();
    let dirty = git::dirty_tracked_paths(&project.root, &ignore)
        .map_err(|err| format!("cannot read the state of the working tree: {err}"))?;
    if dirty.is_empty() {
        return Ok(());
    }
    let listed = first_few(&dirty, 5);
    Err(format!(
        "the working tree has uncommitted changes to {} tracked file(s) ({listed}), and \
         implement must switch to a story's branch. Commit or stash them, or set git.worktrees \
         to true so that stories work in worktrees of their own",
        dirty.len()
    ))
}

/// The first `shown` names, comma-separated, and how many more there are: a failure stays one
/// line however many there are.
fn first_few(names: &[String], shown: usize) -> String {
    let mut text = names
        .iter()
        .take(shown)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > shown {
        text.push_str(&format!(" and {} more", names.len() - shown));
    }
    text
}

/// The files the tool writes itself, which never count as a person's changes.
fn own_paths(project: &Project) -> Vec<PathBuf> {
    vec![
        project.root.join(CONFIG_FILE),
        project.board_dir(),
        project.root.join(crate::config::WORKTREES_DIR),
    ]
}

/// How long the test command's probe may take: it only parses and looks up a name.
const TEST_PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// Builds the box for real: a boxed `true` in the project root. What the kernel refuses is
/// named with the setting that accepts less (docs/security.md, "Where the kernel can't").
async fn sandbox(context: &Checker<'_>) -> Result<(), String> {
    match context.sandbox.check(&context.project.root).await {
        Ok(()) => Ok(()),
        Err(ExecError::Unavailable(why)) => Err(why),
        Err(err) => Err(format!(
            "the box for agent commands cannot be built: {err}; set tools.sandbox to \"off\" \
             to run them without one"
        )),
    }
}

/// Parses the command with `sh -n` and looks its program up as the shell would, in the
/// project root and through the same box the review uses. Nothing of the command itself runs.
async fn test_command(context: &Checker<'_>) -> Result<(), String> {
    let project = context.project;
    let Some(command) = project.config.review.test_command.as_deref() else {
        return Ok(());
    };
    if command.trim().is_empty() {
        return Err("review.testCommand is empty; set a command, or null for none".into());
    }
    let program = first_program(command).unwrap_or_default();
    let probe = "sh -n -c \"$AGENTIC_SDLC_CHECK_COMMAND\" 2>&1 || exit 2\n\
                 [ -z \"$AGENTIC_SDLC_CHECK_PROGRAM\" ] || command -v \"$AGENTIC_SDLC_CHECK_PROGRAM\" >/dev/null 2>&1 || exit 127";
    let env = [
        (
            "AGENTIC_SDLC_CHECK_COMMAND".to_string(),
            command.to_string(),
        ),
        (
            "AGENTIC_SDLC_CHECK_PROGRAM".to_string(),
            program.to_string(),
        ),
    ];
    let outcome = context
        .sandbox
        .run(BoxedCommand {
            command: probe,
            tree: &project.root,
            limit: TEST_PROBE_TIMEOUT,
            env: &env,
        })
        .await
        .map_err(|err| format!("review.testCommand `{command}` cannot start: {err}"))?;
    match outcome.exit_code {
        Some(0) => Ok(()),
        Some(2) => Err(format!(
            "review.testCommand `{command}` is not a valid shell command: {}",
            outcome.output.trim()
        )),
        Some(127) => Err(format!(
            "review.testCommand `{command}` cannot start: `{program}` is neither on PATH nor a \
             file in {}. Install it, or fix review.testCommand",
            project.root.display()
        )),
        _ if outcome.timed_out => Err(format!(
            "review.testCommand `{command}` could not be checked: the check took longer than \
             {}s",
            TEST_PROBE_TIMEOUT.as_secs()
        )),
        _ => Err(format!(
            "review.testCommand `{command}` could not be checked ({}): {}",
            outcome.describe_status(),
            outcome.output.trim()
        )),
    }
}

/// The program a shell command starts: its first word after `NAME=value` assignments, when
/// that word is a plain name or path. `None` for a command that starts with shell syntax (a
/// keyword, a subshell, a quote, a redirection, an expansion): only running it could tell.
fn first_program(command: &str) -> Option<&str> {
    const KEYWORDS: [&str; 12] = [
        "if", "then", "for", "while", "until", "case", "do", "!", "{", "[[", "time", "function",
    ];
    let word = command
        .split_whitespace()
        .find(|word| !is_assignment(word))?;
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-/+@%:,".contains(c));
    (plain && !word.starts_with('-') && !KEYWORDS.contains(&word)).then_some(word)
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

async fn server_answers(context: &Checker<'_>) -> Result<(), String> {
    let Some((settings, result)) = context.probe().await else {
        return Ok(());
    };
    match result {
        Err(ProbeError::Unreachable(why)) => Err(format!(
            "the LLM server at {} does not answer: {why}. Start it, or point OPENAI_BASE_URL or \
             llm.baseUrl at one",
            settings.base_url
        )),
        Err(ProbeError::Failed {
            status: 503,
            detail,
        }) => Err(format!(
            "the LLM server at {} still answered GET /models with HTTP 503 ({detail}) after \
             {}s. Wait until it has loaded its model, or raise llm.loadSeconds, then run again",
            settings.base_url, context.project.config.llm.load_seconds
        )),
        Err(ProbeError::Failed { status, detail }) => Err(format!(
            "the LLM server at {} answered GET /models with HTTP {status} ({detail}). Wait until \
             it is ready, then run again",
            settings.base_url
        )),
        _ => Ok(()),
    }
}

async fn key_accepted(context: &Checker<'_>) -> Result<(), String> {
    let variable = &context.project.config.llm.api_key_env;
    let Some((settings, Err(ProbeError::KeyRefused { status, detail }))) = context.probe().await
    else {
        return Ok(());
    };
    Err(match settings.api_key {
        Some(_) => format!(
            "the LLM server at {} refused the key in {variable} (HTTP {status}: {detail}). Check \
             the key, or name another variable in llm.apiKeyEnv",
            settings.base_url
        ),
        None => format!(
            "the LLM server at {} wants a key (HTTP {status}: {detail}), and {variable} is not \
             set. Export {variable}, or name another variable in llm.apiKeyEnv",
            settings.base_url
        ),
    })
}

async fn model_known(context: &Checker<'_>) -> Result<(), String> {
    let Some((settings, Ok(ModelList::Listed(ids)))) = context.probe().await else {
        return Ok(());
    };
    if ids.contains(&settings.model) {
        return Ok(());
    }
    let served = first_few(ids, 8);
    Err(format!(
        "the LLM server at {} does not serve the model `{}` (it lists: {served}). Set llm.model \
         or AGENTIC_SDLC_MODEL to one it serves",
        settings.base_url, settings.model
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_follow_the_actions() {
        assert_eq!(
            Needs::of([ActionType::Refine]),
            Needs {
                model: true,
                tree: false,
                tests: false
            }
        );
        assert_eq!(
            Needs::of([ActionType::MoveToDone]),
            Needs {
                model: false,
                tree: true,
                tests: true
            }
        );
        assert_eq!(Needs::of([ActionType::Rework]), Needs::default());
        let everything = Needs::of_run(true, None, ActionType::Refine);
        assert!(everything.model && everything.tree && everything.tests);
        assert_eq!(
            Needs::of_run(false, None, ActionType::Plan),
            Needs::of([ActionType::Plan])
        );
        assert_eq!(
            Needs::of_run(true, Some(ActionType::Research), ActionType::Refine),
            Needs::of([ActionType::Research])
        );
    }

    #[test]
    fn the_program_of_a_test_command() {
        let cases = [
            ("cargo test --locked", Some("cargo")),
            ("RUST_LOG=debug FOO=1 cargo test", Some("cargo")),
            ("./scripts/test.sh", Some("./scripts/test.sh")),
            ("  make   test ", Some("make")),
            ("if true; then make; fi", None),
            ("(cd sub && make)", None),
            ("\"my tool\" run", None),
            ("$TEST_CMD", None),
            ("FOO=1", None),
            ("", None),
        ];
        for (command, expected) in cases {
            assert_eq!(first_program(command), expected, "{command}");
        }
    }
}
