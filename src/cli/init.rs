//! `init`: the default config and the board folders. Running it again changes nothing.

use super::context::Context;
use crate::board::Column;
use crate::config::{self, CONFIG_FILE};
use crate::error::{ExitStatus, Result};
use serde::Serialize;

/// What the board's own `.gitignore` keeps out of version control (docs/design.md §2).
const BOARD_GITIGNORE: &str = ".workflow-state.json\n.lock\nlogs/\n";

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
    if !config_path.exists() {
        let text = serde_json::to_string_pretty(&config::default_value())
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
        printer.out(format!(
            "Board ready in {}. Next: agentic-sdlc add \"<title>\"",
            board_dir.display()
        ));
    }
    Ok(ExitStatus::Success)
}
