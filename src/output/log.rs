//! The diagnostic log (`tracing`, `RUST_LOG`, `-v`) on stderr, written above the run's live
//! lines like every other line, so a warning is never drawn through a spinner.

use std::io::Write;

use super::printer::{Printer, Verbosity};
use super::progress::LiveArea;

/// Installs the log for this process; a second call keeps the first.
/// With `-q` only errors are logged: results and errors, nothing else. The module a line comes
/// from is shown with `-v` only; a person reading a warning needs its words, not a Rust path.
pub fn init(printer: &Printer, verbose: bool) {
    let quiet = printer.verbosity() == Verbosity::Quiet;
    let default = match (verbose, quiet) {
        (true, _) => "agentic_sdlc=debug",
        (false, true) => "error",
        (false, false) => "warn",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let live = printer.live().clone();
    let colour = printer.stderr_color();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || LogLine {
            live: live.clone(),
            colour,
            text: Vec::new(),
        })
        .with_ansi(printer.stderr_color())
        .with_target(verbose)
        .without_time()
        .try_init();
}

/// One log event, collected and written whole when the logger lets go of it.
struct LogLine {
    live: LiveArea,
    /// The log's own colour codes are kept; any other control character is shown.
    colour: bool,
    text: Vec<u8>,
}

impl Write for LogLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for LogLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.text);
        let text = text.trim_end_matches('\n');
        if !text.is_empty() {
            self.live.eprintln(&super::visible(text, self.colour));
        }
    }
}
