//! The acceptance phase (docs/design.md §21): the story's examples become tests before its code,
//! checked by the tool, committed on the story's branch, and fixed for implement.

use super::{section, tool_results, transcript_entries, write_call, Made, Project};
use crate::suite::fake_llm::Reply;

/// Runs each `tests/test_*.sh`; a failing one is named the way pytest names it.
const TEST_COMMAND: &str =
    "for t in tests/test_*.sh; do sh \"$t\" || { echo \"FAILED $t\"; exit 1; }; done";

/// The test the story's example asks for: it fails until greet.sh greets.
const GOOD_TEST: &str =
    "# greet('Ann') == 'Hello, Ann!'\ntest \"$(bash greet.sh Ann)\" = 'Hello, Ann!'\n";
/// The story's code: a function `greet`, as the story names it.
const GREET: &str = "function greet() { echo \"Hello, $1!\"; }\ngreet \"$@\"\n";

/// A git project with one passing test, and a planned story with one literal example.
fn greeting_project(p: &Project) -> Made {
    p.env.write("tests/test_base.sh", "true\n");
    p.git_init(false);
    p.config(&[("review.testCommand", TEST_COMMAND)]);
    p.story(
        "Greet people",
        "A script greet.sh that greets a person by name.",
        "- [ ] `greet('Ann') == 'Hello, Ann!'`",
        "ready",
        &["research", "plan"],
    )
}

#[tokio::test]
async fn the_examples_become_tests_on_the_branch_and_implement_cannot_change_them() {
    let p = Project::new().await;
    let story = greeting_project(&p);
    p.fake
        .push(
            "acceptance",
            write_call("tests/test_greet_people.sh", GOOD_TEST),
        )
        .push("acceptance", Reply::text("test_greet_people: greets Ann."));

    p.run(&["run", "--story", &story.id]).success();

    let asked = &p.fake.requests_for("acceptance")[0];
    let prompt = asked.last_message();
    assert!(
        prompt.contains("Write the tests into `tests/test_greet_people.sh`"),
        "the tests go beside the project's own: {prompt}"
    );
    let front = p.front(&story);
    assert_eq!(front["acceptance_complete"], true);
    assert_eq!(
        front["acceptance_tests"][0].as_str(),
        Some("tests/test_greet_people.sh")
    );
    let listed = section(&p.body(&story), "Acceptance Tests");
    assert!(
        listed.contains("- `tests/test_greet_people.sh`"),
        "{listed}"
    );
    assert!(
        listed.contains("test_greet_people: greets Ann."),
        "{listed}"
    );
    // Committed on the story's branch, not on main.
    let branch = front["branch"].as_str().unwrap().to_string();
    assert_eq!(
        p.git(&["show", &format!("{branch}:tests/test_greet_people.sh")]),
        GOOD_TEST.trim_end()
    );
    assert!(p
        .git_output(&["show", "main:tests/test_greet_people.sh"])
        .status
        .code()
        .is_some_and(|code| code != 0));

    // Implement tries to make the test pass by changing it: refused; then writes the code.
    p.fake
        .push(
            "implement",
            write_call("tests/test_greet_people.sh", "true\n"),
        )
        .push("implement", write_call("greet.sh", GREET))
        .push("implement", Reply::text("greet.sh greets by name."));
    p.run(&["run", "--story", &story.id]).success();

    let asks = p.fake.requests_for("implement");
    let refused = tool_results(&asks[1]);
    assert!(
        refused[0].1.contains("acceptance tests, which are fixed"),
        "{refused:?}"
    );
    let on_branch = |path: &str| p.git(&["show", &format!("{branch}:{path}")]);
    assert_eq!(
        on_branch("tests/test_greet_people.sh"),
        GOOD_TEST.trim_end()
    );
    assert_eq!(on_branch("greet.sh"), GREET.trim_end());
    assert!(asks[0]
        .last_message()
        .contains("test \"$(bash greet.sh Ann)\" = 'Hello, Ann!'"));
    assert_eq!(p.front(&story)["implementation_complete"], true);
}

