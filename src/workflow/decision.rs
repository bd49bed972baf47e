//! The decision a phase gate's reviewer gives (docs/design.md §8), read from free text.
//!
//! Reviewers are models, shell commands and people, so the decision line arrives wrapped in
//! markdown, with odd casing and with commentary around it. The parser looks for the first line
//! that starts with a decision keyword and ignores everything before it; a reviewer that never
//! writes one approves, and the caller records that it did so by default.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What the gate does with the phase output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GateDecision {
    Approve,
    Retry { feedback: String },
    RetryPredecessor { phase: String, feedback: String },
    Reject { reason: String },
}

impl GateDecision {
    /// The bare keyword, for records that keep the decision and its text apart.
    pub fn keyword(&self) -> &'static str {
        match self {
            GateDecision::Approve => "APPROVE",
            GateDecision::Retry { .. } => "RETRY",
            GateDecision::RetryPredecessor { .. } => "RETRY_PREDECESSOR",
            GateDecision::Reject { .. } => "REJECT",
        }
    }

    /// The feedback or reason the decision carries, if any.
    pub fn text(&self) -> Option<&str> {
        match self {
            GateDecision::Approve => None,
            GateDecision::Retry { feedback } | GateDecision::RetryPredecessor { feedback, .. } => {
                Some(feedback)
            }
            GateDecision::Reject { reason } => Some(reason),
        }
    }
}

