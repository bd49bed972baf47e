//! The HTTP executor under async-openai, and the timing of retries.
//!
//! async-openai 0.43 builds every request (URL, `Authorization: Bearer`, JSON body) and parses
//! every answer, but by default it sends through its own `OpenAIRetryLayer`: always 3 retries
//! (not configurable without the `middleware` feature), `Retry-After` read only as whole seconds
//! and never capped, no jitter, and only connect errors (not timeouts or a dropped body)
//! retried. Its errors keep the status but not the headers, and a non-JSON 4xx body (a proxy's
//! HTML page) loses even the status. A retry loop of our own on top would multiply with its
//! loop, and could not see `Retry-After`.
//!
//! So [`Transport`] replaces that executor through `Client::with_http_service`: it sends the
//! request async-openai built with our `reqwest::Client` and, for any non-2xx answer, returns
//! an [`HttpFailure`] holding the status, the raw body and the `Retry-After` delay (carried as
//! `OpenAIError::Boxed`). Successful answers go back to async-openai untouched, so it still
//! parses JSON and SSE. The only retry loop is [`super::LlmClient::chat`]'s.
//!
//! The transport also bounds every answer (docs/design.md §13): the whole exchange, body included,
//! must end within `llm.timeoutSeconds` (a reply that drips a byte at a time never trips a per-read
//! timeout), and a body larger than [`REPLY_CAP`] is an error, read no further. So a successful
//! body, streamed or not, is read here in full before async-openai sees it.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use reqwest::header::HeaderMap;

use super::stops::{Cut, Stops};
use super::stream::StreamWatch;

tokio::task_local! {
    /// What stops a streamed reply to the request sent in this task ([`Stops`]). A
    /// task-local, because async-openai builds each request and calls [`Transport`] for it in
    /// the caller's task, and no field of the request may carry it.
    pub(crate) static STOPS: Stops;
}

/// The largest reply body read; anything larger is refused as it arrives.
pub(crate) const REPLY_CAP: usize = 16 * 1024 * 1024;
/// The part of an error body kept for the message.
const ERROR_BODY_CAP: usize = 64 * 1024;

/// The longest wait between attempts that backoff alone will choose.
const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// The longest `Retry-After` we honour; a server asking for an hour gets a minute.
pub(crate) const RETRY_AFTER_CAP: Duration = Duration::from_secs(60);

/// reqwest is built with `rustls-no-provider`, so a process-wide crypto provider must exist
/// before the first TLS client. Installing fails harmlessly if someone else already did.
pub(crate) fn install_tls_provider() {
    static TLS_PROVIDER: Once = Once::new();
    TLS_PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Builds the HTTP client with per-read and connect timeouts; the deadline for a whole exchange
/// is [`Transport`]'s.
pub(crate) fn http_client(
    read_timeout: Duration,
    connect_timeout: Duration,
) -> reqwest::Result<reqwest::Client> {
    install_tls_provider();
    reqwest::Client::builder()
        .user_agent(concat!("agentic-sdlc/", env!("CARGO_PKG_VERSION")))
        .read_timeout(read_timeout)
        .connect_timeout(connect_timeout)
        // The key goes to the configured endpoint only (docs/design.md §13): a redirect to another
        // origin is not followed (it ends as an HTTP error naming its status).
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if same_origin && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
}

/// A non-2xx answer with what the retry loop and the error message need.
#[derive(Debug)]
pub(crate) struct HttpFailure {
    pub(crate) status: u16,
    pub(crate) body: String,
    pub(crate) retry_after: Option<Duration>,
}

impl std::fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HTTP {}", self.status)
    }
}

impl std::error::Error for HttpFailure {}

/// A reply that broke one of the transport's bounds.
#[derive(Debug)]
pub(crate) enum ReplyLimit {
    /// The body passed [`REPLY_CAP`].
    TooLarge,
    /// The exchange did not end within `llm.timeoutSeconds`.
    Deadline(Duration),
}

impl std::fmt::Display for ReplyLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplyLimit::TooLarge => write!(
                f,
                "the reply is larger than {} MiB and was refused",
                REPLY_CAP / (1024 * 1024)
            ),
            ReplyLimit::Deadline(limit) => write!(
                f,
                "no complete reply within {}s (llm.timeoutSeconds bounds a whole reply, streamed or not)",
                limit.as_secs()
            ),
        }
    }
}

