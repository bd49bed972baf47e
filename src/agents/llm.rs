//! The model client every agent uses: one chat completion, with retries, over any
//! OpenAI-compatible endpoint (docs/design.md §10).
//!
//! Requests go through async-openai's `create_byot` / `create_stream_byot` with
//! `serde_json::Value` on both sides, so servers that deviate from OpenAI's schema still work;
//! the reading is done by hand in [`messages`] and [`stream`]. Retries happen in one place,
//! [`LlmClient::chat`]; [`transport`] explains why async-openai's own retry layer is replaced.

mod echo;
mod error;
mod messages;
mod models;
pub mod protocol_probe;
mod repetition;
mod request;
mod rounds;
mod settings;
mod stops;
mod stream;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
mod transport;

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Instant;

use async_openai::config::OpenAIConfig;
use async_openai::Client;
use futures::StreamExt;
use serde_json::{json, Value};

use super::meter::StoryMeter;
use crate::config::{Config, StructuredOutputs};
pub use error::LlmError;
use error::{ErrorContext, Failure};
pub(crate) use messages::generated_call_id;
pub use messages::{ChatMessage, ChatReply, ToolCall, Usage};
pub use models::{list_models, ModelList, ProbeError};
use request::{context_length_message, tokens_of_chars, TokenField, CHARS_PER_TOKEN};
pub use request::{
    Attempt, AttemptOutcome, ChatRequest, Exchange, ReplyShape, ResponseSchema, Sampling,
};
/// The HTTP client every outgoing request of the tool uses (TLS set up once, no redirect to
/// another origin); notification webhooks go through it too.
pub use settings::{is_local, LlmSettings};
use stops::Stops;
pub(crate) use transport::{http_client, install_tls_provider};

const SCHEMA_BOUNDED: u8 = 0;
const SCHEMA_UNBOUNDED: u8 = 1;
const SCHEMA_REFUSED: u8 = 2;

/// A chat-completions client for one endpoint and model. Cloning is cheap (one `Arc`), so
/// parallel stories share the connection pool.
#[derive(Clone)]
pub struct LlmClient {
    inner: Arc<Inner>,
    /// Set on a story's copy of the client: every call is admitted and counted (docs/design.md
    /// §14).
    meter: Option<StoryMeter>,
}

struct Inner {
    client: Client<OpenAIConfig>,
    settings: LlmSettings,
    /// How much of a schema the server accepts, learnt from its refusals and kept for the run:
    /// [`SCHEMA_BOUNDED`]; [`SCHEMA_UNBOUNDED`] once it refused a bound by name (hosted APIs
    /// with a strict subset of JSON Schema); [`SCHEMA_REFUSED`] once it refused the schema
    /// itself (prompting instead, under `auto` only).
    schema_level: AtomicU8,
    /// Set when the server asked for `max_completion_tokens` instead of `max_tokens`.
    wants_completion_tokens: AtomicBool,
    /// Set once a reply without token counts was estimated and the run was told so.
    warned_estimate: AtomicBool,
}

impl std::fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("settings", &self.inner.settings)
            .finish_non_exhaustive()
    }
}

impl LlmClient {
    /// A client for one request that is no part of the run's work (a probe): it never says
    /// that the server sends no token counts, which the run's own client says once.
    pub fn for_a_probe(settings: LlmSettings) -> Result<LlmClient, LlmError> {
        let client = LlmClient::new(settings)?;
        client.inner.warned_estimate.store(true, Ordering::Relaxed);
        Ok(client)
    }

