//! Reading a review perspective's JSON verdict, and combining the perspectives (SPEC §10).
//!
//! Models wrap their JSON in code fences and prose, change the case of keys and enum values,
//! write booleans as strings and leave fields null. A review that cannot be read must become
//! "no verdict" (and so a FAILED review), never an accidental approval, so the reader is lenient
//! about form but strict about the one thing that matters: an explicit `passed`.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IssueSeverity {
    Blocker,
    Critical,
    Major,
    Minor,
}

impl IssueSeverity {
    pub fn as_str(self) -> &'static str {
        match self {
            IssueSeverity::Blocker => "blocker",
            IssueSeverity::Critical => "critical",
            IssueSeverity::Major => "major",
            IssueSeverity::Minor => "minor",
        }
    }

    /// Any case is accepted. An unknown word is read as major: reading it as minor could let a
    /// serious finding slip through, and reading it as blocker would reject on a typo.
    pub fn from_loose(text: &str) -> Self {
        match text.trim().to_ascii_lowercase().as_str() {
            "blocker" => IssueSeverity::Blocker,
            "critical" => IssueSeverity::Critical,
            "minor" => IssueSeverity::Minor,
            _ => IssueSeverity::Major,
        }
    }
}

impl fmt::Display for IssueSeverity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for IssueSeverity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(severity_from_value(&Value::deserialize(deserializer)?))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewIssue {
    pub severity: IssueSeverity,
    pub category: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
}

/// Deserialises with the same tolerance as [`parse_verdict`], so issues stored in records and
/// issues read from a model go through one set of rules.
impl<'de> Deserialize<'de> for ReviewIssue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        issue_from_value(&value)
            .ok_or_else(|| D::Error::custom("a review issue must be an object or a string"))
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ReviewDecision {
    Approved,
    Rejected,
    /// The review agent itself failed; counts as neither approval nor rejection (SPEC §7).
    Failed,
}

impl fmt::Display for ReviewDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ReviewDecision::Approved => "APPROVED",
            ReviewDecision::Rejected => "REJECTED",
            ReviewDecision::Failed => "FAILED",
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    Low,
    Medium,
    High,
    Critical,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Low => "LOW",
            Severity::Medium => "MEDIUM",
            Severity::High => "HIGH",
            Severity::Critical => "CRITICAL",
        })
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
    let target_phase = field(map, "targetphase")
        .and_then(text_from_value)
        .map(|phase| phase.to_lowercase())
        .filter(|phase| matches!(phase.as_str(), "research" | "plan" | "implement"));
    Some(PerspectiveVerdict {
        passed,
        issues,
        target_phase,
    })
}

/// A bare string in the issues list is still a finding; dropping it could turn a rejection
/// into an approval.
fn issue_from_value(value: &Value) -> Option<ReviewIssue> {
    let map = match value {
        Value::Object(map) => map,
        Value::String(text) if !text.trim().is_empty() => {
            return Some(ReviewIssue {
                severity: IssueSeverity::Major,
                category: String::new(),
                description: text.trim().to_string(),
                file: None,
                line: None,
                suggested_fix: None,
            })
        }
        _ => return None,
    };
    let text = |name: &str| field(map, name).and_then(text_from_value);
    Some(ReviewIssue {
        severity: field(map, "severity").map_or(IssueSeverity::Major, severity_from_value),
        category: text("category").unwrap_or_default(),
        description: text("description").unwrap_or_default(),
        file: text("file"),
        line: field(map, "line").and_then(line_from_value),
        suggested_fix: text("suggestedfix"),
    })
}

/// The first non-null value whose key matches `name` ignoring case, `_` and `-`, so that
/// `target_phase`, `targetPhase` and `TargetPhase` are one key.
fn field<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.iter()
        .filter(|(key, value)| !value.is_null() && normalize_key(key) == name)
        .map(|(_, value)| value)
        .next()
}