impl std::error::Error for ReplyLimit {}

/// See the module documentation.
#[derive(Clone)]
pub(crate) struct Transport {
    http: reqwest::Client,
    /// How long one exchange may take, from sending to the last byte of the answer.
    deadline: Duration,
    /// Whether the requests ask for a stream (`LlmSettings::stream`, which every request body
    /// carries).
    stream: bool,
}

impl Transport {
    pub(crate) fn new(http: reqwest::Client, deadline: Duration, stream: bool) -> Self {
        Transport {
            http,
            deadline,
            stream,
        }
    }
}

impl tower_service::Service<HttpRequestFactory> for Transport {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), OpenAIError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let http = self.http.clone();
        let (deadline, stream) = (self.deadline, self.stream);
        Box::pin(async move { exchange(http, factory, deadline, stream).await })
    }
}

/// Sends one request and reads its answer within the caps, all of it within `deadline`;
/// `wants_stream`: the request asked for a stream.
async fn exchange(
    http: reqwest::Client,
    factory: HttpRequestFactory,
    deadline: Duration,
    wants_stream: bool,
) -> Result<reqwest::Response, OpenAIError> {
    let until = tokio::time::Instant::now() + deadline;
    let late = || OpenAIError::Boxed(Box::new(ReplyLimit::Deadline(deadline)));
    let request = factory.build().await?;
    let mut response = tokio::time::timeout_at(until, http.execute(request))
        .await
        .map_err(|_| late())??;
    let status = response.status();
    if !status.is_success() {
        let retry_after = retry_after(response.headers(), chrono::Utc::now());
        // A body that cannot be read is a dropped connection, which the loop retries.
        let (body, _) = tokio::time::timeout_at(until, read_capped(&mut response, ERROR_BODY_CAP))
            .await
            .map_err(|_| late())??;
        return Err(OpenAIError::Boxed(Box::new(HttpFailure {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
            retry_after,
        })));
    }
    if response
        .content_length()
        .is_some_and(|length| length > REPLY_CAP as u64)
    {
        return Err(OpenAIError::Boxed(Box::new(ReplyLimit::TooLarge)));
    }
    let streamed = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|kind| kind.starts_with("text/event-stream"));
    let body = if streamed {
        read_stream(&mut response, until).await?.ok_or_else(late)?
    } else {
        let (body, complete) =
            tokio::time::timeout_at(until, read_capped(&mut response, REPLY_CAP))
                .await
                .map_err(|_| late())??;
        if !complete {
            return Err(OpenAIError::Boxed(Box::new(ReplyLimit::TooLarge)));
        }
        body
    };
    // A stream asked for and a whole reply given is read as the events it would have been.
    let whole = (wants_stream && !streamed)
        .then(|| serde_json::from_slice::<serde_json::Value>(&body).ok())
        .flatten()
        .filter(|reply| reply.get("choices").is_some());
    let body = match &whole {
        Some(reply) => super::stream::as_events(reply),
        None => body,
    };
    let mut rebuilt = http::Response::builder().status(status);
    if let Some(headers) = rebuilt.headers_mut() {
        *headers = response.headers().clone();
        if whole.is_some() {
            headers.remove(reqwest::header::CONTENT_LENGTH);
            headers.insert(
                reqwest::header::CONTENT_TYPE,
                reqwest::header::HeaderValue::from_static("text/event-stream"),
            );
        }
    }
    let rebuilt = rebuilt
        .body(reqwest::Body::from(body))
        .map_err(|err| OpenAIError::InvalidArgument(err.to_string()))?;
    Ok(reqwest::Response::from(rebuilt))
}

