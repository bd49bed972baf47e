//! The verdict reader and the review rules, one table per rule.

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

#[test]
fn the_same_complaint_said_again_is_one_issue() {
    // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, code review of a right `clamp` whose tests
    // passed; shortened): one complaint, three times, for two files.
    let said = r#"{"passed": false, "issues": [
        {"severity": "critical", "category": "functional", "description": "The function `clamp` does not handle the case where x is equal to lo or hi.", "file": "mathkit.py", "line": 12},
        {"severity": "critical", "category": "functional", "description": "The function `clamp` does not handle the case where x is equal to lo or hi.", "file": "test_clamp_a_number.py", "line": 13},
        {"severity": "critical", "category": "functional", "description": "The function  `clamp` does not handle the case where x is equal to lo or hi.", "file": "mathkit.py", "line": 12},
        {"severity": "major", "category": "functional", "description": "The function `clamp` does not handle the case where x is equal to lo or hi."}
    ]}"#;
    let verdict = parse_verdict(said).unwrap();
    let kept: Vec<IssueSeverity> = verdict.issues.iter().map(|i| i.severity).collect();
    assert_eq!(kept, [Critical, Major]);
    assert_eq!(verdict.issues[0].file.as_deref(), Some("mathkit.py"));
    assert_eq!(decide(&verdict.issues).0, ReviewDecision::Approved);
}
