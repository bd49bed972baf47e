use super::*;
use crate::board::Phase;
use crate::error::Result;
use serde_json::{json, Value};
use std::path::Path;

fn from(user: Value) -> Result<Config> {
    Config::from_value(merged_value(&user), Path::new("cfg.json"))
}

#[test]
fn defaults_are_valid() {
    let config = from(json!({})).unwrap();
    assert_eq!(config.sdlc_folder, ".agentic-sdlc");
    assert_eq!(config.refinement.max_iterations, 3);
    assert_eq!(config.llm.max_turns, 50);
    assert_eq!(config.remote.claim_seconds, 900);
    assert_eq!(config.remote.poll_seconds, 15);
    // `init` writes the documented defaults only; `remote` is merged in without being written.
    assert!(default_value().get("remote").is_none());
    let partial = from(json!({"remote": {"claimSeconds": 60}})).unwrap();
    assert_eq!(partial.remote.claim_seconds, 60);
    assert_eq!(partial.remote.timeout_seconds, 120);
}

#[test]
fn partial_file_merges_key_by_key() {
    let config = from(json!({"refinement": {"maxIterations": 5}})).unwrap();
    assert_eq!(config.refinement.max_iterations, 5);
    assert!(config.refinement.enable_circuit_breaker);
}

#[test]
fn errors_name_the_key() {
    let cases = [
        (
            json!({"refinement": {"maxIterations": "x"}}),
            "refinement.maxIterations",
        ),
        (json!({"bogus": 1}), "bogus"),
        (json!({"llm": {"modle": "x"}}), "modle"),
        (json!({"theme": "pink"}), "theme"),
        (json!({"concurrency": 0}), "concurrency"),
        (
            json!({"phases": {"plan": {"review": {"reviewer": "robot"}}}}),
            "phases.plan.review.reviewer",
        ),
        (
            json!({"phases": {"plan": {"review": {"reviewer": "ai", "maxRetries": -1}}}}),
            "phases.plan.review.maxRetries",
        ),
        (json!({"phases": {"deploy": {}}}), "deploy"),
        (json!({"llm": {"maxTokens": 0}}), "llm.maxTokens"),
        (json!({"llm": {"maxTokens": "lots"}}), "llm.maxTokens"),
        (
            json!({"llm": {"structuredOutputs": "sometimes"}}),
            "llm.structuredOutputs",
        ),
        (
            json!({"phases": {"plan": {"maxTokens": 0}}}),
            "phases.plan.maxTokens",
        ),
        (json!({"budget": {"storyTokens": 0}}), "budget.storyTokens"),
        (
            json!({"remote": {"claimSeconds": 1}}),
            "remote.claimSeconds",
        ),
        (json!({"remote": {"pollSeconds": 0}}), "remote.pollSeconds"),
        (
            json!({"remote": {"timeoutSeconds": "soon"}}),
            "remote.timeoutSeconds",
        ),
        (json!({"remote": {"claimSecs": 60}}), "claimSecs"),
        (json!({"budget": {"runTokens": -5}}), "budget.runTokens"),
        (json!({"budget": {"runUsd": 0}}), "budget.runUsd"),
        (json!({"budget": {"storyUsd": -1.5}}), "budget.storyUsd"),
        (
            json!({"pricing": {"m": {"inputPerMTok": -1, "outputPerMTok": 1}}}),
            "pricing.m.inputPerMTok",
        ),
        (
            json!({"pricing": {"m": {"inputPerMTok": 1, "outputPerMTok": "cheap"}}}),
            "pricing.m.outputPerMTok",
        ),
        (json!({"tools": {"maxReadBytes": 10}}), "tools.maxReadBytes"),
        (json!({"tools": {"maxReadBytes": -1}}), "tools.maxReadBytes"),
        (
            json!({"tools": {"timeoutSeconds": 0}}),
            "tools.timeoutSeconds",
        ),
        (
            json!({"tools": {"timeoutSeconds": "x"}}),
            "tools.timeoutSeconds",
        ),
        (json!({"tools": {"maxReads": 1}}), "maxReads"),
        (json!({"notify": {"hook": "http://x"}}), "hook"),
        (
            json!({"notify": {"webhook": "hooks.slack.com/x"}}),
            "notify.webhook",
        ),
        (json!({"notify": {"command": "  "}}), "notify.command"),
        (json!({"notify": {"command": 7}}), "notify.command"),
        (
            json!({"notify": {"timeoutSeconds": 0}}),
            "notify.timeoutSeconds",
        ),
        (
            json!({"notify": {"events": ["story_done"]}}),
            "notify.events",
        ),
        (
            json!({"llm": {"toolProtocol": "smoke"}}),
            "llm.toolProtocol",
        ),
        (json!({"llm": {"temperature": 2.5}}), "llm.temperature"),
        (json!({"llm": {"temperature": "cold"}}), "llm.temperature"),
        (json!({"implement": {"attempts": 0}}), "implement.attempts"),
        (json!({"implement": {"attempts": 99}}), "implement.attempts"),
        (
            json!({"implement": {"testRounds": -1}}),
            "implement.testRounds",
        ),
        (json!({"implement": {"rounds": 1}}), "rounds"),
        (
            json!({"implement": {"editFormat": "diff"}}),
            "implement.editFormat",
        ),
        (
            json!({"phases": {"plan": {"enabled": "no"}}}),
            "phases.plan.enabled",
        ),
        (
            json!({"phases": {"implement": {"enabled": false}}}),
            "phases.implement.enabled",
        ),
    ];
    for (user, key) in cases {
        let err = from(user.clone()).unwrap_err().to_string();
        assert!(err.contains(key), "{user}: {err}");
    }
}

