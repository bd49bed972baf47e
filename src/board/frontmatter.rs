//! A YAML frontmatter block that can be edited key by key without disturbing the rest.
//!
//! serde round-trips lose comments, quoting, key order and unknown keys. People edit stories by
//! hand, so the tool keeps the frontmatter as its top-level entries in their original text and
//! re-serialises only the entries it changes. Parsing is lazy: an entry is deserialised when a
//! caller asks for it, which keeps `status` on a large board close to the cost of reading it.

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::render::render_entry;
use super::simple_value::yaml_trim;
use super::{lines, nesting, simple_value};

/// One top-level `key: value` entry with its continuation lines, exactly as written.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    /// `None` for comment or blank lines that precede the first key.
    key: Option<String>,
    /// 0-based line of the entry's first line within the frontmatter.
    line: usize,
    raw: String,
}

impl Entry {
    fn new(key: Option<&str>, line: usize, raw: &str) -> Self {
        Self {
            key: key.map(str::to_string),
            line,
            raw: raw.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frontmatter {
    entries: Vec<Entry>,
    /// Whether the file uses `\r\n`; entries the tool writes follow the file's line ending.
    crlf: bool,
}

/// A frontmatter problem, with the 0-based line inside the frontmatter where it sits.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontmatterError {
    pub line: usize,
    pub message: String,
}

impl FrontmatterError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }
}

/// The key of a line that starts a top-level entry, or `None` for a continuation line.
fn top_level_key(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == '#' || first == '-' {
        return None;
    }
    let (key, _) = split_key(line)?;
    Some(key)
}

/// Splits `key: value` at the colon that ends the key (quoted keys allowed).
fn split_key(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let (key_end, rest_start) = match *bytes.first()? {
        quote @ (b'"' | b'\'') => {
            let close = line[1..].find(quote as char)? + 1;
            if !line[close + 1..].starts_with(':') {
                return None;
            }
            (close + 1, close + 2)
        }
        _ => {
            let colon = line
                .match_indices(':')
                .map(|(i, _)| i)
                .find(|&i| matches!(bytes.get(i + 1), None | Some(b' ' | b'\t' | b'\r' | b'\n')))?;
            (colon, colon + 1)
        }
    };
    let key = line[..key_end]
        .trim()
        .trim_matches(|c| c == '"' || c == '\'');
    Some((key, &line[rest_start..]))
}

impl Frontmatter {
    /// Splits frontmatter text into entries. Only the structure is checked here; values are
    /// parsed on demand by [`Frontmatter::get`].
    pub fn parse(text: &str) -> Result<Self, FrontmatterError> {
        if let Some(line) = nesting::too_deep(text) {
            return Err(FrontmatterError::new(
                line,
                format!(
                    "the frontmatter is nested more than {} levels deep",
                    nesting::MAX_DEPTH
                ),
            ));
        }
        let mut entries: Vec<Entry> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        // The entry being collected: its key, first line and byte offset. Its text runs to the
        // start of the next entry and is copied once, when that entry begins.
        let mut open: Option<(Option<&str>, usize, usize)> = None;
        let mut offset = 0;
        for (index, line) in lines::inclusive(text).enumerate() {
            let start = offset;
            offset += line.len();
            match top_level_key(line) {
                Some(key) => {
                    if !seen.insert(key) {
                        return Err(FrontmatterError::new(
                            index,
                            format!("duplicate key `{key}`"),
                        ));
                    }
                    if let Some((key, at, from)) = open.replace((Some(key), index, start)) {
                        entries.push(Entry::new(key, at, &text[from..start]));
                    }
                }
                None => {
                    let trimmed = line.trim_start();
                    let is_filler = trimmed.is_empty() || trimmed.starts_with('#');
                    match open {
                        // Continuation lines belong to the entry above them.
                        Some((Some(_), _, _)) => {}
                        // Comments and blank lines before the first key.
                        Some((None, _, _)) if is_filler => {}
                        None if is_filler => open = Some((None, index, start)),
                        Some((None, _, _)) => {
                            return Err(FrontmatterError::new(index, "expected `key: value`"))
                        }
                        None => {
                            return Err(FrontmatterError::new(
                                index,
                                "expected `key: value` (the frontmatter must be a YAML mapping)",
                            ))
                        }
                    }
                }
            }
        }
        if let Some((key, at, from)) = open {
            entries.push(Entry::new(key, at, &text[from..]));
        }
        let crlf = text
            .split_inclusive('\n')
            .next()
            .is_some_and(|l| l.ends_with("\r\n"));
        Ok(Self { entries, crlf })
    }

