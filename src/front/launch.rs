//! Starting a run the way every front end does (`run` on the command line, `run_story` over
//! MCP): agents that talk to the configured model, and the run's news handed to the configured
//! notifiers as well as to the caller's renderer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::agents::llm::LlmClient;
use crate::agents::llm_agents::LlmAgents;
use crate::agents::Agents;
use crate::board::RUNS_DIR;
use crate::config::{Config, Project, Provider};
use crate::error::{Error, ExitStatus, Result};
use crate::model::{self, Cache, Managed, Model, Place, Progress, Source};
use crate::notifications::Notifier;
use crate::workflow::events::{EventSink, Fanout, RunRenderer};
use crate::workflow::prompter::Prompter;
use crate::workflow::runner::{self, interrupted, AgentFactory, RunRequest};

/// Agents that call the model of the project's config. They are built only once the run knows
/// it has work, so that an empty board needs no key, and, with `llm.provider: "local"`, pulls
/// and loads no model.
pub fn llm_agents(serving: &Serving) -> AgentFactory {
    let serving = serving.clone();
    Box::new(move |project, meter, sandbox| {
        // Before the key is read: its copies in memory stay out of other processes' reach.
        crate::exec::protect_tool_process();
        // A server named in llm.baseUrl (or OPENAI_BASE_URL) is used as named: `local` serves
        // a model only when no server is named.
        let config = match (project.config.llm.provider, &project.config.llm.base_url) {
            (Provider::Local, None) => tokio::task::block_in_place(|| serving.serve(project))?,
            _ => project.config.clone(),
        };
        let client = LlmClient::from_config(&config)?;
        let agents = LlmAgents::new(client, &config, project.board_dir())
            .with_meter(meter)
            .with_sandbox(sandbox);
        Ok(Arc::new(agents) as Arc<dyn Agents>)
    })
}

/// The local model a run serves with `llm.provider: "local"`: pulled on first use, served on a
/// loopback port while the run works, stopped when [`Serving::stop`] is called at its end (the
/// last run using it stops the server, docs/design.md "A model out of the box").
#[derive(Clone)]
pub struct Serving {
    report: Arc<dyn Fn(Progress) + Send + Sync>,
    held: Arc<Mutex<Option<Managed>>>,
}

impl Serving {
    /// `report` shows the pull and the load as they go.
    pub fn new(report: Arc<dyn Fn(Progress) + Send + Sync>) -> Serving {
        Serving {
            report,
            held: Arc::new(Mutex::new(None)),
        }
    }

    /// The config with the served model in place of `llm.baseUrl` and `llm.model`.
    fn serve(&self, project: &Project) -> Result<Config> {
        let report = self.report.as_ref();
        let name = &project.config.llm.local_model;
        let model = Model::named(name).map_err(|err| {
            Error::config(
                project.root.join(crate::config::CONFIG_FILE),
                format!("key `llm.localModel`: {err}"),
            )
        })?;
        let cache = Cache::locate()?;
        for stopped in model::sweep(&cache) {
            report(Progress::Step(format!(
                "stopped the {stopped} server a killed run had left"
            )));
        }
        // This thread blocks while the model is pulled and loaded; a Ctrl-C meanwhile is
        // heard on another and ends both steps at their next chunk or poll.
        let runtime = tokio::runtime::Handle::current();
        let asked = Arc::new(AtomicBool::new(false));
        let listener = {
            let asked = Arc::clone(&asked);
            let signal = interrupted();
            runtime.spawn(async move {
                signal.await;
                asked.store(true, Ordering::Relaxed);
            })
        };
        let stop_asked = || asked.load(Ordering::Relaxed);
        let served = self.pull_and_start(project, &cache, &model, &runtime, &stop_asked);
        listener.abort();
        let managed = served?;
        let mut config = project.config.clone();
        config.llm.base_url = Some(managed.base_url());
        config.llm.model = model::SERVED_NAME.into();
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = Some(managed);
        Ok(config)
    }

    fn pull_and_start(
        &self,
        project: &Project,
        cache: &Cache,
        model: &Model,
        runtime: &tokio::runtime::Handle,
        stop_asked: &dyn Fn() -> bool,
    ) -> Result<Managed> {
        let report = self.report.as_ref();
        if cache.pulled(model).is_none() {
            let pulled = runtime.block_on(async {
                tokio::select! {
                    pulled = model::pull(cache, model, &Source::Auto, report) => Ok(pulled?),
                    _ = interrupted() => Err(Error::Interrupted),
                }
            })?;
            report(Progress::Step(format!(
                "pulled {} ({}) from {} into {}",
                model.name(),
                model::human_size(pulled.size),
                pulled.from.as_deref().unwrap_or("the cache"),
                cache.dir().display()
            )));
        }
        let log_dir = project.board_dir().join(RUNS_DIR);
        let load_seconds = project.config.llm.load_seconds;
        let place = Place {
            log_dir: &log_dir,
            port: None,
            load_seconds,
        };
        Ok(Managed::start(cache, model, place, report, stop_asked)?)
    }

    /// Lets go of the served model: the server stops unless another run still uses it.
    pub fn stop(&self) {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner()).take();
        drop(held);
    }
}

/// Runs the board with `renderer` showing the events, and the notifiers of `notify.*` told
/// about them. The notices still queued when the run ends go out before this returns (each
/// within `notify.timeoutSeconds`), unless another Ctrl-C says not to wait.
pub async fn run_notified(
    project: &Project,
    renderer: Arc<dyn RunRenderer>,
    request: RunRequest,
    agents: AgentFactory,
    prompter: Option<Arc<dyn Prompter>>,
) -> Result<ExitStatus> {
    let notifier = Notifier::start(project);
    let events = match &notifier {
        Some(notifier) => EventSink::new(Arc::new(Fanout(vec![renderer, notifier.observer()]))),
        None => EventSink::new(renderer),
    };
    let result = runner::run(project, events, request, agents, prompter).await;
    if let Some(notifier) = notifier {
        tokio::select! {
            _ = notifier.finish() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    result
}
