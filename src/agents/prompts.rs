//! What the agents are told. Each user message carries only what its phase needs, then the
//! Revision Instructions when the phase is re-run (docs/design.md §9), then `## Task`.

mod named_files;
mod plan_code;
mod repo_map;
mod review;

use std::borrow::Cow;
use std::path::Path;

pub use named_files::{files_not_named, named_files, names_a_path, names_file};
pub use repo_map::{
    backtick_spans, is_test_path, mentioned_names, repository_map, without_definition_of,
};
pub use review::{
    blocker_system, blocker_user, issues_reminder, review_focus, review_system, review_user,
    truncated_reminder, verdict_reminder,
};

use super::Revision;
use crate::board::{Phase, Story};
use crate::config::{EditFormat, ToolProtocol};
use crate::exec::head_tail;

/// A section longer than this is cut to its head and tail in prompts, so one long story cannot
/// blow up every request.
const SECTION_BUDGET: usize = 8_000;
/// The diff the reviewers see.
pub const DIFF_BUDGET: usize = 60_000;
const LISTING_LIMIT: usize = 200;
const MANIFEST_BUDGET: usize = 4_000;

/// Names or paths as the prompts list them: each in backticks, joined by commas.
pub fn backticked<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    items
        .into_iter()
        .map(|item| format!("`{}`", item.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first line of every system message (docs/design.md §10).
pub fn identity(role: &str) -> String {
    format!("You are the agentic-sdlc {role} agent.")
}

pub fn phase_system(phase: Phase, protocol: ToolProtocol, edits: EditFormat) -> String {
    let role_text = match phase {
        Phase::Refine => "You turn a rough story into a clear, testable one. You may read the repository with the tools given to understand the context, but you change nothing.",
        Phase::Research => "You research how a story fits the existing codebase: the relevant files, patterns, constraints and risks. Read the repository with the tools given; change nothing.",
        Phase::Plan => "You write a step-by-step implementation plan for a story, grounded in the research and the real code. Read the repository with the tools given; change nothing.",
        // No "answer in Markdown" here: asked for prose before it has made its changes, a
        // small model writes the code into its answer instead of into the files.
        Phase::Acceptance => return acceptance_system(protocol, edits),
        Phase::Implement => return implement_system(protocol, edits),
    };
    format!(
        "{}\n{role_text}\nAnswer in Markdown.",
        identity(phase.name())
    )
}

/// Acceptance's instructions (docs/design.md §21): tests from the story, before any code. The
/// tests are checked by the tool afterwards, so the prompt says what the check wants.
fn acceptance_system(protocol: ToolProtocol, edits: EditFormat) -> String {
    const WHAT: &str = "You write the acceptance tests of a story before its code exists: each acceptance criterion and each example the story gives becomes a test in the project's own test framework. Copy every example exactly as the story writes it: `f(x) == y` becomes `assert f(x) == y`. Import only what the story names or what the repository already has. Do not write the feature itself: the tests must fail now, and pass once the story is implemented. Write test files only; paths are relative to the repository root.";
    let how = match edits {
        EditFormat::Whole => "To write a test file, give its path alone on a line, then its complete content in a code block. When your reply writes files, the tests run and you get the result to check.",
        EditFormat::Tools | EditFormat::Auto => "Write the test file with write_file. Your first reply is a tool call; when the file is written, reply without a tool call; the tests then run and you get the result to check.",
    };
    let mut out = format!("{}\n{WHAT}\n{how}", identity(Phase::Acceptance.name()));
    if edits != EditFormat::Whole && protocol != ToolProtocol::Native {
        out.push_str("\nYou may also write the file out whole: its path alone on a line, then the complete content in a code block.");
    }
    out
}

/// The narrowed task's instructions: one definition, as code, nothing else.
pub fn definition_system() -> String {
    format!(
        "{}\nYou write exactly one function or method that a story asks for, and nothing else. Answer with its complete code in one code block: the definition line, its body, no other definitions, no class around a method, no tests.",
        identity("definition")
    )
}

/// The instructions of the agent asked for one test of an example of the story's whose setup
/// the story writes in words.
pub fn example_test_system() -> String {
    format!(
        "{}\nYou write exactly one test function of the project's test framework for one criterion of a story, and nothing else. Answer with its complete code in one code block: the definition line and its body, no imports, no other definitions.",
        identity("example_test")
    )
}

/// Where the acceptance tests go, as the tool picked it from the project's existing tests.
pub fn acceptance_path_note(path: &str) -> String {
    format!(" Write the tests into `{path}`.")
}

/// Implement's instructions. With `implement.editFormat: "tools"` the model is led to call
/// tools; with `"whole"`, to write each changed file out whole under its path (aider's "whole"
/// edit format): a small model gets that right far more often than code inside a JSON string,
/// and it is not drawn to tools it does not need (the files the story names are in its prompt).
fn implement_system(protocol: ToolProtocol, edits: EditFormat) -> String {
    const SCOPE: &str = "Keep the change focused on the story, and add or update tests when the story asks for them. Paths are relative to the repository root; the .git folder and the board folder are off limits.";
    let how = match edits {
        EditFormat::Whole => "You change the files of the repository. To change a file, write it out whole: its path alone on a line, then the complete new content of the file in a code block, keeping everything of it that stays. You may change several files in one reply.\nWhen your reply changes files, the project's tests run, and if they fail you get their output to fix. When every change is made, reply with short notes on what you changed.",
        // The agents are given a resolved format (`Config::edit_format`); `auto` reads as tools.
        EditFormat::Tools | EditFormat::Auto => "You change the files of the repository with the tools, one step at a time: read a file, then change it (edit_file for a part of a file, write_file for a new file or a whole small one).\nYour first reply is a tool call. Only when every change is made, reply without a tool call; the project's tests then run, and if they fail you get their output to fix.",
    };
    let mut out = format!("{}\n{how}\n{SCOPE}", identity(Phase::Implement.name()));
    if edits != EditFormat::Whole && protocol != ToolProtocol::Native {
        out.push_str("\nYou may also change a file by writing it out whole: its path alone on a line, then the complete new content in a code block. Such a reply is your change; the tests then run.");
    }
    out
}

pub fn phase_task(phase: Phase, edits: EditFormat) -> &'static str {
    match phase {
        Phase::Implement if edits == EditFormat::Whole => "Make the change now: write out each file you change, whole, under its path. When every change is made, reply with short notes: what you changed, in which files, and how you checked it.",
        Phase::Refine => "Rewrite the story's summary and acceptance criteria. Answer with exactly two sections:\n\n## Summary\n<what and why, in a few sentences>\n\n## Acceptance Criteria\n- [ ] <a testable criterion>\n- [ ] …",
        Phase::Research => "Research this story. Report the relevant files and how they work today, patterns to follow, dependencies, risks and open questions. Answer with the findings only (no top-level heading).",
        Phase::Acceptance if edits == EditFormat::Whole => "Write the acceptance tests now: the test file's path alone on a line, then its whole content in a code block, with one test per criterion and every example of the story copied exactly. Then reply with one line per test: its name and the criterion it checks.",
        Phase::Acceptance => "Write the acceptance tests now with write_file, one test per criterion and every example of the story copied exactly. Then reply without a tool call with one line per test: its name and the criterion it checks.",
        Phase::Plan => "Write the implementation plan for this story: numbered steps naming the files to change, the tests to add or update, and how to verify the result. Answer with the plan only (no top-level heading).",
        Phase::Implement => "Make the changes now, with the tools (a file shown above need not be read again). When every change is made, reply without a tool call with short implementation notes: what you changed, in which files, and how you checked it.",
    }
}

/// Tells the implement agent how its work is checked, so it need not guess the test command.
pub fn tests_note(command: &str) -> String {
    format!(
        " The project's tests run with `{command}` once you are done; if they fail you get their output."
    )
}

/// The Revision Instructions section of docs/design.md §9, ending with the `## Task` heading it
/// precedes.
pub fn revision_section(revision: &Revision) -> String {
    let mut out = format!(
        "## Revision Instructions (Attempt {})\nThis task is being re-executed based on reviewer feedback.\nIncorporate the feedback below into your response.\n\n### Feedback\n{}\n",
        revision.attempt,
        revision.feedback.trim()
    );
    if let Some(previous) = revision
        .previous_output
        .as_deref()
        .filter(|p| !p.trim().is_empty())
    {
        // A runaway previous answer is quoted by its head and tail only (docs/design.md §15).
        out.push_str(&format!(
            "\n### Previous Output\n{}\n",
            head_tail(previous.trim(), SECTION_BUDGET)
        ));
    }
    out
}

/// Context, then the revision (if any), then the task.
pub fn assemble(context: &str, revision: Option<&Revision>, task: &str) -> String {
    let mut out = context.trim_end().to_string();
    out.push_str("\n\n");
    if let Some(revision) = revision {
        out.push_str(&revision_section(revision));
        out.push('\n');
    }
    out.push_str("## Task\n");
    out.push_str(task);
    out.push('\n');
    if let Some(revision) = revision {
        // Small models weigh the end of a prompt most: the feedback is repeated last, so a
        // re-run acts on it instead of repeating the previous output.
        out.push_str(&format!(
            "\nAct on this feedback first: {}\n",
            head_tail(&one_paragraph(&revision.feedback), FEEDBACK_REMINDER)
        ));
    }
    out
}

/// The most of the feedback repeated after the task.
const FEEDBACK_REMINDER: usize = 600;

fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The story as a phase sees it: its description and the sections of the phases before it.
pub fn story_context(story: &Story, phase: Option<Phase>) -> String {
    // The story's own description (refine's sections), then each earlier phase's section; the
    // review (no phase) sees them all. The acceptance tests are written from the criteria
    // alone, as the reviewers judge by them (docs/design.md §21): the 1.5B model's research
    // warned of "negative quantities" for a `remove` that takes an item out "whatever its
    // quantity", its plan said to take one away, and its tests then expected both. The code
    // is written from the plan, which was written from the research: the 1.5B model's research
    // of a story about a new `parse.py` said the cart's and the prices' files and tests "should
    // be used", and implement wrote all four out in each of three replies (inventory
    // `parse-quantity`, 2026-12-05). The plan's steps about files the story does not name,
    // and its code blocks that touch nothing the story calls, are left out of it (`plan_code`).
    let earlier = Phase::ALL
        .iter()
        .filter(|p| **p != Phase::Refine && phase.is_none_or(|phase| **p < phase))
        .filter(|_| phase != Some(Phase::Acceptance))
        .filter(|p| !(phase == Some(Phase::Implement) && **p == Phase::Research))
        .map(|p| p.section());
    if phase != Some(Phase::Implement) {
        return with_sections(story, earlier, |_, content| Cow::Borrowed(content));
    }
    let own_words = story_own_words(story);
    let called = plan_code::called_names(&own_words);
    with_sections(story, earlier, |name, content| {
        if name != Phase::Plan.section() {
            return Cow::Borrowed(content);
        }
        match plan_code::steps_about(content, &own_words) {
            Cow::Borrowed(plan) => plan_code::code_about(plan, &called),
            Cow::Owned(plan) => Cow::Owned(plan_code::code_about(&plan, &called).into_owned()),
        }
    })
}

/// The story in its own words: its title, summary and criteria, without what the phases wrote.
pub fn story_own_words(story: &Story) -> String {
    with_sections(story, std::iter::empty(), |_, content| {
        Cow::Borrowed(content)
    })
}

/// The words whose files and names the map lists as the story's and whose files are shown
/// whole: the story's own (`own_words`) when they name a file, else all of `story_text`, its
/// research and plan too. Shown every file its research named, the 1.5B model wrote out
/// `cart.py` and `pricing.py` for a story about `money.py`, 70 s of one 90 s round (inventory
/// `format-price`, 2026-12-05); told that the story "mentions" the eight files its research
/// named, it wrote four of them out in each reply of a story about a new `parse.py` (inventory
/// `parse-quantity`, the same day).
pub fn naming_words<'a>(own_words: &'a str, story_text: &'a str) -> &'a str {
    match names_a_path(own_words) {
        true => own_words,
        false => story_text,
    }
}

/// The story's head, its Summary and Acceptance Criteria, then the sections `more` names, each
/// as `read` gives it from its name and content.
fn with_sections<'a>(
    story: &Story,
    more: impl Iterator<Item = &'a str>,
    read: impl for<'c> Fn(&str, &'c str) -> Cow<'c, str>,
) -> String {
    let meta = &story.meta;
    let mut out = format!("# Story: {}\n\nType: {}", meta.title, meta.story_type);
    if !meta.labels.is_empty() {
        out.push_str(&format!(" · Labels: {}", meta.labels.join(", ")));
    }
    out.push('\n');
    for name in ["Summary", "Acceptance Criteria"].into_iter().chain(more) {
        if let Some(content) = story.section(name).filter(|c| !c.is_empty()) {
            out.push_str(&format!(
                "\n## {name}\n{}\n",
                head_tail(&read(name, content), SECTION_BUDGET)
            ));
        }
    }
    out
}

