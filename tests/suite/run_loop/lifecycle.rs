//! One story's whole life cycle, and `run` without `--auto` doing one action at a time.

use super::{
    front_json, life_cycle_roles, normalised_roles, planned, COMPLETION_TOKENS, PROMPT_TOKENS,
};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::FakeLlm;

#[tokio::test]
async fn auto_takes_a_story_from_backlog_to_done() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (id, slug, _) = env.add("Add a rate limiter", &[]);

    env.run_with_llm(&llm, &["run", "--auto"]).success();

    let requests = llm.requests();
    assert_eq!(normalised_roles(&requests), life_cycle_roles());
    for request in &requests {
        // The review perspectives share one system message and name themselves last.
        let agent = match request.role.as_str() {
            "code-review" | "security-review" | "po-review" => "review",
            role => role,
        };
        assert!(
            request
                .system_message()
                .starts_with(&format!("You are the agentic-sdlc {agent} agent.\n")),
            "{}",
            request.system_message()
        );
        assert!(request
            .user_message()
            .contains("# Story: Add a rate limiter\n"));
    }

    let path = env.story_path(&slug);
    assert_eq!(path, env.board().join("done").join(format!("{slug}.md")));
    let front = front_json(&env, &path);
    assert_eq!(front["id"], id.as_str());
    assert_eq!(front["status"], "done");
    for flag in [
        "research_complete",
        "plan_complete",
        "implementation_complete",
        "reviews_complete",
    ] {
        assert_eq!(front[flag], true, "{flag} in {front}");
    }
    // Seven agent calls; implement's takes two requests (the write, then its notes).
    let count = requests.len() as i64;
    assert_eq!(count, 8);
    assert_eq!(
        front["usage"],
        serde_json::json!({
            "prompt_tokens": count * PROMPT_TOKENS,
            "completion_tokens": count * COMPLETION_TOKENS,
            "requests": count,
        })
    );
    let history = front["review_history"].as_array().expect("review_history");
    assert_eq!(history.len(), 1, "{front}");
    assert_eq!(history[0]["decision"], "APPROVED");
    for passed in ["codeReviewPassed", "securityReviewPassed", "poReviewPassed"] {
        assert_eq!(history[0][passed], true, "{passed}");
    }
    assert!(front.get("last_error").is_none(), "{front}");
    assert!(
        front.get("refinement_count").is_none_or(|c| c == 0),
        "{front}"
    );

    let body = env.body(&path);
    for section in [
        "## Summary\nRefined summary.\n",
        "## Acceptance Criteria\n- [ ] It works\n",
        "## Research\nResearch findings: the code lives in src/.\n",
        "## Implementation Plan\n1. Change src/lib.rs\n2. Add a test\n",
        "## Implementation Notes\nImplemented the story.\n",
    ] {
        assert!(body.contains(section), "missing {section:?} in:\n{body}");
    }
    let notes = body.split("## Review Notes").nth(1).expect("Review Notes");
    assert!(notes.contains("APPROVED"), "{notes}");

    // Nothing is left: the run removed its checkpoint, released the lock, and a new run has
    // nothing to do.
    assert!(!env.board().join(".workflow-state.json").exists());
    assert!(!env.board().join(".lock").exists());
    env.run_with_llm(&llm, &["run", "--auto"])
        .success()
        .stdout_has("Nothing to do.");
    assert_eq!(llm.requests().len(), 8);
}

#[tokio::test]
async fn run_without_auto_does_exactly_one_action() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    let (_, slug, _) = env.add("Add a rate limiter", &["--priority", "50"]);
    let (_, other, _) = env.add("Export to CSV", &["--priority", "5"]);

    let expected = [
        ("refine", "ready"),
        ("research", "ready"),
        ("plan", "ready"),
        ("implement", "in-progress"),
    ];
    for (n, (role, column)) in expected.iter().enumerate() {
        // The higher-priority story goes first, one action per run.
        assert_eq!(planned(&env)[0], (role.to_string(), other.clone()));
        env.run_with_llm(&llm, &["run"]).success();
        assert_eq!(llm.calls().len(), n + 1, "one agent call per run");
        assert_eq!(llm.roles().last().map(String::as_str), Some(*role));
        let path = env.story_path(&other);
        assert_eq!(front_json(&env, &path)["status"], *column);
        assert!(path.starts_with(env.board().join(column)));
    }
    // A review is one action that asks the three perspectives.
    env.run_with_llm(&llm, &["run"]).success();
    assert_eq!(llm.calls().len(), 7);
    env.run_with_llm(&llm, &["run"]).success();
    assert_eq!(llm.calls().len(), 7, "moving to done needs no model");
    assert!(env.story_path(&other).starts_with(env.board().join("done")));
    // The other story has not moved.
    assert!(env
        .story_path(&slug)
        .starts_with(env.board().join("backlog")));
}