    pub fn new(settings: LlmSettings) -> Result<LlmClient, LlmError> {
        let context = ErrorContext {
            endpoint: &settings.base_url,
            model: &settings.model,
            api_key: settings.key(),
        };
        // async-openai unwraps the parsed `Authorization` header, so a key that is not a valid
        // header value must be refused here rather than panic later.
        let key = settings.key().unwrap_or_default().to_string();
        if reqwest::header::HeaderValue::from_str(&format!("Bearer {key}")).is_err() {
            return Err(LlmError::InvalidRequest(context.describe(
                "the API key contains characters that cannot go in an HTTP header",
            )));
        }
        let http = transport::http_client(settings.read_timeout, settings.connect_timeout)
            .map_err(|err| {
                LlmError::InvalidRequest(
                    context.describe(&format!("cannot build the HTTP client: {err}")),
                )
            })?;
        // Set the key explicitly (even empty) so async-openai never falls back to OPENAI_API_KEY
        // when llm.apiKeyEnv names another variable.
        let config = OpenAIConfig::new()
            .with_api_base(&settings.base_url)
            .with_api_key(key);
        let client = Client::build(http.clone(), config).with_http_service(
            transport::Transport::new(http, settings.read_timeout, settings.stream),
        );
        Ok(LlmClient {
            inner: Arc::new(Inner {
                client,
                settings,
                schema_level: AtomicU8::new(SCHEMA_BOUNDED),
                wants_completion_tokens: AtomicBool::new(false),
                warned_estimate: AtomicBool::new(false),
            }),
            meter: None,
        })
    }

    pub fn from_config(config: &Config) -> crate::Result<LlmClient> {
        let settings = LlmSettings::from_config(config)?;
        Ok(LlmClient::new(settings)?)
    }

    /// This client for one story's calls, each admitted and counted by `meter`.
    pub fn metered(&self, meter: StoryMeter) -> LlmClient {
        LlmClient {
            inner: Arc::clone(&self.inner),
            meter: Some(meter),
        }
    }

    pub fn settings(&self) -> &LlmSettings {
        &self.inner.settings
    }

    /// One chat completion with `tools` (OpenAI function definitions; empty sends none) and
    /// the configured reply cap. See [`Self::exchange`]. The workflow goes through
    /// `conversation`; this is the short form for tests.
    #[cfg(test)]
    pub async fn chat(
        &self,
        messages: &[ChatMessage],
        tools: &[Value],
    ) -> Result<ChatReply, LlmError> {
        self.exchange(&ChatRequest::new(messages, tools))
            .await
            .result
    }

    /// Sends one request, trying again where that may help, and returns the answer with every
    /// attempt made:
    /// - 429, 5xx and dropped connections are retried up to `max_retries` times, waiting as long
    ///   as the server's `Retry-After` says (at most a minute) or else with exponential backoff;
    /// - a reply that ran into `llm.timeoutSeconds` is retried at most once: a model that rambled
    ///   until the timeout will usually ramble again (docs/design.md §15);
    /// - a server that refuses `response_format` under `auto` is asked again without it, and is
    ///   not asked for a schema again in this run; one that wants `max_completion_tokens` gets
    ///   the cap under that name from then on.
    ///
    /// A metered client asks its meter first (a story or run over budget sends nothing) and
    /// reports every request sent, answered or not, with the answer's tokens.
    ///
    /// The meter sees the prompt's estimated size: a prompt that alone would pass a budget is
    /// never sent, and the reply cap is lowered to what the budgets leave.
    pub async fn exchange(&self, request: &ChatRequest<'_>) -> Exchange {
        let mut request = *request;
        if let Some(meter) = &self.meter {
            match meter.admit(request.estimated_prompt_tokens()) {
                Err(refused) => {
                    return Exchange {
                        result: Err(LlmError::Budget(refused)),
                        attempts: Vec::new(),
                    }
                }
                Ok(Some(room)) => {
                    let cap = request.max_tokens.unwrap_or(self.inner.settings.max_tokens);
                    let room = u32::try_from(room).unwrap_or(u32::MAX).max(1);
                    request.max_tokens = Some(cap.min(room));
                }
                Ok(None) => {}
            }
        }
        let exchange = self.send_with_retries(&request).await;
        if let Some(meter) = self
            .meter
            .as_ref()
            .filter(|_| !exchange.attempts.is_empty())
        {
            meter.answered(&exchange.usage());
        }
        exchange
    }

