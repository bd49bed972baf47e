//! Live lines of a run on a terminal (docs/design.md §14): a spinner for one running story, one
//! line per running story in a parallel run, with its phase, elapsed time and tokens, drawn above
//! the log by indicatif's `MultiProgress`.
//!
//! While live lines are shown, everything the printer writes to stderr goes through the
//! `MultiProgress` (so log lines land above the live ones instead of through them). A person's
//! prompt runs with the lines hidden and other output held back (so it is never drawn over),
//! without holding any lock the other stories need: they go on working meanwhile.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A story among several: what it does, how long it has run, then tokens and its last tool.
const LINE_TEMPLATE: &str = "{spinner} {prefix} · {elapsed} · {msg}";
/// The only running story: what it does and for how long, then tokens and its last tool.
const SPINNER_TEMPLATE: &str = "{spinner} {prefix} {elapsed:.dim} {msg:.dim}";

/// The live area; empty when stderr is not a terminal, in JSON mode, or with `-q`.
#[derive(Debug, Clone, Default)]
pub struct LiveArea {
    multi: Option<MultiProgress>,
    /// Lines printed while a prompt holds the terminal, shown once it lets go.
    held: Arc<Mutex<Option<Vec<String>>>>,
}

impl LiveArea {
    pub fn new() -> LiveArea {
        LiveArea {
            multi: Some(MultiProgress::new()),
            held: Arc::default(),
        }
    }

    fn held(&self) -> MutexGuard<'_, Option<Vec<String>>> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new line for one of several running stories; `None` when there is no live area.
    pub fn line(&self, prefix: String) -> Option<LiveLine> {
        self.add(LINE_TEMPLATE, prefix)
    }

    /// The spinner of the one running story; `None` when there is no live area.
    pub fn spinner(&self, prefix: String) -> Option<LiveLine> {
        self.add(SPINNER_TEMPLATE, prefix)
    }

    fn add(&self, template: &'static str, prefix: String) -> Option<LiveLine> {
        let multi = self.multi.as_ref()?;
        let bar = multi.add(ProgressBar::new_spinner());
        bar.set_style(
            ProgressStyle::with_template(template)
                .expect("the templates are constants that parse")
                .tick_strings(&["⟳", "⟲", "⟳", "⟲", "✓"]),
        );
        bar.set_prefix(super::visible(&prefix, false).into_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        Some(LiveLine { bar })
    }

    /// Writes a line to stderr above the live lines, or holds it back while a prompt is open.
    pub fn eprintln(&self, text: &str) {
        if let Some(held) = self.held().as_mut() {
            held.push(text.to_string());
            return;
        }
        match &self.multi {
            Some(multi) => multi.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// Runs `f`, a prompt, with the live lines cleared and hidden, and every line printed
    /// meanwhile held back; then the lines come back and the held ones are printed. Unlike
    /// `MultiProgress::suspend`, it holds no lock while `f` runs: other stories print, draw
    /// and work on as usual, unseen until the person has answered.
    pub fn hold<R>(&self, f: impl FnOnce() -> R) -> R {
        *self.held() = Some(Vec::new());
        if let Some(multi) = &self.multi {
            let _ = multi.clear();
            multi.set_draw_target(ProgressDrawTarget::hidden());
        }
        let result = f();
        if let Some(multi) = &self.multi {
            multi.set_draw_target(ProgressDrawTarget::stderr());
        }
        let held = self.held().take().unwrap_or_default();
        for line in held {
            self.eprintln(&line);
        }
        result
    }
}

/// One running story's line.
pub struct LiveLine {
    bar: ProgressBar,
}

impl LiveLine {
    /// What follows the elapsed time: tokens, the last tool.
    pub fn set_message(&self, text: String) {
        self.bar
            .set_message(super::visible(&text, false).into_owned());
    }

    /// Removes the line; the event that reports the result prints its own.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}
