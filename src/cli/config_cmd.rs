//! `config [key] [value]`: show the effective config (defaults, then the file, then the
//! environment) and where each value comes from, or validate and set a key in the file.

use clap::Args;
use serde_json::Value;

use super::context::Context;
use crate::board::store::write_atomic;
use crate::config::{self, Config, Layers, Origin};
use crate::error::{Error, ExitStatus, Result};
use crate::output::Printer;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// A dotted key, e.g. `refinement.maxIterations`.
    #[arg(add = clap_complete::ArgValueCandidates::new(super::values::config_key_candidates))]
    pub key: Option<String>,
    /// A new value: JSON (`5`, `true`, `null`, `["a"]`) or plain text.
    #[arg(allow_negative_numbers = true)]
    pub value: Option<String>,
    /// The value of `config set KEY VALUE` ([`ConfigArgs::without_verb`]).
    #[arg(hide = true, allow_negative_numbers = true)]
    pub set_value: Option<String>,
    /// List every setting as `key = value  # origin` (default, the file, or an environment
    /// variable); with --json, a list of {key, value, origin}.
    #[arg(long, conflicts_with = "value")]
    pub show_origin: bool,
}

impl ConfigArgs {
    /// The key and value asked for, read also in the form git and npm use, `config set KEY
    /// VALUE` and `config get KEY`: no config key is called `set` or `get`, so the word is the
    /// form and not a key.
    fn without_verb(self) -> Result<(Option<String>, Option<String>)> {
        match (self.key.as_deref(), self.value, self.set_value) {
            (Some("set"), Some(key), Some(value)) => Ok((Some(key), Some(value))),
            (Some("set"), _, None) => Err(Error::Usage(
                "`config set` takes a key and a value, e.g. `config set llm.model qwen2.5-coder`"
                    .into(),
            )),
            (Some("get"), Some(key), None) => Ok((Some(key), None)),
            (_, _, Some(extra)) => Err(Error::Usage(format!(
                "unexpected argument `{extra}`: `config KEY VALUE` sets a key (a value with spaces is quoted)"
            ))),
            (_, value, None) => Ok((self.key, value)),
        }
    }
}

/// `config <key> --json`.
#[derive(Serialize)]
struct Setting<'a> {
    key: &'a str,
    value: &'a Value,
}

/// `config --show-origin --json`.
#[derive(Serialize)]
struct Origins<'a> {
    settings: &'a [Sourced<'a>],
}

/// One setting, its value and where the value came from.
#[derive(Serialize)]
struct Sourced<'a> {
    key: &'a str,
    value: &'a Value,
    origin: &'a Origin,
}

pub fn run(args: ConfigArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let layers = Layers::read(&project.root)?;
    let printer = &context.printer;
    let show_origin = args.show_origin;
    match args.without_verb()? {
        (key, None) if show_origin => {
            show_origins(printer, &layers, key.as_deref(), &project)?;
            Ok(ExitStatus::Success)
        }
        (None, _) => {
            show(printer, &layers.effective_value());
            for (over, _) in &layers.env {
                printer.info(format!(
                    "note: {} comes from the environment variable {}, over {}",
                    over.key,
                    over.variable,
                    describe_file_value(&layers, over.key)
                ));
            }
            Ok(ExitStatus::Success)
        }
        (Some(key), None) => {
            let effective = layers.effective_value();
            let value = config::get_dotted(&effective, &key).ok_or_else(|| {
                Error::config(project.config_path(), format!("unknown key `{key}`"))
            })?;
            show(printer, value);
            printer.info(format!("# {}", origin_note(&layers, &key)));
            Ok(ExitStatus::Success)
        }
        (Some(key), Some(raw)) => set(printer, &project, &layers, &key, &raw),
    }
}

/// Validates the file with `key` set to `raw` and writes it; a variable that overrides the
/// key is named, since runs will not use the value just written.
fn set(
    printer: &Printer,
    project: &config::Project,
    layers: &Layers,
    key: &str,
    raw: &str,
) -> Result<ExitStatus> {
    let path = project.config_path();
    // Validation of the merged result rejects unknown keys and bad values by name.
    let mut user = layers.user.clone();
    let value = config::parse_cli_value(raw);
    config::set_dotted(&mut user, key, value.clone()).map_err(|m| Error::config(&path, m))?;
    Config::from_value(config::merged_value(&user), &path)?;
    let text = serde_json::to_string_pretty(&user)
        .expect("a JSON value has string keys only, so it always serialises");
    write_atomic(&path, &format!("{text}\n"))?;
    printer.json_line(&crate::front::envelope(
        "config",
        Setting { key, value: &value },
    ));
    printer.out(format!("{key} = {value}"));
    if let Origin::Env { variable } = layers.origin(key) {
        printer.warn(format!(
            "{variable} is set and overrides {key}: runs use its value, not the one written"
        ));
    }
    Ok(ExitStatus::Success)
}

/// `--show-origin`: every leaf setting (under `key`, when given) with where it comes from.
fn show_origins(
    printer: &Printer,
    layers: &Layers,
    key: Option<&str>,
    project: &config::Project,
) -> Result<()> {
    let leaves: Vec<_> = layers
        .leaves()
        .into_iter()
        .filter(|(leaf, _, _)| {
            key.is_none_or(|key| leaf == key || leaf.starts_with(&format!("{key}.")))
        })
        .collect();
    if leaves.is_empty() {
        let key = key.unwrap_or_default();
        return Err(Error::config(
            project.config_path(),
            format!("unknown key `{key}`"),
        ));
    }
    let settings: Vec<Sourced> = leaves
        .iter()
        .map(|(key, value, origin)| Sourced { key, value, origin })
        .collect();
    printer.json_line(&crate::front::envelope(
        "config-origins",
        Origins {
            settings: &settings,
        },
    ));
    for (key, value, origin) in &leaves {
        printer.out(format!("{key} = {value}  # {origin}"));
    }
    Ok(())
}

/// Where a key's value comes from, for a person; for an object, also the keys inside it that
/// a variable overrides.
fn origin_note(layers: &Layers, key: &str) -> String {
    let own = match layers.origin(key) {
        Origin::Env { variable } => {
            return format!(
                "from the environment variable {variable}, over {}",
                describe_file_value(layers, key)
            )
        }
        Origin::File => format!("from {}", config::CONFIG_FILE),
        Origin::Default => "default".to_string(),
    };
    let inside: Vec<String> = layers
        .overrides_within(key)
        .iter()
        .map(|over| {
            format!(
                "{} from the environment variable {}",
                over.key, over.variable
            )
        })
        .collect();
    if inside.is_empty() {
        own
    } else {
        format!("{own}; {}", inside.join("; "))
    }
}

/// What the file (over the defaults) says for `key`, for a note about an override.
fn describe_file_value(layers: &Layers, key: &str) -> String {
    let file = layers.file_value();
    match config::get_dotted(&file, key) {
        Some(value) if layers.in_file(key) => format!("{value} in {}", config::CONFIG_FILE),
        Some(value) => format!("the default {value}"),
        None => "nothing".to_string(),
    }
}

fn show(printer: &Printer, value: &Value) {
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
