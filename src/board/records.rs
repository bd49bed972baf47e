//! The structured records kept in a story's frontmatter (docs/design.md §3).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::review::{IssueSeverity, ReviewDecision, ReviewIssue, Severity};

/// One entry of `review_history`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewRecord {
    pub timestamp: String,
    pub decision: ReviewDecision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    #[serde(default)]
    pub feedback: String,
    #[serde(default)]
    pub blockers: Vec<String>,
    #[serde(default)]
    pub code_review_passed: bool,
    #[serde(default)]
    pub security_review_passed: bool,
    #[serde(default)]
    pub po_review_passed: bool,
    /// The phase the reviewers asked to go back to, when they named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_phase: Option<String>,
    /// Every issue raised, so that a rework can route and explain itself without the notes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<ReviewIssue>,
}

pub const REVIEW_HISTORY_KEPT: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IterationResult {
    InProgress,
    Success,
    Failed,
}

impl std::fmt::Display for IterationResult {
    /// The value as the story file spells it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            IterationResult::InProgress => "in_progress",
            IterationResult::Success => "success",
            IterationResult::Failed => "failed",
        })
    }
}

/// One entry of `refinement_iterations`: a rework and how the review after it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefinementIteration {
    pub iteration: u32,
    pub agent_type: String,
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_feedback: Option<String>,
    pub result: IterationResult,
}

/// `phase_reviews.<phase>`: what the phase's review gate decided.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseReview {
    pub attempts: u32,
    pub decision: GateState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predecessor_retries: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exhausted: Option<bool>,
    /// The reviewer's feedback or reason, or a note such as "no decision line".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// A person's RETRY or RETRY_PREDECESSOR given with `decide`, for the next run to carry out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Where a person's decision came from; absent when an AI or a command decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<DecidedBy>,
}

/// Where a person gave a gate its decision: the prompt of a run at a terminal, the board's
/// page, an MCP client, or `agentic-sdlc decide`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecidedBy {
    Terminal,
    Web,
    Mcp,
    Decide,
}

impl DecidedBy {
    /// How the story's timeline says it: "decided at the terminal".
    pub fn words(self) -> &'static str {
        match self {
            DecidedBy::Terminal => "at the terminal",
            DecidedBy::Web => "on the board's page",
            DecidedBy::Mcp => "through MCP",
            DecidedBy::Decide => "with `agentic-sdlc decide`",
        }
    }
}

pub type PhaseReviews = BTreeMap<String, PhaseReview>;

/// The decision value a human gate records while it waits for `agentic-sdlc decide`.
pub const PENDING_DECISION: &str = "PENDING";

/// `phase_reviews.<phase>.decision`: a human gate waiting for `decide`, or the decision taken,
/// kept as the file spells it (APPROVE, REJECT, RETRY, ...; the gate owns that vocabulary).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum GateState {
    Pending,
    Decided(String),
}

impl GateState {
    pub fn decided(keyword: impl Into<String>) -> Self {
        GateState::from(keyword.into())
    }

    pub fn is_pending(&self) -> bool {
        matches!(self, GateState::Pending)
    }

    pub fn as_str(&self) -> &str {
        match self {
            GateState::Pending => PENDING_DECISION,
            GateState::Decided(keyword) => keyword,
        }
    }
}

/// A record made before its gate ran has decided nothing yet, which the file spells `''`.
impl Default for GateState {
    fn default() -> Self {
        GateState::Decided(String::new())
    }
}

impl From<String> for GateState {
    /// Only the exact spelling `PENDING` waits, as it always has.
    fn from(text: String) -> Self {
        if text == PENDING_DECISION {
            GateState::Pending
        } else {
            GateState::Decided(text)
        }
    }
}

impl From<GateState> for String {
    fn from(state: GateState) -> Self {
        match state {
            GateState::Pending => PENDING_DECISION.to_string(),
            GateState::Decided(keyword) => keyword,
        }
    }
}

/// Compares with the text as the story file spells it (`PENDING`, `APPROVE`, ...).
impl PartialEq<&str> for GateState {
    fn eq(&self, text: &&str) -> bool {
        self.as_str() == *text
    }
}

impl std::fmt::Display for GateState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Tokens and requests spent; summed over a conversation and stored on the story (docs/design.md
/// §10), with their cost in USD when the model's price is known (docs/design.md §14).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub requests: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Some of the tokens were counted from the text's size: the server sent no `usage`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.estimated |= other.estimated;
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.requests += other.requests;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (None, None) => None,
            (a, b) => Some(round_usd(a.unwrap_or(0.0) + b.unwrap_or(0.0))),
        };
    }

    pub fn tokens(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// The counts both hold (the smaller of each), without a price.
    pub fn common_part(&self, other: &Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.min(other.prompt_tokens),
            completion_tokens: self.completion_tokens.min(other.completion_tokens),
            requests: self.requests.min(other.requests),
            cost_usd: None,
            estimated: self.estimated && other.estimated,
        }
    }

    /// These counts less `other`'s (never below zero), without a price: the price is worked
    /// out again from the tokens.
    pub fn minus(&self, other: &Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_sub(other.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_sub(other.completion_tokens),
            requests: self.requests.saturating_sub(other.requests),
            cost_usd: None,
            estimated: self.estimated,
        }
    }

    /// Nothing spent at all (a call that never reached the model, say).
    pub fn is_empty(&self) -> bool {
        self.tokens() == 0 && self.requests == 0 && self.cost_usd.is_none_or(|c| c == 0.0)
    }
}

/// Sums of float prices drift (0.1 + 0.2); a billionth of a dollar is precise enough and keeps
/// the story file readable.
pub fn round_usd(usd: f64) -> f64 {
    (usd * 1e9).round() / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_state_reads_and_writes_the_text_as_it_was() {
        for (text, pending) in [
            ("PENDING", true),
            ("APPROVE", false),
            ("RETRY_PREDECESSOR", false),
            ("pending", false),
            ("", false),
        ] {
            let state = GateState::from(text.to_string());
            assert_eq!(state.is_pending(), pending, "{text:?}");
            assert_eq!(state.to_string(), text);
            assert_eq!(String::from(state), text);
        }
        let yaml = "attempts: 2\ndecision: PENDING\n";
        let record: PhaseReview = serde_norway::from_str(yaml).unwrap();
        assert_eq!(record.decision, GateState::Pending);
        assert_eq!(serde_norway::to_string(&record).unwrap(), yaml);
        assert_eq!(
            serde_norway::to_string(&PhaseReview::default()).unwrap(),
            "attempts: 0\ndecision: ''\n"
        );
    }
}
