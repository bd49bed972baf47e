//! A blocker against work whose acceptance tests pass is run, not believed (docs/design.md §10):
//! the perspective that raised it shows it with an example, which the tool runs with the tests.

use serde_json::json;

use super::{write_call, Made, Project};
use crate::suite::fake_llm::Reply;

const ACCEPTANCE_TEST: &str =
    "from greet import greet\n\n\ndef test_greet_example_1():\n    assert greet('Ann') == 'Hello, Ann!'\n";
const GREET: &str = "def shout(text):\n    return text.upper()\n\n\ndef greet(name):\n    return f'Hello, {name}!'\n";
/// Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, inventory): a blocker that names no input, raised
/// against a function whose tests, the story's examples, all passed.
const VAGUE_BLOCKER: &str = "The `greet` function does not return the correct greeting.";

/// A Python project whose story has passed its acceptance tests and been implemented, with the
/// code-review perspective about to raise a blocker.
async fn implemented_greeting() -> (Project, Made) {
    let (p, story) = implemented().await;
    p.fake.push(
        "code-review",
        Reply::verdict(
            false,
            json!([{"severity": "blocker", "category": "functionality",
                    "description": VAGUE_BLOCKER, "file": "greet.py"}]),
        ),
    );
    (p, story)
}

/// A Python project whose story has passed its acceptance tests and been implemented.
async fn implemented() -> (Project, Made) {
    let p = Project::new().await;
    p.env
        .write("greet.py", "def shout(text):\n    return text.upper()\n");
    p.python_git_project(&[]);
    let story = p.story(
        "Greet people",
        "Add `greet(name)` to greet.py.",
        "- [ ] `greet('Ann') == 'Hello, Ann!'`",
        "ready",
        &["research", "plan"],
    );
    p.fake
        .push(
            "acceptance",
            write_call("tests/test_greet_people.py", ACCEPTANCE_TEST),
        )
        .push("acceptance", Reply::text("done"))
        .push("implement", write_call("greet.py", GREET))
        .push("implement", Reply::text("greet greets by name."));
    p.run(&["run", "--story", &story.id]).success();
    p.run(&["run", "--story", &story.id]).success();
    assert_eq!(p.front(&story)["implementation_complete"], true);
    (p, story)
}

#[tokio::test]
async fn a_blocker_whose_example_passes_is_no_blocker_and_the_review_approves() {
    let (p, story) = implemented_greeting().await;
    p.fake.push(
        "code-review",
        Reply::text("```python\nassert greet('Bob') == 'Hello, Bob!'\n```"),
    );

    p.step(&story, "review").success();

    let asks = p.fake.requests_for("code-review");
    assert_eq!(asks.len(), 2, "the verdict, then the ask to show it");
    let shown = &asks[1];
    assert!(shown
        .system_message()
        .starts_with("You are the agentic-sdlc code-review agent."));
    let prompt = shown.user_message();
    assert!(prompt.contains(VAGUE_BLOCKER), "{prompt}");
    assert!(
        prompt.contains("assert greet('Ann') == 'Hello, Ann!'"),
        "the acceptance tests are shown: {prompt}"
    );
    assert!(
        prompt.contains("return f'Hello, {name}!'"),
        "the code after the change: {prompt}"
    );
    let review = p.last_review(&story);
    assert_eq!(review["decision"], "APPROVED", "{review}");
    assert_eq!(review["blockers"].as_array().unwrap().len(), 0, "{review}");
    let issue = &review["issues"][0];
    assert_eq!(issue["severity"], "major", "{review}");
    let description = issue["description"].as_str().unwrap();
    assert!(
        description.starts_with(VAGUE_BLOCKER)
            && description.contains("not shown: its example passes on the work"),
        "{description}"
    );
    assert_eq!(p.front(&story)["reviews_complete"], true);
    // The example ran with the project's tests (the import added by the tool), and is gone.
    let branch = p.front(&story)["branch"].as_str().unwrap().to_string();
    let files = p.git(&["ls-tree", "-r", "--name-only", &branch]);
    assert!(!files.contains("test_review_example"), "{files}");
    let status = p.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("test_review_example"), "{status}");
}

#[tokio::test]
async fn a_blocker_shown_by_a_failing_example_rejects_with_the_failure_for_the_rework() {
    let (p, story) = implemented_greeting().await;
    p.fake.push(
        "code-review",
        Reply::text(
            "The empty name is wrong:\n```python\nfrom greet import greet\n\nassert greet('') == 'Hello, stranger!'\n```",
        ),
    );

    p.step(&story, "review").success();

    let review = p.last_review(&story);
    assert_eq!(review["decision"], "REJECTED", "{review}");
    let blockers = review["blockers"].as_array().unwrap();
    assert_eq!(blockers.len(), 1, "{review}");
    let blocker = blockers[0].as_str().unwrap();
    assert!(
        blocker.starts_with(VAGUE_BLOCKER)
            && blocker.contains("shown by an example that fails")
            && blocker.contains("AssertionError"),
        "{blocker}"
    );
}

#[tokio::test]
async fn a_withdrawn_blocker_or_an_example_that_does_not_run_is_no_blocker() {
    for (answer, why) in [
        ("WITHDRAWN", "it gave no example"),
        (
            "```python\nassert greeting('Bob') == 'Hello, Bob!'\n```",
            "its example does not run",
        ),
    ] {
        let (p, story) = implemented_greeting().await;
        p.fake.push("code-review", Reply::text(answer));

        p.step(&story, "review").success();

        let review = p.last_review(&story);
        assert_eq!(review["decision"], "APPROVED", "{answer}: {review}");
        let description = review["issues"][0]["description"].as_str().unwrap();
        assert!(description.contains(why), "{answer}: {description}");
    }
}

#[tokio::test]
async fn two_criticals_are_weighed_as_a_blocker_is_and_unshown_reject_nothing() {
    let (p, story) = implemented().await;
    // Recorded shape (Qwen2.5-Coder-1.5B, the inventory benchmark, 2026-12-05): two criticals
    // against a `format_price` whose tests, the story's examples, passed; the right work went
    // back to research.
    p.fake
        .push(
            "code-review",
            Reply::verdict(
                false,
                json!([{"severity": "critical", "category": "functionality",
                        "description": "`greet('Ann')` returns `Hello Ann` without the comma.",
                        "file": "greet.py"}]),
            ),
        )
        .push(
            "code-review",
            Reply::text("```python\nassert greet('Ann') == 'Hello, Ann!'\n```"),
        )
        .push(
            "security-review",
            Reply::verdict(
                false,
                json!([{"severity": "critical", "category": "security",
                        "description": "`greet` does not sanitize its input: SQL injection.",
                        "file": "greet.py"}]),
            ),
        )
        .push("security-review", Reply::text("WITHDRAWN"));

    p.step(&story, "review").success();

    let review = p.last_review(&story);
    assert_eq!(review["decision"], "APPROVED", "{review}");
    let issues = review["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 2, "{review}");
    for issue in issues {
        assert_eq!(issue["severity"], "major", "{review}");
        assert!(
            issue["description"]
                .as_str()
                .unwrap()
                .contains("and the acceptance tests pass"),
            "{review}"
        );
    }
    assert_eq!(p.fake.requests_for("security-review").len(), 2);
}