/// A short picture of the repository: its manifest and top-level files.
pub fn project_context(root: &Path, board_dir: &Path) -> String {
    let mut out = String::from("# Repository\n");
    for manifest in [
        "Cargo.toml",
        "package.json",
        "pyproject.toml",
        "go.mod",
        "pom.xml",
        "build.gradle",
        "Gemfile",
        "composer.json",
    ] {
        if let Ok(text) = std::fs::read_to_string(root.join(manifest)) {
            // Not `## pyproject.toml` over the fence: that is how a reply writes a file whole,
            // and the 1.5B model copies this section into its replies (textkit `word-count`,
            // 2026-12-05: the echo bumped the version twice).
            out.push_str(&format!(
                "\n## {manifest}, the project's manifest\n```\n{}\n```\n",
                head_tail(text.trim(), MANIFEST_BUDGET)
            ));
            break;
        }
    }
    let mut entries: Vec<String> = std::fs::read_dir(root)
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                // The tool's own files are no part of the project the agent works on: listed,
                // the story worktrees' folder drew the 1.5B model's writes of `textkit/…` under
                // it, refused eight times in one implement (textkit, 2026-11-30).
                .filter(|e| {
                    e.file_name() != ".git"
                        && e.file_name() != crate::config::CONFIG_FILE
                        && e.file_name() != crate::config::WORKTREES_DIR
                        && e.path() != board_dir
                })
                .map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    if e.path().is_dir() {
                        format!("{name}/")
                    } else {
                        name
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    entries.sort();
    let total = entries.len();
    entries.truncate(LISTING_LIMIT);
    out.push_str("\n## Top-level files\n");
    for entry in &entries {
        out.push_str(&format!("- {entry}\n"));
    }
    if total > LISTING_LIMIT {
        out.push_str(&format!("- … and {} more\n", total - LISTING_LIMIT));
    }
    out
}

/// Told when a reply that wrote files was cut off at the reply cap.
pub fn change_cut_off() -> &'static str {
    "Your reply was cut off at the reply limit before it ended; the files in it were written as \
     far as they went. Write out again, whole, only a file that was cut short, then say in a \
     line or two what you changed."
}

