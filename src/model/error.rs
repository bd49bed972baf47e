//! What can go wrong fetching, keeping or serving a local model, in words a person can act on.

use std::path::PathBuf;

use crate::hint::Hint;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("unknown model `{name}`; the known models are {}", .known.join(", "))]
    Unknown { name: String, known: Vec<String> },

    #[error(
        "no model cache folder: neither AGENTIC_SDLC_MODEL_CACHE, XDG_CACHE_HOME nor HOME is set"
    )]
    NoCacheFolder,

    #[error("`{name}` is not in the cache ({})", .path.display())]
    NotCached { name: String, path: PathBuf },

    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("the disk is full while writing {}: {kept} bytes are kept there", .path.display())]
    DiskFull { path: PathBuf, kept: u64 },

    #[error("{url} answered HTTP {status}")]
    Http { url: String, status: u16 },

    #[error("{url} could not be reached: {detail}")]
    Unreachable { url: String, detail: String },

    #[error("the download of {name} does not match its checksum: sha256 {got}, expected {expected}; the file was removed")]
    ChecksumMismatch {
        name: String,
        expected: String,
        got: String,
    },

    #[error("the download of {name} is {got} bytes, expected {expected}; the file was removed")]
    SizeMismatch {
        name: String,
        expected: u64,
        got: u64,
    },

    #[error("{} is not a GGUF model file (it does not start with `GGUF`)", .path.display())]
    NotGguf { path: PathBuf },

    #[error("`{command}` failed: {detail}")]
    Command { command: String, detail: String },

    #[error("no model server to run: `llama-server` is not on PATH and python3 cannot make the venv in {}: {detail}", .venv.display())]
    NoServer { venv: PathBuf, detail: String },

    #[error("the model server for {name} stopped while loading; the end of its log ({}):\n{tail}", .log.display())]
    ServerStopped {
        name: String,
        log: PathBuf,
        tail: String,
    },

    #[error("the model server for {name} did not finish loading within {seconds}s (log: {})", .log.display())]
    LoadTimedOut {
        name: String,
        seconds: u64,
        log: PathBuf,
    },

    #[error("the {name} server already runs on port {port}")]
    ServedElsewhere { name: String, port: u16 },

    /// Ctrl-C or SIGTERM while a model was pulled or loaded.
    #[error("interrupted")]
    Interrupted,

    #[error("every source of {name} failed: {}", .tried.join("; "))]
    NoSource { name: String, tried: Vec<String> },
}

impl ModelError {
    pub(super) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        let path = path.into();
        if source.kind() == std::io::ErrorKind::StorageFull {
            let kept = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            return ModelError::DiskFull { path, kept };
        }
        ModelError::Io { path, source }
    }
}

impl Hint for ModelError {
    fn hint(&self) -> Option<String> {
        let hint = match self {
            ModelError::Unknown { .. } => {
                "`agentic-sdlc model list` shows them; a GGUF file of your own is pulled with \
                 `agentic-sdlc model pull NAME --from FILE.gguf`"
                    .to_string()
            }
            ModelError::NoCacheFolder => "set AGENTIC_SDLC_MODEL_CACHE to a folder".into(),
            ModelError::NotCached { name, .. } => format!("run `agentic-sdlc model pull {name}`"),
            ModelError::DiskFull { .. } => {
                "free some space and pull again: the download resumes where it stopped".into()
            }
            ModelError::Http { .. } | ModelError::Unreachable { .. } => {
                "check the network, or pull from another source with --from".into()
            }
            ModelError::ChecksumMismatch { .. } | ModelError::SizeMismatch { .. } => {
                "pull again; if it happens again, the source holds another file than the one \
                 this tool knows"
                    .into()
            }
            ModelError::NoServer { .. } => "install llama.cpp's `llama-server` (it is looked up \
                                            on PATH), or python3 with its venv module"
                .into(),
            ModelError::ServerStopped { .. } => "the log says why; a model too large for the \
                                                 memory is the usual cause"
                .into(),
            ModelError::LoadTimedOut { .. } => "raise llm.loadSeconds".into(),
            ModelError::ServedElsewhere { port, .. } => {
                format!("use http://127.0.0.1:{port}/v1, or stop the runs that use it first")
            }
            ModelError::NoSource { name, .. } => format!(
                "pull it from a file you have: `agentic-sdlc model pull {name} --from FILE.gguf`"
            ),
            _ => return None,
        };
        Some(hint)
    }
}

/// The library's error for a model failure: a usage error when the name or the cache is
/// wrong, a failure otherwise. It lives here, above `crate::error` (docs/design.md, "Layers of
/// the code").
impl From<ModelError> for crate::Error {
    fn from(error: ModelError) -> Self {
        if matches!(error, ModelError::Interrupted) {
            return crate::Error::Interrupted;
        }
        let usage = matches!(
            error,
            ModelError::Unknown { .. } | ModelError::NoCacheFolder | ModelError::NotCached { .. }
        );
        let hint = error.hint();
        let error = match usage {
            true => crate::Error::Usage(error.to_string()),
            false => crate::Error::Other(error.to_string()),
        };
        match hint {
            Some(hint) => error.with_hint(hint),
            None => error,
        }
    }
}
