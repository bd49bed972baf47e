//! What the reviewers are told: the three perspectives' instructions and the story and change
//! they judge (docs/design.md §10), a blocker's ask to be shown, and the reminders after an
//! answer that fell short.

use std::path::Path;

use super::{assemble, identity, DIFF_BUDGET, SECTION_BUDGET};
use crate::board::Story;
use crate::exec::head_tail;

/// What every perspective is told first. It names no perspective: the three share the system
/// message and the story and change after it, and only the last lines of the ask
/// ([`review_focus`]) differ, so a local server's prompt cache answers the second and third
/// from the first's prefix. With the role first, each of the three read its 1,500 tokens anew,
/// about 21 s of 22 on 2 cores (measured 2026-12-05).
pub fn review_system() -> String {
    format!(
        "{}\nYou review a change from the perspective named at the end of the task.\nAnswer with one JSON object and nothing else:\n{{\"passed\": true|false, \"issues\": [{{\"severity\": \"blocker|critical|major|minor\", \"category\": \"…\", \"description\": \"…\", \"file\": \"…\", \"line\": 1, \"suggestedFix\": \"…\"}}], \"target_phase\": \"{targets}\"}}\nUse target_phase only when the work must go back to an earlier phase (missing research, a wrong plan).",
        identity("review"),
        targets = crate::board::Phase::flagged()
            .map(|phase| phase.name())
            .collect::<Vec<_>>()
            .join("|"),
    )
}

/// The perspective's own part of the ask, last: small models weigh the end of a prompt most.
pub fn review_focus(role: &str) -> String {
    let focus = match role {
        "code-review" => "a senior engineer: correctness, tests, error handling, readability and fit with the codebase.",
        "security-review" => "security: injection, path traversal, secrets, unsafe input handling, authentication and authorisation, dependency risks.",
        _ => "the product owner: does it meet every acceptance criterion of the story, and nothing it should not do?",
    };
    format!("\n## Your perspective ({role})\nYou review the change as {focus}\n")
}

/// What the reviewers read: the story, whether the project's tests passed on the work, the
/// changed files as they are now, and the diff.
///
/// Small reviewers report the bug a story describes as a flaw of the change that fixes it: the
/// Summary is labelled as written before the change, the code after the change is shown whole,
/// and the task is to check each acceptance criterion against that code.
///
/// The work is judged against the story, not against the way to it: the Research and the
/// Implementation Plan are left out (docs/design.md §10). On 2 cores they were 40% of a
/// 2,500-token review prompt, read three times, at about 70 s a perspective.
pub fn review_user(
    story: &Story,
    diff: &str,
    tests_passed: Option<&str>,
    work_dir: &Path,
) -> String {
    let meta = &story.meta;
    let mut context = format!("# Story: {}\n\nType: {}\n", meta.title, meta.story_type);
    let sections = [
        (
            "Summary",
            "What the story asked for (written before the change)",
        ),
        ("Acceptance Criteria", "Acceptance Criteria"),
        ("Implementation Notes", "Implementation Notes"),
    ];
    for (name, heading) in sections {
        if let Some(content) = story.section(name).filter(|c| !c.is_empty()) {
            context.push_str(&format!(
                "\n## {heading}\n{}\n",
                head_tail(content, SECTION_BUDGET)
            ));
        }
    }
    if let Some(command) = tests_passed {
        context.push_str(&format!(
            "\n# Tests\nThe project's tests (`{command}`) pass with this change.\n"
        ));
    }
    let changed = changed_files(work_dir, diff);
    if !changed.text.is_empty() {
        context.push_str(&format!(
            "\n# The changed files after the change\n{}",
            changed.text
        ));
    }
    let diff = if diff.trim().is_empty() {
        "(no changes found in the working tree)".to_string()
    } else {
        head_tail(&without_new_bodies(diff, &changed.paths), DIFF_BUDGET)
    };
    context.push_str(&format!("\n# Diff of the work\n```diff\n{diff}\n```\n"));
    assemble(
        &context,
        None,
        "Check each acceptance criterion against the code after the change, and look for defects the change adds. The work passes when the changed code meets every criterion. Report only real problems of the changed code, each naming its file: what the story asked for describes the code before the change, not a problem of the change. Answer with the JSON verdict only.",
    )
}

