//! One story: its file, its column, its frontmatter and its Markdown body.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::frontmatter::{Frontmatter, FrontmatterError};
use super::meta::{read_meta, StoryMeta, REVIEWS_FLAG};
use super::records::{PhaseReviews, RefinementIteration, ReviewRecord, Usage};
use super::sections;
use super::vocabulary::{Column, Phase};
use crate::names::Slug;
use crate::names::StoryId;

/// A story file that could not be read, with the 1-based line of the problem.
#[derive(Debug, Clone, PartialEq)]
pub struct StoryError {
    pub path: PathBuf,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for StoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

impl From<StoryError> for crate::Error {
    fn from(err: StoryError) -> Self {
        crate::Error::StoryParse {
            path: err.path,
            line: err.line,
            message: err.message,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Story {
    pub path: PathBuf,
    pub column: Column,
    pub slug: Slug,
    pub meta: StoryMeta,
    front: Frontmatter,
    /// The delimiter lines as written (`---\n`, `---\r\n`), kept for a byte-exact rewrite.
    open: String,
    close: String,
    body: String,
    /// Whether the file starts with a byte order mark, which a rewrite keeps.
    bom: bool,
    /// The changes made since the story was read, in order, so that the store can make them
    /// again on a fresher copy of the file when a person edited it meanwhile.
    changes: Vec<Change>,
}

/// One change made through [`Story`]'s methods. Replaying a story's changes on another copy of
/// the same story makes the same edit there: values are set, sections written, usage added and
/// reviews pushed onto whatever that copy holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    Set(String, serde_norway::Value),
    Remove(String),
    SetSection(String, String),
    AppendToSection(String, String),
    Column(Column),
    AddUsage(Usage),
    PushReview(ReviewRecord),
}

/// The byte order mark some editors put at the start of a file.
const BOM: char = '\u{feff}';

/// What the assessor reads from a story's records (docs/design.md §6): the latest review, the start
/// of the latest rework, and a human gate waiting for `decide`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Progress {
    /// The latest review's decision and timestamp.
    pub latest_review: Option<(super::records::ReviewDecision, String)>,
    pub latest_rework_started: Option<String>,
    /// The phase whose human review waits for a decision.
    pub pending_gate: Option<String>,
}

/// The slug of a story file: its name without `.md`, and without the `NN-` prefix of the older
/// numbered layout.
pub fn slug_from_path(path: &Path) -> Slug {
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    match stem.split_once('-') {
        Some((digits, rest))
            if (1..=3).contains(&digits.len())
                && digits.bytes().all(|b| b.is_ascii_digit())
                && !rest.is_empty() =>
        {
            Slug::from(rest)
        }
        _ => Slug::from(stem),
    }
}

/// The byte range of the `---` line that closes the frontmatter starting at `from`. A substring
/// search finds the candidates; walking every line was a measurable part of loading a board.
fn closing_delimiter(text: &str, from: usize) -> Option<(usize, usize)> {
    let mut start = if text[from..].starts_with("---") {
        from
    } else {
        from + text[from..].find("\n---")? + 1
    };
    loop {
        let line_end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        if text[start..line_end].trim_end() == "---" {
            return Some((start, line_end));
        }
        start = start + text[start..].find("\n---")? + 1;
    }
}

impl Story {
    /// Parses a story file's text. `path` and `column` say where it was found.
    pub fn parse(text: &str, path: PathBuf, column: Column) -> Result<Story, StoryError> {
        let fail = |line: usize, message: String| StoryError {
            path: path.clone(),
            line,
            message,
        };
        let bom = text.starts_with(BOM);
        let text = text.strip_prefix(BOM).unwrap_or(text);
        let first_end = text.find('\n').map_or(text.len(), |i| i + 1);
        if text[..first_end].trim_end() != "---" {
            return Err(fail(
                1,
                "missing frontmatter: a story file starts with a `---` line".into(),
            ));
        }
        let open = text[..first_end].to_string();
        let Some((close_start, close_end)) = closing_delimiter(text, first_end) else {
            return Err(fail(
                1,
                "frontmatter is not closed: add a `---` line after it".into(),
            ));
        };
        // Frontmatter line N (0-based) is file line N + 2: the opening `---` comes first.
        let to_story_error = |err: FrontmatterError| fail(err.line + 2, err.message);
        let mut front =
            Frontmatter::parse(&text[first_end..close_start]).map_err(to_story_error)?;
        front.use_crlf(open.ends_with("\r\n"));
        let meta = read_meta(&front).map_err(to_story_error)?;
        if meta.id.trim().is_empty() {
            return Err(fail(2, "missing key `id`".into()));
        }
        if let Some(problem) = super::ids::id_problem(&meta.id) {
            let line = front.line_of("id").map_or(2, |line| line + 2);
            return Err(fail(
                line,
                format!(
                    "the id {:?} {problem}: an id is one path component (letters, digits, `-`, `_`)",
                    meta.id
                ),
            ));
        }
        Ok(Story {
            slug: slug_from_path(&path),
            path,
            column,
            meta,
            front,
            open,
            close: text[close_start..close_end].to_string(),
            body: text[close_end..].to_string(),
            bom,
            changes: Vec::new(),
        })
    }

