//! A phase's output (docs/design.md §3, §15): whether it is worth writing into the story, where
//! an accepted output is written, and where a re-run finds the output it revises. A small model
//! can "succeed" with empty checkboxes, bare code fences or no change at all; such output is
//! refused, never written.
//!
//! The checks are pure functions of the text, plus a fingerprint of the working tree that
//! tells whether implement changed any file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::board::{sections, Column, Phase, Story};
use crate::vcs;

/// Words a summary, research or plan needs outside headings and code fences: one real word
/// already tells prose from empty checkboxes, bare fences and placeholders.
const PROSE_WORDS: usize = 1;
/// Files a fingerprint looks at before it gives up and assumes the tree changed; a tree this
/// large is better judged by the reviewers than walked twice per attempt.
const FINGERPRINT_FILES: usize = 200_000;

/// What is missing from a phase's text, in words the agent can act on; `Ok` when nothing is.
pub fn check_text(phase: Phase, text: &str) -> Result<(), String> {
    match phase {
        Phase::Refine => {
            let mut missing = Vec::new();
            let summary = sections::get(text, "Summary").unwrap_or_default();
            if prose_words(summary) < PROSE_WORDS {
                missing.push("a `## Summary` section that says in words what the story is");
            }
            let criteria = sections::get(text, "Acceptance Criteria").unwrap_or_default();
            if !criteria.lines().any(is_real_criterion) {
                missing.push(
                    "an `## Acceptance Criteria` section with at least one criterion in words \
                     (not an empty checkbox or a placeholder)",
                );
            }
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("the answer lacks {}", missing.join(" and ")))
            }
        }
        Phase::Research | Phase::Plan => {
            // A plan's steps may all be headings ("## 4. Update the `add_minutes` function in
            // `transit/times.py` to wrap the hour correctly"): they say what to do. The 1.5B
            // model planned so, with a tool call under each; refused for no prose, its retry
            // took 140 of the plan's 221 seconds and said the same (transit, 2026-12-06).
            let steps = phase == Phase::Plan && has_step_headings(text);
            if prose_words(text) >= PROSE_WORDS || steps {
                Ok(())
            } else {
                Err(format!(
                    "the answer holds no prose: a {} must say in sentences or list items what \
                     was found or what to do, not only headings, code fences or placeholders",
                    phase.name()
                ))
            }
        }
        // The tool writes the listing of the tests it checked; without one, none were kept.
        Phase::Acceptance => {
            if crate::workflow::fixed_tests::listed_paths(text).is_empty() {
                Err("no acceptance test was written and checked".to_string())
            } else {
                Ok(())
            }
        }
        Phase::Implement => {
            if prose_words(text) >= 1 {
                Ok(())
            } else {
                Err(
                    "the answer holds no implementation notes: say what you changed, in which \
                     files, and how you checked it"
                        .to_string(),
                )
            }
        }
    }
}

/// A line of the criteria that states something: its list marker and checkbox removed, some
/// words left that are not a placeholder.
fn is_real_criterion(line: &str) -> bool {
    let mut rest = line.trim();
    for marker in ["- ", "* ", "+ "] {
        if let Some(after) = rest.strip_prefix(marker) {
            rest = after.trim_start();
        }
    }
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 {
        if let Some(after) = rest[digits..]
            .strip_prefix(". ")
            .or_else(|| rest[digits..].strip_prefix(") "))
        {
            rest = after;
        }
    }
    for checkbox in ["[ ]", "[x]", "[X]"] {
        if let Some(after) = rest.strip_prefix(checkbox) {
            rest = after.trim_start();
        }
    }
    prose_words(rest) >= 1
}

/// Whether `text`, though it may hold no prose, says something: a heading of at least
/// [`SUBSTANTIVE_HEADING_WORDS`] words (a step, "Update `add_minutes` in transit/times.py to
/// wrap the hour"), or a line of code inside a fence. Empty fences and one-word headings
/// ("## Findings") say nothing.
pub fn has_substance(text: &str) -> bool {
    marked_lines(text).any(|(line, fenced)| match fenced {
        true => !line.is_empty(),
        false => is_step_heading(line),
    })
}

