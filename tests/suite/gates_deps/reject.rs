//! REJECT (docs/design.md §8): the story goes to blocked/, its dependents wait, the other stories
//! go on and the run ends with exit 3.

use serde_json::json;

use super::{backlog_story, column, details, gate, ready_story, requests_about, run_llm};
use crate::suite::common::TestEnv;
use crate::suite::fake_llm::{FakeLlm, Reply};

#[tokio::test]
async fn a_rejected_story_is_blocked_and_the_run_goes_on_with_the_others() {
    let fake = FakeLlm::start().await;
    fake.push_for(
        "phase-review",
        "# Story: Import legacy data",
        Reply::text("REJECT: data is corrupted"),
    );
    let env = TestEnv::init();
    gate(&env, "research", json!({"reviewer": "ai"}));
    let rejected = ready_story(&env, "Import legacy data");
    let other = ready_story(&env, "Add a rate limiter");
    let dependent = backlog_story(
        &env,
        "Report on imported data",
        &["--depends-on", &rejected.id],
    );

    let out = run_llm(&env, &fake, &["run", "--auto"]);
    out.code(3);

    assert_eq!(column(&env, &rejected.slug), "blocked");
    let rejected_json = details(&env, &rejected.slug);
    assert_eq!(
        rejected_json["blocked_reason"],
        "Phase research rejected by review: data is corrupted"
    );
    assert_eq!(rejected_json["research_complete"], false);
    assert_eq!(
        rejected_json["phase_reviews"]["research"]["decision"],
        "REJECT"
    );
    assert_eq!(requests_about(&fake, "research", &rejected).len(), 1);
    assert_eq!(requests_about(&fake, "plan", &rejected).len(), 0);

    assert_eq!(column(&env, &other.slug), "done", "{}", out.stderr);

    // The dependent was refined (refinement needs no dependency) and then waits.
    assert_eq!(column(&env, &dependent.slug), "ready");
    for role in ["research", "plan", "implement", "code-review"] {
        assert_eq!(
            requests_about(&fake, role, &dependent).len(),
            0,
            "no {role} for a story waiting on a blocked one"
        );
    }
    let status = env.run(&["status"]);
    status.success();
    let line = status
        .stdout
        .lines()
        .skip_while(|l| !l.contains(&dependent.slug))
        .nth(1)
        .unwrap_or_default();
    assert!(
        line.contains("waiting on") && line.contains(&rejected.slug) && line.contains("blocked"),
        "status says what the dependent waits on:\n{}",
        status.stdout
    );
    let recommended = env.status_json()["recommended"].clone();
    assert!(
        recommended
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["storyId"] != dependent.id.as_str()),
        "{recommended}"
    );

    // A second run has nothing to do for any of them.
    let requests = fake.requests().len();
    run_llm(&env, &fake, &["run", "--auto"]).success();
    assert_eq!(fake.requests().len(), requests);
}
