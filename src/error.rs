//! The library's error type and its mapping onto the exit codes of SPEC §5.

use std::path::PathBuf;

/// Exit codes fixed by the product contract.
pub mod exit {
    pub const SUCCESS: i32 = 0;
    pub const FAILURE: i32 = 1;
    pub const USAGE: i32 = 2;
    pub const NEEDS_PERSON: i32 = 3;
    pub const INTERRUPTED: i32 = 130;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A bad value in `.agentic-sdlc.json` or on the command line for a config key.
    #[error("config error in {path}: {message}")]
    Config { path: PathBuf, message: String },

    /// The API key's environment variable is empty or unset, and the endpoint is not local.
    #[error("the environment variable {variable} is not set; the LLM endpoint {endpoint} needs an API key\nHint: export {variable}=<your key>, name another variable in llm.apiKeyEnv, or point llm.baseUrl at a local server")]
    MissingKey { variable: String, endpoint: String },

    /// The command line asked for something that cannot be done as asked.
    #[error("{0}")]
    Usage(String),

    /// No `.agentic-sdlc.json` between the working directory and the file system root.
    #[error("no .agentic-sdlc.json found in {0} or any parent folder\nHint: run `agentic-sdlc init` to create a board here")]
    NoRoot(PathBuf),

    /// A story file that cannot be read as a story.
    #[error(
        "{path}:{line}: {message}\nHint: fix the file by hand, then run `agentic-sdlc validate`"
    )]
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

    #[error("the board is locked by another run (pid {pid}); {path} is held\nHint: wait for it to finish, or stop that process")]
    LockHeld { pid: String, path: PathBuf },

    /// An agent or action failed; the story was left as it was.
    #[error("{0}")]
    ActionFailed(String),

    /// A model call failed in a way that retrying will not fix.
    #[error("LLM error: {0}")]
    Llm(String),

    /// The run stopped so that a person can decide (escalation `manual`, REJECT).
    #[error("{0}")]
    NeedsPerson(String),

    #[error("interrupted")]
    Interrupted,

    /// `report` could not find or read a run journal.
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),

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
    #[error("{path} kept changing while it was being written ({attempts} attempts); the tool's change was not written\nHint: run the action again")]
    StoryKeptChanging { path: PathBuf, attempts: usize },

    #[error("{0}")]
    Other(String),
}

fn suggestions(close: &[String]) -> String {
    if close.is_empty() {
        "\nHint: run `agentic-sdlc status` to list the stories".to_string()
    } else {
        format!("\nDid you mean: {}?", close.join(", "))
    }
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config { .. }
            | Error::MissingKey { .. }
            | Error::Usage(_)
            | Error::NoRoot(_) => exit::USAGE,
            Error::NeedsPerson(_) => exit::NEEDS_PERSON,
            Error::Interrupted => exit::INTERRUPTED,
            _ => exit::FAILURE,
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
