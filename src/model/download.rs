//! Downloading a model file over HTTP: into its partial file, resumed from where an earlier
//! download stopped (`Range`), checked against its size and sha256 before it takes its place.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use super::error::ModelError;

/// What the file must be once whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected<'a> {
    pub name: &'a str,
    pub size: Option<u64>,
    pub sha256: Option<&'a str>,
}

/// How far a download or a step of a pull is, for a progress bar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// A line to show: what is being done now.
    Step(String),
    /// Bytes so far of a total, when it is known.
    Bytes { done: u64, total: Option<u64> },
}

/// Reports progress; the caller decides how it is shown.
pub type Report<'a> = &'a (dyn Fn(Progress) + Send + Sync);

/// An HTTP client for downloads: no key is ever sent, so redirects to a CDN are followed.
pub fn client() -> Result<reqwest::Client, ModelError> {
    crate::agents::llm::install_tls_provider();
    reqwest::Client::builder()
        .user_agent(concat!("agentic-sdlc/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(15))
        .read_timeout(Duration::from_secs(60))
        .build()
        .map_err(|err| ModelError::Unreachable {
            url: "(HTTP client)".into(),
            detail: err.to_string(),
        })
}

/// Downloads `url` into `partial`, going on from the bytes already there when the server can
/// send the rest, and checks the whole file. A file that does not match is removed, so the next
/// pull starts over; a download cut short keeps its bytes for the next one.
pub async fn fetch(
    client: &reqwest::Client,
    url: &str,
    partial: &Path,
    expected: Expected<'_>,
    report: Report<'_>,
) -> Result<(), ModelError> {
    let have = std::fs::metadata(partial).map_or(0, |m| m.len());
    if expected.size.is_some_and(|size| have > size) {
        fs_err::remove_file(partial).map_err(|err| ModelError::io(partial, err))?;
        return Box::pin(fetch(client, url, partial, expected, report)).await;
    }
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let unreachable = |err: reqwest::Error| ModelError::Unreachable {
        url: url.to_string(),
        detail: error_chain(&err),
    };
    let mut response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
    if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && Some(have) == expected.size {
        // The file was whole already; only the check was left to do.
        return check(partial, expected);
    }
    if !status.is_success() {
        return Err(ModelError::Http {
            url: url.to_string(),
            status: status.as_u16(),
        });
    }
    let mut file = fs_err::OpenOptions::new()
        .create(true)
        .append(resumed)
        .write(true)
        .truncate(!resumed)
        .open(partial)
        .map_err(|err| ModelError::io(partial, err))?;
    let mut done = if resumed { have } else { 0 };
    let total = expected
        .size
        .or_else(|| response.content_length().map(|rest| rest + done));
    if resumed {
        report(Progress::Step(format!(
            "resuming {} at {} of {}",
            expected.name,
            super::catalog::human_size(done),
            total.map_or("?".into(), super::catalog::human_size)
        )));
    }
    report(Progress::Bytes { done, total });
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        file.write_all(&chunk)
            .map_err(|err| ModelError::io(partial, err))?;
        done += chunk.len() as u64;
        report(Progress::Bytes { done, total });
    }
    file.flush().map_err(|err| ModelError::io(partial, err))?;
    drop(file);
    check(partial, expected)
}

/// Checks the whole file against its size and checksum; a file that fails is removed.
pub fn check(path: &Path, expected: Expected<'_>) -> Result<(), ModelError> {
    let size = std::fs::metadata(path)
        .map_err(|err| ModelError::io(path, err))?
        .len();
    if let Some(want) = expected.size.filter(|want| *want != size) {
        let _ = fs_err::remove_file(path);
        return Err(ModelError::SizeMismatch {
            name: expected.name.to_string(),
            expected: want,
            got: size,
        });
    }
    if let Some(want) = expected.sha256 {
        let got = sha256_of(path)?;
        if !got.eq_ignore_ascii_case(want) {
            let _ = fs_err::remove_file(path);
            return Err(ModelError::ChecksumMismatch {
                name: expected.name.to_string(),
                expected: want.to_string(),
                got,
            });
        }
    }
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path)
        .and_then(|mut file| std::io::Read::read_exact(&mut file, &mut magic));
    if read.is_err() || &magic != b"GGUF" {
        let _ = fs_err::remove_file(path);
        return Err(ModelError::NotGguf {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// The file's sha256 in lowercase hex.
pub fn sha256_of(path: &Path) -> Result<String, ModelError> {
    let mut file = fs_err::File::open(path).map_err(|err| ModelError::io(path, err))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let read =
            std::io::Read::read(&mut file, &mut buffer).map_err(|err| ModelError::io(path, err))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

/// An error with its causes, which reqwest keeps apart ("error sending request: … refused").
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use wiremock::matchers::{header, method, path};
    use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

    use super::*;

    /// A model file of a few kilobytes.
    fn body() -> Vec<u8> {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend((0..20_000u32).map(|i| (i % 251) as u8));
        bytes
    }

    fn sha(bytes: &[u8]) -> String {
        Sha256::digest(bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }

    /// Serves `bytes`, honouring `Range: bytes=N-` as a file server does.
    struct RangedFile(Vec<u8>);

    impl Respond for RangedFile {
        fn respond(&self, request: &Request) -> ResponseTemplate {
            let from = request
                .headers
                .get("range")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("bytes="))
                .and_then(|v| v.trim_end_matches('-').parse::<usize>().ok());
            match from {
                Some(from) if from >= self.0.len() => ResponseTemplate::new(416),
                Some(from) => ResponseTemplate::new(206).set_body_bytes(self.0[from..].to_vec()),
                None => ResponseTemplate::new(200).set_body_bytes(self.0.clone()),
            }
        }
    }

    fn quiet() -> impl Fn(Progress) + Send + Sync {
        |_| {}
    }

    #[tokio::test]
    async fn a_download_cut_short_resumes_with_a_range_and_ends_checked() {
        let server = MockServer::start().await;
        let bytes = body();
        Mock::given(method("GET"))
            .and(path("/m.gguf"))
            .respond_with(RangedFile(bytes.clone()))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let partial = dir.path().join("m.gguf.part");
        std::fs::write(&partial, &bytes[..7_000]).unwrap();
        let expected = Expected {
            name: "m",
            size: Some(bytes.len() as u64),
            sha256: Some(&sha(&bytes)),
        };
        let seen = Mutex::new(Vec::new());
        let report = |progress: Progress| seen.lock().unwrap().push(progress);
        let url = format!("{}/m.gguf", server.uri());
        fetch(&client().unwrap(), &url, &partial, expected, &report)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&partial).unwrap(), bytes);
        let requests = server.received_requests().await.unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].headers["range"], "bytes=7000-");
        let seen = seen.into_inner().unwrap();
        assert!(
            matches!(&seen[0], Progress::Step(line) if line.starts_with("resuming m at 7.0 kB")),
            "{seen:?}"
        );
        assert_eq!(
            seen.last(),
            Some(&Progress::Bytes {
                done: bytes.len() as u64,
                total: Some(bytes.len() as u64)
            })
        );
    }

    #[tokio::test]
    async fn a_file_that_does_not_match_its_checksum_is_removed_and_named() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(RangedFile(body()))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let partial = dir.path().join("m.gguf.part");
        let wrong = "0".repeat(64);
        let expected = Expected {
            name: "m",
            size: None,
            sha256: Some(&wrong),
        };
        let err = fetch(
            &client().unwrap(),
            &server.uri(),
            &partial,
            expected,
            &quiet(),
        )
        .await
        .unwrap_err();
        match err {
            ModelError::ChecksumMismatch { got, expected, .. } => {
                assert_eq!(got, sha(&body()));
                assert_eq!(expected, wrong);
            }
            other => panic!("{other:?}"),
        }
        assert!(!partial.exists(), "a bad file is not kept");
    }

    #[tokio::test]
    async fn a_full_disk_is_said_as_such_and_what_was_written_stays() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .and(header(
                "user-agent",
                concat!("agentic-sdlc/", env!("CARGO_PKG_VERSION")),
            ))
            .respond_with(RangedFile(body()))
            .mount(&server)
            .await;
        // The kernel's /dev/full answers every write with ENOSPC.
        let err = fetch(
            &client().unwrap(),
            &server.uri(),
            Path::new("/dev/full"),
            Expected {
                name: "m",
                size: None,
                sha256: None,
            },
            &quiet(),
        )
        .await
        .unwrap_err();
        assert!(matches!(err, ModelError::DiskFull { .. }), "{err:?}");
        assert!(crate::hint::Hint::hint(&err).unwrap().contains("resumes"));
    }

    #[tokio::test]
    async fn an_error_status_names_the_url_and_writes_nothing() {
        let server = MockServer::start().await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(404))
            .mount(&server)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let partial = dir.path().join("m.gguf.part");
        let url = format!("{}/x/resolve/main/m.gguf", server.uri());
        let err = fetch(
            &client().unwrap(),
            &url,
            &partial,
            Expected {
                name: "m",
                size: None,
                sha256: None,
            },
            &quiet(),
        )
        .await
        .unwrap_err();
        assert!(
            matches!(&err, ModelError::Http { status: 404, url: u } if *u == url),
            "{err:?}"
        );
        assert!(!partial.exists());
    }

    #[test]
    fn a_file_that_is_no_gguf_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.gguf");
        std::fs::write(&path, b"<html>not found</html>").unwrap();
        let err = check(
            &path,
            Expected {
                name: "m",
                size: None,
                sha256: None,
            },
        )
        .unwrap_err();
        assert!(matches!(err, ModelError::NotGguf { .. }), "{err:?}");
        assert!(!path.exists());
    }
}