fn normalize_key(key: &str) -> String {
    key.chars()
        .filter(|c| !matches!(c, '_' | '-') && !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
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

fn severity_from_value(value: &Value) -> IssueSeverity {
    value
        .as_str()
        .map_or(IssueSeverity::Major, IssueSeverity::from_loose)
}

fn text_from_value(value: &Value) -> Option<String> {
    let text = match value {
        Value::String(text) => text.trim().to_string(),
        Value::Number(number) => number.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// Accepts `12`, `12.0` and `"12"`; a range such as `"12-15"` gives its first line.
fn line_from_value(value: &Value) -> Option<u32> {
    match value {
        Value::Number(number) => number
            .as_u64()
            .or_else(|| {
                number
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                    .map(|f| f as u64)
            })
            .and_then(|n| u32::try_from(n).ok()),
        Value::String(text) => {
            let text = text.trim();
            let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            text[..digits].parse().ok()
        }
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

/// The review outcome over the issues of all perspectives together (SPEC §10). A perspective's
/// own `passed` does not enter into it: the rule is about issues, so one lenient perspective
/// cannot outvote a blocker found by another.
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
mod tests {
    use super::*;

    fn issue(severity: IssueSeverity, category: &str, description: &str) -> ReviewIssue {
        ReviewIssue {
            severity,
            category: category.into(),
            description: description.into(),
            file: None,
            line: None,
            suggested_fix: None,
        }
    }
    fn at(mut issue: ReviewIssue, file: Option<&str>, line: Option<u32>) -> ReviewIssue {
        issue.file = file.map(Into::into);
        issue.line = line;
        issue
    }
    fn fix(mut issue: ReviewIssue, fix: &str) -> ReviewIssue {
        issue.suggested_fix = Some(fix.into());
        issue
    }
    fn verdict(passed: bool, issues: Vec<ReviewIssue>, target: Option<&str>) -> PerspectiveVerdict {
        PerspectiveVerdict {
            passed,
            issues,
            target_phase: target.map(Into::into),
        }
    }

    use IssueSeverity::{Blocker, Critical, Major, Minor};

    #[test]
    fn parse_verdict_table() {
        let sql = || issue(Blocker, "security", "SQL injection");
        let cases: Vec<(&str, &str, Option<PerspectiveVerdict>)> = vec![
            ("bare object", r#"{"passed": true, "issues": []}"#, Some(verdict(true, vec![], None))),
            (
                "json fence",
                "Here is my review:\n```json\n{\"passed\": false, \"issues\": [{\"severity\": \"blocker\", \"category\": \"security\", \"description\": \"SQL injection\"}]}\n```\nThanks.",
                Some(verdict(false, vec![sql()], None)),
            ),
            (
                "plain fence",
                "```\n{\"passed\": true, \"issues\": []}\n```",
                Some(verdict(true, vec![], None)),
            ),
            (
                "JSON fence upper case tag, indented",
                "  ```JSON\n  {\"passed\": true}\n  ```",
                Some(verdict(true, vec![], None)),
            ),
            (
                "unclosed fence",
                "```json\n{\"passed\": true}",
                Some(verdict(true, vec![], None)),
            ),
            (
                "prose around",
                "I looked at it {briefly}. Verdict: {\"passed\": false, \"issues\": [{\"severity\": \"blocker\", \"category\": \"security\", \"description\": \"SQL injection\"}]} Done.",
                Some(verdict(false, vec![sql()], None)),
            ),
            (
                "fence without verdict, object in prose",
                "```rust\nfn main() {}\n```\nResult: {\"passed\": true}",
                Some(verdict(true, vec![], None)),
            ),
            (
                "nulls everywhere",
                r#"{"passed": false, "issues": [{"severity": "major", "category": null, "description": "slow", "file": null, "line": null, "suggestedFix": null}], "target_phase": null}"#,
                Some(verdict(false, vec![issue(Major, "", "slow")], None)),
            ),
            ("null issues", r#"{"passed": true, "issues": null}"#, Some(verdict(true, vec![], None))),
            ("missing issues", r#"{"passed": true}"#, Some(verdict(true, vec![], None))),
            (
                "capitalised keys and enums",
                r#"{"PASSED": false, "Issues": [{"Severity": "BLOCKER", "Category": "security", "Description": "SQL injection"}, {"severity": "Critical", "category": "tests", "description": "none"}], "TargetPhase": "PLAN"}"#,
                Some(verdict(false, vec![sql(), issue(Critical, "tests", "none")], Some("plan"))),
            ),
            ("string true", r#"{"passed": "true"}"#, Some(verdict(true, vec![], None))),
            ("string False", r#"{"passed": "False"}"#, Some(verdict(false, vec![], None))),
            ("string yes", r#"{"Passed": "yes"}"#, Some(verdict(true, vec![], None))),
            ("string NO", r#"{"passed": " NO "}"#, Some(verdict(false, vec![], None))),
            ("unreadable passed", r#"{"passed": "maybe"}"#, None),
            ("null passed", r#"{"passed": null, "issues": []}"#, None),
            ("no JSON at all", "The code looks fine to me.", None),
            ("empty", "", None),
            ("JSON without passed", r#"{"issues": [], "summary": "fine"}"#, None),
            ("array without verdict", r#"[1, 2, 3]"#, None),
            (
                "braces inside strings",
                r#"Verdict {"passed": false, "issues": [{"severity": "minor", "category": "style", "description": "use {} not {x} in \"format!\" }"}]}"#,
                Some(verdict(false, vec![issue(Minor, "style", "use {} not {x} in \"format!\" }")], None)),
            ),
            (
                "broken outer object holds a good inner one",
                r#"{ my verdict is {"passed": true} }"#,
                Some(verdict(true, vec![], None)),
            ),
            (
                "wrapper object",
                r#"{"review": {"passed": true, "issues": []}}"#,
                Some(verdict(true, vec![], None)),
            ),
            (
                "trailing commas",
                "{\"passed\": false, \"issues\": [{\"severity\": \"minor\", \"category\": \"docs\", \"description\": \"typo\",},],}",
                Some(verdict(false, vec![issue(Minor, "docs", "typo")], None)),
            ),
            (
                "snake and camel fix, string line, file",
                r#"{"passed": false, "issues": [{"severity": "critical", "category": "db", "description": "d", "file": "src/db.rs", "line": "42", "suggested_fix": "bind"}, {"severity": "minor", "category": "c", "description": "e", "line": 7, "suggestedFix": "f"}]}"#,
                Some(verdict(
                    false,
                    vec![
                        fix(at(issue(Critical, "db", "d"), Some("src/db.rs"), Some(42)), "bind"),
                        fix(at(issue(Minor, "c", "e"), None, Some(7)), "f"),
                    ],
                    None,
                )),
            ),
            (
                "line as range and as float",
                r#"{"passed": false, "issues": [{"severity": "minor", "category": "c", "description": "a", "line": "12-15"}, {"severity": "minor", "category": "c", "description": "b", "line": 3.0}, {"severity": "minor", "category": "c", "description": "c", "line": "n/a"}]}"#,
                Some(verdict(
                    false,
                    vec![
                        at(issue(Minor, "c", "a"), None, Some(12)),
                        at(issue(Minor, "c", "b"), None, Some(3)),
                        issue(Minor, "c", "c"),
                    ],
                    None,
                )),
            ),
            (
                "unknown and missing severity are major",
                r#"{"passed": false, "issues": [{"severity": "showstopper", "category": "c", "description": "a"}, {"category": "c", "description": "b"}, {"severity": 3, "category": "c", "description": "c"}]}"#,
                Some(verdict(
                    false,
                    vec![issue(Major, "c", "a"), issue(Major, "c", "b"), issue(Major, "c", "c")],
                    None,
                )),
            ),
            (
                "string issue kept, junk issue dropped",
                r#"{"passed": false, "issues": ["no tests at all", 42, null]}"#,
                Some(verdict(false, vec![issue(Major, "", "no tests at all")], None)),
            ),
            (
                "single issue object instead of a list",
                r#"{"passed": false, "issues": {"severity": "blocker", "category": "security", "description": "SQL injection"}}"#,
                Some(verdict(false, vec![sql()], None)),
            ),
            ("target_phase snake", r#"{"passed": false, "target_phase": "research"}"#, Some(verdict(false, vec![], Some("research")))),
            ("targetPhase camel", r#"{"passed": false, "targetPhase": " Implement "}"#, Some(verdict(false, vec![], Some("implement")))),
            ("target_phase not a phase", r#"{"passed": false, "target_phase": "refine"}"#, Some(verdict(false, vec![], None))),
        ];
        for (name, input, expected) in cases {
            assert_eq!(parse_verdict(input), expected, "case: {name}");
        }
    }

    #[test]
    fn decide_table() {
        let n = |severity: IssueSeverity, count: usize| vec![issue(severity, "c", "d"); count];
        // (blockers, criticals, majors, minors, decision, severity)
        let cases = [
            (0, 0, 0, 0, ReviewDecision::Approved, Severity::Low),
            (0, 0, 0, 3, ReviewDecision::Approved, Severity::Low),
            (0, 0, 1, 0, ReviewDecision::Approved, Severity::Medium),
            (0, 0, 5, 5, ReviewDecision::Approved, Severity::Medium),
            (0, 1, 0, 0, ReviewDecision::Approved, Severity::Medium),
            (0, 1, 2, 0, ReviewDecision::Approved, Severity::Medium),
            (0, 2, 0, 0, ReviewDecision::Rejected, Severity::High),
            (0, 3, 1, 1, ReviewDecision::Rejected, Severity::High),
            (1, 0, 0, 0, ReviewDecision::Rejected, Severity::Critical),
            (1, 2, 1, 1, ReviewDecision::Rejected, Severity::Critical),
        ];
        for (blockers, criticals, majors, minors, decision, severity) in cases {
            let issues = [
                n(Minor, minors),
                n(Blocker, blockers),
                n(Major, majors),
                n(Critical, criticals),
            ]
            .concat();
            assert_eq!(
                decide(&issues),
                (decision, severity),
                "{blockers} blocker, {criticals} critical, {majors} major, {minors} minor"
            );
        }
    }

    #[test]
    fn feedback_summary_table() {
        let i = |severity| issue(severity, "c", "d");
        let cases: Vec<(Vec<ReviewIssue>, &str)> = vec![
            (
                vec![i(Blocker), i(Critical), i(Critical)],
                "Review failed: 1 blocker(s), 2 critical",
            ),
            (
                vec![i(Major), i(Critical), i(Blocker), i(Critical)],
                "Review failed: 1 blocker(s), 2 critical, 1 major",
            ),
            (
                vec![i(Minor), i(Blocker)],
                "Review failed: 1 blocker(s), 1 minor",
            ),
            (vec![i(Critical), i(Critical)], "Review failed: 2 critical"),
            (
                vec![i(Minor), i(Major), i(Critical), i(Blocker)],
                "Review failed: 1 blocker(s), 1 critical, 1 major, 1 minor",
            ),
            (vec![], "Review failed: no issues listed"),
        ];
        for (issues, expected) in cases {
            assert_eq!(feedback_summary(&issues), expected);
        }
    }

    #[test]
    fn format_issue_table() {
        let cases: Vec<(ReviewIssue, &str)> = vec![
            (
                fix(
                    at(issue(Blocker, "security", "SQL built by string concatenation"), Some("src/db.rs"), Some(42)),
                    "use bound parameters",
                ),
                "- [blocker] (security) SQL built by string concatenation — src/db.rs:42. Suggested fix: use bound parameters",
            ),
            (issue(Minor, "style", "long line"), "- [minor] (style) long line"),
            (issue(Major, "", "no category"), "- [major] no category"),
            (issue(Major, "c", ""), "- [major] (c) (no description)"),
            (at(issue(Major, "c", "d"), Some("a.rs"), None), "- [major] (c) d — a.rs"),
            (at(issue(Major, "c", "d"), None, Some(9)), "- [major] (c) d — line 9"),
            (fix(issue(Major, "c", "Ends with a stop."), "x"), "- [major] (c) Ends with a stop. Suggested fix: x"),
            (issue(Critical, "c", "two\nlines"), "- [critical] (c) two\n  lines"),
        ];
        for (issue, expected) in cases {
            assert_eq!(format_issues(&[issue]), expected);
        }
    }

    #[test]
    fn format_issues_orders_by_severity_stably() {
        let issues = [
            issue(Minor, "c", "minor 1"),
            issue(Major, "c", "major 1"),
            issue(Blocker, "c", "blocker 1"),
            issue(Critical, "c", "critical 1"),
            issue(Minor, "c", "minor 2"),
            issue(Blocker, "c", "blocker 2"),
        ];
        let expected = "- [blocker] (c) blocker 1\n- [blocker] (c) blocker 2\n- [critical] (c) critical 1\n- [major] (c) major 1\n- [minor] (c) minor 1\n- [minor] (c) minor 2";
        assert_eq!(format_issues(&issues), expected);
        assert_eq!(format_issues(&[]), "");
    }

    #[test]
    fn serde_table() {
        let full = fix(
            at(issue(Blocker, "security", "d"), Some("a.rs"), Some(3)),
            "f",
        );
        let cases: Vec<(ReviewIssue, &str)> = vec![
            (
                full,
                r#"{"severity":"blocker","category":"security","description":"d","file":"a.rs","line":3,"suggestedFix":"f"}"#,
            ),
            (
                issue(Minor, "c", "d"),
                r#"{"severity":"minor","category":"c","description":"d"}"#,
            ),
        ];
        for (issue, json) in cases {
            assert_eq!(serde_json::to_string(&issue).unwrap(), json);
            assert_eq!(serde_json::from_str::<ReviewIssue>(json).unwrap(), issue);
        }
        let enums = [
            (
                serde_json::to_string(&ReviewDecision::Approved).unwrap(),
                r#""APPROVED""#,
            ),
            (
                serde_json::to_string(&ReviewDecision::Rejected).unwrap(),
                r#""REJECTED""#,
            ),
            (
                serde_json::to_string(&ReviewDecision::Failed).unwrap(),
                r#""FAILED""#,
            ),
            (serde_json::to_string(&Severity::Low).unwrap(), r#""LOW""#),
            (
                serde_json::to_string(&Severity::Medium).unwrap(),
                r#""MEDIUM""#,
            ),
            (serde_json::to_string(&Severity::High).unwrap(), r#""HIGH""#),
            (
                serde_json::to_string(&Severity::Critical).unwrap(),
                r#""CRITICAL""#,
            ),
            (
                serde_json::to_string(&verdict(true, vec![], None)).unwrap(),
                r#"{"passed":true,"issues":[]}"#,
            ),
        ];
        for (got, expected) in enums {
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn severity_from_loose_table() {
        let cases = [
            ("blocker", Blocker),
            ("BLOCKER", Blocker),
            (" Critical ", Critical),
            ("major", Major),
            ("MiNoR", Minor),
            ("high", Major),
            ("", Major),
        ];
        for (text, expected) in cases {
            assert_eq!(IssueSeverity::from_loose(text), expected, "{text:?}");
        }
    }
}
