//! What the agents are told: their identity line, the story and project they work on, and
//! nothing of other stories.

use super::Project;
use crate::suite::common::assert_contains_all;
use crate::suite::fake_llm::Reply;

const READ_TOOLS: [&str; 3] = ["read_file", "list_files", "search"];
const ALL_TOOLS: [&str; 6] = [
    "read_file",
    "list_files",
    "search",
    "write_file",
    "edit_file",
    "run_command",
];

#[tokio::test]
async fn every_agent_names_its_role_in_the_first_line_of_its_system_message() {
    let p = Project::new().await;
    // An ai gate on research brings in the phase-review agent too.
    let config_path = p.env.path(".agentic-sdlc.json");
    let mut config: serde_json::Value = serde_json::from_str(&p.env.read(&config_path)).unwrap();
    config["phases"] = serde_json::json!({"research": {"review": {"reviewer": "ai"}}});
    p.env.write(&config_path, &config.to_string());
    let story = p.story("Role check", "Rough idea.", "- [ ] Works", "backlog", &[]);
    p.fake
        .set_default("research", Reply::text("RESEARCH-OUTPUT-MARK"))
        .set_default("plan", Reply::text("PLAN-OUTPUT-MARK"))
        .set_default("implement", Reply::text("IMPLEMENT-OUTPUT-MARK"))
        // A feature's implement must change a file (docs/design.md §15): one write, then the notes.
        .push(
            "implement",
            Reply::tool(
                "write_file",
                serde_json::json!({"path": "feature.txt", "content": "x"}),
            ),
        );

    p.run(&["run", "--auto", "--story", &story.id]).success();

    assert_eq!(p.column(&story), "done");
    let requests = p.fake.requests();
    for request in &requests {
        let first_line = request
            .system_message()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        let perspective = request.role.ends_with("-review") && request.role != "phase-review";
        if perspective {
            // The three perspectives share one system message, for the server's prompt cache,
            // and each names itself last.
            assert_eq!(first_line, "You are the agentic-sdlc review agent.");
            let user = request.user_message();
            assert!(
                user.trim_end()
                    .rsplit('\n')
                    .nth(1)
                    .is_some_and(|line| line == format!("## Your perspective ({})", request.role)),
                "{user}"
            );
        } else {
            assert_eq!(
                first_line,
                format!("You are the agentic-sdlc {} agent.", request.role)
            );
        }
    }
    let systems: std::collections::BTreeSet<String> = p
        .fake
        .requests()
        .iter()
        .filter(|r| r.role.ends_with("-review") && r.role != "phase-review")
        .map(|r| r.system_message().to_string())
        .collect();
    assert_eq!(
        systems.len(),
        1,
        "one system message for the three: {systems:?}"
    );
    // One request per agent, the phases in their order, then the three perspectives.
    let roles = p.fake.roles();
    assert_eq!(
        roles[..5],
        ["refine", "research", "phase-review", "plan", "implement"]
    );
    assert!(p.fake.requests_for("phase-review")[0]
        .user_message()
        .contains("RESEARCH-OUTPUT-MARK"));
    let mut reviewers = roles[5..].to_vec();
    reviewers.sort();
    assert_eq!(reviewers, ["code-review", "po-review", "security-review"]);
    // The role in the system message is the agent that really ran: its answer landed in the
    // section of that phase.
    let body = p.body(&story);
    for (section, mark) in [
        ("Research", "RESEARCH-OUTPUT-MARK"),
        ("Implementation Plan", "PLAN-OUTPUT-MARK"),
        ("Implementation Notes", "IMPLEMENT-OUTPUT-MARK"),
    ] {
        assert_eq!(super::section(&body, section), mark, "{body}");
    }
    // Read tools for the phases that only look; every tool for implement.
    for role in ["refine", "research", "plan"] {
        assert_eq!(
            p.fake.requests_for(role)[0].tool_names(),
            READ_TOOLS,
            "{role}"
        );
    }
    assert_eq!(p.fake.requests_for("implement")[0].tool_names(), ALL_TOOLS);
}

#[tokio::test]
async fn the_research_prompt_has_the_story_and_the_project_but_no_other_story() {
    let p = Project::new().await;
    p.env.write("src/engine.rs", "pub fn run() {}\n");
    p.env.write("README.md", "# Demo\n");
    let story = p.story(
        "Teach the engine TITLE-MARK",
        "SUMMARY-MARK: the engine learns a trick.",
        "- [ ] CRITERION-MARK holds",
        "ready",
        &[],
    );
    let other = p.story(
        "Unrelated OTHER-STORY-MARK work",
        "OTHER-SUMMARY-MARK must stay private.",
        "- [ ] OTHER-CRITERION-MARK",
        "ready",
        &[],
    );

    p.step(&story, "research").success();

    let requests = p.fake.requests_for("research");
    assert_eq!(requests.len(), 1);
    let prompt = requests[0].user_message();
    assert_contains_all(
        &prompt,
        &[
            "TITLE-MARK",
            "SUMMARY-MARK: the engine learns a trick.",
            "CRITERION-MARK holds",
            "src/",
            "README.md",
        ],
    );
    let whole_request = requests[0].body.to_string();
    for needle in [
        "OTHER-STORY-MARK",
        "OTHER-SUMMARY-MARK",
        "OTHER-CRITERION-MARK",
        &other.slug,
    ] {
        assert!(
            !whole_request.contains(needle),
            "{needle:?} leaked into:\n{prompt}"
        );
    }
    // Nor does the board folder show up in the listing the agent gets.
    assert!(!prompt.contains(".agentic-sdlc/"), "{prompt}");
    assert!(task_is_last(&prompt), "{prompt}");
}

