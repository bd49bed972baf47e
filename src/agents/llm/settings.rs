//! How to reach the model: the endpoint, the model, the key and the limits of a call, read from
//! the config and the environment.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use crate::config::{Config, StructuredOutputs};

/// How to reach the model. Built from the config by [`LlmSettings::from_config`].
#[derive(Clone)]
pub struct LlmSettings {
    pub base_url: String,
    pub model: String,
    /// Never printed: `Debug` and `Display` of a secret show nothing of it.
    pub api_key: Option<SecretString>,
    /// `llm.timeoutSeconds`: the longest silence while waiting for bytes, and also the longest a
    /// whole exchange may take, body included, streamed or not (see [`transport`]).
    pub read_timeout: Duration,
    pub connect_timeout: Duration,
    /// Extra attempts after the first for 429, 5xx and dropped connections.
    pub max_retries: u32,
    pub stream: bool,
    /// First backoff delay, doubled per attempt; tests shorten it.
    pub retry_base: Duration,
    /// The reply cap sent with every request that names none of its own.
    pub max_tokens: u32,
    pub structured_outputs: StructuredOutputs,
}

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("read_timeout", &self.read_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_retries", &self.max_retries)
            .field("stream", &self.stream)
            .field("retry_base", &self.retry_base)
            .field("max_tokens", &self.max_tokens)
            .field("structured_outputs", &self.structured_outputs)
            .finish()
    }
}

impl LlmSettings {
    /// The key itself, for the one header that carries it and for blanking it out of text.
    pub fn key(&self) -> Option<&str> {
        self.api_key.as_ref().map(ExposeSecret::expose_secret)
    }

    /// Reads `llm.*` with the environment overrides of docs/design.md §4, plus
    /// `AGENTIC_SDLC_STREAM` (`1`/`true` or `0`/`false`; unset, a local server streams).
    pub fn from_config(config: &Config) -> crate::Result<LlmSettings> {
        Self::from_config_with_env(config, |name| std::env::var(name).ok())
    }

    /// [`Self::from_config`] with the environment passed in, so tests need not mutate it.
    pub(crate) fn from_config_with_env(
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> crate::Result<LlmSettings> {
        let base_url = config.base_url().trim().trim_end_matches('/').to_string();
        let key_var = &config.llm.api_key_env;
        // A key read from a file often ends in a newline, which is not valid in a header.
        let api_key = env(key_var)
            .map(|key| key.trim().to_string())
            .filter(|key| !key.is_empty())
            .map(SecretString::from);
        if api_key.is_none() && !is_local(&base_url) {
            return Err(crate::Error::MissingKey {
                variable: key_var.clone(),
                endpoint: base_url,
            });
        }
        // A local server streams by default: a reply that loops is then stopped as it loops
        // (see `repetition`), where a whole reply would run on to the cap or the timeout.
        let stream = match env("AGENTIC_SDLC_STREAM").as_deref().map(str::trim) {
            Some("1") => true,
            Some("0") => false,
            Some(value) if value.eq_ignore_ascii_case("true") => true,
            Some(value) if value.eq_ignore_ascii_case("false") => false,
            _ => is_local(&base_url),
        };
        Ok(LlmSettings {
            base_url,
            model: config.model(),
            api_key,
            read_timeout: Duration::from_secs(config.llm.timeout_seconds),
            connect_timeout: Duration::from_secs(10),
            max_retries: config.llm.max_retries,
            stream,
            retry_base: Duration::from_millis(500),
            max_tokens: config.llm.max_tokens,
            structured_outputs: config.llm.structured_outputs,
        })
    }
}

/// Whether the URL's host is this machine, where a model server needs no key: `localhost`
/// or a loopback address, parsed as a URL so that `127.example.com` is not taken for one.
pub fn is_local(url: &str) -> bool {
    match url::Url::parse(url).ok().as_ref().and_then(url::Url::host) {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    }
}