    /// Parses a story file's bytes: text that is not UTF-8 is a parse error on the line of the
    /// first byte that is not.
    pub fn parse_bytes(bytes: &[u8], path: PathBuf, column: Column) -> Result<Story, StoryError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Story::parse(text, path, column),
            Err(err) => {
                let valid = &bytes[..err.valid_up_to()];
                let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
                let column =
                    valid.len() - valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
                Err(StoryError {
                    path,
                    line,
                    message: format!("not UTF-8 text (column {column}); save the file as UTF-8"),
                })
            }
        }
    }

    /// A new story in memory; [`super::store`] gives it a path when it writes it.
    pub fn new(
        front: Frontmatter,
        body: String,
        column: Column,
        slug: Slug,
    ) -> Result<Story, StoryError> {
        let meta = read_meta(&front).map_err(|e| StoryError {
            path: PathBuf::new(),
            line: e.line + 2,
            message: e.message,
        })?;
        Ok(Story {
            path: PathBuf::new(),
            column,
            slug,
            meta,
            front,
            open: "---\n".into(),
            close: "---\n".into(),
            body,
            bom: false,
            changes: Vec::new(),
        })
    }

    /// What the assessor reads of the records (see [`Progress`]), parsing as little as it can.
    pub fn progress(&self) -> Result<Progress, StoryError> {
        // Only a record that mentions PENDING can hold a waiting gate; most stories skip the parse.
        let pending_gate = if self
            .front
            .raw_contains("phase_reviews", super::records::PENDING_DECISION)
        {
            self.phase_reviews()?
                .into_iter()
                .find(|(_, r)| r.decision.is_pending())
                .map(|(phase, _)| phase)
        } else {
            None
        };
        let quick_review = self
            .front
            .last_item_fields("review_history", &["decision", "timestamp"])
            .and_then(|mut fields| {
                let timestamp = fields.pop()?;
                let decision =
                    serde_json::from_value(serde_json::Value::String(fields.pop()?)).ok()?;
                Some((decision, timestamp))
            });
        let latest_review = match quick_review {
            Some(review) => Some(review),
            None => self.latest_review()?.map(|r| (r.decision, r.timestamp)),
        };
        let latest_rework_started = match self
            .front
            .last_item_fields("refinement_iterations", &["startedAt"])
        {
            Some(mut fields) => fields.pop(),
            None => self.latest_iteration()?.map(|i| i.started_at),
        };
        Ok(Progress {
            latest_review,
            latest_rework_started,
            pending_gate,
        })
    }

    pub fn to_text(&self) -> String {
        let front = self.front.to_text();
        let mut out = String::with_capacity(front.len() + self.body.len() + 8);
        if self.bom {
            out.push(BOM);
        }
        out.push_str(&self.open);
        out.push_str(&front);
        out.push_str(&self.close);
        if !self.close.ends_with('\n') && !self.body.is_empty() {
            out.push('\n');
        }
        out.push_str(&self.body);
        out
    }

    pub fn id(&self) -> &StoryId {
        &self.meta.id
    }

    pub fn frontmatter(&self) -> &Frontmatter {
        &self.front
    }

    pub fn body(&self) -> &str {
        &self.body
    }

