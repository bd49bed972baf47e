//! The settings of `.agentic-sdlc.json` as types, their defaults, and the merge of a partial
//! file over them (docs/design.md §4). The rooms of `config/` stand on this one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::dotted::get_dotted;
use super::notify::NotifyConfig;
use crate::board::Phase;
use crate::error::{Error, Result};

pub const CONFIG_FILE: &str = ".agentic-sdlc.json";

/// Where per-story git worktrees live, inside the repository so they stay on the same disk.
pub const WORKTREES_DIR: &str = ".agentic-sdlc-worktrees";

/// Where requests go when neither `llm.baseUrl` nor `OPENAI_BASE_URL` says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    pub sdlc_folder: String,
    pub theme: Theme,
    pub default_labels: Vec<String>,
    pub concurrency: u32,
    pub refinement: RefinementConfig,
    pub review: ReviewConfig,
    pub llm: LlmConfig,
    pub phases: PhasesConfig,
    pub implement: ImplementConfig,
    pub git: GitConfig,
    pub tools: ToolsConfig,
    pub budget: BudgetConfig,
    pub pricing: Pricing,
    pub remote: RemoteConfig,
    pub notify: NotifyConfig,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    Auto,
    Light,
    Dark,
    None,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RefinementConfig {
    pub max_iterations: u32,
    pub escalate_on_max_attempts: Escalation,
    pub enable_circuit_breaker: bool,
}

/// What a run does when a story's circuit breaker trips (docs/design.md §7).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Escalation {
    Manual,
    Error,
    Skip,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReviewConfig {
    pub test_command: Option<String>,
    pub test_timeout_seconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LlmConfig {
    pub base_url: Option<String>,
    pub model: String,
    pub api_key_env: String,
    pub timeout_seconds: u64,
    pub max_retries: u32,
    pub max_turns: u32,
    /// Caps every reply (docs/design.md §15); `phases.<phase>.maxTokens` overrides it for one
    /// phase.
    pub max_tokens: u32,
    pub structured_outputs: StructuredOutputs,
    /// How agents call tools: native function calling, calls read from the reply's text, or
    /// both (`auto`).
    pub tool_protocol: ToolProtocol,
    /// The sampling temperature of a phase's first try; `None` leaves it to the server. A
    /// retry climbs from it (docs/design.md §18).
    pub temperature: Option<f32>,
    /// How long the checks before a run wait for a server that is still loading its model
    /// (llama.cpp answers 503 "Loading model" meanwhile).
    pub load_seconds: u64,
    /// Who serves the model: a server at `llm.baseUrl` (`api`), or a model the tool fetches,
    /// serves and stops itself (`local`, docs/design.md "A model out of the box").
    pub provider: Provider,
    /// The model `local` serves, by its name in `agentic-sdlc model list`.
    pub local_model: String,
}

/// Who serves the model (`llm.provider`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// An OpenAI-compatible API at `llm.baseUrl`: OpenAI's, or a server someone runs.
    #[default]
    Api,
    /// A model the tool fetches into its cache, serves on a loopback port for the run and stops
    /// after it.
    Local,
}

/// How tool calls travel (`llm.toolProtocol`). `auto` sends the tools natively and also runs
/// calls the model wrote in its text; `native` only takes native calls; `text` describes the
/// tools in the prompt and reads one action per reply from the text, for servers without tool
/// calling.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ToolProtocol {
    #[default]
    Auto,
    Native,
    Text,
}

/// `implement.*`: how the implement phase checks and chooses its work.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImplementConfig {
    /// With `review.testCommand` set: how many times the tests run when the implement model
    /// says it is done, each failure but the last sent back in the same conversation; 0 runs
    /// them only at review.
    pub test_rounds: u32,
    /// Independent attempts, each in a worktree of its own; the one whose tests pass, then the
    /// smallest diff, is kept. `None`: [`Config::attempts`] picks by the model server.
    pub attempts: Option<u32>,
    /// How the implement agent is told to change files.
    pub edit_format: EditFormat,
}