/// Whether `text` has a heading outside code fences that says something of its own
/// ([`is_step_heading`]).
fn has_step_headings(text: &str) -> bool {
    marked_lines(text).any(|(line, fenced)| !fenced && is_step_heading(line))
}

/// The lines of `text` other than fence markers, each trimmed at its start and with whether it
/// stands inside a code fence.
fn marked_lines(text: &str) -> impl Iterator<Item = (&str, bool)> {
    let mut in_fence = false;
    text.lines().filter_map(move |line| {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            return None;
        }
        Some((trimmed, in_fence))
    })
}

/// A Markdown heading of at least [`SUBSTANTIVE_HEADING_WORDS`] words, placeholders aside.
fn is_step_heading(line: &str) -> bool {
    line.starts_with('#')
        && without_placeholders(line.trim_start_matches('#'))
            .split_whitespace()
            .filter(|word| word.chars().any(char::is_alphabetic))
            .count()
            >= SUBSTANTIVE_HEADING_WORDS
}

/// Words a heading needs to say something of its own rather than name a section.
const SUBSTANTIVE_HEADING_WORDS: usize = 3;

/// Counts the words outside code fences and headings that are not placeholders: a word has a
/// letter in it, and text inside `<…>` (a template slot copied verbatim) does not count.
pub fn prose_words(text: &str) -> usize {
    let mut fence: Option<&str> = None;
    let mut count = 0;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(open)) => {
                fence = Some(open);
                continue;
            }
            (Some(open), Some(close)) if open == close => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            (None, None) => {}
        }
        if trimmed.starts_with('#') {
            continue;
        }
        count += without_placeholders(trimmed)
            .split_whitespace()
            .filter(|word| word.chars().any(char::is_alphabetic))
            .filter(|word| !is_filler(word))
            .count();
    }
    count
}

fn without_placeholders(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut depth = 0usize;
    for c in line.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Words a template or an unfinished answer is made of.
fn is_filler(word: &str) -> bool {
    let word: String = word
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "todo" | "tbd" | "lorem" | "ipsum" | "placeholder"
    )
}

/// Keeps a cut-off output and says so at its end, where the gate, the reviewers and a person
/// reading the story all see it. An unclosed code fence is closed first, so the mark is prose.
pub fn mark_truncated(text: &str, phase: Phase, max_tokens: u32) -> String {
    let mut out = text.trim_end().to_string();
    if open_fence(&out).is_some() {
        out.push_str("\n```");
    }
    out.push_str(&format!(
        "\n\n> **Truncated:** this output was cut off at the reply limit of {max_tokens} tokens \
         and may be incomplete (raise phases.{}.maxTokens or llm.maxTokens).",
        phase.name()
    ));
    out
}

fn open_fence(text: &str) -> Option<&'static str> {
    let mut fence = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m)) {
            fence = match fence {
                None => Some(marker),
                Some(open) if open == marker => None,
                other => other,
            };
        }
    }
    fence
}

/// The files of a working tree by size and modification time: two fingerprints differ when
/// any file was added, removed or written, whatever wrote it (write_file, edit_file or a
/// command the agent ran).
///
/// In a git repository only the commit and the files git reports as changed are looked at,
/// so ignored build output (`target/`, `node_modules/`) is no "change", and a commit the agent
/// made is one. Elsewhere the whole tree is walked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFingerprint {
    head: Option<String>,
    files: BTreeMap<PathBuf, (u64, Option<SystemTime>)>,
    /// The walk stopped at [`FINGERPRINT_FILES`]; such a tree counts as changed.
    incomplete: bool,
}

