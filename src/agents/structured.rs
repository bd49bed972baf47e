//! The JSON schemas of machine-read answers (docs/design.md §15): a review perspective's verdict
//! and an AI gate's decision.
//!
//! The schemas are strict (every property required, no others) and bound every string and
//! array (`maxLength`, `maxItems`). A server that turns the schema into a grammar (llama.cpp,
//! Ollama, vLLM) then cannot let a small model loop inside a string until the reply cap: the
//! string must end, and the object must close.

use std::sync::OnceLock;

use serde_json::{json, Value};

use super::llm::ResponseSchema;
use crate::board::Phase;

/// Issues one perspective may list; more than this is noise a rework cannot act on anyway.
const MAX_ISSUES: u64 = 12;
const DESCRIPTION_CHARS: u64 = 600;
const FIX_CHARS: u64 = 400;
const FEEDBACK_CHARS: u64 = 1_500;

/// `{"passed", "issues": [{"severity", "category", "description", "file", "line",
/// "suggestedFix"}], "target_phase"}` as docs/design.md §10 describes it, nullable where it is
/// optional.
/// A schema's `enum` of phase names, and `null` for none.
fn phase_names(phases: impl Iterator<Item = Phase>) -> Vec<Value> {
    phases
        .map(|phase| Value::from(phase.name()))
        .chain([Value::Null])
        .collect()
}

pub fn verdict_schema() -> &'static ResponseSchema {
    static SCHEMA: OnceLock<ResponseSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| ResponseSchema {
        name: "review_verdict",
        schema: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["passed", "issues", "target_phase"],
            "properties": {
                "passed": {"type": "boolean"},
                "issues": {
                    "type": "array",
                    "maxItems": MAX_ISSUES,
                    "items": {
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["severity", "category", "description", "file", "line", "suggestedFix"],
                        "properties": {
                            "severity": {"type": "string", "enum": ["blocker", "critical", "major", "minor"]},
                            "category": {"type": "string", "maxLength": 40},
                            "description": {"type": "string", "maxLength": DESCRIPTION_CHARS},
                            "file": {"type": ["string", "null"], "maxLength": 200},
                            "line": {"type": ["integer", "null"], "minimum": 0},
                            "suggestedFix": {"type": ["string", "null"], "maxLength": FIX_CHARS}
                        }
                    }
                },
                "target_phase": {"type": ["string", "null"], "enum": phase_names(Phase::flagged())}
            }
        }),
    })
}

/// `{"decision", "phase", "feedback"}`, mapped onto the text format of docs/design.md §8 by
/// [`gate_text`].
pub fn gate_schema() -> &'static ResponseSchema {
    static SCHEMA: OnceLock<ResponseSchema> = OnceLock::new();
    SCHEMA.get_or_init(|| ResponseSchema {
        name: "phase_gate_decision",
        schema: json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["decision", "phase", "feedback"],
            "properties": {
                "decision": {"type": "string", "enum": ["APPROVE", "RETRY", "RETRY_PREDECESSOR", "REJECT"]},
                "phase": {"type": ["string", "null"], "enum": phase_names(Phase::predecessors())},
                "feedback": {"type": "string", "maxLength": FEEDBACK_CHARS}
            }
        }),
    })
}

/// The decision of a structured gate answer as the §8 text line (`RETRY: <feedback>`, …), or
/// `None` when the answer is not such an object, so the text is read as it is.
pub fn gate_text(answer: &str) -> Option<String> {
    let value: Value = serde_json::from_str(strip_fence(answer.trim())).ok()?;
    let decision = value.get("decision")?.as_str()?.trim().to_ascii_uppercase();
    let feedback = value
        .get("feedback")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim();
    let with_feedback = |keyword: &str| {
        if feedback.is_empty() {
            keyword.to_string()
        } else {
            format!("{keyword}: {feedback}")
        }
    };
    Some(match decision.replace(['-', ' '], "_").as_str() {
        "APPROVE" | "APPROVED" => "APPROVE".to_string(),
        "RETRY" => with_feedback("RETRY"),
        "RETRY_PREDECESSOR" => {
            let phase = value
                .get("phase")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim();
            with_feedback(format!("RETRY_PREDECESSOR {phase}").trim_end())
        }
        "REJECT" | "REJECTED" => with_feedback("REJECT"),
        _ => return None,
    })
}

/// A JSON answer some models still wrap in a code fence.
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::verdict::parse_verdict;

    #[test]
    fn gate_answers_map_to_the_text_format() {
        let cases = [
            (
                r#"{"decision": "APPROVE", "phase": null, "feedback": ""}"#,
                Some("APPROVE"),
            ),
            (
                r#"{"decision": "RETRY", "phase": null, "feedback": "Name the files."}"#,
                Some("RETRY: Name the files."),
            ),
            (
                r#"{"decision": "RETRY_PREDECESSOR", "phase": "research", "feedback": "Dig deeper"}"#,
                Some("RETRY_PREDECESSOR research: Dig deeper"),
            ),
            (
                r#"{"decision": "reject", "phase": null, "feedback": "Out of scope"}"#,
                Some("REJECT: Out of scope"),
            ),
            (
                "```json\n{\"decision\": \"RETRY\", \"feedback\": \"x\"}\n```",
                Some("RETRY: x"),
            ),
            (r#"{"decision": "MAYBE"}"#, None),
            ("RETRY: plain text stays text", None),
            (r#"{"feedback": "no decision"}"#, None),
        ];
        for (answer, expected) in cases {
            assert_eq!(gate_text(answer).as_deref(), expected, "{answer}");
        }
    }

    #[test]
    fn mapped_text_parses_back_to_the_same_decision() {
        use crate::workflow::decision::{parse_decision, GateDecision};
        let text =
            gate_text(r#"{"decision": "RETRY_PREDECESSOR", "phase": "plan", "feedback": "a: b"}"#)
                .unwrap();
        assert_eq!(
            parse_decision(&text).decision,
            GateDecision::RetryPredecessor {
                phase: "plan".into(),
                feedback: "a: b".into()
            }
        );
    }

    #[test]
    fn schemas_are_strict_and_bounded() {
        fn check(value: &Value, path: &str) {
            match value.get("type").and_then(Value::as_str) {
                Some("object") => {
                    assert_eq!(value["additionalProperties"], false, "{path}");
                    let properties = value["properties"].as_object().unwrap();
                    let required: Vec<&str> = value["required"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    for (name, inner) in properties {
                        assert!(required.contains(&name.as_str()), "{path}.{name}");
                        check(inner, &format!("{path}.{name}"));
                    }
                }
                Some("array") => {
                    assert!(value["maxItems"].is_u64(), "{path}");
                    check(&value["items"], &format!("{path}[]"));
                }
                _ => {
                    let types = value["type"].to_string();
                    if types.contains("string") && value.get("enum").is_none() {
                        assert!(value["maxLength"].is_u64(), "{path}");
                    }
                }
            }
        }
        check(&verdict_schema().schema, "verdict");
        check(&gate_schema().schema, "gate");
    }

    #[test]
    fn an_answer_that_follows_the_verdict_schema_is_read() {
        let answer = r#"{"passed": false, "issues": [{"severity": "blocker", "category": "security", "description": "SQL injection", "file": null, "line": null, "suggestedFix": null}], "target_phase": null}"#;
        let verdict = parse_verdict(answer).unwrap();
        assert!(!verdict.passed);
        assert_eq!(verdict.issues.len(), 1);
    }
}
