//! A rejected review sends the work back with its feedback (docs/design.md §7, §9).

use serde_json::json;

use super::{
    blocker_verdict, front_json, issue, life_cycle_roles, normalised_roles, planned,
    verdict_with_target, REVIEW_ROLES,
};
use crate::suite::common::{strings_of, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Reply};

#[tokio::test]
async fn reject_reject_approve() {
    let env = TestEnv::init();
    let llm = FakeLlm::start().await;
    // The second rejection finds one more blocker, and each implementation is new: a rework
    // that repeats itself would be "No progress" (docs/design.md §14).
    let second = Reply::verdict(
        false,
        json!([
            issue(
                "blocker",
                "correctness",
                "The limiter never resets its counter"
            ),
            issue("blocker", "correctness", "The burst size is ignored"),
        ]),
    );
    llm.push("code-review", blocker_verdict())
        .push("code-review", second);
    let implementations = [
        "Implemented the story.",
        "Implemented the story, resetting the counter.",
        "Implemented the story, with bursts.",
    ];
    for (n, text) in implementations.iter().enumerate() {
        // A feature's implement changes a file (docs/design.md §15), then gives its notes; a rework
        // replaces the earlier version whole, unread, on purpose.
        let write = json!({"path": "src/limiter.rs", "content": format!("// version {n}\n"),
                           "overwrite": true});
        llm.push("implement", Reply::tool("write_file", write))
            .push("implement", Reply::text(*text));
    }
    let (_, slug, _) = env.add("Add a rate limiter", &[]);
    let step = |expected: &str| {
        assert_eq!(planned(&env), [(expected.to_string(), slug.clone())]);
        env.run_with_llm(&llm, &["run"]).success();
    };

    for action in ["refine", "research", "plan", "implement", "review"] {
        step(action);
    }
    step("rework");
    let front = front_json(&env, env.story_path(&slug));
    assert_eq!(front["refinement_count"], 1);
    assert_eq!(front["research_complete"], true);
    assert_eq!(front["plan_complete"], true);
    assert_eq!(front["implementation_complete"], false);
    assert_eq!(front["reviews_complete"], false);
    let iteration = &front["refinement_iterations"][0];
    assert_eq!(iteration["iteration"], 1);
    assert_eq!(iteration["agentType"], "implement");
    assert_eq!(iteration["result"], "in_progress");
    assert_eq!(iteration["reviewFeedback"], "Review failed: 1 blocker(s)");
    assert!(iteration.get("completedAt").is_none(), "{iteration}");

    // After the rework and the re-run of what it reset comes a fresh review, never a second
    // rework for the same rejection.
    step("implement");
    step("review");
    step("rework");
    step("implement");
    step("review");
    step("move_to_done");
    assert_eq!(planned(&env), []);

    let path = env.story_path(&slug);
    assert!(path.starts_with(env.board().join("done")));
    let front = front_json(&env, &path);
    assert_eq!(front["refinement_count"], 2);
    let iterations = front["refinement_iterations"].as_array().unwrap();
    assert_eq!(iterations.len(), 2, "{front}");
    for (n, (iteration, result)) in iterations.iter().zip(["failed", "success"]).enumerate() {
        assert_eq!(iteration["iteration"], n as u64 + 1);
        assert_eq!(iteration["result"], result, "{iteration}");
        assert!(iteration["startedAt"].is_string(), "{iteration}");
        assert!(iteration["completedAt"].is_string(), "{iteration}");
    }
    let decisions = strings_of(&front["review_history"], "decision");
    assert_eq!(decisions, ["REJECTED", "REJECTED", "APPROVED"]);
    let rejected = &front["review_history"][0];
    assert_eq!(rejected["codeReviewPassed"], false);
    assert_eq!(rejected["securityReviewPassed"], true);
    assert_eq!(
        rejected["blockers"],
        json!(["The limiter never resets its counter"])
    );

    let body = env.body(&path);
    let notes = body
        .split("## Review Notes\n")
        .nth(1)
        .expect("Review Notes");
    let first = notes.find("### Refinement Iteration 1").expect(notes);
    let second = notes.find("### Refinement Iteration 2").expect(notes);
    assert!(first < second);
    assert!(notes[first..second].contains("The limiter never resets its counter"));

    let implements: Vec<_> = llm
        .calls()
        .into_iter()
        .filter(|r| r.role == "implement")
        .collect();
    assert_eq!(implements.len(), 3);
    assert!(!implements[0]
        .user_message()
        .contains("## Revision Instructions"));
    for ((request, attempt), previous_output) in
        implements[1..].iter().zip([2, 3]).zip(implementations)
    {
        let prompt = request.user_message();
        let heading = format!("## Revision Instructions (Attempt {attempt})\n");
        let start = prompt.find(&heading).expect(&prompt);
        let revision = &prompt[start..];
        let feedback = revision.find("\n### Feedback\n").expect(revision);
        let previous = revision.find("\n### Previous Output\n").expect(revision);
        assert!(feedback < previous, "{revision}");
        let feedback_text = &revision[feedback..previous];
        let needed: &[&str] = if attempt == 2 {
            &[
                "blocker",
                "The limiter never resets its counter",
                "src/limiter.rs:42",
                "Reset the counter when the window ends",
            ]
        } else {
            &[
                "blocker",
                "The limiter never resets its counter",
                "The burst size is ignored",
            ]
        };
        for needed in needed {
            assert!(
                feedback_text.contains(needed),
                "{needed:?} in {feedback_text}"
            );
        }
        assert!(
            revision.contains(&format!(
                "\n### Previous Output\n{previous_output}\n\n## Task\n"
            )),
            "the revision sits directly before the task:\n{prompt}"
        );
        assert_eq!(prompt.matches("## Task").count(), 1, "{prompt}");
    }
}