impl TreeFingerprint {
    /// Fingerprints `root`, leaving out `.git` and `ignore` (paths relative to `root`: the
    /// board, the config, the worktrees).
    pub fn take(root: &Path, ignore: &[PathBuf]) -> TreeFingerprint {
        if vcs::is_repo(root) {
            if let Some(fingerprint) = Self::from_git(root, ignore) {
                return fingerprint;
            }
        }
        Self::walk(root, ignore)
    }

    fn from_git(root: &Path, ignore: &[PathBuf]) -> Option<TreeFingerprint> {
        let ignore: Vec<&Path> = ignore.iter().map(PathBuf::as_path).collect();
        let top = vcs::toplevel(root).ok()?;
        let head = vcs::head_commit(root).ok()?;
        let dirty = vcs::dirty_paths(root, &ignore).ok()?;
        let files = dirty
            .into_iter()
            .map(|path| {
                let meta = std::fs::symlink_metadata(top.join(&path)).ok();
                let stamp = meta.map_or((0, None), |m| (m.len(), m.modified().ok()));
                (PathBuf::from(path), stamp)
            })
            .collect();
        Some(TreeFingerprint {
            head: Some(head.unwrap_or_default()),
            files,
            incomplete: false,
        })
    }

    /// Walks the tree. Unreadable entries are skipped, not fatal.
    fn walk(root: &Path, ignore: &[PathBuf]) -> TreeFingerprint {
        let mut fingerprint = TreeFingerprint {
            head: None,
            files: BTreeMap::new(),
            incomplete: false,
        };
        let mut pending = vec![root.to_path_buf()];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let relative = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                if entry.file_name() == ".git" || ignore.iter().any(|i| relative.starts_with(i)) {
                    continue;
                }
                let Ok(meta) = entry.metadata() else { continue };
                if meta.is_dir() {
                    pending.push(path);
                    continue;
                }
                if fingerprint.files.len() >= FINGERPRINT_FILES {
                    fingerprint.incomplete = true;
                    return fingerprint;
                }
                fingerprint
                    .files
                    .insert(relative, (meta.len(), meta.modified().ok()));
            }
        }
        fingerprint
    }

    /// The files that differ between `self` (before) and `after`: changed, added or removed,
    /// sorted.
    pub fn changed_files(&self, after: &TreeFingerprint) -> Vec<PathBuf> {
        let mut changed: Vec<PathBuf> = after
            .files
            .iter()
            .filter(|(path, stamp)| self.files.get(*path) != Some(*stamp))
            .map(|(path, _)| path.clone())
            .chain(
                self.files
                    .keys()
                    .filter(|path| !after.files.contains_key(*path))
                    .cloned(),
            )
            .collect();
        changed.sort();
        changed.dedup();
        changed
    }

    /// Whether the tree changed between `self` (before) and `after`.
    pub fn changed(&self, after: &TreeFingerprint) -> bool {
        self.incomplete || after.incomplete || self.head != after.head || self.files != after.files
    }
}