/// How the implement agent is asked to change files (`implement.editFormat`). `tools`: with
/// write_file and edit_file calls. `whole`: by writing each changed file out whole under its
/// path (aider's "whole" format), which small models get right far more often than code inside
/// a JSON string; tool calls it writes still run. `auto` (the default): `whole` when tool calls
/// travel as text, `tools` when they are native (see [`Config::edit_format`]).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum EditFormat {
    #[default]
    Auto,
    Tools,
    Whole,
}

impl EditFormat {
    /// `auto` as it applies under `protocol`: whole files for a model whose calls travel as
    /// text; tool calls for one that makes native calls, or whose way is not known yet.
    pub fn resolved(self, protocol: ToolProtocol) -> EditFormat {
        match (self, protocol) {
            (EditFormat::Auto, ToolProtocol::Text) => EditFormat::Whole,
            (EditFormat::Auto, _) => EditFormat::Tools,
            (chosen, _) => chosen,
        }
    }
}

/// Whether machine-read answers are requested with a JSON schema in `response_format`
/// (docs/design.md §15). `auto` sends it and falls back to prompting, for the rest of the run, when
/// the server rejects it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum StructuredOutputs {
    Auto,
    On,
    Off,
}

/// `phases.<phase>`: each phase's own settings, keyed by the phase's name; a name that is no
/// phase is an error naming it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(
    try_from = "BTreeMap<String, PhaseConfig>",
    into = "BTreeMap<String, PhaseConfig>"
)]
pub struct PhasesConfig(BTreeMap<Phase, PhaseConfig>);

/// Read with string keys first, so that an error inside a phase's settings names its key path.
impl TryFrom<BTreeMap<String, PhaseConfig>> for PhasesConfig {
    type Error = String;

    fn try_from(by_name: BTreeMap<String, PhaseConfig>) -> std::result::Result<Self, String> {
        by_name
            .into_iter()
            .map(|(name, settings)| match Phase::parse(&name) {
                Some(phase) => Ok((phase, settings)),
                None => Err(format!(
                    "`phases.{name}` names no phase; the phases are {}",
                    Phase::ALL
                        .iter()
                        .map(|p| p.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            })
            .collect::<std::result::Result<_, _>>()
            .map(PhasesConfig)
    }
}

impl From<PhasesConfig> for BTreeMap<String, PhaseConfig> {
    fn from(phases: PhasesConfig) -> Self {
        phases
            .0
            .into_iter()
            .map(|(phase, settings)| (phase.name().to_string(), settings))
            .collect()
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
pub struct PhaseConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<GateConfig>,
    /// Overrides `llm.maxTokens` for this phase's agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The phase agent's turn budget (docs/design.md §21); unset: see [`PhasesConfig::turn_budget`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// `false` skips the phase: its flag counts as complete (refine: the story moves to ready
    /// as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}

/// `phases.<phase>.review` (docs/design.md §8).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GateConfig {
    pub reviewer: Reviewer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default = "default_gate_retries")]
    pub max_retries: u32,
    #[serde(default = "default_gate_retries")]
    pub max_predecessor_retries: u32,
    /// Seconds a `command` reviewer may take before it is killed and counted as a RETRY.
    #[serde(
        default = "default_gate_timeout",
        skip_serializing_if = "is_default_gate_timeout"
    )]
    pub timeout_seconds: u64,
}