/// Told when a reply that changed no file was cut off at the reply cap.
pub fn cut_off_before_a_change() -> &'static str {
    "Your reply was cut off at the reply limit, and it changed no file. Make the change first, \
     then say in a line or two what you changed."
}

pub fn gate_system() -> String {
    format!(
        "{}\nYou decide whether a phase's output is good enough to keep. Start your answer with exactly one decision line:\nAPPROVE\nRETRY: <what to improve>\nRETRY_PREDECESSOR <phase>: <what the previous phase must redo>\nREJECT: <why the story cannot go on>\nWhen your answer is a JSON object, put the keyword in `decision`, the phase of RETRY_PREDECESSOR in `phase` (else null), and the text after the colon in `feedback`.",
        identity("phase-review")
    )
}

pub fn gate_user(story: &Story, phase: Phase, output: &str, criteria: Option<&str>) -> String {
    let mut context = story_context(story, Some(phase));
    context.push_str(&format!(
        "\n# Output of the {phase} phase\n{}\n",
        head_tail(output, SECTION_BUDGET * 2)
    ));
    if let Some(criteria) = criteria.filter(|c| !c.trim().is_empty()) {
        context.push_str(&format!("\n# Review criteria\n{}\n", criteria.trim()));
    }
    let predecessor = phase.predecessor().map_or(String::new(), |p| {
        format!(" The direct predecessor of {phase} is {p}.")
    });
    assemble(
        &context,
        None,
        &format!("Review the {phase} output against the criteria and decide.{predecessor}"),
    )
}