/// A perspective's blocker against work whose acceptance tests pass is run, not believed
/// (docs/design.md §10): the 1.5B reviewer wrote "`total_with_discount` does not return the
/// correct sum" of a function whose tests, written from the story's examples, all passed.
pub fn blocker_system(role: &str) -> String {
    format!(
        "{}\nThe blocker you reported is checked by running it. Answer with Python test code in one ```python block: import what you call from its module, call the changed code with an input the story's criteria speak of, and end with an assert of what the criteria say it must give, which fails on the code as it is now. If you cannot name such an input, answer WITHDRAWN.",
        identity(role)
    )
}

/// The blocker, the story's criteria, the acceptance tests that pass, and the code after the
/// change.
pub fn blocker_user(
    story: &Story,
    blocker: &str,
    acceptance_tests: &str,
    diff: &str,
    work_dir: &Path,
) -> String {
    let mut context = format!("# Story: {}\n", story.meta.title);
    if let Some(criteria) = story
        .section("Acceptance Criteria")
        .filter(|c| !c.is_empty())
    {
        context.push_str(&format!(
            "\n## Acceptance Criteria\n{}\n",
            head_tail(criteria, SECTION_BUDGET)
        ));
    }
    context.push_str(&format!(
        "\n# The acceptance tests, written from the criteria; they pass on the code below\n{}",
        head_tail(acceptance_tests, SECTION_BUDGET)
    ));
    let changed = changed_files(work_dir, diff).text;
    if !changed.is_empty() {
        context.push_str(&format!(
            "\n# The changed files after the change\n{changed}"
        ));
    }
    assemble(
        &context,
        None,
        &format!(
            "You reported this blocker: \"{}\". Show it with a failing example, or answer WITHDRAWN.",
            head_tail(blocker, 1_000)
        ),
    )
}

/// Changed files shown whole to the reviewers at most.
const REVIEW_FILES: usize = 4;
/// The largest changed file shown whole.
const REVIEW_FILE_BYTES: u64 = 16 * 1024;

/// The text files the diff changes, as they are in `work_dir` now, each in a fence under its
/// path; deleted, binary and large files are left to the diff.
fn changed_files(work_dir: &Path, diff: &str) -> ShownFiles {
    let mut shown = ShownFiles::default();
    let paths = diff
        .lines()
        .filter_map(|line| line.strip_prefix("+++ b/"))
        .take(REVIEW_FILES);
    for path in paths {
        let full = work_dir.join(path);
        let small =
            std::fs::metadata(&full).is_ok_and(|m| m.is_file() && m.len() <= REVIEW_FILE_BYTES);
        let Some(text) = small.then(|| std::fs::read_to_string(&full).ok()).flatten() else {
            continue;
        };
        let fence = if text.contains("```") { "~~~~" } else { "```" };
        let newline = if text.ends_with('\n') { "" } else { "\n" };
        shown
            .text
            .push_str(&format!("## {path}\n{fence}\n{text}{newline}{fence}\n"));
        shown.paths.push(path.to_string());
    }
    shown
}

/// The changed files shown whole to the reviewers, and their paths.
#[derive(Default)]
struct ShownFiles {
    text: String,
    paths: Vec<String>,
}