fn default_gate_retries() -> u32 {
    2
}
fn default_gate_timeout() -> u64 {
    600
}
fn is_default_gate_timeout(value: &u64) -> bool {
    *value == default_gate_timeout()
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Reviewer {
    Ai,
    Command,
    Human,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GitConfig {
    pub branch_per_story: bool,
    pub worktrees: bool,
    pub integrate: Integrate,
    /// The branch finished work goes into; `None` is the branch checked out when a story's
    /// branch is made (docs/design.md §12).
    pub base_branch: Option<crate::names::BranchName>,
}

/// How a reviewed story's work is delivered (docs/design.md §12).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Integrate {
    /// Merged into the base, tested there together with everything merged before it.
    Merge,
    /// Pushed, with a pull request opened (stacked on an unmerged dependency's branch).
    Pr,
    /// Left on its branch.
    None,
}

/// The key older config files used before `git.integrate`; `true` meant open a pull request.
const LEGACY_CREATE_PR: &str = "createPr";
/// `remote.*`: how `run --remote` coordinates with other clones through the git remote
/// (docs/design.md §20).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemoteConfig {
    /// How long a claim on a story holds without renewal; renewed every third of it.
    pub claim_seconds: u64,
    /// How often a run that waits on stories other clones hold looks at the remote again.
    pub poll_seconds: u64,
    /// How long one fetch or push may take before it is stopped and tried again.
    pub timeout_seconds: u64,
}

/// `budget` (docs/design.md §14): limits on what a story or a run may spend; null means no limit.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BudgetConfig {
    pub story_tokens: Option<u64>,
    pub run_tokens: Option<u64>,
    pub story_usd: Option<f64>,
    pub run_usd: Option<f64>,
}

/// One model's price in USD per million tokens (docs/design.md §14).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    pub input_per_m_tok: f64,
    pub output_per_m_tok: f64,
}

/// `pricing`: model name → price. A model with no entry simply has no cost.
pub type Pricing = std::collections::BTreeMap<String, Price>;

/// `tools.*`: the bounds of every agent tool call (docs/design.md §13).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsConfig {
    /// Bytes one read_file or search result holds at most.
    pub max_read_bytes: u64,
    /// Seconds one tool call may take; a command's `timeout_seconds` may only shorten it.
    pub timeout_seconds: u64,
    /// How strongly commands the agent can influence are boxed (docs/security.md).
    pub sandbox: SandboxMode,
    /// Whether boxed commands reach the network.
    pub network: NetworkAccess,
    /// Variables a boxed command keeps although their names look like secrets.
    pub keep_env: Vec<String>,
    /// Folders outside the story's tree that boxed commands may write (a build cache).
    pub writable_roots: Vec<PathBuf>,
}

/// `tools.sandbox`: what the kernel must enforce before an agent's command may run.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// Landlock file-system rules on top of namespaces; a kernel without Landlock is refused.
    Landlock,
    /// Namespaces (and their read-only mounts) without Landlock.
    Namespaces,
    /// No box: a process group under a reaper, a scrubbed environment, and the checks after.
    Off,
}

/// `tools.network`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NetworkAccess {
    /// A network namespace of its own with loopback only.
    None,
    /// The machine's network.
    Host,
}

/// The turn budget of refine, research and plan unless `phases.<phase>.maxTurns` says
/// otherwise: enough to read the files a story names and look around them.
pub const READ_ONLY_PHASE_TURNS: u32 = 12;
/// The turn budget of acceptance and implement when files are written whole (each turn a whole
/// answer, test rounds included), unless `phases.<phase>.maxTurns` says otherwise.
pub const WHOLE_FILE_PHASE_TURNS: u32 = 8;
/// The reply cap of refine, research and plan unless `phases.<phase>.maxTokens` says otherwise
/// (never above `llm.maxTokens`): a summary, findings or a plan fit, and a small model that
/// falls into repeating itself stops there instead of at 4,096 tokens (measured: one such reply
/// took 200 of a plan's 232 seconds on 2 cores).
pub const READ_ONLY_PHASE_TOKENS: u32 = 1536;

impl PhasesConfig {
    pub fn gate(&self, phase: Phase) -> Option<&GateConfig> {
        self.phase(phase).and_then(|p| p.review.as_ref())
    }

    /// `phases.<phase>.maxTokens`, when set.
    pub fn max_tokens(&self, phase: Phase) -> Option<u32> {
        self.phase(phase).and_then(|p| p.max_tokens)
    }

