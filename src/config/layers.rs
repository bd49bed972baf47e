//! Where a setting comes from: the defaults, `.agentic-sdlc.json`, then the environment, each
//! layer over the one before (as cargo's `CARGO_*` variables override its config files).
//!
//! A variable that is set but empty counts as unset, so `OPENAI_BASE_URL= agentic-sdlc run`
//! falls back to the file instead of failing on an empty URL.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::dotted::{get_dotted, set_dotted};
use super::settings::{merged_value, read_user_value, Config, CONFIG_FILE};
use crate::error::{Error, Result};

/// A setting that an environment variable overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvOverride {
    pub variable: &'static str,
    /// The dotted config key it stands for.
    pub key: &'static str,
}

/// Every setting that has an environment variable. The variable wins over the file.
pub const ENV_OVERRIDES: [EnvOverride; 2] = [
    EnvOverride {
        variable: "OPENAI_BASE_URL",
        key: "llm.baseUrl",
    },
    EnvOverride {
        variable: "AGENTIC_SDLC_MODEL",
        key: "llm.model",
    },
];

/// Where a setting's effective value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Origin {
    /// Nothing set it: the built-in default.
    Default,
    /// `.agentic-sdlc.json`.
    File,
    /// An environment variable, over whatever the file says.
    Env { variable: String },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File => f.write_str(CONFIG_FILE),
            Origin::Env { variable } => write!(f, "environment variable {variable}"),
        }
    }
}

/// The environment variables of [`ENV_OVERRIDES`] that are set, with their values trimmed.
pub fn env_values(env: impl Fn(&str) -> Option<String>) -> Vec<(EnvOverride, String)> {
    ENV_OVERRIDES
        .iter()
        .filter_map(|over| {
            env(over.variable)
                .map(|value| value.trim().to_string())
                .filter(|value| !value.is_empty())
                .map(|value| (*over, value))
        })
        .collect()
}

/// The three layers of a project's settings, as read once.
#[derive(Debug, Clone)]
pub struct Layers {
    /// What `.agentic-sdlc.json` says, as written.
    pub user: Value,
    /// The environment variables that are set.
    pub env: Vec<(EnvOverride, String)>,
}

impl Layers {
    /// Reads the file at `root` and the process environment.
    pub fn read(root: &Path) -> Result<Layers> {
        Layers::read_with_env(root, |name| std::env::var(name).ok())
    }

    /// [`Layers::read`] with the environment passed in, so tests need not change it.
    pub fn read_with_env(root: &Path, env: impl Fn(&str) -> Option<String>) -> Result<Layers> {
        Ok(Layers {
            user: read_user_value(root)?,
            env: env_values(env),
        })
    }

    /// Defaults and file merged, without the environment: what the file means on its own.
    pub fn file_value(&self) -> Value {
        merged_value(&self.user)
    }

    /// Defaults, file and environment: the settings a run uses.
    pub fn effective_value(&self) -> Value {
        let mut value = self.file_value();
        for (over, text) in &self.env {
            // A file that made `llm` something other than an object fails validation, which
            // names it; there is nothing to override then.
            let _ = set_dotted(&mut value, over.key, Value::String(text.clone()));
        }
        value
    }

    /// The validated config a run uses. The file is checked on its own first, so an error
    /// there names the file's key; an override that is no valid value names its variable.
    pub fn config(&self, root: &Path) -> Result<Config> {
        let path = root.join(CONFIG_FILE);
        let from_file = Config::from_value(self.file_value(), &path)?;
        if self.env.is_empty() {
            return Ok(from_file);
        }
        Config::from_value(self.effective_value(), &path).map_err(|err| {
            let message = match err {
                Error::Config { message, .. } => message,
                other => other.to_string(),
            };
            let (over, value) = self
                .env
                .iter()
                .find(|(over, _)| message.contains(over.key))
                .unwrap_or(&self.env[0]);
            Error::Env {
                variable: over.variable.to_string(),
                message: format!("`{value}` is not a valid {}: {message}", over.key),
            }
        })
    }

    /// Where the value at `key` comes from: the variable that overrides it, else the file
    /// when it sets the key (or anything inside it), else the default. An object with an
    /// overridden key inside is still the file's or the default's; see
    /// [`Layers::overrides_within`].
    pub fn origin(&self, key: &str) -> Origin {
        if let Some((over, _)) = self.env.iter().find(|(over, _)| over.key == key) {
            return Origin::Env {
                variable: over.variable.to_string(),
            };
        }
        if self.in_file(key) {
            return Origin::File;
        }
        Origin::Default
    }

    /// Whether `.agentic-sdlc.json` itself sets `key`.
    pub fn in_file(&self, key: &str) -> bool {
        get_dotted(&self.user, key).is_some()
    }