/// Writes a phase's accepted output into its section(s) and sets its flag or column.
pub fn write_into(story: &mut Story, phase: Phase, output: &str) {
    match phase {
        Phase::Refine => {
            let summary = sections::get(output, "Summary");
            let criteria = sections::get(output, "Acceptance Criteria");
            if summary.is_none() && criteria.is_none() {
                story.set_section("Summary", &sections::nest(output, "Summary"));
            } else {
                // A rewrite that loses the given words or examples leaves them as they were,
                // and one that invents examples loses those.
                let given = super::named_functions::story_text(story);
                let existing = story.section("Acceptance Criteria");
                let criteria = criteria
                    .map(|criteria| super::refined::criteria(existing, criteria, &given))
                    // Criteria that were only invented examples leave the story's as they were.
                    .filter(|criteria| !criteria.trim().is_empty());
                let kept_criteria = criteria.as_deref().or(existing).unwrap_or_default();
                let summary = summary.and_then(|summary| {
                    let existing = story.section("Summary");
                    super::refined::summary(existing, summary, &given, kept_criteria)
                });
                let summary = summary.map(|summary| sections::nest(summary, "Summary"));
                if let Some(summary) = summary {
                    story.set_section("Summary", &summary);
                }
                if let Some(criteria) = criteria {
                    let criteria = sections::nest(&criteria, "Acceptance Criteria");
                    story.set_section("Acceptance Criteria", &criteria);
                }
            }
            if story.column == Column::Backlog {
                story.set_column(Column::Ready);
            }
        }
        Phase::Acceptance => {
            let paths = crate::workflow::fixed_tests::listed_paths(output);
            story.set_section(phase.section(), &sections::nest(output, phase.section()));
            story.set("acceptance_tests", &paths);
            story.set_phase_flag(phase, true);
        }
        Phase::Research | Phase::Plan | Phase::Implement => {
            story.set_section(phase.section(), &sections::nest(output, phase.section()));
            story.set_phase_flag(phase, true);
            // Only a finished implementation moves the story: a failed one stays in its column.
            if phase == Phase::Implement && story.column != Column::InProgress {
                story.set_column(Column::InProgress);
            }
        }
    }
}

