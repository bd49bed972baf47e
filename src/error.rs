//! The library's error type and its mapping onto the exit codes of docs/design.md §5.

use std::path::PathBuf;

pub use crate::hint::Hint;
use crate::hint::HintedError;

/// How a command ended, as the exit codes of docs/design.md §5 spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "an exit status is the command's answer to the caller; return it"]
pub enum ExitStatus {
    /// 0: the command did what was asked.
    Success,
    /// 1: something failed (an action, a check, a file).
    Failure,
    /// 2: bad usage or configuration; nothing was done.
    Usage,
    /// 3: a story needs a person (a REJECT, a budget, escalation `manual`).
    NeedsPerson,
    /// 130: Ctrl-C or SIGTERM, as a shell reports SIGINT.
    Interrupted,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Usage => 2,
            ExitStatus::NeedsPerson => 3,
            ExitStatus::Interrupted => 130,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad value in `.agentic-sdlc.json` or on the command line for a config key.
    #[error("config error in {path}: {message}")]
    Config { path: PathBuf, message: String },

    /// An environment variable that overrides a config key holds no valid value for it.
    #[error("environment variable {variable}: {message}")]
    Env { variable: String, message: String },

    /// A check before a run's first action failed (`workflow::preflight`): nothing was spent
    /// and nothing written. `check` names it; the message is one line.
    #[error("{message}")]
    Preflight {
        check: &'static str,
        message: String,
    },

    /// The API key's environment variable is empty or unset, and the endpoint is not local.
    #[error("the environment variable {variable} is not set; the LLM endpoint {endpoint} needs an API key")]
    MissingKey { variable: String, endpoint: String },

    /// The command line asked for something that cannot be done as asked.
    #[error("{0}")]
    Usage(String),

    /// No `.agentic-sdlc.json` between the working directory and the file system root.
    #[error("no .agentic-sdlc.json found in {0} or any parent folder")]
    NoRoot(PathBuf),

    /// A story file that cannot be read as a story.
    #[error("{path}:{line}: {message}")]
    StoryParse {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("story not found: {query}{}", suggestions(.close_matches))]
    StoryNotFound {
        query: String,
        close_matches: Vec<String>,
    },

    #[error("'{query}' matches more than one story: {}", .candidates.join(", "))]
    AmbiguousStory {
        query: String,
        candidates: Vec<String>,
    },

    #[error("the board is locked by another run (pid {pid}); {path} is held")]
    LockHeld { pid: String, path: PathBuf },

    /// An agent or action failed; the story was left as it was.
    #[error("{0}")]
    ActionFailed(String),

    /// The LLM client could not be built (a bad endpoint or key for an HTTP header, say).
    /// The source is the agents' own error; its `From` lives there, above this module.
    #[error("LLM error: {0}")]
    Llm(Box<dyn HintedError>),

    #[error("interrupted")]
    Interrupted,

    /// `report` could not find or read a run journal.
    #[error(transparent)]
    Report(#[from] ReportError),

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    /// A git or forge command failed; the action ends and the story is left as it was.
    #[error(transparent)]
    Git(#[from] crate::vcs::GitError),
    /// A story was edited by hand so often while the tool wrote it that the tool gave up; the
    /// hand edits stand and the tool's change was not written.
    #[error("{path} kept changing while it was being written ({attempts} attempts); the tool's change was not written")]
    StoryKeptChanging { path: PathBuf, attempts: usize },

    /// A task of the run's own (an action, blocking work) panicked or was cancelled.
    #[error("{what} failed: {source}")]
    Task {
        what: &'static str,
        #[source]
        source: tokio::task::JoinError,
    },

    #[error("{0}")]
    Other(String),

    /// Any error with a hint of the place where it happened ([`Error::with_hint`]).
    #[error("{error}")]
    Hinted { error: Box<Error>, hint: String },
}

fn suggestions(close: &[String]) -> String {
    if close.is_empty() {
        String::new()
    } else {
        format!("\nDid you mean: {}?", close.join(", "))
    }
}

impl Error {
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            Error::Config { .. }
            | Error::Env { .. }
            | Error::Preflight { .. }
            | Error::MissingKey { .. }
            | Error::Usage(_)
            | Error::NoRoot(_) => ExitStatus::Usage,
            Error::Interrupted => ExitStatus::Interrupted,
            Error::Hinted { error, .. } => error.exit_status(),
            _ => ExitStatus::Failure,
        }
    }

    /// The error itself, without a hint a caller added: what to match on to tell kinds apart.
    pub fn unhinted(&self) -> &Error {
        match self {
            Error::Hinted { error, .. } => error.unhinted(),
            error => error,
        }
    }