    async fn send_with_retries(&self, request: &ChatRequest<'_>) -> Exchange {
        let settings = &self.inner.settings;
        let max_tokens = request.max_tokens.unwrap_or(settings.max_tokens);
        let mut attempts: Vec<Attempt> = Vec::new();
        let mut retries = 0;
        let mut timeouts = 0;
        let texts = request.messages.iter().filter_map(|message| match message {
            ChatMessage::User(text) => Some(text.as_str()),
            _ => None,
        });
        let stops = Stops::new(request.shape, texts);
        loop {
            let structured = request.schema.is_some() && self.schema_allowed();
            let body = self.request_body(request, max_tokens, structured);
            let started = Instant::now();
            let sent = self.send(&body, &stops).await;
            let number = attempts.len() as u32 + 1;
            let failure = match sent {
                Ok(mut reply) => {
                    if reply.usage.tokens() == 0 {
                        reply.usage = self.estimated_usage(request, &reply);
                    }
                    attempts.push(Attempt {
                        number,
                        duration: started.elapsed(),
                        structured,
                        outcome: AttemptOutcome::Answered {
                            finish_reason: reply.finish_reason.clone(),
                        },
                    });
                    return Exchange {
                        result: Ok(reply),
                        attempts,
                    };
                }
                Err(failure) => failure,
            };
            let error_text = failure.error.to_string();
            attempts.push(Attempt {
                number,
                duration: started.elapsed(),
                structured,
                outcome: match &failure.error {
                    LlmError::Timeout(_) => AttemptOutcome::TimedOut { error: error_text },
                    _ => AttemptOutcome::Failed { error: error_text },
                },
            });
            if structured && failure.error.is_response_format_unsupported() {
                if self.schema_level() == SCHEMA_BOUNDED && failure.error.refuses_schema_bounds() {
                    self.inner
                        .schema_level
                        .store(SCHEMA_UNBOUNDED, Ordering::Relaxed);
                    tracing::warn!(
                        "the LLM server refused the bounded JSON schema; sending it without \
                         length bounds for the rest of this run: {}",
                        failure.error
                    );
                    continue;
                }
                if settings.structured_outputs == StructuredOutputs::Auto {
                    self.inner
                        .schema_level
                        .store(SCHEMA_REFUSED, Ordering::Relaxed);
                    tracing::warn!(
                        "the LLM server refused a JSON schema in response_format; prompting for \
                         JSON instead for the rest of this run: {}",
                        failure.error
                    );
                    continue;
                }
                return Exchange {
                    result: Err(LlmError::SchemaRefused(failure.error.to_string())),
                    attempts,
                };
            }
            if failure.error.wants_max_completion_tokens()
                && !self
                    .inner
                    .wants_completion_tokens
                    .swap(true, Ordering::Relaxed)
            {
                continue;
            }
            if let LlmError::ContextLength(words) = &failure.error {
                let message = context_length_message(words, failure.context, request, max_tokens);
                return Exchange {
                    result: Err(LlmError::ContextLength(message)),
                    attempts,
                };
            }
            let timed_out = matches!(failure.error, LlmError::Timeout(_));
            if !failure.error.is_retryable()
                || retries >= settings.max_retries
                || (timed_out && timeouts >= 1)
            {
                return Exchange {
                    result: Err(failure.error),
                    attempts,
                };
            }
            if timed_out {
                timeouts += 1;
            }
            let delay = match failure.retry_after {
                Some(asked) => asked.min(transport::RETRY_AFTER_CAP),
                None => transport::backoff(settings.retry_base, retries),
            };
            retries += 1;
            tracing::warn!(
                "{}; retrying in {:.1}s (attempt {} of {})",
                failure.error,
                delay.as_secs_f64(),
                retries,
                settings.max_retries
            );
            tokio::time::sleep(delay).await;
        }
    }

