//! Reading a review perspective's JSON verdict, and combining the perspectives (docs/design.md
//! §10).
//!
//! Models wrap their JSON in code fences and prose, change the case of keys and enum values,
//! write booleans as strings and leave fields null. A review that cannot be read must become
//! "no verdict" (and so a FAILED review), never an accidental approval, so the reader is lenient
//! about form but strict about the one thing that matters: an explicit `passed`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::board::review::{
    field, issue_from_value, text_from_value, IssueSeverity, ReviewDecision, ReviewIssue, Severity,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PerspectiveVerdict {
    pub passed: bool,
    pub issues: Vec<ReviewIssue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_phase: Option<String>,
}

impl<'de> Deserialize<'de> for PerspectiveVerdict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        verdict_from_value(&value)
            .ok_or_else(|| D::Error::custom("a verdict must be an object with `passed`"))
    }
}

/// Finds the verdict in a model's answer: fenced blocks first (the model's own framing of its
/// answer), then any balanced `{...}` in the text. `None` means the perspective gave no
/// verdict, which the caller must not read as a pass or a fail.
pub fn parse_verdict(text: &str) -> Option<PerspectiveVerdict> {
    fenced_blocks(text)
        .into_iter()
        .chain(std::iter::once(text))
        .find_map(verdict_in)
}

fn verdict_in(text: &str) -> Option<PerspectiveVerdict> {
    if let Some(verdict) = parse_json(text.trim()).and_then(|v| find_verdict(&v)) {
        return Some(verdict);
    }
    let mut from = 0;
    while let Some(offset) = text[from..].find('{') {
        let start = from + offset;
        let Some(len) = balanced_object_len(&text[start..]) else {
            from = start + 1;
            continue;
        };
        match parse_json(&text[start..start + len]) {
            Some(value) => {
                if let Some(verdict) = find_verdict(&value) {
                    return Some(verdict);
                }
                // Nested objects were already searched by find_verdict.
                from = start + len;
            }
            // `{` in prose, or a broken outer object that may still hold a good inner one.
            None => from = start + 1,
        }
    }
    None
}

/// The contents of ``` fences, whatever their language tag. An unclosed fence runs to the end,
/// since an answer cut off by the token limit may still hold a complete object.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut open: Option<usize> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            match open {
                None => open = Some(pos + line.len()),
                Some(start) => {
                    blocks.push(&text[start..pos]);
                    open = None;
                }
            }
        }
        pos += line.len();
    }
    if let Some(start) = open {
        blocks.push(&text[start..]);
    }
    blocks
}