    /// The error with what a person can do about it; a hint it had before gives way.
    pub fn with_hint(self, hint: impl Into<String>) -> Self {
        let error = match self {
            Error::Hinted { error, .. } => error,
            error => Box::new(error),
        };
        Error::Hinted {
            error,
            hint: hint.into(),
        }
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    pub fn config(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Error::Config {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl Hint for Error {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            Error::Env { variable, .. } => format!("fix or unset {variable}"),
            Error::MissingKey { variable, .. } => format!(
                "export {variable}=<your key>, name another variable in llm.apiKeyEnv, or point \
                 llm.baseUrl at a local server"
            ),
            Error::NoRoot(_) => "run `agentic-sdlc init` to create a board here".into(),
            Error::StoryParse { .. } => {
                "fix the file by hand, then run `agentic-sdlc validate`".into()
            }
            Error::StoryNotFound { close_matches, .. } if close_matches.is_empty() => {
                "run `agentic-sdlc status` to list the stories".into()
            }
            Error::LockHeld { .. } => "wait for it to finish, or stop that process".into(),
            Error::StoryKeptChanging { .. } => "run the action again".into(),
            Error::Git(error) => return error.hint(),
            Error::Report(error) => return error.hint(),
            Error::Llm(error) => return error.hint(),
            Error::Hinted { hint, .. } => hint.clone(),
            _ => return None,
        };
        Some(hint)
    }
}

impl From<std::io::Error> for Error {
    fn from(source: std::io::Error) -> Self {
        // fs-err already puts the path into the message, so no extra context is needed.
        Error::Io {
            context: "I/O error".into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why `report` could not make a report (here, not in `report/`, so that this module imports
/// nothing from above it).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("no run journal yet in {}: run `agentic-sdlc run` first", .0.display())]
    NoJournal(PathBuf),
    #[error("no run `{id}` in {}", .dir.display())]
    UnknownRun {
        id: String,
        dir: PathBuf,
        known: Vec<String>,
    },
    #[error("cannot read {}: {source}", .path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Hint for ReportError {
    fn hint(&self) -> Option<String> {
        match self {
            ReportError::UnknownRun { known, .. } => known.last().map(|last| {
                format!("the latest run is {last}; `agentic-sdlc report --last` shows it")
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hint::told;

    #[test]
    fn exit_statuses_are_the_codes_of_spec_5() {
        for (status, code) in [
            (ExitStatus::Success, 0),
            (ExitStatus::Failure, 1),
            (ExitStatus::Usage, 2),
            (ExitStatus::NeedsPerson, 3),
            (ExitStatus::Interrupted, 130),
        ] {
            assert_eq!(status.code(), code, "{status:?}");
        }
    }

    #[test]
    fn errors_map_to_their_exit_status() {
        for (err, status) in [
            (Error::config("c.json", "bad"), ExitStatus::Usage),
            (Error::Usage("no".into()), ExitStatus::Usage),
            (Error::NoRoot(PathBuf::from("/x")), ExitStatus::Usage),
            (
                Error::MissingKey {
                    variable: "K".into(),
                    endpoint: "https://e".into(),
                },
                ExitStatus::Usage,
            ),
            (Error::Interrupted, ExitStatus::Interrupted),
            (Error::ActionFailed("x".into()), ExitStatus::Failure),
            (
                Error::Usage("no".into()).with_hint("ask again"),
                ExitStatus::Usage,
            ),
        ] {
            assert_eq!(err.exit_status(), status, "{err}");
        }
    }

    #[test]
    fn a_hint_is_apart_from_the_message_and_told_after_it() {
        let errors = [
            Error::NoRoot(PathBuf::from("/x")),
            Error::MissingKey {
                variable: "K".into(),
                endpoint: "https://e".into(),
            },
            Error::StoryParse {
                path: "s.md".into(),
                line: 3,
                message: "bad".into(),
            },
            Error::LockHeld {
                pid: "7".into(),
                path: "lock".into(),
            },
            Error::ActionFailed("the base kept moving".into()).with_hint("run again later"),
        ];
        for err in errors {
            let message = err.to_string();
            let hint = err.hint().unwrap_or_else(|| panic!("{err:?} has no hint"));
            assert!(!message.contains("Hint"), "{message}");
            assert!(!hint.contains('\n'), "{hint}");
            assert_eq!(told(&err), format!("{message}\nHint: {hint}"));
        }
        assert_eq!(
            Error::NoRoot(PathBuf::from("/x")).hint().as_deref(),
            Some("run `agentic-sdlc init` to create a board here")
        );
    }

    #[test]
    fn a_hint_added_later_replaces_the_first_and_the_kind_stays_visible() {
        let err = Error::ActionFailed("no".into())
            .with_hint("first")
            .with_hint("second");
        assert_eq!(err.hint().as_deref(), Some("second"));
        assert!(matches!(err.unhinted(), Error::ActionFailed(_)));
        assert_eq!(err.to_string(), "no");
    }

    #[test]
    fn an_error_without_a_next_step_has_no_hint() {
        let err = Error::Other("x".into());
        assert_eq!(err.hint(), None);
        assert_eq!(told(&err), "x");
        let suggested = Error::StoryNotFound {
            query: "lgin".into(),
            close_matches: vec!["login".into()],
        };
        assert_eq!(suggested.hint(), None, "the suggestion is in the message");
    }
}