    /// The file line of a frontmatter key, for messages that point into the file.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.front.line_of(key).map(|l| l + 2)
    }

    fn error(&self, err: FrontmatterError) -> StoryError {
        StoryError {
            path: self.path.clone(),
            line: err.line + 2,
            message: err.message,
        }
    }

    /// Reads any frontmatter key; errors point at the file and line.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StoryError> {
        self.front.get(key).map_err(|e| self.error(e))
    }

    pub fn review_history(&self) -> Result<Vec<ReviewRecord>, StoryError> {
        Ok(self.get("review_history")?.unwrap_or_default())
    }

    pub fn latest_review(&self) -> Result<Option<ReviewRecord>, StoryError> {
        self.front
            .last_item("review_history")
            .map_err(|e| self.error(e))
    }

    pub fn refinement_iterations(&self) -> Result<Vec<RefinementIteration>, StoryError> {
        Ok(self.get("refinement_iterations")?.unwrap_or_default())
    }

    pub fn latest_iteration(&self) -> Result<Option<RefinementIteration>, StoryError> {
        self.front
            .last_item("refinement_iterations")
            .map_err(|e| self.error(e))
    }

    pub fn phase_reviews(&self) -> Result<PhaseReviews, StoryError> {
        Ok(self.get("phase_reviews")?.unwrap_or_default())
    }

    pub fn usage(&self) -> Result<Usage, StoryError> {
        Ok(self.get("usage")?.unwrap_or_default())
    }

    pub fn section(&self, name: &str) -> Option<&str> {
        sections::get(&self.body, name)
    }

    pub fn non_empty_sections(&self) -> Vec<(String, String)> {
        sections::non_empty(&self.body)
    }

    /// The column a story's flags call for when it leaves blocked/: in-progress once
    /// implementation started, ready once it was refined, backlog otherwise.
    pub fn resume_column(&self) -> Column {
        let meta = &self.meta;
        let started = |phase: Phase| meta.completed.contains(phase);
        if started(Phase::Implement) || meta.branch.is_some() {
            Column::InProgress
        } else if Phase::flagged().any(started) || self.refined() {
            Column::Ready
        } else {
            Column::Backlog
        }
    }

    /// Whether refinement wrote acceptance criteria (a blocked story no longer shows it by folder).
    fn refined(&self) -> bool {
        self.section("Acceptance Criteria")
            .is_some_and(|s| !s.is_empty())
    }

    // ---- changes: each is recorded, writes through to the text and refreshes `meta` ----

    /// The changes made since the story was read.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Forgets the recorded changes once they are on disk, so that a later write replays only
    /// its own.
    pub(super) fn mark_written(&mut self) {
        self.changes.clear();
    }

    /// Makes `changes` (another copy's, see [`Story::changes`]) on this story.
    pub fn replay(&mut self, changes: &[Change]) -> Result<(), StoryError> {
        for change in changes {
            self.apply(change.clone())?;
        }
        Ok(())
    }

    fn apply(&mut self, change: Change) -> Result<(), StoryError> {
        let eol = if self.open.ends_with("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        match &change {
            Change::Set(key, value) => self.front.set_value(key, value.clone()),
            Change::Remove(key) => self.front.remove(key),
            Change::SetSection(name, content) => {
                self.body = sections::set_with_line_ending(&self.body, name, content, eol)
            }
            Change::AppendToSection(name, addition) => {
                self.body = sections::append_with_line_ending(&self.body, name, addition, eol)
            }
            Change::Column(column) => {
                self.column = *column;
                self.front.set("status", &column.name());
            }
            Change::AddUsage(usage) => {
                let mut total = self.usage()?;
                total.add(usage);
                self.front.set("usage", &total);
            }
            Change::PushReview(record) => {
                let mut history = self.review_history()?;
                history.push(record.clone());
                let excess = history
                    .len()
                    .saturating_sub(super::records::REVIEW_HISTORY_KEPT);
                history.drain(..excess);
                self.front.set("review_history", &history);
            }
        }
        self.changes.push(change);
        self.refresh();
        Ok(())
    }

    pub fn set<T: Serialize>(&mut self, key: &str, value: &T) {
        let value = serde_norway::to_value(value).expect("frontmatter values serialise");
        self.apply(Change::Set(key.to_string(), value))
            .expect("setting a value cannot fail");
    }

    pub fn set_opt<T: Serialize>(&mut self, key: &str, value: Option<&T>) {
        match value {
            Some(value) => self.set(key, value),
            None => self.remove(key),
        }
    }

    pub fn remove(&mut self, key: &str) {
        self.apply(Change::Remove(key.to_string()))
            .expect("removing a key cannot fail");
    }

    /// Writes a section; the content is contained (see [`sections::contain`]), so it can
    /// neither open sections of its own nor hide the ones after it.
    pub fn set_section(&mut self, name: &str, content: &str) {
        self.apply(Change::SetSection(name.to_string(), content.to_string()))
            .expect("writing a section cannot fail");
    }

    pub fn append_to_section(&mut self, name: &str, addition: &str) {
        self.apply(Change::AppendToSection(
            name.to_string(),
            addition.to_string(),
        ))
        .expect("appending to a section cannot fail");
    }

    /// Sets a phase's completion flag; refine has none.
    pub fn set_phase_flag(&mut self, phase: Phase, done: bool) {
        if let Some(key) = phase.flag() {
            self.set(key, &done);
        }
    }

    /// Sets the flag the review after implement sets.
    pub fn set_reviews_flag(&mut self, done: bool) {
        self.set(REVIEWS_FLAG, &done);
    }

    /// Clears `phase`'s flag and the flags of every phase after it, and the review's, so the
    /// story flows back through the pipeline from there.
    pub fn reset_from_phase(&mut self, phase: Phase) {
        for later in Phase::flagged().filter(|p| *p >= phase) {
            self.set_phase_flag(later, false);
        }
        self.set_reviews_flag(false);
    }

    /// Whether `phase` is complete by its flag; refine is complete once the story left backlog.
    pub fn phase_complete(&self, phase: Phase) -> bool {
        self.meta.phase_complete(phase, self.column)
    }

    /// Moves the story to another column in memory; the store renames the file when it writes.
    pub fn set_column(&mut self, column: Column) {
        self.apply(Change::Column(column))
            .expect("changing the column cannot fail");
    }

    pub fn add_usage(&mut self, usage: Usage) -> Result<(), StoryError> {
        self.apply(Change::AddUsage(usage))
    }

    pub fn push_review(&mut self, record: ReviewRecord) -> Result<(), StoryError> {
        self.apply(Change::PushReview(record))
    }

    fn refresh(&mut self) {
        // Values written by the tool always parse; a hand-broken key keeps the old meta.
        if let Ok(meta) = read_meta(&self.front) {
            self.meta = meta;
        }
    }
}

#[cfg(test)]
mod tests;