    /// The usage of a reply that came without token counts: both sides counted from their
    /// size, and marked as estimated. The first time in a run it is said once, since budgets
    /// and costs then rest on the estimate.
    fn estimated_usage(&self, request: &ChatRequest<'_>, reply: &ChatReply) -> Usage {
        if !self.inner.warned_estimate.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "the LLM server sent no token counts (`usage`); tokens are counted from the \
                 text's size instead (about {CHARS_PER_TOKEN} characters a token), and budgets \
                 and costs rest on that estimate"
            );
        }
        let reply_chars = reply.content.as_deref().map_or(0, str::len)
            + reply
                .tool_calls
                .iter()
                .map(|call| call.name.len() + call.arguments.len())
                .sum::<usize>();
        Usage {
            prompt_tokens: request.estimated_prompt_tokens(),
            completion_tokens: tokens_of_chars(reply_chars),
            requests: 1,
            cost_usd: None,
            estimated: true,
        }
    }

    fn schema_level(&self) -> u8 {
        self.inner.schema_level.load(Ordering::Relaxed)
    }

    fn schema_allowed(&self) -> bool {
        match self.inner.settings.structured_outputs {
            StructuredOutputs::Off => false,
            StructuredOutputs::On => true,
            StructuredOutputs::Auto => self.schema_level() != SCHEMA_REFUSED,
        }
    }

    fn request_body(&self, request: &ChatRequest<'_>, max_tokens: u32, structured: bool) -> Value {
        let settings = &self.inner.settings;
        let messages: Vec<Value> = request.messages.iter().map(ChatMessage::to_json).collect();
        let mut body =
            json!({"model": settings.model, "messages": messages, "stream": settings.stream});
        let field = if self.inner.wants_completion_tokens.load(Ordering::Relaxed) {
            TokenField::MaxCompletionTokens
        } else {
            TokenField::MaxTokens
        };
        body[field.key()] = json!(max_tokens);
        if !request.tools.is_empty() {
            body["tools"] = Value::Array(request.tools.to_vec());
        }
        if let Some(temperature) = request.sampling.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(seed) = request.sampling.seed {
            body["seed"] = json!(seed);
        }
        if let Some(schema) = request.schema.filter(|_| structured) {
            body["response_format"] = if self.schema_level() == SCHEMA_BOUNDED {
                schema.response_format()
            } else {
                schema.without_bounds().response_format()
            };
        }
        if settings.stream {
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }

    fn context(&self) -> ErrorContext<'_> {
        let settings = &self.inner.settings;
        ErrorContext {
            endpoint: &settings.base_url,
            model: &settings.model,
            api_key: settings.key(),
        }
    }

    /// One attempt, classified; a reply is stopped, or cut when it came whole, where `stops`
    /// says.
    async fn send(&self, body: &Value, stops: &Stops) -> Result<ChatReply, Failure> {
        let context = self.context();
        let chat = self.inner.client.chat();
        if !self.inner.settings.stream {
            let response: Value = chat
                .create_byot(body)
                .await
                .map_err(|err| context.classify(err))?;
            return messages::parse_reply(&response)
                .map(without_loop)
                .map(|reply| stops.trimmed(reply))
                .map_err(|why| LlmError::InvalidResponse(context.describe(&why)).into());
        }
        let mut events = transport::STOPS
            .scope(stops.clone(), chat.create_stream_byot::<_, Value>(body))
            .await
            .map_err(|err| context.classify(err))?;
        let mut accumulator = stream::StreamAccumulator::default();
        while let Some(event) = events.next().await {
            let chunk = event.map_err(|err| context.classify(err))?;
            // OpenRouter and others report a failure inside the stream, after a 200.
            if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
                let status = error.get("code").and_then(Value::as_u64).unwrap_or(502);
                let status = u16::try_from(status)
                    .ok()
                    .filter(|s| (400..600).contains(s))
                    .unwrap_or(502);
                return Err(context.classify_status(
                    status,
                    &json!({"error": error}).to_string(),
                    None,
                ));
            }
            accumulator.push(&chunk);
        }
        let reply = accumulator.finish().map(without_loop);
        reply.map(|reply| stops.trimmed(reply)).ok_or_else(|| {
            LlmError::InvalidResponse(context.describe("the stream ended without any event")).into()
        })
    }
}

/// A reply cut off at the cap with what it repeated at its end kept once
/// ([`repetition::without_repeated_tail`]): the loop is no part of the answer, and the rest may
/// well be (a test file, then the same assertion until the cap).
fn without_loop(mut reply: ChatReply) -> ChatReply {
    if reply.finish_reason.as_deref() == Some("length") {
        if let Some(kept) = reply
            .content
            .as_deref()
            .and_then(repetition::without_repeated_tail)
        {
            reply.content = Some(kept);
        }
    }
    reply
}