#[tokio::test]
async fn tests_that_pass_before_the_code_or_drop_the_example_go_back_with_the_reason() {
    let p = Project::new().await;
    let story = greeting_project(&p);
    p.fake
        // Passes on the code as it is: it checks nothing.
        .push(
            "acceptance",
            write_call(
                "tests/test_greet_people.sh",
                "# greet('Ann') == 'Hello, Ann!'\ntrue\n",
            ),
        )
        .push("acceptance", Reply::text("done"))
        // Fails, but the story's example is changed.
        .push(
            "acceptance",
            write_call(
                "tests/test_greet_people.sh",
                "test \"$(bash greet.sh Bob)\" = 'Hi, Bob'\n",
            ),
        )
        .push("acceptance", Reply::text("done"))
        .push(
            "acceptance",
            write_call("tests/test_greet_people.sh", GOOD_TEST),
        )
        .push("acceptance", Reply::text("fixed"));

    p.run(&["run", "--story", &story.id]).success();

    let asks = p.fake.requests_for("acceptance");
    let first = asks[2].last_message();
    assert!(
        first.contains("pass before the story's code exists"),
        "{first}"
    );
    let second = asks[4].last_message();
    assert!(
        second.contains("assert greet('Ann') == 'Hello, Ann!'"),
        "the example as the story writes it: {second}"
    );
    assert_eq!(p.front(&story)["acceptance_complete"], true);
    let checks = transcript_entries(&p, &story, "acceptance_check");
    assert_eq!(checks.len(), 3, "{checks:#?}");
}

#[tokio::test]
async fn code_written_in_the_acceptance_phase_is_put_back() {
    let p = Project::new().await;
    let story = greeting_project(&p);
    p.env.write("greet.sh", "echo old\n");
    p.git(&["add", "greet.sh"]);
    p.git(&["commit", "--quiet", "-m", "old greeting"]);
    p.fake
        .push(
            "acceptance",
            write_call("tests/test_greet_people.sh", GOOD_TEST),
        )
        .push("acceptance", write_call("greet.sh", GREET))
        .push("acceptance", Reply::text("tests and the code"));

    p.run(&["run", "--story", &story.id]).success();

    let front = p.front(&story);
    assert_eq!(front["acceptance_complete"], true);
    let branch = front["branch"].as_str().unwrap();
    assert_eq!(p.git(&["show", &format!("{branch}:greet.sh")]), "echo old");
    assert!(
        transcript_entries(&p, &story, "acceptance_notes")[0]["notes"][0]
            .as_str()
            .unwrap()
            .contains("`greet.sh` put back")
    );
}

#[tokio::test]
async fn a_chore_and_a_board_without_a_test_command_get_no_acceptance_tests() {
    let p = Project::new().await;
    let story = greeting_project(&p);
    p.set_type(&story, "chore");
    p.run(&["run", "--story", &story.id, "--step", "acceptance"])
        .success();
    assert_eq!(p.front(&story)["acceptance_complete"], true);
    assert!(section(&p.body(&story), "Acceptance Tests").contains("a chore may change no code"));
    assert!(p.fake.requests_for("acceptance").is_empty());

    let plain = Project::new().await;
    let planned = plain.planned("No tests here");
    let plan = plain.env.run_json(&["run", "--dry-run"]);
    assert_eq!(
        plan["actions"][0]["type"], "implement",
        "without a test command acceptance is skipped: {plan}"
    );
    assert!(plain.front(&planned)["acceptance_complete"].is_null());
}

#[tokio::test]
async fn best_of_three_stops_at_the_first_attempt_that_passes_the_acceptance_tests() {
    let p = Project::new().await;
    p.env.write("tests/test_greet_people.sh", GOOD_TEST);
    let story = greeting_project(&p);
    p.config(&[("implement.attempts", "3")]);
    // As the acceptance phase leaves it: the test committed, listed, the flag set.
    let path = p.path_of(&story);
    p.env.edit(
        &path,
        "plan_complete: true",
        "plan_complete: true\nacceptance_complete: true\nacceptance_tests:\n- tests/test_greet_people.sh",
    );
    p.fake
        .push("implement", write_call("greet.sh", GREET))
        .push("implement", Reply::text("greet.sh greets by name."));

    p.run(&["run", "--story", &story.id]).success();

    assert_eq!(
        p.fake.requests_for("implement").len(),
        2,
        "one attempt asked"
    );
    let stopped = transcript_entries(&p, &story, "attempts_stopped");
    assert_eq!(stopped[0]["after"], 1, "{stopped:?}");
    assert_eq!(p.front(&story)["implementation_complete"], true);
}