/// Length of the object starting at `text[0] == '{'`, skipping braces inside JSON strings.
fn balanced_object_len(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // Byte-wise is safe: the bytes looked at are ASCII and never occur inside a UTF-8 sequence.
    for (index, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(index + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Trailing commas are the one syntax slip models make often enough to be worth repairing.
fn parse_json(text: &str) -> Option<Value> {
    serde_json::from_str(text)
        .ok()
        .or_else(|| serde_json::from_str(&strip_trailing_commas(text)).ok())
}

fn strip_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' {
            let next = text[index + 1..].trim_start().chars().next();
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// The value itself when it is a verdict, else the first verdict nested in it, so a wrapper
/// such as `{"review": {...}}` still counts.
fn find_verdict(value: &Value) -> Option<PerspectiveVerdict> {
    if let Some(verdict) = verdict_from_value(value) {
        return Some(verdict);
    }
    match value {
        Value::Object(map) => map.values().find_map(find_verdict),
        Value::Array(items) => items.iter().find_map(find_verdict),
        _ => None,
    }
}

fn verdict_from_value(value: &Value) -> Option<PerspectiveVerdict> {
    let map = value.as_object()?;
    let passed = field(map, "passed").and_then(bool_from_value)?;
    let issues = match field(map, "issues") {
        Some(Value::Array(items)) => items.iter().filter_map(issue_from_value).collect(),
        Some(single @ Value::Object(_)) => issue_from_value(single).into_iter().collect(),
        _ => Vec::new(),
    };
    let issues = said_once(issues);
    let target_phase = field(map, "targetphase")
        .and_then(text_from_value)
        .map(|phase| phase.to_lowercase())
        .filter(|phase| {
            crate::board::Phase::parse(phase).is_some_and(|p| p != crate::board::Phase::Refine)
        });
    Some(PerspectiveVerdict {
        passed,
        issues,
        target_phase,
    })
}

/// The issues with each complaint once: the same severity and description said again (for
/// another file, or word for word) is one issue. A 1.5B code reviewer listed "`clamp` does not
/// handle the case where x is equal to lo or hi" three times as critical, against a right
/// `clamp` whose tests passed, and three criticals rejected it where one would not.
fn said_once(issues: Vec<ReviewIssue>) -> Vec<ReviewIssue> {
    let key = |issue: &ReviewIssue| {
        let words: Vec<String> = issue
            .description
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        (issue.severity, words.join(" "))
    };
    let mut seen = Vec::new();
    issues
        .into_iter()
        .filter(|issue| {
            let key = key(issue);
            let new = !seen.contains(&key);
            if new {
                seen.push(key);
            }
            new
        })
        .collect()
}

fn bool_from_value(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" => Some(true),
            "false" | "no" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    blocker: usize,
    critical: usize,
    major: usize,
    minor: usize,
}

fn count(issues: &[ReviewIssue]) -> Counts {
    let mut counts = Counts::default();
    for issue in issues {
        match issue.severity {
            IssueSeverity::Blocker => counts.blocker += 1,
            IssueSeverity::Critical => counts.critical += 1,
            IssueSeverity::Major => counts.major += 1,
            IssueSeverity::Minor => counts.minor += 1,
        }
    }
    counts
}

/// The review outcome over the issues of all perspectives together (docs/design.md §10). A
/// perspective's own `passed` does not enter into it: the rule is about issues, so one lenient
/// perspective cannot outvote a blocker found by another.
pub fn decide(issues: &[ReviewIssue]) -> (ReviewDecision, Severity) {
    let counts = count(issues);
    let decision = if counts.blocker == 0 && counts.critical < 2 {
        ReviewDecision::Approved
    } else {
        ReviewDecision::Rejected
    };
    let severity = if counts.blocker > 0 {
        Severity::Critical
    } else if counts.critical >= 2 {
        Severity::High
    } else if counts.critical == 1 || counts.major > 0 {
        Severity::Medium
    } else {
        Severity::Low
    };
    (decision, severity)
}

/// One line for `reviewFeedback` in a refinement iteration, e.g.
/// `Review failed: 1 blocker(s), 2 critical`.
pub fn feedback_summary(issues: &[ReviewIssue]) -> String {
    let counts = count(issues);
    let parts: Vec<String> = [
        (counts.blocker, "blocker(s)"),
        (counts.critical, "critical"),
        (counts.major, "major"),
        (counts.minor, "minor"),
    ]
    .into_iter()
    .filter(|&(n, _)| n > 0)
    .map(|(n, label)| format!("{n} {label}"))
    .collect();
    if parts.is_empty() {
        "Review failed: no issues listed".to_string()
    } else {
        format!("Review failed: {}", parts.join(", "))
    }
}

/// A markdown list, most severe first, for review notes and rework prompts.
pub fn format_issues(issues: &[ReviewIssue]) -> String {
    let mut sorted: Vec<&ReviewIssue> = issues.iter().collect();
    // Stable sort keeps the reviewers' order within a severity.
    sorted.sort_by_key(|issue| issue.severity);
    sorted
        .into_iter()
        .map(format_issue)
        .collect::<Vec<_>>()
        .join("\n")
}

fn format_issue(issue: &ReviewIssue) -> String {
    let mut line = format!("- [{}]", issue.severity);
    if !issue.category.is_empty() {
        line.push_str(&format!(" ({})", issue.category));
    }
    let description = if issue.description.is_empty() {
        "(no description)"
    } else {
        issue.description.as_str()
    };
    line.push(' ');
    line.push_str(description);
    match (&issue.file, issue.line) {
        (Some(file), Some(n)) => line.push_str(&format!(" — {file}:{n}")),
        (Some(file), None) => line.push_str(&format!(" — {file}")),
        (None, Some(n)) => line.push_str(&format!(" — line {n}")),
        (None, None) => {}
    }
    if let Some(fix) = &issue.suggested_fix {
        if !line.ends_with(['.', '!', '?']) {
            line.push('.');
        }
        line.push_str(&format!(" Suggested fix: {fix}"));
    }
    // Continuation lines are indented so a multi-line description stays inside its list item.
    line.replace('\n', "\n  ")
}

#[cfg(test)]
mod tests;