    /// Makes the entries the tool writes end their lines with `\r\n`: a file keeps its own line
    /// ending, which its frontmatter alone may not show (it can be empty).
    pub fn use_crlf(&mut self, crlf: bool) {
        self.crlf = crlf;
    }

    /// The text of `key`'s entry as it stands, comments after it included.
    pub fn raw_entry(&self, key: &str) -> Option<&str> {
        self.entry(key).map(|e| e.raw.as_str())
    }

    pub fn empty() -> Self {
        Self {
            entries: Vec::new(),
            crlf: false,
        }
    }

    pub fn to_text(&self) -> String {
        let mut out = String::with_capacity(self.entries.iter().map(|e| e.raw.len() + 1).sum());
        for entry in &self.entries {
            out.push_str(&entry.raw);
            if !entry.raw.ends_with('\n') {
                out.push_str(if self.crlf { "\r\n" } else { "\n" });
            }
        }
        out
    }

    fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key.as_deref() == Some(key))
    }

    /// Whether `key`'s text contains `needle`, a cheap test before parsing it.
    pub fn raw_contains(&self, key: &str, needle: &str) -> bool {
        self.entry(key).is_some_and(|e| e.raw.contains(needle))
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter_map(|e| e.key.as_deref())
    }

    /// The 0-based line of `key` inside the frontmatter.
    pub fn line_of(&self, key: &str) -> Option<usize> {
        self.entry(key).map(|e| e.line)
    }

    /// Deserialises one entry. A missing key or an explicit null is `Ok(None)`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, FrontmatterError> {
        let Some(entry) = self.entry(key) else {
            return Ok(None);
        };
        if let Some(value) = plain_scalar(entry) {
            if value.is_empty() || value == "null" || value == "~" {
                return Ok(None);
            }
        }
        // Most values are a plain scalar or a list of them: read those without starting a YAML
        // parser. A declined value (any doubt, or not the type asked for) is parsed as before.
        if let Some(simple) = simple_value(entry) {
            if let Ok(value) = T::deserialize(simple) {
                return Ok(Some(value));
            }
        }
        parse_entry::<Option<T>>(entry)
    }

    /// Deserialises only the last item of a list entry: the latest review or iteration, without
    /// the cost of parsing the whole history.
    pub fn last_item<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, FrontmatterError> {
        let (entry, text, item_line) = match self.last_item_text(key) {
            LastItem::Missing => return Ok(None),
            // Flow style (`key: [...]`) or an empty list: parse the whole entry.
            LastItem::NotBlock => {
                return Ok(self.get::<Vec<T>>(key)?.and_then(|mut items| items.pop()))
            }
            LastItem::Block { entry, text, line } => (entry, text, line),
        };
        let mut items: Vec<T> = serde_norway::from_str(text).map_err(|err| {
            let line = err.location().map_or(0, |l| l.line().saturating_sub(1));
            FrontmatterError::new(
                entry.line + item_line + line,
                format!("key `{key}`: {}", yaml_message(&err)),
            )
        })?;
        Ok(items.pop())
    }

    /// The string values of `fields` in the last item of a block list, read without a YAML
    /// parser: the assessor needs two fields of the latest review on every story, and parsing
    /// the whole record (issues and all) was most of the cost of `status`. `None` when a field
    /// is missing or its value is not a simple one-line string; the caller then parses the item.
    pub fn last_item_fields(&self, key: &str, fields: &[&str]) -> Option<Vec<String>> {
        let LastItem::Block { text, .. } = self.last_item_text(key) else {
            return None;
        };
        let mut lines = text.lines();
        let first = lines.next()?;
        let indent = first.len() - first.trim_start().len();
        let keys_at = indent + 2;
        let mut found: Vec<Option<String>> = vec![None; fields.len()];
        let first_field = first.trim_start().strip_prefix("- ").map(|f| (keys_at, f));
        let rest = lines.map(|line| {
            let stripped = line.trim_start_matches(' ');
            (line.len() - stripped.len(), stripped)
        });
        for (at, line) in first_field.into_iter().chain(rest) {
            if at != keys_at {
                continue;
            }
            let Some((name, value)) = split_key(line) else {
                continue;
            };
            if let Some(index) = fields.iter().position(|f| *f == name) {
                found[index] = Some(simple_string(yaml_trim(value))?.to_string());
            }
        }
        found.into_iter().collect()
    }

    fn last_item_text(&self, key: &str) -> LastItem<'_> {
        let Some(entry) = self.entry(key) else {
            return LastItem::Missing;
        };
        let body = entry
            .raw
            .split_once('\n')
            .map(|(_, rest)| rest)
            .unwrap_or("");
        let Some(indent) = lines::inclusive(body)
            .map(|l| l.trim_end_matches(['\n', '\r']))
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .filter(|l| l.trim_start().starts_with('-'))
            .map(|l| l.len() - l.trim_start().len())
        else {
            return LastItem::NotBlock;
        };
        let mut offset = 0;
        let mut last_start = None;
        let mut last_line = 0;
        for (index, line) in lines::inclusive(body).enumerate() {
            let stripped = &line[line.len() - line.trim_start().len()..];
            if line.len() - stripped.len() == indent && stripped.starts_with('-') {
                last_start = Some(offset);
                last_line = index + 1;
            }
            offset += line.len();
        }
        match last_start {
            Some(start) => LastItem::Block {
                entry,
                text: &body[start..],
                line: last_line,
            },
            None => LastItem::Missing,
        }
    }

    /// Sets `key` to `value`, keeping its position. An entry whose current value is already equal
    /// keeps its original text, so a rewrite only touches what changed.
    pub fn set<T: Serialize>(&mut self, key: &str, value: &T) {
        self.set_value(
            key,
            serde_norway::to_value(value).expect("frontmatter values are plain data (text, numbers, lists, string-keyed records), which YAML represents"),
        );
    }

    /// [`Frontmatter::set`] with a value that is already YAML.
    pub fn set_value(&mut self, key: &str, new_value: serde_norway::Value) {
        if let Some(entry) = self.entries.iter().find(|e| e.key.as_deref() == Some(key)) {
            if let Ok(Some(old)) = parse_entry::<Option<serde_norway::Value>>(entry) {
                if old == new_value {
                    return;
                }
            }
        }
        let mut raw = render_entry(key, &new_value);
        if self.crlf {
            raw = raw.replace('\n', "\r\n");
        }
        match self
            .entries
            .iter_mut()
            .find(|e| e.key.as_deref() == Some(key))
        {
            Some(entry) => entry.raw = raw + trailing_comments(&entry.raw),
            None => {
                let line = self
                    .entries
                    .last()
                    .map_or(0, |e| e.line + e.raw.lines().count());
                self.entries.push(Entry {
                    key: Some(key.to_string()),
                    line,
                    raw,
                })
            }
        }
    }

    /// Sets an optional key: `None` removes it, because optional keys are never written as null.
    pub fn set_opt<T: Serialize>(&mut self, key: &str, value: Option<&T>) {
        match value {
            Some(value) => self.set(key, value),
            None => self.remove(key),
        }
    }

    /// Removes `key`. Comment lines that followed it stay where they were.
    pub fn remove(&mut self, key: &str) {
        let Some(index) = self
            .entries
            .iter()
            .position(|e| e.key.as_deref() == Some(key))
        else {
            return;
        };
        let entry = self.entries.remove(index);
        let comments = trailing_comments(&entry.raw);
        if !comments.is_empty() {
            let value_lines = entry.raw[..entry.raw.len() - comments.len()]
                .lines()
                .count();
            self.entries.insert(
                index,
                Entry {
                    key: None,
                    line: entry.line + value_lines,
                    raw: comments.to_string(),
                },
            );
        }
    }

    /// Every entry as one YAML mapping, for `details --json` and validation.
    pub fn to_mapping(&self) -> Result<serde_norway::Mapping, FrontmatterError> {
        let mut mapping = serde_norway::Mapping::new();
        for entry in &self.entries {
            if let Some(key) = &entry.key {
                let value = parse_entry::<Option<serde_norway::Value>>(entry)?
                    .unwrap_or(serde_norway::Value::Null);
                mapping.insert(serde_norway::Value::String(key.clone()), value);
            }
        }
        Ok(mapping)
    }
}

