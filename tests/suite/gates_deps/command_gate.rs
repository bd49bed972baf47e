//! The `command` reviewer (docs/design.md §8): a shell command in the repository root; a decision
//! line on stdout decides, else exit 0 approves and any other exit retries with the tail of the
//! output.

use serde_json::json;

use super::{assert_revision, details, gate, ready_story, requests_about, revision_of, Story};
use crate::suite::common::{outcome, Outcome, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Reply};

const FIRST: &str = "First findings.";
const SECOND: &str = "Second findings, with tests.";

/// A gate script that records what it saw in `seen-N.txt` and `output-N.md` (N = its call
/// number), then behaves as `first` on its first call and as `later` after that.
fn gate_script(env: &TestEnv, first: &str, later: &str) {
    env.write(
        "gate.sh",
        &format!(
            r#"n=$(cat gate-count 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > gate-count
{{
  echo "story=$AGENTIC_SDLC_STORY_ID"
  echo "phase=$AGENTIC_SDLC_PHASE"
  echo "cwd=$(pwd)"
}} > "seen-$n.txt"
cp "$AGENTIC_SDLC_OUTPUT_FILE" "output-$n.md"
if [ "$n" -eq 1 ]; then
{first}
else
{later}
fi
"#
        ),
    );
}

/// A refined story with a command gate on research, and the fake's two research answers.
async fn setup(first: &str, later: &str) -> (FakeLlm, TestEnv, Story) {
    let fake = FakeLlm::start().await;
    fake.push("research", Reply::text(FIRST));
    fake.push("research", Reply::text(SECOND));
    let env = TestEnv::init();
    gate(
        &env,
        "research",
        json!({"reviewer": "command", "command": "sh gate.sh"}),
    );
    gate_script(&env, first, later);
    let story = ready_story(&env, "Add a rate limiter");
    (fake, env, story)
}

/// `run` started from a sub-folder, so the gate's working folder proves it is the root.
fn run_from_subfolder(env: &TestEnv, fake: &FakeLlm) -> Outcome {
    let sub = env.path("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    outcome(
        env.cmd(&["run"])
            .current_dir(&sub)
            .env("OPENAI_BASE_URL", fake.base_url()),
    )
}

#[tokio::test]
async fn a_decision_line_on_stdout_retries_and_silence_with_exit_0_approves() {
    let (fake, env, story) = setup(
        "echo 'Checked the findings.'\necho 'RETRY: add tests'\nexit 0",
        "exit 0",
    )
    .await;

    run_from_subfolder(&env, &fake).success();

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 2);
    assert_revision(&research[1].user_message(), 2, "add tests", Some(FIRST));
    let story_json = details(&env, &story.slug);
    assert_eq!(story_json["research_complete"], true);
    assert_eq!(
        story_json["sections"]["Research"].as_str().map(str::trim),
        Some(SECOND)
    );
    let record = &story_json["phase_reviews"]["research"];
    assert_eq!(record["attempts"], 2, "{record}");
    assert_eq!(record["decision"], "APPROVE", "{record}");
    assert_eq!(fake.requests_for("phase-review").len(), 0);

    // What the command saw, on each call.
    let root = env.root();
    for (n, output) in [(1, FIRST), (2, SECOND)] {
        assert_eq!(
            env.read(format!("seen-{n}.txt")),
            format!(
                "story={}\nphase=research\ncwd={}\n",
                story.id,
                root.display()
            )
        );
        assert_eq!(env.read(format!("output-{n}.md")).trim(), output);
    }
}

#[tokio::test]
async fn a_failing_command_retries_with_the_tail_of_its_output() {
    let noisy = "i=0\nwhile [ $i -lt 2000 ]; do echo \"lint noise line $i\"; i=$((i + 1)); done\necho 'missing docs in README' >&2\nexit 1";
    let (fake, env, story) = setup(noisy, "exit 0").await;

    run_from_subfolder(&env, &fake).success();

    let research = requests_about(&fake, "research", &story);
    assert_eq!(research.len(), 2);
    let prompt = research[1].user_message();
    let revision = revision_of(&prompt).unwrap_or_else(|| panic!("no revision in\n{prompt}"));
    let feedback = revision
        .split("### Feedback\n")
        .nth(1)
        .and_then(|rest| rest.split("\n### Previous Output\n").next())
        .unwrap_or_default();
    assert!(
        feedback.contains("missing docs in README") && feedback.contains("lint noise line 1999"),
        "the feedback ends with the output's tail:\n{feedback}"
    );
    assert!(
        feedback.len() < 10_000,
        "the feedback is cut to the tail ({} bytes)",
        feedback.len()
    );
    assert!(revision.contains(&format!("### Previous Output\n{FIRST}\n")));
    assert_eq!(section_of(&env, &story), SECOND);
}

#[tokio::test]
async fn a_silent_command_that_exits_0_approves_the_first_output() {
    let (fake, env, story) = setup("exit 0", "exit 0").await;

    run_from_subfolder(&env, &fake).success();

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    assert_eq!(env.read("gate-count").trim(), "1");
    assert_eq!(section_of(&env, &story), FIRST);
    let record = &details(&env, &story.slug)["phase_reviews"]["research"];
    assert_eq!(record["attempts"], 1, "{record}");
    assert_eq!(record["decision"], "APPROVE", "{record}");
}

#[tokio::test]
async fn a_reject_line_blocks_even_when_the_command_exits_0() {
    let (fake, env, story) = setup("echo 'REJECT: the spec contradicts itself'", "exit 0").await;

    run_from_subfolder(&env, &fake).code(3);

    assert_eq!(requests_about(&fake, "research", &story).len(), 1);
    assert_eq!(
        details(&env, &story.slug)["blocked_reason"],
        "Phase research rejected by review: the spec contradicts itself"
    );
}

fn section_of(env: &TestEnv, story: &Story) -> String {
    super::section(env, &story.slug, "Research")
}
