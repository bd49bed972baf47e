//! Live lines for a parallel run on a terminal (SPEC §14): one line per running story with its
//! phase, elapsed time and tokens, drawn above the log by indicatif's `MultiProgress`.
//!
//! While live lines are shown, everything the printer writes to stderr goes through the
//! `MultiProgress` (so log lines land above the live ones instead of through them), and a
//! person's prompt runs with the lines suspended (so it is never drawn over).

use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// The live area; empty when stderr is not a terminal, in JSON mode, or with `-q`.
#[derive(Debug, Clone, Default)]
pub struct LiveArea {
    multi: Option<MultiProgress>,
}

impl LiveArea {
    pub fn new() -> LiveArea {
        LiveArea {
            multi: Some(MultiProgress::new()),
        }
    }

    pub fn is_active(&self) -> bool {
        self.multi.is_some()
    }

    /// A new line for one running story; `None` when there is no live area.
    pub fn line(&self, prefix: String) -> Option<LiveLine> {
        let multi = self.multi.as_ref()?;
        let bar = multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} · {elapsed} · {msg}")
                .expect("static template")
                .tick_strings(&["⟳", "⟲", "⟳", "⟲", "✓"]),
        );
        bar.set_prefix(prefix);
        bar.set_message("0 tokens");
        bar.enable_steady_tick(Duration::from_millis(200));
        Some(LiveLine { bar })
    }

    /// Writes a line to stderr above the live lines.
    pub fn eprintln(&self, text: &str) {
        match &self.multi {
            Some(multi) => multi.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Runs `f` with the live lines hidden, for a prompt that must not be drawn over.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.multi {
            Some(multi) => multi.suspend(f),
            None => f(),
        }
    }
}

/// One running story's line.
pub struct LiveLine {
    bar: ProgressBar,
}

impl LiveLine {
    pub fn set_tokens(&self, tokens: u64) {
        self.bar.set_message(format!("{tokens} tokens"));
    }

    /// Removes the line; the event that reports the result prints its own.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
