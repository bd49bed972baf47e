//! Where everything a person or a program reads is written.

use std::io::{IsTerminal, Write};

use super::progress::LiveArea;
use super::theme::Palette;
use super::visible::visible;
use crate::config::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet,
    Normal,
    Verbose,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Knows whether output is for a program (`--json`) or a person, how chatty to be, and whether
/// colour and spinners make sense on this terminal.
#[derive(Debug, Clone)]
pub struct Printer {
    verbosity: Verbosity,
    json: bool,
    color: bool,
    /// Colour on stderr, where log lines go: the same decision, asked of stderr.
    stderr_color: bool,
    palette: Palette,
    /// Live lines of a parallel run; stderr output goes above them.
    live: LiveArea,
    /// In unit tests, what would have been written, line by line, instead of the streams.
    #[cfg(test)]
    captured: Option<std::sync::Arc<std::sync::Mutex<Vec<String>>>>,
}

impl Printer {
    pub fn new(verbosity: Verbosity, json: bool, choice: ColorChoice) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = !json
            && match choice {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => !no_color && std::io::stdout().is_terminal(),
            };
        colored::control::set_override(color);
        let stderr_color = match choice {
            ColorChoice::Always => !json,
            ColorChoice::Never => false,
            ColorChoice::Auto => color && std::io::stderr().is_terminal(),
        };
        let spinners = !json && verbosity != Verbosity::Quiet && std::io::stderr().is_terminal();
        Self {
            verbosity,
            json,
            color,
            stderr_color,
            palette: Palette::new(Theme::Auto, color),
            // Made up front so every clone, and the log, writes above the same live lines.
            live: if spinners {
                LiveArea::new()
            } else {
                LiveArea::default()
            },
            #[cfg(test)]
            captured: None,
        }
    }

    /// Applies the configured theme once the config is known.
    pub fn with_theme(mut self, theme: Theme) -> Self {
        self.palette = Palette::new(theme, self.color);
        // `theme: none` means no colour anywhere, log lines included.
        self.stderr_color &= theme != Theme::None;
        self
    }

    /// A printer that writes nothing a person would see, for library tests.
    #[cfg(test)]
    pub fn silent() -> Self {
        Self {
            verbosity: Verbosity::Quiet,
            json: false,
            color: false,
            stderr_color: false,
            palette: Palette::new(Theme::None, false),
            live: LiveArea::default(),
            #[cfg(test)]
            captured: None,
        }
    }

    /// Whether log lines on stderr may carry colour: never with `--color never`, `--json`,
    /// `NO_COLOR`, or a stderr that is a file or a pipe (unless `--color always`).
    pub fn stderr_color(&self) -> bool {
        self.stderr_color
    }

    pub fn live(&self) -> &LiveArea {
        &self.live
    }

    pub fn palette(&self) -> &Palette {
        &self.palette
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    pub fn verbosity(&self) -> Verbosity {
        self.verbosity
    }

    /// The command's result for a person, on stdout. Nothing in JSON mode.
    pub fn out(&self, text: impl AsRef<str>) {
        if !self.json {
            let line = visible(text.as_ref(), self.color);
            #[cfg(test)]
            if let Some(captured) = &self.captured {
                captured.lock().unwrap().push(line.into_owned());
                return;
            }
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{line}");
        }
    }

    /// A document that is the command's whole result (a completion script, a manual page),
    /// on stdout as it is, in every mode.
    pub fn document(&self, text: &str) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }

    /// A JSON document on stdout, in JSON mode only.
    pub fn json_line<T: serde::Serialize + ?Sized>(&self, value: &T) {
        if self.json {
            let mut stdout = std::io::stdout().lock();
            let _ = serde_json::to_writer(&mut stdout, value);
            let _ = stdout.write_all(b"\n");
            let _ = stdout.flush();
        }
    }

    /// A JSON document on stdout, in JSON mode only, serialised as it is written: for large
    /// documents that need not be built as a `serde_json::Value` first.
    pub fn json_document<T: serde::Serialize>(&self, value: &T) {
        if self.json {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let _ = serde_json::to_writer(&mut stdout, value);
            let _ = stdout.write_all(b"\n");
            let _ = stdout.flush();
        }
    }

    /// Progress for a person, on stderr; hidden by `-q` and in JSON mode.
    pub fn info(&self, text: impl AsRef<str>) {
        if !self.json && self.verbosity >= Verbosity::Normal {
            self.eprint(text.as_ref());
        }
    }

    /// Something that went wrong in the work (an action failed, a story blocked), on stderr:
    /// shown even with `-q`, since it is why the command's exit code is what it is. Not in
    /// JSON mode, where the event on stdout says it.
    pub fn problem(&self, text: impl AsRef<str>) {
        if !self.json {
            self.eprint(text.as_ref());
        }
    }

    /// Extra detail shown with `-v`.
    pub fn detail(&self, text: impl AsRef<str>) {
        if !self.json && self.verbosity >= Verbosity::Verbose {
            self.eprint(&self.palette.dim(text.as_ref()));
        }
    }

    /// A warning always reaches stderr, even with `-q` or `--json`.
    pub fn warn(&self, text: impl AsRef<str>) {
        self.eprint(&format!(
            "{} {}",
            self.palette.warn("warning:"),
            text.as_ref()
        ));
    }

    pub fn error(&self, text: impl AsRef<str>) {
        self.eprint(&format!(
            "{} {}",
            self.palette.error("error:"),
            text.as_ref()
        ));
    }

    /// What a person can do about the error just printed, on a line of its own.
    pub fn hint(&self, text: impl AsRef<str>) {
        self.eprint(&format!("{} {}", self.palette.hint("Hint:"), text.as_ref()));
    }

    /// One line on stderr, above the live lines, with outside control characters shown: every
    /// method that writes for a person on stderr comes through here (docs/design.md §22).
    fn eprint(&self, text: &str) {
        let line = visible(text, self.stderr_color);
        #[cfg(test)]
        if let Some(captured) = &self.captured {
            captured.lock().unwrap().push(line.into_owned());
            return;
        }
        self.live.eprintln(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A printer for a person at a colour terminal, chatty, whose lines are kept.
    fn capturing() -> (Printer, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
        let captured = std::sync::Arc::default();
        let mut printer = Printer::silent();
        printer.verbosity = Verbosity::Verbose;
        printer.color = true;
        printer.stderr_color = true;
        printer.captured = Some(std::sync::Arc::clone(&captured));
        (printer, captured)
    }

    #[test]
    fn every_method_that_writes_for_a_person_escapes_control_characters() {
        let hostile = "model says \u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{1b}]8;;http://x\u{7}link\r";
        type Method = fn(&Printer, &str);
        let methods: [(&str, Method); 6] = [
            ("out", |p, t| p.out(t)),
            ("info", |p, t| p.info(t)),
            ("problem", |p, t| p.problem(t)),
            ("detail", |p, t| p.detail(t)),
            ("warn", |p, t| p.warn(t)),
            ("error", |p, t| p.error(t)),
        ];
        for (name, write) in methods {
            let (printer, captured) = capturing();
            write(&printer, hostile);
            let lines = captured.lock().unwrap().clone();
            assert_eq!(lines.len(), 1, "{name}: {lines:?}");
            let line = &lines[0];
            assert!(
                line.contains("\\x1b]52;c;ZXZpbA==\\x07"),
                "{name}: {line:?}"
            );
            assert!(line.contains("\\x1b[2J"), "{name}: {line:?}");
            assert!(line.contains("\\x0d"), "{name}: {line:?}");
            // Only the tool's own colour codes stay: ESC followed by `[`, digits and `m`.
            for (at, _) in line.match_indices('\u{1b}') {
                let rest = &line[at + 1..];
                let code = rest.strip_prefix('[').unwrap_or("");
                let digits = code
                    .bytes()
                    .take_while(|b| b.is_ascii_digit() || *b == b';')
                    .count();
                assert!(
                    rest.starts_with('[') && code.as_bytes().get(digits) == Some(&b'm'),
                    "{name}: an escape that is no colour code in {line:?}"
                );
            }
            assert!(!line.contains('\u{7}'), "{name}: {line:?}");
        }
    }
}