/// The comment lines at the end of an entry: the parser files a comment under the key above it,
/// but it is a person's note, not part of the value, so rewriting or removing the key keeps it.
/// The tail starts at a top-level `#` line; blank lines before it may belong to a `|+` value.
fn trailing_comments(raw: &str) -> &str {
    let value_start = raw.find('\n').map_or(raw.len(), |i| i + 1);
    let mut start = raw.len();
    let mut offset = raw.len();
    for line in raw[value_start..].split_inclusive('\n').rev() {
        offset -= line.len();
        if line.starts_with('#') {
            start = offset;
        } else if !line.trim().is_empty() {
            break;
        }
    }
    &raw[start..]
}

enum LastItem<'a> {
    Missing,
    /// A flow list (`[...]`) or something else that is not `- item` lines.
    NotBlock,
    /// The text of the last item, from its `-` line to the end of the entry, and the item's
    /// line within the entry.
    Block {
        entry: &'a Entry,
        text: &'a str,
        line: usize,
    },
}

/// A one-line string value whose meaning needs no YAML parser: plain text without comment or
/// mapping syntax, or a quoted string without escapes.
fn simple_string(value: &str) -> Option<&str> {
    let quoted = |q: char| {
        value
            .strip_prefix(q)
            .and_then(|v| v.strip_suffix(q))
            .filter(|inner| !inner.contains(q) && !inner.contains('\\'))
    };
    if value.starts_with('\'') {
        return quoted('\'');
    }
    if value.starts_with('"') {
        return quoted('"');
    }
    let plain = !value.is_empty()
        && value
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && !value.contains(": ")
        && !value.contains(" #")
        && !value.ends_with(':');
    plain.then_some(value)
}

