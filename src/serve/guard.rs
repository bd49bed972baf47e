//! Who may use the board's page.
//!
//! - **The token.** With `--token`, every request carries it: as `Authorization: Bearer …`, as
//!   the cookie the server sets when a page is opened with `?token=…` (so that the page's own
//!   fetches, event stream and form posts carry it), or in the query itself. Anything else
//!   gets 401.
//! - **Other sites.** On localhost, a page from another site could still reach the server
//!   through the visitor's browser. A request naming a host other than the loopback one is
//!   refused (DNS rebinding), and so is a form posted from another origin.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::pages::frame::problem_page;

/// The cookie that carries the token once a page was opened with it.
const COOKIE: &str = "agentic_sdlc_token";

pub(super) struct Guard {
    token: Option<String>,
    /// The server listens on a loopback address only.
    loopback: bool,
}

/// How a request showed the token.
#[derive(Debug, PartialEq)]
enum Shown {
    /// In a header or the cookie: nothing more to do.
    Carried,
    /// In the query: the response sets the cookie, so the page's next requests carry it.
    InQuery,
    Missing,
}

impl Guard {
    pub(super) fn new(token: Option<String>, loopback: bool) -> Guard {
        Guard { token, loopback }
    }

    fn token_shown(&self, token: &str, request: &Request) -> Shown {
        let headers = request.headers();
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if bearer.is_some_and(|given| same(given, token)) {
            return Shown::Carried;
        }
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == COOKIE)
            .map(|(_, value)| percent_decode(value));
        if cookie.is_some_and(|given| same(&given, token)) {
            return Shown::Carried;
        }
        let query = request
            .uri()
            .query()
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter_map(|pair| pair.split_once('='))
            .find(|(name, _)| *name == "token")
            .map(|(_, value)| percent_decode(value));
        if query.is_some_and(|given| same(&given, token)) {
            return Shown::InQuery;
        }
        Shown::Missing
    }
}

/// The checks every request goes through before its handler.
pub(super) async fn check(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    if guard.loopback && !loopback_host(request.headers()) {
        return refuse(
            StatusCode::FORBIDDEN,
            "This server answers requests for localhost only.",
        );
    }
    if request.method() != Method::GET
        && request.method() != Method::HEAD
        && !same_origin(request.headers())
    {
        return refuse(
            StatusCode::FORBIDDEN,
            "A form from another site cannot decide for this board.",
        );
    }
    let shown = match &guard.token {
        Some(token) => guard.token_shown(token, &request),
        None => Shown::Carried,
    };
    if shown == Shown::Missing {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "This board needs its token: open the address with ?token=<token>, or send Authorization: Bearer <token>.",
        );
    }
    let mut response = next.run(request).await;
    if let (Shown::InQuery, Some(token)) = (shown, &guard.token) {
        let cookie = format!(
            "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
            percent_encode(token)
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
    }
    response
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let title = status.canonical_reason().unwrap_or("Refused");
    (
        status,
        axum::response::Html(problem_page(status.as_u16(), title, why)),
    )
        .into_response()
}

/// The host a request names, without its port.
fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    authority.split(':').next().unwrap_or_default()
}

/// Whether the request names a loopback host (or none, as HTTP/1.0 may).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return headers.get(header::HOST).is_none();
    };
    let host = host_of(host);
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a request that changes something comes from the board's own pages: its `Origin`,
/// when the browser sends one, names the host the request went to.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let origin = origin.to_str().unwrap_or("null");
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    origin
        .split_once("://")
        .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host))
}

/// Compares secrets in time that does not depend on where they differ.
fn same(given: &str, expected: &str) -> bool {
    let (a, b) = (given.as_bytes(), expected.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Percent-encodes everything but unreserved characters, for a query value or a cookie.
pub(super) fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Undoes [`percent_encode`] (and `+` for a space, as forms write it); bad escapes stay as
/// they are.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_encoding_round_trips() {
        for text in ["plain", "a b&c=d/é", "100%", "%zz", ""] {
            assert_eq!(percent_decode(&percent_encode(text)), text, "{text}");
        }
        assert_eq!(percent_decode("a+b%20c%"), "a b c%");
    }

    #[test]
    fn hosts_and_origins() {
        let headers = |pairs: &[(header::HeaderName, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
            }
            map
        };
        for (host, local) in [
            ("127.0.0.1:7420", true),
            ("localhost:7420", true),
            ("[::1]:7420", true),
            ("127.1.2.3", true),
            ("evil.example:7420", false),
            ("10.0.0.1:7420", false),
        ] {
            assert_eq!(
                loopback_host(&headers(&[(header::HOST, host)])),
                local,
                "{host}"
            );
        }
        assert!(loopback_host(&HeaderMap::new()), "HTTP/1.0 sends no Host");
        let host = (header::HOST, "127.0.0.1:7420");
        assert!(same_origin(&headers(std::slice::from_ref(&host))));
        assert!(same_origin(&headers(&[
            host.clone(),
            (header::ORIGIN, "http://127.0.0.1:7420")
        ])));
        assert!(!same_origin(&headers(&[
            host.clone(),
            (header::ORIGIN, "https://evil.example")
        ])));
        assert!(!same_origin(&headers(&[host, (header::ORIGIN, "null")])));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same("s3cret", "s3cret"));
        assert!(!same("s3cre", "s3cret"));
        assert!(!same("s3creT", "s3cret"));
    }
}