    /// The reply cap of the phase's agent: `phases.<phase>.maxTokens`, else for a phase that
    /// only reads [`READ_ONLY_PHASE_TOKENS`] (at most `llm.maxTokens`), else `llm.maxTokens`.
    pub fn reply_cap(&self, phase: Phase, max_tokens: u32) -> u32 {
        match self.max_tokens(phase) {
            Some(tokens) => tokens,
            None if phase.reads_only() => READ_ONLY_PHASE_TOKENS.min(max_tokens),
            None => max_tokens,
        }
    }

    /// The turn budget of the phase's agent: `phases.<phase>.maxTurns`, else a small one for a
    /// phase that only reads (a small model that wanders reads the same files for ever), never
    /// more than `llm.maxTurns`; the phases that write get `llm.maxTurns`, or
    /// [`WHOLE_FILE_PHASE_TURNS`] when they write files whole.
    pub fn turn_budget(&self, phase: Phase, max_turns: u32, whole_files: bool) -> u32 {
        match self.phase(phase).and_then(|p| p.max_turns) {
            Some(turns) => turns,
            None if phase.reads_only() => READ_ONLY_PHASE_TURNS.min(max_turns),
            None if whole_files => WHOLE_FILE_PHASE_TURNS.min(max_turns),
            None => max_turns,
        }
    }

    /// `phases.<phase>.enabled` as set, if it is.
    pub fn enabled_setting(&self, phase: Phase) -> Option<bool> {
        self.phase(phase).and_then(|p| p.enabled)
    }

    /// `phases.<phase>`, when it has settings.
    pub(super) fn phase(&self, phase: Phase) -> Option<&PhaseConfig> {
        self.0.get(&phase)
    }
}

impl Config {
    /// Whether the phase runs: `phases.<phase>.enabled`, true unless set to false, except for
    /// a phase that runs the tests (acceptance), which is off without a test command
    /// (docs/design.md §21).
    pub fn phase_enabled(&self, phase: Phase) -> bool {
        let possible = !phase.runs_tests() || self.has_test_command();
        possible && self.phases.enabled_setting(phase) != Some(false)
    }

    /// `implement.attempts`, else one. Best of 3 at temperature 0.2 was measured against one
    /// attempt at the server's temperature with the whole life cycle on a local 1.5B model, and
    /// delivered less in twice the time (docs/benchmarks.md), so neither is a default.
    pub fn attempts(&self) -> u32 {
        self.implement.attempts.unwrap_or(1)
    }

    /// `review.testCommand` as a prompt names it; empty without one.
    pub fn test_command_text(&self) -> String {
        self.review.test_command.clone().unwrap_or_default()
    }

    /// Whether `review.testCommand` names a command.
    pub fn has_test_command(&self) -> bool {
        self.review
            .test_command
            .as_deref()
            .is_some_and(|c| !c.trim().is_empty())
    }
}

/// The defaults of docs/design.md §4, as the JSON document a partial file is merged over.
pub fn default_value() -> Value {
    json!({
        "sdlcFolder": ".agentic-sdlc",
        "theme": "auto",
        "defaultLabels": [],
        "concurrency": 1,
        "refinement": { "maxIterations": 3, "escalateOnMaxAttempts": "manual", "enableCircuitBreaker": true },
        "review": { "testCommand": null, "testTimeoutSeconds": 600 },
        "llm": { "baseUrl": null, "model": "gpt-4o-mini", "apiKeyEnv": "OPENAI_API_KEY",
                 "timeoutSeconds": 300, "maxRetries": 3, "maxTurns": 50,
                 "maxTokens": 4096, "structuredOutputs": "auto" },
        "phases": {},
        "git": { "branchPerStory": true, "worktrees": false, "integrate": "merge", "baseBranch": null },
        "tools": { "maxReadBytes": 262144, "timeoutSeconds": 120, "sandbox": "landlock",
                   "network": "none", "keepEnv": [], "writableRoots": [] },
        "budget": { "storyTokens": null, "runTokens": null, "storyUsd": null, "runUsd": null },
        "pricing": {},
        "notify": { "command": null, "webhook": null, "timeoutSeconds": 10,
                    "events": ["story_merged", "story_blocked", "gate_waiting", "action_failed",
                               "run_finished"] }
    })
}

