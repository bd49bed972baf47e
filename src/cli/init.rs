//! `init`: the default config and the board folders. Running it again changes nothing.

use super::context::Context;
use crate::board::Column;
use crate::config::{self, CONFIG_FILE};
use crate::error::{ExitStatus, Result};
use crate::model::{human_size, DEFAULT_MODEL};
use serde::Serialize;

/// What the board's own `.gitignore` keeps out of version control (docs/design.md §2).
const BOARD_GITIGNORE: &str = ".workflow-state.json\n.lock\nlogs/\n";

/// Where model servers usually listen: Ollama, llama.cpp, LM Studio, vLLM.
/// `AGENTIC_SDLC_LOCAL_PORTS` names others (a comma-separated list).
const USUAL_PORTS: [u16; 4] = [11434, 8080, 1234, 8000];

/// Whether nothing says which model to use: no key in `OPENAI_API_KEY`, no
/// `OPENAI_BASE_URL`, and no server answering on this machine's usual ports.
fn nothing_configured() -> bool {
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    if set("OPENAI_API_KEY") || set("OPENAI_BASE_URL") {
        return false;
    }
    let ports: Vec<u16> = match std::env::var("AGENTIC_SDLC_LOCAL_PORTS") {
        Ok(list) => list
            .split(',')
            .filter_map(|p| p.trim().parse().ok())
            .collect(),
        Err(_) => USUAL_PORTS.to_vec(),
    };
    !ports.iter().any(|port| {
        let address = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, *port));
        std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_millis(300))
            .is_ok()
    })
}

/// `init --json`: what it made, relative to the root.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Initialized<'a> {
    root: &'a std::path::Path,
    board_dir: &'a std::path::Path,
    created: &'a [String],
}

pub fn run(context: &Context) -> Result<ExitStatus> {
    let root = &context.cwd;
    let config_path = root.join(CONFIG_FILE);
    let mut created = Vec::new();
    let mut serves_locally = false;
    if !config_path.exists() {
        let mut value = config::default_value();
        // Nothing configured means local: no key for the default API, no server named, and
        // none answering where model servers usually listen.
        if nothing_configured() {
            value["llm"]["provider"] = "local".into();
            serves_locally = true;
        }
        let text = serde_json::to_string_pretty(&value)
            .expect("the default config is a JSON value with string keys, so it serialises");
        crate::board::store::write_atomic(&config_path, &format!("{text}\n"))?;
        created.push(CONFIG_FILE.to_string());
    }
    // An existing config decides where the board lives, and must itself be valid.
    let config = config::load(root)?;
    let board_dir = root.join(&config.sdlc_folder);
    for column in Column::ALL.iter().copied() {
        let folder = board_dir.join(column.name());
        if !folder.is_dir() {
            fs_err::create_dir_all(&folder)?;
            created.push(format!("{}/{}/", config.sdlc_folder, column.name()));
        }
    }
    let gitignore = board_dir.join(".gitignore");
    if !gitignore.exists() {
        crate::board::store::write_atomic(&gitignore, BOARD_GITIGNORE)?;
        created.push(format!("{}/.gitignore", config.sdlc_folder));
    }
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(
        "init",
        Initialized {
            root,
            board_dir: &board_dir,
            created: &created,
        },
    ));
    if created.is_empty() {
        printer.out(format!(
            "Board already initialised in {}",
            board_dir.display()
        ));
    } else {
        for item in &created {
            printer.out(format!("created {item}"));
        }
        if serves_locally {
            printer.out(format!(
                "No API key and no model server here: llm.provider is \"local\", so `run` \
                 fetches and serves {} ({}) itself (set llm.baseUrl and llm.model to use a \
                 server instead)",
                DEFAULT_MODEL,
                crate::model::known(DEFAULT_MODEL).map_or(String::new(), |m| human_size(m.size))
            ));
        }
        printer.out(format!(
            "Board ready in {}. Next: agentic-sdlc add \"<title>\"",
            board_dir.display()
        ));
    }
    Ok(ExitStatus::Success)
}
