//! Combining two edits of one story made apart (docs/design.md §20): this clone's and the remote's.
//!
//! It is the rule a single machine already follows when a person saves a story while the tool
//! writes it (docs/design.md §11): the tool's change is made again on the fresher copy. Here "the
//! fresher copy" is the remote's version, and "the tool's change" is everything this clone changed
//! since the version both started from: each frontmatter key, each section and the column that
//! differ from it are set again on the remote's version. So edits to different keys or sections all
//! survive, and where both sides set the same key, this clone's value (the claimant's, for a story
//! it works on) stands.

use std::path::{Path, PathBuf};

use super::sections;
use super::story::{Story, StoryError};
use super::vocabulary::Column;

/// One version of a story file: where it sits and what it holds.
#[derive(Debug, Clone, Copy)]
pub struct Version<'a> {
    pub path: &'a Path,
    pub bytes: &'a [u8],
}

impl Version<'_> {
    fn parse(&self) -> Result<Story, StoryError> {
        let column = Column::of_file(self.path).unwrap_or(Column::Backlog);
        Story::parse_bytes(self.bytes, self.path.to_path_buf(), column)
    }
}

/// The story with `ours`' changes since `base` made again on `theirs`, and the path it belongs
/// at: `theirs`' file, in `ours`' column when `ours` moved it. Without a `base` (both sides
/// added the story), every key and section of `ours` counts as changed. A side that does not
/// parse is an error; the caller decides which text stands.
pub fn merge_story(
    base: Option<Version>,
    ours: Version,
    theirs: Version,
) -> Result<(PathBuf, Vec<u8>), StoryError> {
    let mine = ours.parse()?;
    let mut merged = theirs.parse()?;
    let base = base.and_then(|base| base.parse().ok());
    let base_keys = match &base {
        Some(base) => base.frontmatter().to_mapping().ok(),
        None => None,
    };
    let my_keys = mine.frontmatter().to_mapping().map_err(|err| StoryError {
        path: mine.path.clone(),
        line: err.line,
        message: err.message,
    })?;
    for (key, value) in &my_keys {
        let Some(name) = key.as_str() else { continue };
        let unchanged = base_keys
            .as_ref()
            .and_then(|keys| keys.get(key))
            .is_some_and(|old| old == value);
        if !unchanged {
            merged.set(name, value);
        }
    }
    if let Some(base_keys) = &base_keys {
        for key in base_keys.keys() {
            if let Some(name) = key.as_str() {
                if !my_keys.contains_key(key) {
                    merged.remove(name);
                }
            }
        }
    }
    let base_sections = base
        .as_ref()
        .map(|base| sections::all(base.body()))
        .unwrap_or_default();
    for (name, content) in sections::all(mine.body()) {
        let unchanged = base_sections
            .iter()
            .any(|(old_name, old)| old_name == &name && old == &content);
        if !unchanged {
            merged.set_section(&name, &content);
        }
    }
    let moved = base.as_ref().is_none_or(|base| base.column != mine.column);
    if moved && mine.column != merged.column {
        merged.set_column(mine.column);
    }
    let file_name = theirs
        .path
        .file_name()
        .map(PathBuf::from)
        .unwrap_or_default();
    let path = match theirs.path.parent().and_then(Path::parent) {
        Some(board) => board.join(merged.column.name()).join(file_name),
        None => theirs.path.to_path_buf(),
    };
    Ok((path, merged.to_text().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "---\nid: story-a\ntitle: Dark mode\npriority: 10\nstatus: ready\nlabels: []\nresearch_complete: false\n---\n# Dark mode\n\n## Summary\nOld summary.\n\n## Research\n\n## Review Notes\n";

    fn version<'a>(path: &'a str, text: &'a str) -> Version<'a> {
        Version {
            path: Path::new(path),
            bytes: text.as_bytes(),
        }
    }

    fn merged(base: Option<&str>, ours: (&str, &str), theirs: (&str, &str)) -> (String, String) {
        let base = base.map(|text| version("b/ready/dark-mode.md", text));
        let (path, bytes) =
            merge_story(base, version(ours.0, ours.1), version(theirs.0, theirs.1)).unwrap();
        (
            path.display().to_string(),
            String::from_utf8(bytes).unwrap(),
        )
    }

    #[test]
    fn edits_to_different_keys_and_sections_all_survive() {
        // This clone did the research and moved the story on; a person, elsewhere, changed
        // the priority and rewrote the summary.
        let ours = BASE
            .replace("research_complete: false", "research_complete: true")
            .replace("status: ready", "status: in-progress")
            .replace("## Research\n", "## Research\nFound the theme code.\n");
        let theirs = BASE
            .replace("priority: 10", "priority: 1")
            .replace("Old summary.", "New summary from a person.");
        let (path, text) = merged(
            Some(BASE),
            ("b/in-progress/dark-mode.md", &ours),
            ("b/ready/dark-mode.md", &theirs),
        );
        assert_eq!(path, "b/in-progress/dark-mode.md");
        for needle in [
            "priority: 1\n",
            "research_complete: true",
            "status: in-progress",
            "New summary from a person.",
            "Found the theme code.",
        ] {
            assert!(text.contains(needle), "{needle:?} missing in:\n{text}");
        }
    }

    #[test]
    fn on_the_same_key_this_clones_value_stands_and_theirs_elsewhere_is_kept() {
        let ours = BASE.replace("priority: 10", "priority: 5");
        let theirs = BASE
            .replace("priority: 10", "priority: 7")
            .replace("labels: []", "labels:\n- ui");
        let (path, text) = merged(
            Some(BASE),
            ("b/ready/dark-mode.md", &ours),
            ("b/ready/dark-mode.md", &theirs),
        );
        assert_eq!(path, "b/ready/dark-mode.md");
        assert!(text.contains("priority: 5"), "{text}");
        assert!(text.contains("- ui"), "{text}");
    }

    #[test]
    fn a_key_removed_here_is_removed_and_a_move_there_is_kept() {
        let base = BASE.replace("labels: []", "labels: []\nlast_error: boom");
        let ours = BASE.to_string();
        let theirs = base.replace("status: ready", "status: blocked");
        let (path, text) = merged(
            Some(&base),
            ("b/ready/dark-mode.md", &ours),
            ("b/blocked/dark-mode.md", &theirs),
        );
        assert_eq!(path, "b/blocked/dark-mode.md");
        assert!(!text.contains("last_error"), "{text}");
        assert!(text.contains("status: blocked"), "{text}");
    }

    #[test]
    fn a_side_that_does_not_parse_is_an_error() {
        let broken = "---\nid: [unclosed\n---\n";
        let base = Some(version("b/ready/dark-mode.md", BASE));
        let result = merge_story(
            base,
            version("b/ready/dark-mode.md", BASE),
            version("b/ready/dark-mode.md", broken),
        );
        assert!(result.is_err());
    }
}