/// Writes the decision in the form the parser reads back, so a decision can be echoed to a
/// person or a log and parsed again unchanged.
impl fmt::Display for GateDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())?;
        let text = match self {
            GateDecision::Approve => return Ok(()),
            GateDecision::Retry { feedback } => feedback,
            GateDecision::RetryPredecessor { phase, feedback } => {
                if !phase.is_empty() {
                    write!(f, " {phase}")?;
                }
                feedback
            }
            GateDecision::Reject { reason } => reason,
        };
        if !text.is_empty() {
            write!(f, ": {text}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedDecision {
    pub decision: GateDecision,
    /// False when the text held no decision line and the approval is only the default; the
    /// gate record must say so (docs/design.md §8).
    pub had_decision_line: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keyword {
    Approve,
    Retry,
    RetryPredecessor,
    Reject,
}

/// Longer spellings come before their prefixes: `RETRY` would otherwise claim every
/// `RETRY_PREDECESSOR` line, and `APPROVE` would stop the boundary check on `APPROVED`.
const KEYWORDS: &[(&str, Keyword)] = &[
    ("RETRY_PREDECESSOR", Keyword::RetryPredecessor),
    ("RETRY-PREDECESSOR", Keyword::RetryPredecessor),
    ("RETRY PREDECESSOR", Keyword::RetryPredecessor),
    ("APPROVED", Keyword::Approve),
    ("APPROVE", Keyword::Approve),
    ("REJECTED", Keyword::Reject),
    ("REJECT", Keyword::Reject),
    ("RETRY", Keyword::Retry),
];

/// Reads the gate decision from a reviewer's text. Never fails: text without a decision line
/// approves, with `had_decision_line` false.
pub fn parse_decision(text: &str) -> ParsedDecision {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    for (index, line) in lines.iter().enumerate() {
        if let Some(decision) = decision_on_line(line, &lines[index + 1..]) {
            return ParsedDecision {
                decision,
                had_decision_line: true,
            };
        }
    }
    ParsedDecision {
        decision: GateDecision::Approve,
        had_decision_line: false,
    }
}

fn decision_on_line(line: &str, following: &[&str]) -> Option<GateDecision> {
    let (start, opening) = strip_line_markup(line);
    let (keyword, after_keyword) = KEYWORDS.iter().find_map(|&(spelling, keyword)| {
        let head = start.get(..spelling.len())?;
        head.eq_ignore_ascii_case(spelling)
            .then(|| (keyword, &start[spelling.len()..]))
    })?;

    let rest = after_keyword.trim_start_matches(is_emphasis);
    if !ends_keyword(rest) {
        return None;
    }
    if keyword == Keyword::Approve {
        return Some(GateDecision::Approve);
    }
    // `**RETRY**: x` closes its emphasis right after the keyword; `**RETRY:** x` and
    // `**RETRY: x**` close it later, and that closing markup is not part of the feedback.
    let closing: String = opening.chars().rev().collect();
    let still_open = !closing.is_empty() && rest.len() == after_keyword.len();
    let without_closing = |text: &'_ str| -> String {
        let text = text.trim();
        let text = if still_open {
            text.strip_prefix(closing.as_str())
                .or_else(|| text.strip_suffix(closing.as_str()))
                .unwrap_or(text)
        } else {
            text
        };
        text.trim().to_string()
    };

    let (phase, first_line) = match (keyword, rest.find(':')) {
        (Keyword::RetryPredecessor, Some(colon)) => (
            first_word(&rest[..colon]).0,
            without_closing(&rest[colon + 1..]),
        ),
        (Keyword::RetryPredecessor, None) => {
            let (word, after) = first_word(rest);
            (word, without_closing(after))
        }
        (_, Some(colon)) => (String::new(), without_closing(&rest[colon + 1..])),
        // Without a colon the spec is silent; the words after the keyword are clearly meant as
        // the feedback, minus the punctuation that separated them from it.
        (_, None) => (
            String::new(),
            without_closing(
                rest.trim_start_matches(|c: char| c.is_whitespace() || ".,;!-–—".contains(c)),
            ),
        ),
    };
    let feedback = join_feedback(&first_line, following);
    Some(match keyword {
        Keyword::Retry => GateDecision::Retry { feedback },
        Keyword::RetryPredecessor => GateDecision::RetryPredecessor { phase, feedback },
        Keyword::Reject => GateDecision::Reject { reason: feedback },
        Keyword::Approve => unreachable!("approve returned above"),
    })
}

fn is_emphasis(c: char) -> bool {
    matches!(c, '*' | '_' | '`')
}

/// Strips indentation, block markup (headings, quotes, list bullets and numbers) and emphasis
/// from the start of a line. Returns the rest and the emphasis run directly before it, so its
/// closing counterpart can be recognised after the keyword.
fn strip_line_markup(line: &str) -> (&str, &str) {
    let mut rest = line;
    let mut opening = "";
    loop {
        let before = rest.len();
        let trimmed = rest.trim_start();
        if trimmed.len() != rest.len() {
            opening = "";
            rest = trimmed;
        }
        if let Some(after) = strip_block_marker(rest) {
            opening = "";
            rest = after;
        }
        let unemphasised = rest.trim_start_matches(is_emphasis);
        if unemphasised.len() != rest.len() {
            opening = &rest[..rest.len() - unemphasised.len()];
            rest = unemphasised;
        }
        if rest.len() == before {
            return (rest, opening);
        }
    }
}

fn strip_block_marker(line: &str) -> Option<&str> {
    if line.starts_with('#') {
        return Some(line.trim_start_matches('#'));
    }
    if let Some(rest) = line.strip_prefix('>') {
        return Some(rest);
    }
    if let Some(rest) = line.strip_prefix("- ").or_else(|| line.strip_prefix("+ ")) {
        return Some(rest);
    }
    // `1. RETRY: x` or `2) REJECT`: reviewers sometimes number their conclusions.
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 {
        let after = &line[digits..];
        let after = after
            .strip_prefix('.')
            .or_else(|| after.strip_prefix(')'))?;
        if after.starts_with(char::is_whitespace) {
            return Some(after);
        }
    }
    None
}

/// A keyword only counts as a whole word, so `APPROVEMENT` or `retrying later` is prose.
fn ends_keyword(rest: &str) -> bool {
    match rest.chars().next() {
        None => true,
        Some(c) => c.is_whitespace() || matches!(c, ':' | '.' | '!' | ',' | ';'),
    }
}

/// The first word, lowercased and stripped of surrounding markup, and the text after it.
fn first_word(text: &str) -> (String, &str) {
    let text = text.trim_start();
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    let word = text[..end].trim_matches(|c: char| !c.is_alphanumeric());
    (word.to_lowercase(), &text[end..])
}

fn join_feedback(first_line: &str, following: &[&str]) -> String {
    let mut feedback = first_line.to_string();
    for line in following {
        feedback.push('\n');
        feedback.push_str(line);
    }
    feedback.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approve() -> GateDecision {
        GateDecision::Approve
    }
    fn retry(feedback: &str) -> GateDecision {
        GateDecision::Retry {
            feedback: feedback.into(),
        }
    }
    fn predecessor(phase: &str, feedback: &str) -> GateDecision {
        GateDecision::RetryPredecessor {
            phase: phase.into(),
            feedback: feedback.into(),
        }
    }
    fn reject(reason: &str) -> GateDecision {
        GateDecision::Reject {
            reason: reason.into(),
        }
    }

    #[test]
    fn parse_table() {
        // (input, decision, whether a decision line was found)
        #[rustfmt::skip]
        let cases: Vec<(&str, GateDecision, bool)> = vec![
            ("APPROVE", approve(), true),
            ("approve", approve(), true),
            ("Approve", approve(), true),
            ("APPROVED", approve(), true),
            ("APPROVE: looks solid", approve(), true),
            ("RETRY: need more depth", retry("need more depth"), true),
            ("RETRY", retry(""), true),
            ("retry: lower case", retry("lower case"), true),
            ("RETRY_PREDECESSOR research: need more sources", predecessor("research", "need more sources"), true),
            ("RETRY_PREDECESSOR research", predecessor("research", ""), true),
            ("retry_predecessor Research: mixed case", predecessor("research", "mixed case"), true),
            ("RETRY_PREDECESSOR: no phase named", predecessor("", "no phase named"), true),
            ("RETRY_PREDECESSOR plan redo the steps", predecessor("plan", "redo the steps"), true),
            ("RETRY_PREDECESSOR `plan`: quoted phase", predecessor("plan", "quoted phase"), true),
            ("RETRY-PREDECESSOR plan: hyphenated", predecessor("plan", "hyphenated"), true),
            ("REJECT: data is corrupted", reject("data is corrupted"), true),
            ("REJECT", reject(""), true),
            ("Rejected: nope", reject("nope"), true),
            ("REJECTED", reject(""), true),
            ("", approve(), false),
            ("   \n\t\n", approve(), false),
            ("looks good to me", approve(), false),
            ("APPROVEMENT of the plan", approve(), false),
            ("retrying later", approve(), false),
            ("Rejection is not warranted", approve(), false),
            ("  RETRY: fix indentation  ", retry("fix indentation"), true),
            ("RETRY: issue: too short", retry("issue: too short"), true),
            ("**RETRY**: expand section 2", retry("expand section 2"), true),
            ("**RETRY:** expand section 2", retry("expand section 2"), true),
            ("**RETRY: expand section 2**", retry("expand section 2"), true),
            ("__REJECT__: bad", reject("bad"), true),
            ("*approve*", approve(), true),
            ("`RETRY`: code style", retry("code style"), true),
            ("## RETRY: heading", retry("heading"), true),
            ("> REJECT: quoted", reject("quoted"), true),
            ("- RETRY: bullet", retry("bullet"), true),
            ("* RETRY: star bullet", retry("star bullet"), true),
            ("1. RETRY: numbered", retry("numbered"), true),
            ("RETRY need more tests", retry("need more tests"), true),
            ("RETRY. The section is thin", retry("The section is thin"), true),
            ("Approve.", approve(), true),
            ("Here is my review.\nRETRY: x", retry("x"), true),
            ("RETRY:\n- add error handling\n- cover the edge cases\n", retry("- add error handling\n- cover the edge cases"), true),
            ("RETRY: first line\nsecond line: kept", retry("first line\nsecond line: kept"), true),
            ("REJECT: a\r\nb\r\n", reject("a\nb"), true),
            ("APPROVE\nsome notes\nREJECT: x", approve(), true),
            ("RETRY: one\nAPPROVE", retry("one\nAPPROVE"), true),
            ("The output retries nothing.\nApproved, with minor notes", approve(), true),
        ];
        for (input, expected, had_line) in cases {
            assert_eq!(
                parse_decision(input),
                ParsedDecision {
                    decision: expected,
                    had_decision_line: had_line
                },
                "input: {input:?}"
            );
        }
    }

    #[test]
    fn display_table() {
        let cases = [
            (approve(), "APPROVE"),
            (retry("more"), "RETRY: more"),
            (retry(""), "RETRY"),
            (
                predecessor("research", "sources"),
                "RETRY_PREDECESSOR research: sources",
            ),
            (predecessor("research", ""), "RETRY_PREDECESSOR research"),
            (predecessor("", "which?"), "RETRY_PREDECESSOR: which?"),
            (reject("corrupt"), "REJECT: corrupt"),
            (reject(""), "REJECT"),
        ];
        for (decision, text) in cases {
            assert_eq!(decision.to_string(), text, "{decision:?}");
        }
    }

    #[test]
    fn keyword_table() {
        let cases = [
            (approve(), "APPROVE"),
            (retry("x"), "RETRY"),
            (predecessor("plan", "x"), "RETRY_PREDECESSOR"),
            (reject("x"), "REJECT"),
        ];
        for (decision, keyword) in cases {
            assert_eq!(decision.keyword(), keyword, "{decision:?}");
        }
    }

    #[test]
    fn display_round_trips() {
        let cases = [
            approve(),
            retry(""),
            retry("need more depth"),
            retry("issue: too short\n- and a list"),
            predecessor("research", ""),
            predecessor("plan", "steps: missing"),
            predecessor("", ""),
            predecessor("", "no phase"),
            reject(""),
            reject("data is corrupted"),
        ];
        for decision in cases {
            let parsed = parse_decision(&decision.to_string());
            assert!(parsed.had_decision_line, "{decision:?}");
            assert_eq!(parsed.decision, decision);
        }
    }

    #[test]
    fn serde_table() {
        let cases = [
            (approve(), r#"{"decision":"APPROVE"}"#),
            (retry("x"), r#"{"decision":"RETRY","feedback":"x"}"#),
            (
                predecessor("plan", "x"),
                r#"{"decision":"RETRY_PREDECESSOR","phase":"plan","feedback":"x"}"#,
            ),
            (reject("x"), r#"{"decision":"REJECT","reason":"x"}"#),
        ];
        for (decision, json) in cases {
            assert_eq!(serde_json::to_string(&decision).unwrap(), json);
            assert_eq!(
                serde_json::from_str::<GateDecision>(json).unwrap(),
                decision
            );
        }
    }
}