/// The phase's current section(s), shown to its re-run as the previous output.
pub fn previous_output(story: &Story, phase: Phase) -> Option<String> {
    let text = match phase {
        Phase::Refine => {
            let summary = story.section("Summary").unwrap_or("");
            let criteria = story.section("Acceptance Criteria").unwrap_or("");
            format!("## Summary\n{summary}\n\n## Acceptance Criteria\n{criteria}")
        }
        other => story.section(other.section()).unwrap_or("").to_string(),
    };
    let empty = match phase {
        Phase::Refine => {
            story.section("Summary").unwrap_or("").is_empty()
                && story
                    .section("Acceptance Criteria")
                    .unwrap_or("")
                    .is_empty()
        }
        _ => text.trim().is_empty(),
    };
    (!empty).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_as_headings_or_code_say_something_and_bare_markup_does_not() {
        // In kind as the 1.5B model planned transit's `midnight-wraparound` (2026-12-06).
        let steps = "## 4. Update the `add_minutes` function in `transit/times.py` to wrap the \
                     hour correctly\n```json\n{\"name\": \"search\"}\n```\n";
        assert!(has_substance(steps));
        assert!(has_substance(
            "```python\ndef fare(zones):\n    return 250\n```\n"
        ));
        for nothing in [
            "",
            "## Findings\n### Details\n",
            "```\n\n```\n```rust\n```\n",
            "## <step one>\n",
        ] {
            assert!(!has_substance(nothing), "{nothing:?}");
        }
    }

    #[test]
    fn a_plan_of_step_headings_passes_and_research_of_them_does_not() {
        let steps = "## 1. Read `transit/times.py` to find `from_minutes`\n```json\n{\"name\": \"read_file\"}\n```\n## 2. Update `from_minutes` to wrap the hour\n";
        assert_eq!(check_text(Phase::Plan, steps), Ok(()));
        assert!(check_text(Phase::Research, steps).is_err());
        for bare in [
            "## Plan\n### Steps\n",
            "```\n## 1. A heading in a fence\n```\n",
        ] {
            assert!(check_text(Phase::Plan, bare).is_err(), "{bare:?}");
        }
    }

    #[test]
    fn refine_needs_a_summary_and_a_criterion_in_words() {
        let cases: [(&str, Option<&str>); 8] = [
            (
                "## Summary\nUsers can switch to dark mode.\n\n## Acceptance Criteria\n- [ ] The toggle persists",
                None,
            ),
            (
                "## Summary\nUsers can switch.\n\n## Acceptance Criteria\n1. Toggle works",
                None,
            ),
            (
                "## Acceptance Criteria\n- [ ] The toggle persists",
                Some("Summary"),
            ),
            (
                "## Summary\nUsers can switch.\n\n## Acceptance Criteria\n- [ ] ...\n- [ ]\n- [ ] …",
                Some("Acceptance Criteria"),
            ),
            (
                "## Summary\nUsers can switch.\n\n## Acceptance Criteria\n- [ ] <a testable criterion>",
                Some("Acceptance Criteria"),
            ),
            ("## Summary\n\n## Acceptance Criteria\n", Some("Summary` section")),
            ("", Some("Acceptance Criteria")),
            (
                "## Summary\n```\ncode only\n```\n\n## Acceptance Criteria\n- [x] Done right",
                Some("Summary"),
            ),
        ];
        for (text, missing) in cases {
            match (check_text(Phase::Refine, text), missing) {
                (Ok(()), None) => {}
                (Err(why), Some(needle)) => assert!(why.contains(needle), "{text:?}: {why}"),
                (got, want) => panic!("{text:?}: got {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn research_and_plan_need_prose() {
        let cases = [
            ("1. Change src/lib.rs\n2. Add a test", true),
            ("research output", true),
            (
                "```\n\n```\n```rust\nfn main() {}\n```\n```\n```\n```\n```",
                false,
            ),
            ("## Plan\n### Steps\n", false),
            ("...\n- [ ] …\n<step one>", false),
            ("TODO", false),
            ("```\nunclosed fence with words in it", false),
            ("", false),
        ];
        for (text, ok) in cases {
            for phase in [Phase::Research, Phase::Plan] {
                assert_eq!(check_text(phase, text).is_ok(), ok, "{phase}: {text:?}");
            }
        }
        assert!(check_text(Phase::Implement, "Changed the parser.").is_ok());
        assert!(check_text(Phase::Implement, "  ").is_err());
    }

    #[test]
    fn truncation_mark_closes_an_open_fence() {
        let marked = mark_truncated("Plan:\n```rust\nfn a() {", Phase::Plan, 512);
        assert!(open_fence(&marked).is_none(), "{marked}");
        assert!(marked.ends_with(
            "> **Truncated:** this output was cut off at the reply limit of 512 tokens and may be incomplete (raise phases.plan.maxTokens or llm.maxTokens)."
        ));
        let plain = mark_truncated("Plan text", Phase::Plan, 10);
        assert!(
            plain.starts_with("Plan text\n\n> **Truncated:**"),
            "{plain}"
        );
    }

    #[test]
    fn fingerprint_sees_writes_and_skips_own_paths() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::create_dir_all(dir.path().join(".board/ready")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "a").unwrap();
        let ignore = [PathBuf::from(".board")];
        let before = TreeFingerprint::take(dir.path(), &ignore);
        std::fs::write(dir.path().join(".git/index"), "x").unwrap();
        std::fs::write(dir.path().join(".board/ready/s.md"), "x").unwrap();
        assert!(!before.changed(&TreeFingerprint::take(dir.path(), &ignore)));
        std::fs::write(dir.path().join("src/b.rs"), "b").unwrap();
        assert!(before.changed(&TreeFingerprint::take(dir.path(), &ignore)));
    }

    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn in_git_ignored_output_is_no_change_and_a_commit_is_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("lib.rs"), "a").unwrap();
        git(root, &["init", "--quiet", "-b", "main"]);
        git(root, &["add", "--all"]);
        git(root, &["commit", "--quiet", "-m", "init"]);
        let before = TreeFingerprint::take(root, &[]);

        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::write(root.join("target/debug/build.o"), "x").unwrap();
        assert!(
            !before.changed(&TreeFingerprint::take(root, &[])),
            "ignored"
        );

        std::fs::write(root.join("lib.rs"), "b").unwrap();
        let edited = TreeFingerprint::take(root, &[]);
        assert!(before.changed(&edited));
        // Committing the edit leaves a clean tree, but a new HEAD: still a change.
        git(root, &["commit", "--quiet", "-am", "edit"]);
        assert!(before.changed(&TreeFingerprint::take(root, &[])));
    }
}
