//! The model cache: one folder per user, as Ollama keeps one, with each model's GGUF file, the
//! partial file of a download in progress, the Python environment that serves when llama.cpp's
//! `llama-server` is not installed, and the state of the servers it runs.

use std::path::{Path, PathBuf};

use super::catalog::{self, KnownModel};
use super::error::ModelError;

/// Where the cache is: `AGENTIC_SDLC_MODEL_CACHE`, else `$XDG_CACHE_HOME/agentic-sdlc/models`,
/// else `~/.cache/agentic-sdlc/models`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cache {
    dir: PathBuf,
}

/// A model in the cache, or one half-downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    /// Bytes expected when the download is complete, for a partial one.
    pub partial_of: Option<u64>,
    pub known: bool,
}

/// A model the cache can hold: one of the catalog, or a GGUF file of the person's own pulled
/// under a name they gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Model {
    Known(&'static KnownModel),
    Own(String),
}

impl Model {
    /// The model of this name: a known one, else one of the person's own when the name is
    /// fit for a file name.
    pub fn named(name: &str) -> Result<Model, ModelError> {
        if let Some(model) = catalog::known(name) {
            return Ok(Model::Known(model));
        }
        let fit = !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        match fit {
            true => Ok(Model::Own(name.to_string())),
            false => Err(ModelError::Unknown {
                name: name.to_string(),
                known: catalog::known_names(),
            }),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Model::Known(model) => model.name,
            Model::Own(name) => name,
        }
    }

    fn file(&self) -> String {
        match self {
            Model::Known(model) => model.file.to_string(),
            Model::Own(name) => format!("{name}.gguf"),
        }
    }
}

impl Cache {
    /// The cache of this user, from the environment.
    pub fn locate() -> Result<Cache, ModelError> {
        Self::from_env(|name| std::env::var_os(name).filter(|v| !v.is_empty()))
    }

    fn from_env(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<Cache, ModelError> {
        let dir = if let Some(dir) = env("AGENTIC_SDLC_MODEL_CACHE") {
            PathBuf::from(dir)
        } else if let Some(dir) = env("XDG_CACHE_HOME") {
            PathBuf::from(dir).join("agentic-sdlc/models")
        } else if let Some(home) = env("HOME") {
            PathBuf::from(home).join(".cache/agentic-sdlc/models")
        } else {
            return Err(ModelError::NoCacheFolder);
        };
        Ok(Cache { dir })
    }

    /// A cache in `dir`.
    #[cfg(test)]
    pub fn at(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder, made if missing.
    pub fn ensure(&self) -> Result<&Path, ModelError> {
        fs_err::create_dir_all(&self.dir).map_err(|err| ModelError::io(&self.dir, err))?;
        Ok(&self.dir)
    }

    /// Where the model's file is once pulled.
    pub fn gguf(&self, model: &Model) -> PathBuf {
        self.dir.join(model.file())
    }

    /// Where its download grows until it is complete and checked.
    pub fn partial(&self, model: &Model) -> PathBuf {
        self.dir.join(format!("{}.part", model.file()))
    }

    /// The Python environment that serves models when `llama-server` is not on PATH.
    pub fn venv(&self) -> PathBuf {
        self.dir.join("venv")
    }

    /// Where the state of the servers the tool runs is kept.
    pub fn servers(&self) -> PathBuf {
        self.dir.join("servers")
    }

    /// The model's file, when it is pulled and whole.
    pub fn pulled(&self, model: &Model) -> Option<PathBuf> {
        let path = self.gguf(model);
        let size = std::fs::metadata(&path).ok()?.len();
        match model {
            Model::Known(known) if size != known.size => None,
            _ => Some(path),
        }
    }

    /// What the cache holds, by name: whole models, then partial downloads.
    pub fn list(&self) -> Result<Vec<Listed>, ModelError> {
        let entries = match fs_err::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(ModelError::io(&self.dir, err)),
        };
        let mut listed = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let Ok(meta) = entry.metadata() else { continue };
            if !meta.is_file() {
                continue;
            }
            let (whole, partial) = match file.strip_suffix(".part") {
                Some(whole) => (whole.to_string(), true),
                None => (file.clone(), false),
            };
            let Some(stem) = whole.strip_suffix(".gguf") else {
                continue;
            };
            let known = catalog::KNOWN.iter().find(|model| model.file == whole);
            listed.push(Listed {
                name: known.map_or(stem.to_string(), |model| model.name.to_string()),
                path: entry.path(),
                size: meta.len(),
                partial_of: partial.then(|| known.map_or(0, |model| model.size)),
                known: known.is_some(),
            });
        }
        listed.sort_by(|a, b| {
            (a.partial_of.is_some(), &a.name).cmp(&(b.partial_of.is_some(), &b.name))
        });
        Ok(listed)
    }

