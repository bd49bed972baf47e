//! A story small enough to go without research and plan (docs/design.md §21, "A small story
//! skips research and plan"): it names each definition it asks for and the file it goes in,
//! and its acceptance tests will check the change before it is reviewed.

use std::path::Path;

use crate::board::{Phase, Story, StoryId};
use crate::error::Result;
use crate::workflow::context::Workflow;
use crate::workflow::named_functions::named_functions;
use crate::workflow::outcome::Outcome;
use crate::workflow::tree_definitions::python_file_defining;

/// The most definitions a small story names.
const MOST_DEFINITIONS: usize = 3;

/// Why `phase` is skipped for `story`, when it is research or plan, neither is set in the
/// config (`phases.<phase>.enabled`: a person who sets it gets it), the acceptance phase will
/// run, no rework is under way, and every definition the story names has its file named too.
pub fn skip_reason(wf: &Workflow, story: &Story, phase: Phase, reworked: bool) -> Option<String> {
    if !matches!(phase, Phase::Research | Phase::Plan)
        || wf.config.phases.enabled_setting(phase).is_some()
        || reworked
        || super::acceptance::skip_reason(wf, story).is_some()
    {
        return None;
    }
    placed(story, &wf.root).map(|placed| {
        format!("a small story: it names {placed}, and its acceptance tests check the change")
    })
}

/// `` `initials` in shelf/books.py ``, for each definition the story names, when it names one
/// to three and the file of each: the file its sentence names, else the Python file of the
/// tree at `root` that defines it. A story of workshop's ran research for 2.5 minutes and plan
/// for 1 (2026-12-08), though it may only have named a function of the tree in a sentence of
/// its own.
fn placed(story: &Story, root: &Path) -> Option<String> {
    let named = named_functions(story);
    if named.is_empty() || named.len() > MOST_DEFINITIONS {
        return None;
    }
    let placed: Option<Vec<String>> = named
        .iter()
        .map(|function| {
            function
                .files
                .first()
                .cloned()
                .or_else(|| python_file_defining(root, &function.name))
                .map(|file| format!("`{}` in {file}", function.name))
        })
        .collect();
    placed.map(|placed| placed.join(", "))
}

/// Completes `phase` without a model, saying why in its section.
pub fn skip(wf: &Workflow, story_id: &StoryId, phase: Phase, why: String) -> Result<Outcome> {
    wf.board.update(story_id, |story| {
        story.set_section(phase.section(), &format!("Skipped: {why}."));
        story.set_phase_flag(phase, true);
        Ok(())
    })?;
    Ok(Outcome::Completed(format!(
        "{} skipped ({why})",
        phase.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn story(summary: &str) -> Story {
        let text = format!("---\nid: s\ntitle: S\n---\n# S\n\n## Summary\n{summary}\n\n## Acceptance Criteria\n- [ ] It works\n");
        Story::parse(
            &text,
            std::path::PathBuf::from("/b/ready/s.md"),
            crate::board::Column::Ready,
        )
        .unwrap()
    }

    #[test]
    fn a_story_that_places_each_definition_is_small() {
        let one = story("Add a function `initials(name)` to `shelf/books.py`.");
        let tree = tempfile::tempdir().unwrap();
        let placed = |story: &Story| placed(story, tree.path());
        assert_eq!(
            placed(&one).as_deref(),
            Some("`initials` in shelf/books.py")
        );
        let unplaced = story("Add a function `initials(name)` somewhere sensible.");
        assert_eq!(placed(&unplaced), None);
        let none = story("Make the shelf faster.");
        assert_eq!(placed(&none), None);
        let many = story("Add `a(x)`, `b(x)`, `c(x)` and `d(x)` to `m.py`.");
        assert_eq!(placed(&many), None);
        // A function the tree defines is placed in its file.
        let helper = story(
            "Add `initials(name)` to `shelf/books.py`. Names go through `clean(text)` first.",
        );
        assert_eq!(placed(&helper), None);
        std::fs::create_dir_all(tree.path().join("shelf")).unwrap();
        std::fs::write(
            tree.path().join("shelf/text.py"),
            "def clean(text):\n    return text.strip()\n",
        )
        .unwrap();
        assert_eq!(
            placed(&helper).as_deref(),
            Some("`initials` in shelf/books.py, `clean` in shelf/text.py")
        );
    }
}