/// `diff` with the lines of each file it adds whole and that `shown` lists replaced by one note:
/// the reviewers read that file once, above, rather than twice.
fn without_new_bodies(diff: &str, shown: &[String]) -> String {
    let mut out = String::new();
    let mut new_file = false;
    let mut skipping = false;
    for line in diff.lines() {
        if line.starts_with("diff --git ") {
            new_file = false;
            skipping = false;
        } else if line == "--- /dev/null" {
            new_file = true;
        } else if let Some(path) = line.strip_prefix("+++ b/") {
            if new_file && shown.iter().any(|shown| shown == path) {
                out.push_str(line);
                out.push_str("\n(a new file, shown whole above)\n");
                skipping = true;
                continue;
            }
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The most of a previous answer a reminder quotes: a runaway answer re-sent whole once
/// overflowed a 4,096-token context (docs/design.md §15).
const REMINDER_QUOTE: usize = 1_200;

/// Asked when an answer held no JSON verdict; quotes only the head and tail of that answer.
pub fn verdict_reminder(previous: &str) -> String {
    format!(
        "## Your previous answer (head and tail)\n{}\n\n## Reminder\nYour previous answer contained no JSON verdict. Answer again with only the JSON object: {{\"passed\": true|false, \"issues\": [...]}}",
        quote(previous)
    )
}

/// Asked when a perspective failed the work without naming why.
pub fn issues_reminder(previous: &str) -> String {
    format!(
        "## Your previous answer (head and tail)\n{}\n\n## Reminder\nYou answered \"passed\": false but listed no issues. A failed review must name what to fix. Answer again with only the JSON object, listing every issue with its severity, category and description.",
        quote(previous)
    )
}

/// Asked when an answer was cut off by the reply cap; the runaway answer is not quoted.
pub fn truncated_reminder(max_tokens: u32) -> String {
    format!(
        "## Reminder\nYour previous answer was cut off at the reply limit ({max_tokens} tokens) before it was complete. Answer again, briefly: only the JSON object, with short descriptions."
    )
}

fn quote(previous: &str) -> String {
    let previous = previous.trim();
    if previous.is_empty() {
        "(empty)".to_string()
    } else {
        head_tail(previous, REMINDER_QUOTE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reviewers_read_the_story_and_each_new_file_once_without_the_research_and_plan() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("cart.py"), "def remove(sku):\n    pass\n").unwrap();
        std::fs::write(
            dir.path().join("tests/test_cart.py"),
            "def test_remove():\n    NEW-TEST-BODY\n",
        )
        .unwrap();
        let text = "---\nid: story-a\ntitle: Remove\n---\n# Remove\n\n## Summary\nSUMMARY-MARK\n\n## Acceptance Criteria\n- [ ] CRITERION-MARK\n\n## Research\nRESEARCH-MARK\n\n## Implementation Plan\nPLAN-MARK\n\n## Implementation Notes\nNOTES-MARK\n";
        let story = Story::parse(
            text,
            std::path::PathBuf::from("in-progress/remove.md"),
            crate::board::Column::InProgress,
        )
        .unwrap();
        let diff = "diff --git a/cart.py b/cart.py\nindex 1..2 100644\n--- a/cart.py\n+++ b/cart.py\n@@ -1 +1,2 @@\n+def remove(sku):\n+    pass\ndiff --git a/tests/test_cart.py b/tests/test_cart.py\nnew file mode 100644\nindex 0..3\n--- /dev/null\n+++ b/tests/test_cart.py\n@@ -0,0 +1,2 @@\n+def test_remove():\n+    NEW-TEST-BODY\n";
        let prompt = review_user(&story, diff, None, dir.path());
        for kept in [
            "SUMMARY-MARK",
            "CRITERION-MARK",
            "NOTES-MARK",
            "+def remove(sku):",
        ] {
            assert!(prompt.contains(kept), "{kept} missing:\n{prompt}");
        }
        for left_out in ["RESEARCH-MARK", "PLAN-MARK"] {
            assert!(!prompt.contains(left_out), "{left_out} shown:\n{prompt}");
        }
        assert_eq!(prompt.matches("NEW-TEST-BODY").count(), 1, "{prompt}");
        assert!(prompt.contains("+++ b/tests/test_cart.py\n(a new file, shown whole above)\n"));
        // The modified file is in the diff and shown whole: its body twice.
        assert_eq!(prompt.matches("def remove(sku):").count(), 2, "{prompt}");
    }
}
