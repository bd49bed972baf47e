//! `.agentic-sdlc.json`: defaults, deep merge of a partial file, validation that names the key,
//! environment overrides and dotted-key get/set (docs/design.md §4).

mod dotted;
mod layers;
mod notify;
mod project;
mod settings;
mod validate;

pub use dotted::{get_dotted, parse_cli_value, set_dotted};
pub use layers::{env_values, load, EnvOverride, Layers, Origin, ENV_OVERRIDES};
pub use notify::{NoticeKind, NotifyConfig};
pub use project::Project;
pub use settings::*;

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;