/// Reads a streamed body up to [`REPLY_CAP`], and stops where [`Stops`] says ([`StreamWatch`])
/// or at `until`: the connection is dropped, which stops the server's generation too
/// (llama.cpp's server cancels the task of a client gone), and the events read so far end as a
/// reply cut off at the cap (an echo as [`super::echo::ECHO_FINISH`]). A reply still going at the deadline is kept so too, rather than lost and
/// asked for again: a 1.5B model's implement reply ran 300 seconds, 4,000 tokens, and was
/// asked for once more (the textkit benchmark, 2026-11-29). `None`: the deadline came before
/// any event.
async fn read_stream(
    response: &mut reqwest::Response,
    until: tokio::time::Instant,
) -> Result<Option<Vec<u8>>, OpenAIError> {
    let mut watch = StreamWatch::watching(STOPS.try_with(Stops::clone).unwrap_or_default());
    loop {
        let chunk = match tokio::time::timeout_at(until, response.chunk()).await {
            Ok(chunk) => chunk?,
            Err(_) if watch.has_text() => {
                tracing::warn!(
                    "the model's reply was still going at llm.timeoutSeconds; it was stopped \
                     there and counts as cut off"
                );
                return Ok(Some(watch.cut_off(Cut::Loop)));
            }
            Err(_) => return Ok(None),
        };
        let Some(chunk) = chunk else {
            return Ok(Some(watch.into_body()));
        };
        if watch.len() + chunk.len() > REPLY_CAP {
            return Err(OpenAIError::Boxed(Box::new(ReplyLimit::TooLarge)));
        }
        let Some(cut) = watch.push(&chunk) else {
            continue;
        };
        tracing::warn!("{}", cut.warning());
        return Ok(Some(watch.cut_off(cut)));
    }
}

/// Reads the body up to `cap` bytes; `false` when there was more, which is left unread.
async fn read_capped(
    response: &mut reqwest::Response,
    cap: usize,
) -> Result<(Vec<u8>, bool), OpenAIError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > cap {
            body.extend_from_slice(&chunk[..cap - body.len()]);
            return Ok((body, false));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, true))
}

/// The wait a server asked for: OpenAI's `retry-after-ms`, else `Retry-After` as seconds or as
/// an HTTP date.
pub(crate) fn retry_after(
    headers: &HeaderMap,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let seconds = |text: &str, scale: f64| {
        text.parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| Duration::from_secs_f64((n * scale).min(86_400.0)))
    };
    if let Some(delay) = header("retry-after-ms").and_then(|ms| seconds(ms, 0.001)) {
        return Some(delay);
    }
    let value = header("retry-after")?;
    seconds(value, 1.0).or_else(|| {
        let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
        Some(
            (date.with_timezone(&chrono::Utc) - now)
                .to_std()
                .unwrap_or(Duration::ZERO),
        )
    })
}

/// Exponential backoff from `base`, capped, with up to 20% jitter so that parallel stories
/// hitting the same rate limit do not come back in lockstep.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let delay = base
        .saturating_mul(2u32.saturating_pow(attempt.min(20)))
        .min(BACKOFF_CAP);
    // A fresh `RandomState` is randomly keyed, which is all the randomness jitter needs.
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    let fraction = (random % 1000) as f64 / 1000.0 * 0.2;
    delay + delay.mul_f64(fraction)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn retry_after_forms() {
        let now = chrono::Utc
            .with_ymd_and_hms(2026, 11, 22, 10, 0, 0)
            .unwrap();
        let cases: [(&str, &str, Option<Duration>); 6] = [
            ("retry-after", "3", Some(Duration::from_secs(3))),
            ("retry-after", "1.5", Some(Duration::from_millis(1500))),
            (
                "retry-after",
                "Sun, 22 Nov 2026 10:00:07 GMT",
                Some(Duration::from_secs(7)),
            ),
            (
                "retry-after",
                "Sun, 22 Nov 2026 09:00:00 GMT",
                Some(Duration::ZERO),
            ),
            ("retry-after", "soon", None),
            ("retry-after-ms", "250", Some(Duration::from_millis(250))),
        ];
        for (name, value, expected) in cases {
            let mut headers = HeaderMap::new();
            headers.insert(name, HeaderValue::from_str(value).unwrap());
            assert_eq!(retry_after(&headers, now), expected, "{name}: {value}");
        }
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let base = Duration::from_millis(500);
        for (attempt, low) in [(0, 500), (1, 1000), (2, 2000), (10, 30_000)] {
            let delay = backoff(base, attempt);
            let low = Duration::from_millis(low);
            assert!(
                delay >= low && delay <= low.mul_f64(1.2),
                "attempt {attempt}: {delay:?}"
            );
        }
    }
}
