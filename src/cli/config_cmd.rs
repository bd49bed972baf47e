//! `config [key] [value]`: show the merged config, one key, or validate and set a key.

use clap::Args;
use serde_json::Value;

use super::Context;
use crate::board::store::write_atomic;
use crate::config::{self, Config};
use crate::error::{Error, ExitStatus, Result};

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// A dotted key, e.g. `refinement.maxIterations`.
    pub key: Option<String>,
    /// A new value: JSON (`5`, `true`, `null`, `["a"]`) or plain text.
    #[arg(allow_negative_numbers = true)]
    pub value: Option<String>,
}

pub fn run(args: ConfigArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let path = project.config_path();
    let printer = &context.printer;
    let merged = config::merged_value(&config::read_user_value(&project.root)?);
    match (args.key, args.value) {
        (None, _) => {
            show(printer, &merged);
            Ok(ExitStatus::Success)
        }
        (Some(key), None) => {
            let value = config::get_dotted(&merged, &key)
                .ok_or_else(|| Error::config(&path, format!("unknown key `{key}`")))?;
            show(printer, value);
            Ok(ExitStatus::Success)
        }
        (Some(key), Some(raw)) => {
            // Validation of the merged result rejects unknown keys and bad values by name.
            let mut user = config::read_user_value(&project.root)?;
            let value = config::parse_cli_value(&raw);
            config::set_dotted(&mut user, &key, value.clone())
                .map_err(|m| Error::config(&path, m))?;
            Config::from_value(config::merged_value(&user), &path)?;
            let text = serde_json::to_string_pretty(&user)
                .expect("a JSON value has string keys only, so it always serialises");
            write_atomic(&path, &format!("{text}\n"))?;
            printer.json_line(&super::envelope(
                "config",
                serde_json::json!({ "key": key, "value": value })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ));
            printer.out(format!("{key} = {value}"));
            Ok(ExitStatus::Success)
        }
    }
}

fn show(printer: &crate::output::Printer, value: &Value) {
    if printer.is_json() {
        printer.json_line(value);
    } else {
        match value {
            Value::String(s) => printer.out(s),
            other => printer.out(
                serde_json::to_string_pretty(other)
                    .expect("a JSON value has string keys only, so it always serialises"),
            ),
        }
    }
}