/// Keys `init` does not write out, because most boards never need them or because they joined
/// the contract after `init`'s defaults were fixed. They are part of every merged config (so
/// `config` shows them and `config <key>` finds them), and a file that sets them is merged over
/// these like over the rest.
fn optional_defaults() -> Value {
    json!({
        "remote": { "claimSeconds": 900, "pollSeconds": 15, "timeoutSeconds": 120 },
        "llm": { "toolProtocol": "auto", "temperature": null, "loadSeconds": 300,
                 "provider": "api", "localModel": "qwen-coder-1.5b" },
        "implement": { "testRounds": 3, "attempts": null, "editFormat": "auto" }
    })
}

/// Merges `overlay` into `base` key by key; objects merge recursively, anything else replaces.
fn deep_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        deep_merge(existing, value)
                    }
                    _ => {
                        base.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (base, overlay) => *base = overlay.clone(),
    }
}

impl Config {
    /// Builds a config from the merged document, naming the offending key on error.
    pub fn from_value(merged: Value, path: &Path) -> Result<Config> {
        let config: Config = serde_path_to_error::deserialize(merged).map_err(|err| {
            let key = err.path().to_string();
            Error::config(path, format!("key `{key}`: {}", err.inner()))
        })?;
        config.validate(path)?;
        Ok(config)
    }

    /// The edit format the implement agent is told: `implement.editFormat`, with `auto`
    /// resolved from the tool protocol.
    pub fn edit_format(&self) -> EditFormat {
        self.implement.edit_format.resolved(self.llm.tool_protocol)
    }

    /// The model to use. A loaded config already holds `AGENTIC_SDLC_MODEL` when it is set
    /// (see [`Layers`]).
    pub fn model(&self) -> String {
        self.llm.model.clone()
    }

    /// The API base URL: `llm.baseUrl` (which `OPENAI_BASE_URL` overrides, see [`Layers`]),
    /// else OpenAI's.
    pub fn base_url(&self) -> String {
        self.llm
            .base_url
            .clone()
            .unwrap_or_else(|| DEFAULT_BASE_URL.to_string())
    }
}

/// Reads the config file at `root` as raw JSON (what the user wrote, not merged).
pub fn read_user_value(root: &Path) -> Result<Value> {
    let path = root.join(CONFIG_FILE);
    let text = fs_err::read_to_string(&path)?;
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(&text).map_err(|err| {
        Error::config(
            &path,
            format!("line {}, column {}: {err}", err.line(), err.column()),
        )
    })?;
    if !value.is_object() {
        return Err(Error::config(&path, "the file must hold a JSON object"));
    }
    Ok(value)
}

pub fn merged_value(user: &Value) -> Value {
    let mut merged = default_value();
    deep_merge(&mut merged, &optional_defaults());
    deep_merge(&mut merged, user);
    upgrade_legacy_keys(user, &mut merged);
    merged
}

/// An older file's `git.createPr: true` is read as `git.integrate: "pr"`, unless the file also
/// chooses another way than the default (`integrate: "none"`): a file that `init` wrote lists
/// the default `merge`, and a `createPr: true` set on it by hand still means pull requests. A
/// boolean `createPr` is then dropped; anything else is left in place, so validation names it.
fn upgrade_legacy_keys(user: &Value, merged: &mut Value) {
    let Some(git) = merged.get_mut("git").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(Value::Bool(create_pr)) = git.get(LEGACY_CREATE_PR).cloned() else {
        return;
    };
    git.remove(LEGACY_CREATE_PR);
    let other_way_chosen = get_dotted(user, "git.integrate")
        .and_then(Value::as_str)
        .is_some_and(|way| way != "merge");
    if create_pr && !other_way_chosen {
        git.insert("integrate".into(), Value::String("pr".into()));
    }
}