/// Where a rejection sends the work back to, and what the story runs again afterwards.
#[tokio::test]
async fn rework_goes_back_to_the_phase_the_review_names() {
    let requirements = json!([issue(
        "blocker",
        "requirements",
        "Rate per user, not per IP"
    )]);
    let design = json!([issue(
        "blocker",
        "architecture",
        "Use the existing middleware"
    )]);
    let cases = [
        (
            "target_phase research",
            verdict_with_target(
                "research",
                json!([issue("blocker", "correctness", "Misread the API")]),
            ),
            "research",
        ),
        (
            "category requirements",
            Reply::verdict(false, requirements),
            "research",
        ),
        (
            "category architecture",
            Reply::verdict(false, design),
            "plan",
        ),
    ];
    for (case, verdict, target) in cases {
        let env = TestEnv::init();
        let llm = FakeLlm::start().await;
        llm.push("po-review", verdict);
        // The re-run phases answer anew, as a model that takes the feedback in does.
        llm.push(
            "research",
            Reply::text("Research findings: the code lives in src/."),
        )
        .push(
            "research",
            Reply::text("Research findings: the API is in src/api."),
        )
        .push("plan", Reply::text("1. Change src/lib.rs\n2. Add a test"))
        .push(
            "plan",
            Reply::text("1. Use the existing middleware\n2. Add a test"),
        );
        let (_, slug, _) = env.add("Add a rate limiter", &[]);

        // refine, research, plan, implement, review, rework.
        env.run_with_llm(&llm, &["run", "--auto", "--max-actions", "6"])
            .success();
        let front = front_json(&env, env.story_path(&slug));
        assert_eq!(front["refinement_count"], 1, "{case}: {front}");
        assert_eq!(
            front["refinement_iterations"][0]["agentType"], target,
            "{case}"
        );
        assert_eq!(front["research_complete"], target != "research", "{case}");
        assert_eq!(front["plan_complete"], false, "{case}");
        assert_eq!(front["implementation_complete"], false, "{case}");
        assert_eq!(front["reviews_complete"], false, "{case}");
        assert_eq!(
            planned(&env),
            [(target.to_string(), slug.clone())],
            "{case}"
        );

        env.run_with_llm(&llm, &["run", "--auto"]).success();
        let mut expected = life_cycle_roles();
        let rerun: &[&str] = if target == "research" {
            &["research", "plan", "implement"]
        } else {
            &["plan", "implement"]
        };
        expected.extend(
            rerun
                .iter()
                .chain(REVIEW_ROLES.iter())
                .map(|r| r.to_string()),
        );
        assert_eq!(normalised_roles(&llm.requests()), expected, "{case}");

        // The first phase run again gets the feedback and its own previous output.
        let again = llm.requests_for(target).pop().unwrap().user_message();
        assert!(
            again.contains("## Revision Instructions (Attempt 2)\n"),
            "{case}: {again}"
        );
        let previous = if target == "research" {
            "### Previous Output\nResearch findings: the code lives in src/.\n\n## Task\n"
        } else {
            "### Previous Output\n1. Change src/lib.rs\n2. Add a test\n\n## Task\n"
        };
        assert!(again.contains(previous), "{case}: {again}");

        let path = env.story_path(&slug);
        assert!(path.starts_with(env.board().join("done")), "{case}");
        let front = front_json(&env, &path);
        assert_eq!(
            front["refinement_iterations"][0]["result"], "success",
            "{case}"
        );
    }
}