    /// The overrides of `key` or of keys inside it.
    pub fn overrides_within(&self, key: &str) -> Vec<EnvOverride> {
        self.env
            .iter()
            .map(|(over, _)| *over)
            .filter(|over| over.key == key || over.key.starts_with(&format!("{key}.")))
            .collect()
    }

    /// Every leaf setting (objects flattened to dotted keys; lists and nulls are leaves) with
    /// its effective value and origin, in the order of the document.
    pub fn leaves(&self) -> Vec<(String, Value, Origin)> {
        let mut flat = BTreeMap::new();
        let mut order = Vec::new();
        flatten("", &self.effective_value(), &mut flat, &mut order);
        order
            .into_iter()
            .map(|key| {
                let value = flat.remove(&key).unwrap_or(Value::Null);
                let origin = self.origin(&key);
                (key, value, origin)
            })
            .collect()
    }
}

fn flatten(
    prefix: &str,
    value: &Value,
    flat: &mut BTreeMap<String, Value>,
    order: &mut Vec<String>,
) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, inner) in map {
                let dotted = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&dotted, inner, flat, order);
            }
        }
        other => {
            order.push(prefix.to_string());
            flat.insert(prefix.to_string(), other.clone());
        }
    }
}

/// The config a command uses: defaults, the file at `root`, then the environment.
pub fn load(root: &Path) -> Result<Config> {
    Layers::read(root)?.config(root)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn layers(user: Value, env: &[(&str, &str)]) -> Layers {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Layers {
            user,
            env: env_values(|name| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())),
        }
    }

    #[test]
    fn the_environment_wins_over_the_file_for_every_override() {
        let layers = layers(
            json!({"llm": {"baseUrl": "http://file:1/v1", "model": "from-file"}}),
            &[
                ("OPENAI_BASE_URL", " http://env:2/v1 "),
                ("AGENTIC_SDLC_MODEL", "from-env"),
            ],
        );
        let config = layers.config(Path::new("/p")).unwrap();
        assert_eq!(config.llm.base_url.as_deref(), Some("http://env:2/v1"));
        assert_eq!(config.llm.model, "from-env");
        assert_eq!(
            layers.origin("llm.baseUrl"),
            Origin::Env {
                variable: "OPENAI_BASE_URL".into()
            }
        );
        assert_eq!(layers.origin("llm"), Origin::File);
        assert_eq!(layers.overrides_within("llm").len(), 2);
        assert!(layers.overrides_within("llm.model")[0].variable == "AGENTIC_SDLC_MODEL");
        assert_eq!(layers.origin("llm.maxTokens"), Origin::Default);
    }

    #[test]
    fn an_empty_variable_is_unset_and_the_file_then_counts() {
        let layers = layers(
            json!({"llm": {"model": "from-file"}}),
            &[("AGENTIC_SDLC_MODEL", "  "), ("OPENAI_BASE_URL", "")],
        );
        let config = layers.config(Path::new("/p")).unwrap();
        assert_eq!(config.llm.model, "from-file");
        assert_eq!(config.llm.base_url, None);
        assert_eq!(layers.origin("llm.model"), Origin::File);
        assert_eq!(layers.origin("llm.baseUrl"), Origin::Default);
    }

    #[test]
    fn a_bad_override_names_its_variable_and_a_bad_file_its_key() {
        let bad_env = layers(json!({}), &[("OPENAI_BASE_URL", "localhost:8080")]);
        match bad_env.config(Path::new("/p")) {
            Err(Error::Env { variable, message }) => {
                assert_eq!(variable, "OPENAI_BASE_URL");
                assert!(message.contains("localhost:8080"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let bad_file = layers(
            json!({"llm": {"baseUrl": "nope"}}),
            &[("OPENAI_BASE_URL", "http://ok/v1")],
        );
        match bad_file.config(Path::new("/p")) {
            Err(Error::Config { message, .. }) => assert!(message.contains("llm.baseUrl")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn leaves_list_every_setting_with_its_origin() {
        let layers = layers(json!({"concurrency": 2}), &[("AGENTIC_SDLC_MODEL", "m")]);
        let leaves = layers.leaves();
        let find = |key: &str| {
            leaves
                .iter()
                .find(|(k, _, _)| k == key)
                .cloned()
                .unwrap_or_else(|| panic!("{key} missing"))
        };
        assert_eq!(
            find("concurrency"),
            ("concurrency".into(), json!(2), Origin::File)
        );
        assert_eq!(find("llm.model").1, json!("m"));
        assert_eq!(find("review.testCommand").2, Origin::Default);
        assert_eq!(find("phases").1, json!({}), "an empty object is a leaf");
        assert_eq!(leaves[0].0, "sdlcFolder", "document order");
    }
}