/// The value of a single-line entry when it is a plain scalar, for a fast path that skips YAML.
fn plain_scalar(entry: &Entry) -> Option<&str> {
    let (first, rest) = entry.raw.split_once('\n').unwrap_or((&entry.raw, ""));
    if rest.lines().any(|l| !yaml_trim(l).is_empty()) {
        return None;
    }
    let (_, value) = split_key(first)?;
    let value = yaml_trim(value);
    let special = |c: char| "'\"[]{}|>&*!%@`#,".contains(c);
    (!value.contains(": ") && !value.starts_with(special)).then_some(value)
}

fn simple_value(entry: &Entry) -> Option<simple_value::Simple<'_>> {
    let (first, rest) = entry.raw.split_once('\n').unwrap_or((&entry.raw, ""));
    let (_, value) = split_key(first)?;
    simple_value::read(value, rest)
}

fn parse_entry<T: DeserializeOwned>(entry: &Entry) -> Result<T, FrontmatterError> {
    let mapping: serde_norway::Mapping = serde_norway::from_str(&entry.raw).map_err(|err| {
        // An error at the end of input is reported one line past the entry; clamp it back.
        let last_line = entry.raw.trim_end().lines().count().saturating_sub(1);
        let line = err
            .location()
            .map_or(0, |l| l.line().saturating_sub(1))
            .min(last_line);
        let key = entry.key.as_deref().unwrap_or_default();
        FrontmatterError::new(
            entry.line + line,
            format!("key `{key}`: {}", yaml_message(&err)),
        )
    })?;
    let value = mapping
        .into_iter()
        .next()
        .map(|(_, v)| v)
        .unwrap_or(serde_norway::Value::Null);
    let key = entry.key.as_deref().unwrap_or_default();
    serde_norway::from_value(value).map_err(|err| {
        FrontmatterError::new(entry.line, format!("key `{key}`: {}", yaml_message(&err)))
    })
}

/// serde_norway appends " at line L column C" to its messages; the caller reports the line.
fn yaml_message(err: &serde_norway::Error) -> String {
    let text = err.to_string();
    match text.find(" at line ") {
        Some(index) => text[..index].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests;