#[tokio::test]
async fn a_very_long_section_is_cut_in_the_plan_prompt() {
    let p = Project::new().await;
    let story = p.ready("Long research");
    let filler = "research line that goes on and on\n".repeat(3_000);
    let research = format!("HEAD-MARK\n{filler}MIDDLE-MARK\n{filler}TAIL-MARK");
    assert!(research.len() > 200_000);
    let path = p.path_of(&story);
    p.env.edit(
        &path,
        "## Research\n",
        &format!("## Research\n{research}\n"),
    );
    p.set_flag(&story.slug, "research_complete", true);

    p.step(&story, "plan").success();

    let requests = p.fake.requests_for("plan");
    assert_eq!(requests.len(), 1);
    let prompt = requests[0].user_message();
    assert!(
        prompt.len() < 50_000,
        "the plan prompt is {} bytes",
        prompt.len()
    );
    assert!(
        prompt.contains("HEAD-MARK"),
        "the start of the section is kept"
    );
    assert!(
        prompt.contains("TAIL-MARK"),
        "the end of the section is kept"
    );
    assert!(!prompt.contains("MIDDLE-MARK"), "the middle is cut");
    assert!(task_is_last(&prompt), "{}", &prompt[prompt.len() - 2_000..]);
    // The story itself keeps every byte.
    assert!(p.body(&story).contains("MIDDLE-MARK"));
}

/// `## Task` is the last level-2 heading and comes after everything else.
fn task_is_last(prompt: &str) -> bool {
    let headings: Vec<&str> = prompt.lines().filter(|l| l.starts_with("## ")).collect();
    headings.last() == Some(&"## Task") && prompt.matches("## Task").count() == 1
}

#[tokio::test]
async fn implement_is_shown_the_plan_and_the_files_the_story_names_not_what_its_research_named() {
    // Recorded (Qwen2.5-Coder-1.5B, inventory `parse-quantity`, 2026-12-05): the research of a
    // story about a new `parse.py` named the cart's file, and the map then listed it as one the
    // story "mentions"; implement wrote it out in each of its replies.
    let p = Project::new().await;
    p.env.write("inventory/cart.py", "class Cart:\n    pass\n");
    p.env.write("inventory/parse.py", "\"\"\"Parsing.\"\"\"\n");
    let story = p.story(
        "Read a quantity",
        "Add `parse_quantity(text)` to inventory/parse.py.",
        "- [ ] `parse_quantity(\" 3 \")` returns `3`",
        "ready",
        &["research", "plan"],
    );
    let path = p.path_of(&story);
    p.env.edit(
        &path,
        "## Research\n",
        "## Research\nRESEARCH-MARK: the `Cart` class in inventory/cart.py should be used.\n",
    );
    p.env.edit(
        &path,
        "## Implementation Plan\n",
        "## Implementation Plan\nPLAN-MARK: add the function to inventory/parse.py.\n",
    );

    p.step(&story, "implement").success();

    let prompt = p.fake.requests_for("implement")[0].user_message();
    assert_contains_all(
        &prompt,
        &[
            "PLAN-MARK",
            "- file inventory/parse.py (exists)",
            "- `parse_quantity`: not defined yet",
            "inventory/parse.py\n```",
        ],
    );
    for left_out in [
        "RESEARCH-MARK",
        "- file inventory/cart.py",
        "`Cart`: defined",
        "inventory/cart.py\n```",
    ] {
        assert!(!prompt.contains(left_out), "{left_out:?} in:\n{prompt}");
    }
}

#[tokio::test]
async fn research_is_shown_the_files_the_story_names_and_plan_is_not() {
    // The 1.5B model's research read the story's file turn by turn and ended on reading it
    // again, its answer empty (a drive, 2026-12-07); a plan shown a file writes it out.
    let p = Project::new().await;
    p.env.write(
        "thermo/convert.py",
        "def c_to_f(celsius):\n    return celsius * 9 / 5 + 32\n",
    );
    let story = p.story(
        "Fahrenheit to Celsius",
        "Add `f_to_c(fahrenheit)` to thermo/convert.py.",
        "- [ ] `f_to_c(212)` returns `100.0`",
        "ready",
        &[],
    );
    p.fake.set_default(
        "research",
        Reply::text("The function goes beside `c_to_f` in thermo/convert.py."),
    );
    p.fake.set_default(
        "plan",
        Reply::text("1. Add `f_to_c` to thermo/convert.py, beside `c_to_f`."),
    );

    p.step(&story, "research").success();
    p.step(&story, "plan").success();

    let shown = "## thermo/convert.py\n```python\ndef c_to_f(celsius):";
    let research = p.fake.requests_for("research")[0].user_message();
    assert!(research.contains(shown), "{research}");
    let plan = p.fake.requests_for("plan")[0].user_message();
    assert!(!plan.contains(shown), "{plan}");
    assert!(plan.contains("- file thermo/convert.py (exists)"), "{plan}");
}
