//! `llm.toolProtocol: "auto"` settled once per model server and model (docs/design.md §21,
//! "Defaults found by probing"): the run's checks ask the server a one-tool request. A native
//! call means the tools go to the server natively (and, under `auto`, a call the model writes
//! in its text still runs); anything else means calls described in the prompt and read from
//! the text, and, with `implement.editFormat: "auto"`, files written whole. The answer is
//! remembered in `<board>/runs/tool-protocols.json`, keyed by base URL and model, so that each
//! server and model is asked once; deleting the file asks again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::agents::llm::{protocol_probe, LlmSettings};
use crate::board::RUNS_DIR;
use crate::config::{Config, ToolProtocol};

/// The file that remembers what each server and model answered.
pub const REMEMBERED: &str = "tool-protocols.json";

/// What the run settled on, and the line that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    /// What the model does: `Native` or `Text`.
    pub found: ToolProtocol,
    pub line: String,
}

impl Settled {
    /// The protocol the agents use: `text` for a model that makes no native call; `auto`,
    /// native calls with calls written in text read too, for one that does.
    pub fn protocol(&self) -> ToolProtocol {
        match self.found {
            ToolProtocol::Text => ToolProtocol::Text,
            _ => ToolProtocol::Auto,
        }
    }
}

/// Settles `auto` for the model at `endpoint`; `None` when the config names a protocol, the
/// agents call no model, or the server gave no answer (the run's own checks say why).
pub async fn settle(
    config: &Config,
    board_dir: &Path,
    endpoint: Option<&LlmSettings>,
) -> Option<Settled> {
    if config.llm.tool_protocol != ToolProtocol::Auto {
        return None;
    }
    let settings = endpoint?;
    let key = format!("{} {}", settings.base_url, settings.model);
    let file = board_dir.join(RUNS_DIR).join(REMEMBERED);
    let mut remembered = read(&file);
    if let Some(protocol) = remembered.get(&key).and_then(|name| parse(name)) {
        return Some(Settled {
            found: protocol,
            line: describe(
                protocol,
                config,
                settings,
                "found by an earlier run's probe",
            ),
        });
    }
    let protocol = protocol_probe::tool_protocol(settings).await?;
    remembered.insert(key, name(protocol).to_string());
    if let Ok(text) = serde_json::to_string_pretty(&remembered) {
        if let Err(err) = crate::atomic_file::write(&file, format!("{text}\n").as_bytes()) {
            tracing::warn!(
                "could not remember the tool protocol in {}: {err}",
                file.display()
            );
        }
    }
    let how = match protocol {
        ToolProtocol::Native => "it answered a one-tool request with a native call",
        _ => "it answered a one-tool request without a native call",
    };
    Some(Settled {
        found: protocol,
        line: describe(protocol, config, settings, how),
    })
}

fn describe(protocol: ToolProtocol, config: &Config, settings: &LlmSettings, why: &str) -> String {
    let edits = match config.implement.edit_format.resolved(protocol) {
        crate::config::EditFormat::Whole => "files written whole",
        _ => "files changed with tool calls",
    };
    format!(
        "Model {} at {}: tool calls {} ({why}), {edits}",
        settings.model,
        settings.base_url,
        match protocol {
            ToolProtocol::Native => "native",
            _ => "as text",
        }
    )
}

fn read(file: &PathBuf) -> BTreeMap<String, String> {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn name(protocol: ToolProtocol) -> &'static str {
    match protocol {
        ToolProtocol::Native => "native",
        ToolProtocol::Text => "text",
        ToolProtocol::Auto => "auto",
    }
}

fn parse(name: &str) -> Option<ToolProtocol> {
    match name {
        "native" => Some(ToolProtocol::Native),
        "text" => Some(ToolProtocol::Text),
        _ => None,
    }
}
