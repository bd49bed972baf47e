//! The review vocabulary (docs/design.md §3, §10): a review's decision and severity, and the issues
//! the reviewers raise. Stored records and the verdict reader in `agents/verdict` both use it, so
//! it lives with the board, below both.
//!
//! Issues are read with the same tolerance wherever they come from: a model's answer or a story
//! file edited by hand. Keys match ignoring case, `_` and `-`; an unknown severity is major.

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

/// Deserialises with the same tolerance as the verdict reader, so issues stored in records and
/// issues read from a model go through one set of rules.
impl<'de> Deserialize<'de> for ReviewIssue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        issue_from_value(&value)
            .ok_or_else(|| D::Error::custom("a review issue must be an object or a string"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum ReviewDecision {
    Approved,
    Rejected,
    /// The review agent itself failed; counts as neither approval nor rejection (docs/design.md
    /// §7).
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

/// A bare string in the issues list is still a finding; dropping it could turn a rejection
/// into an approval.
pub(crate) fn issue_from_value(value: &Value) -> Option<ReviewIssue> {
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
pub(crate) fn field<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
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

fn severity_from_value(value: &Value) -> IssueSeverity {
    value
        .as_str()
        .map_or(IssueSeverity::Major, IssueSeverity::from_loose)
}

pub(crate) fn text_from_value(value: &Value) -> Option<String> {
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