/// How a model without tool calling acts (`llm.toolProtocol: "text"`): the tools, and the one
/// action per reply it writes, in the forms small models write unprompted (a JSON object in a
/// ```json fence, or a ```bash fence for a command).
pub fn text_protocol(definitions: &[serde_json::Value]) -> String {
    let names: Vec<&str> = definitions
        .iter()
        .filter_map(|d| d["function"]["name"].as_str())
        .collect();
    let mut out = String::from(
        "# How you act\nYou act through tools. Each reply holds exactly one action: a JSON \
         object with the tool's name and its arguments, in a \
         ```json fence:\n```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \
         \"README.md\"}}\n```\n",
    );
    if names.contains(&"run_command") {
        out.push_str("A shell command may also be the action, alone in a ```bash fence.\n");
    }
    out.push_str("The result comes back in the next message. When the work is done, reply without any action: that reply is your final answer.\n\n# Tools\n");
    for definition in definitions {
        let function = &definition["function"];
        let name = function["name"].as_str().unwrap_or("?");
        let parameters = &function["parameters"];
        let required: Vec<&str> = parameters["required"]
            .as_array()
            .map(|r| r.iter().filter_map(serde_json::Value::as_str).collect())
            .unwrap_or_default();
        let arguments: Vec<String> = parameters["properties"]
            .as_object()
            .map(|properties| {
                properties
                    .iter()
                    .map(|(argument, schema)| {
                        let kind = schema["type"].as_str().unwrap_or("value");
                        let optional = if required.contains(&argument.as_str()) {
                            ""
                        } else {
                            ", optional"
                        };
                        format!("{argument} ({kind}{optional})")
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push_str(&format!(
            "- {name}: {} Arguments: {}.\n",
            function["description"].as_str().unwrap_or("").trim(),
            if arguments.is_empty() {
                "none".to_string()
            } else {
                arguments.join(", ")
            }
        ));
    }
    out
}

/// The most of one tool result a text-protocol observation quotes.
const OBSERVATION_BUDGET: usize = 12_000;

/// One action's result as the model reads it under the text protocol.
pub fn text_result(name: &str, form: crate::agents::text_calls::CallForm, result: &str) -> String {
    let what = match form {
        crate::agents::text_calls::CallForm::BashFence => "Output of your command".to_string(),
        _ => format!("Result of {name}"),
    };
    format!("{what}:\n{}", head_tail(result, OBSERVATION_BUDGET))
}

/// The message that answers a text-protocol reply. The same result twice in a row is said once,
/// with how often: a small model parrots a list of eighteen identical refusals back.
pub fn text_results(observations: &[String], left_out: usize) -> String {
    let mut said: Vec<String> = Vec::new();
    let mut index = 0;
    while index < observations.len() {
        let same = observations[index..]
            .iter()
            .take_while(|o| **o == observations[index])
            .count();
        let mut text = observations[index].clone();
        if same > 1 {
            text.push_str(&format!("\n(The same result for {same} actions alike.)"));
        }
        said.push(text);
        index += same;
    }
    let mut out = said.join("\n\n");
    if left_out > 0 {
        out.push_str(&format!(
            "\n\n(Only your first action was run; {left_out} more in the same reply were not. Send one action per reply.)"
        ));
    }
    out.push_str("\n\nReply with your next action, or without one when the work is done.");
    out
}

/// Sent when the turn budget is spent and the model still calls tools: no more tools, the
/// answer now (docs/design.md §21, "Every phase ends").
pub fn turn_budget_spent(turns: u32) -> String {
    format!(
        "You have used all {turns} turns: no more tool calls will run, and the calls in your \
         last reply were not run. Give your final answer now, from what you have read so far, \
         in the form the task asks for, without any tool call."
    )
}

/// Told to a read-only agent that tried again to write files, with its tools withdrawn.
pub fn writes_refused_answer_now() -> &'static str {
    "This phase may not change files: the change is made in a later phase, from your answer. \
     No more tool calls will run. Give your final answer now, from what you have read so far, \
     in the form the task asks for, without any tool call."
}

/// Told to an agent that sent again calls it had read the answers of, with its tools withdrawn.
pub fn repeats_answer_now() -> &'static str {
    "You asked again for what you have already read: no more tool calls will run. Give your \
     final answer now, from what you have read so far, in the form the task asks for, without \
     any tool call."
}

/// Told to an agent that answered with a tool call after its tools were withdrawn.
pub fn call_instead_of_answer() -> &'static str {
    "That reply was a tool call, and it did not run: no tool runs any more. Write your final \
     answer now in words, in the form the task asks for, from what you have read so far. Write \
     no call and no JSON."
}

/// Sent back when a reply held a call that could not be read.
pub fn unreadable_call(why: &str, text_only: bool) -> String {
    let form = if text_only {
        "one JSON object in a ```json fence"
    } else {
        "a tool call"
    };
    format!(
        "Error: {why}. Nothing was run. Send the call again as {form}: {{\"name\": \"<tool>\", \"arguments\": {{…}}}}, with valid JSON (strings in double quotes, newlines as \\n)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_result_in_a_row_is_said_once_with_how_often() {
        let refused = "Result of write_file:\nError: fixed".to_string();
        let wrote = "Result of write_file:\nWrote 3 bytes to a.py".to_string();
        let text = text_results(
            &[wrote.clone(), refused.clone(), refused.clone(), refused],
            0,
        );
        assert_eq!(text.matches("Error: fixed").count(), 1, "{text}");
        assert!(
            text.contains("Error: fixed\n(The same result for 3 actions alike.)"),
            "{text}"
        );
        assert!(text.starts_with(&wrote), "{text}");
    }

    #[test]
    fn the_acceptance_tests_are_written_from_the_criteria_and_the_code_from_the_plan() {
        let text = "---\nid: story-a\ntitle: Remove\n---\n# Remove\n\n## Summary\nSUMMARY-MARK `remove(sku)`\n\n## Acceptance Criteria\n- [ ] CRITERION-MARK\n\n## Research\nRESEARCH-MARK\n\n## Implementation Plan\nPLAN-MARK\n```python\ndef add(sku):\n    OLD-CODE-MARK\n```\n```python\ndef remove(sku):\n    NEW-CODE-MARK\n```\n";
        let story = Story::parse(
            text,
            std::path::PathBuf::from("ready/remove.md"),
            crate::board::Column::Ready,
        )
        .unwrap();
        let tests = story_context(&story, Some(Phase::Acceptance));
        assert!(tests.contains("SUMMARY-MARK") && tests.contains("CRITERION-MARK"));
        assert!(
            !tests.contains("RESEARCH-MARK") && !tests.contains("PLAN-MARK"),
            "{tests}"
        );
        // The code is written from the plan, which digested the research.
        let code = story_context(&story, Some(Phase::Implement));
        assert!(
            !code.contains("RESEARCH-MARK") && code.contains("PLAN-MARK"),
            "{code}"
        );
        // The plan's code that touches nothing the story calls is no part of it.
        assert!(
            !code.contains("OLD-CODE-MARK") && code.contains("NEW-CODE-MARK"),
            "{code}"
        );
        let review = story_context(&story, None);
        assert!(review.contains("RESEARCH-MARK") && review.contains("PLAN-MARK"));
        assert!(review.contains("OLD-CODE-MARK"), "{review}");
    }

    #[test]
    fn the_tools_own_folders_are_not_listed_as_the_projects() {
        let root = tempfile::tempdir().unwrap();
        for dir in [
            ".git",
            ".agentic-sdlc",
            crate::config::WORKTREES_DIR,
            "textkit",
        ] {
            std::fs::create_dir(root.path().join(dir)).unwrap();
        }
        std::fs::write(root.path().join(crate::config::CONFIG_FILE), "{}").unwrap();
        std::fs::write(root.path().join("README.md"), "# t").unwrap();

        let context = project_context(root.path(), &root.path().join(".agentic-sdlc"));

        assert!(
            context.ends_with("## Top-level files\n- README.md\n- textkit/\n"),
            "{context}"
        );
    }

    #[test]
    fn a_reply_that_copies_the_repository_section_writes_no_manifest() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("pyproject.toml"),
            "[project]\nname = \"textkit\"\nversion = \"0.1.1\"\n",
        )
        .unwrap();
        let context = project_context(root.path(), &root.path().join(".agentic-sdlc"));
        assert!(context.contains("version = \"0.1.1\""), "{context}");

        let echo = context.replace("0.1.1", "0.1.6");
        let reply = crate::agents::text_calls::extract(
            &echo,
            crate::agents::text_calls::Expect {
                tools: &["write_file"],
                any_name: true,
                bash: false,
                edits: true,
                default_file: None,
            },
        );
        assert!(reply.edits.is_empty(), "{:?}", reply.edits);
    }

    #[test]
    fn revision_section_matches_the_contract() {
        let revision = Revision {
            attempt: 2,
            feedback: "Add sources".into(),
            previous_output: Some("Old findings".into()),
        };
        let prompt = assemble("# Story: x", Some(&revision), "Do research.");
        assert!(prompt.contains(
            "## Revision Instructions (Attempt 2)\nThis task is being re-executed based on reviewer feedback.\nIncorporate the feedback below into your response.\n\n### Feedback\nAdd sources\n\n### Previous Output\nOld findings\n\n## Task\nDo research.\n"
        ), "{prompt}");
        let without_previous = Revision {
            previous_output: None,
            ..revision
        };
        let prompt = assemble("ctx", Some(&without_previous), "T");
        assert!(!prompt.contains("### Previous Output"));
        assert!(prompt.contains("### Feedback\nAdd sources\n\n## Task\nT\n"));

        let runaway = Revision {
            previous_output: Some(format!(
                "HEAD {} MIDDLE {} TAIL",
                "x".repeat(50_000),
                "y".repeat(50_000)
            )),
            ..without_previous
        };
        let prompt = assemble("ctx", Some(&runaway), "T");
        assert!(prompt.contains("HEAD") && prompt.contains("TAIL") && !prompt.contains("MIDDLE"));
        assert!(prompt.len() < SECTION_BUDGET + 1_000, "{}", prompt.len());
    }
}