#[test]
fn max_tokens_defaults_and_phase_override() {
    let config = from(json!({"phases": {"plan": {"maxTokens": 512}}})).unwrap();
    assert_eq!(config.llm.max_tokens, 4096);
    assert_eq!(config.llm.structured_outputs, StructuredOutputs::Auto);
    assert_eq!(config.phases.max_tokens(Phase::Plan), Some(512));
    assert_eq!(config.phases.max_tokens(Phase::Research), None);
    assert!(config.phases.gate(Phase::Plan).is_none());
}

#[test]
fn zero_gate_retries_is_valid() {
    let config =
        from(json!({"phases": {"plan": {"review": {"reviewer": "ai", "maxRetries": 0}}}})).unwrap();
    assert_eq!(config.phases.gate(Phase::Plan).unwrap().max_retries, 0);
}

#[test]
fn legacy_create_pr_is_read_as_integrate_pr() {
    assert_eq!(from(json!({})).unwrap().git.integrate, Integrate::Merge);
    let cases = [
        (json!({"git": {"createPr": true}}), Integrate::Pr),
        (json!({"git": {"createPr": false}}), Integrate::Merge),
        (
            json!({"git": {"createPr": true, "integrate": "none"}}),
            Integrate::None,
        ),
    ];
    for (user, expected) in cases {
        let config = from(user.clone()).unwrap();
        assert_eq!(config.git.integrate, expected, "{user}");
        assert!(get_dotted(&merged_value(&user), "git.createPr").is_none());
    }
    let err = from(json!({"git": {"createPr": "yes"}})).unwrap_err();
    assert!(err.to_string().contains("createPr"), "{err}");
}

#[test]
fn base_branch_must_be_a_branch_name() {
    let config = from(json!({"git": {"baseBranch": "develop"}})).unwrap();
    assert_eq!(config.git.base_branch.as_deref(), Some("develop"));
    for bad in ["", "two words", "-x"] {
        let err = from(json!({"git": {"baseBranch": bad}})).unwrap_err();
        assert!(err.to_string().contains("git.baseBranch"), "{bad}: {err}");
    }
}

#[test]
fn dotted_set_and_get() {
    let mut doc = json!({});
    set_dotted(&mut doc, "refinement.maxIterations", json!(4)).unwrap();
    assert_eq!(
        get_dotted(&doc, "refinement.maxIterations"),
        Some(&json!(4))
    );
}

#[test]
fn keys_added_later_have_defaults_that_init_does_not_write() {
    let config = from(json!({})).unwrap();
    assert_eq!(config.llm.tool_protocol, ToolProtocol::Auto);
    assert_eq!(config.implement.test_rounds, 3);
    assert_eq!(config.implement.attempts, None);
    assert_eq!(config.attempts(), 1);
    assert_eq!(config.implement.edit_format, EditFormat::Auto);
    assert_eq!(
        config.edit_format(),
        EditFormat::Tools,
        "auto with no protocol known yet"
    );
    assert!(config.phase_enabled(Phase::Research));
    assert!(get_dotted(&default_value(), "implement").is_none());
    assert_eq!(
        get_dotted(&merged_value(&json!({})), "llm.toolProtocol"),
        Some(&json!("auto"))
    );
    let skipping = from(json!({"phases": {"research": {"enabled": false}}})).unwrap();
    assert!(!skipping.phase_enabled(Phase::Research));
    assert!(skipping.phase_enabled(Phase::Plan));
}

#[test]
fn read_only_phases_get_a_smaller_reply_cap_unless_set() {
    let config = from(json!({"phases": {"plan": {"maxTokens": 3000}}})).unwrap();
    let cap = |phase| config.phases.reply_cap(phase, config.llm.max_tokens);
    assert_eq!(cap(Phase::Research), READ_ONLY_PHASE_TOKENS);
    assert_eq!(cap(Phase::Plan), 3000, "as set");
    assert_eq!(cap(Phase::Acceptance), 4096);
    assert_eq!(cap(Phase::Implement), 4096);
    let small = from(json!({"llm": {"maxTokens": 1000}})).unwrap();
    assert_eq!(
        small.phases.reply_cap(Phase::Refine, 1000),
        1000,
        "never above llm.maxTokens"
    );
}

#[test]
fn each_phase_has_a_turn_budget_of_its_own() {
    let config = from(serde_json::json!({"phases": {"implement": {"maxTurns": 20}}})).unwrap();
    let phases = &config.phases;
    assert_eq!(phases.turn_budget(Phase::Plan, 50, false), 12);
    assert_eq!(phases.turn_budget(Phase::Plan, 5, true), 5);
    assert_eq!(phases.turn_budget(Phase::Acceptance, 50, false), 50);
    assert_eq!(phases.turn_budget(Phase::Acceptance, 50, true), 8);
    assert_eq!(phases.turn_budget(Phase::Implement, 50, true), 20);
}