    /// Removes the model's file and any partial download of it; the bytes freed, or `None`
    /// when there was nothing to remove.
    pub fn remove(&self, model: &Model) -> Result<Option<u64>, ModelError> {
        let mut freed = None;
        for path in [self.gguf(model), self.partial(model)] {
            match std::fs::metadata(&path) {
                Ok(meta) => {
                    fs_err::remove_file(&path).map_err(|err| ModelError::io(&path, err))?;
                    freed = Some(freed.unwrap_or(0) + meta.len());
                }
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(ModelError::io(&path, err)),
            }
        }
        Ok(freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_folder_follows_the_environment_in_order() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| std::ffi::OsString::from(value))
            }
        };
        let own = Cache::from_env(env(&[("AGENTIC_SDLC_MODEL_CACHE", "/c"), ("HOME", "/h")]));
        assert_eq!(own.unwrap().dir(), Path::new("/c"));
        let xdg = Cache::from_env(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")]));
        assert_eq!(xdg.unwrap().dir(), Path::new("/x/agentic-sdlc/models"));
        let home = Cache::from_env(env(&[("HOME", "/h")]));
        assert_eq!(
            home.unwrap().dir(),
            Path::new("/h/.cache/agentic-sdlc/models")
        );
        assert!(matches!(
            Cache::from_env(env(&[])),
            Err(ModelError::NoCacheFolder)
        ));
    }

    #[test]
    fn list_names_known_files_own_files_and_partial_downloads_and_rm_frees_them() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let smol = Model::named("smollm2-135m").unwrap();
        let mine = Model::named("my-model").unwrap();
        std::fs::write(cache.gguf(&mine), b"GGUF1234").unwrap();
        std::fs::write(cache.partial(&smol), b"GGUF").unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        let listed = cache.list().unwrap();
        assert_eq!(listed.len(), 2, "{listed:?}");
        assert_eq!(
            (listed[0].name.as_str(), listed[0].size, listed[0].known),
            ("my-model", 8, false)
        );
        assert_eq!(listed[1].name, "smollm2-135m");
        assert_eq!(listed[1].partial_of, Some(98_362_432));
        assert_eq!(cache.pulled(&mine), Some(cache.gguf(&mine)));
        // A known model's file is whole only at its known size.
        std::fs::write(cache.gguf(&smol), b"GGUF").unwrap();
        assert_eq!(cache.pulled(&smol), None);
        assert_eq!(cache.remove(&smol).unwrap(), Some(8));
        assert_eq!(cache.remove(&smol).unwrap(), None);
        assert!(!cache.partial(&smol).exists());
    }

    #[test]
    fn a_name_that_is_no_file_name_is_refused_with_the_known_ones() {
        for bad in ["", "../x", ".hidden", "a/b", "a b"] {
            match Model::named(bad) {
                Err(ModelError::Unknown { known, .. }) => assert!(known.len() >= 3),
                other => panic!("{bad:?}: {other:?}"),
            }
        }
    }
}
