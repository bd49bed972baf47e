//! Changes to files the story does not name, tried without after the tests ran (docs/design.md
//! §21). A small model asked for a new module rewrites whole files beside it: Qwen2.5-Coder-1.5B,
//! asked for `parse_quantity` in a new `inventory/parse.py`, rewrote `inventory/pricing.py` too,
//! broke `apply_discount`, and the project's own `test_discount` failed every round after. The
//! story's work was right; the stray rewrite was what failed.
//!
//! Such files are put back as the story's base has them and the tests run again. The change is kept without
//! them when the tests then pass, whether they passed with them or not: what the story did not
//! ask goes neither to the reviewers nor to the base branch. Otherwise the files are written
//! back as the model left them, and the run stands as it was.

use std::path::{Path, PathBuf};

use super::fixed_tests::{put_back_as_of, write_back, FixedTests};
use crate::agents::prompts::{is_test_path, names_file};
use crate::vcs;

/// What a story asks for, against which a changed file is stray.
pub struct StoryScope<'a> {
    /// Its title, summary and criteria.
    pub text: &'a str,
    /// The functions it names, each with its file.
    pub homes: &'a [(String, String)],
    /// The tests implement may not change.
    pub fixed: &'a FixedTests,
    /// The tool's own paths (`Workflow::own_paths`): the board, its config, the worktrees. A
    /// board that git tracks changes under every story (a story moved from backlog to
    /// in-progress is a file gone), and putting that back made a second copy of the story in
    /// the board's live folder, which stopped both (a drive, 2026-12-06).
    pub own: &'a [PathBuf],
}

/// Files changed since commit `since` (the story's base) that it has, that are no tests, none
/// of the tool's own, and that the story names neither by path nor by file name, nor as the
/// home of a function it asks for.
pub fn stray_files(dir: &Path, since: &str, story: &StoryScope) -> Vec<String> {
    let Ok(changed) = vcs::worktree_changes(dir, since, &[]) else {
        return Vec::new();
    };
    let (story_text, homes, fixed) = (story.text, story.homes, story.fixed);
    let Ok(at_base) = vcs::read_files(dir, since, &changed) else {
        return Vec::new();
    };
    changed
        .into_iter()
        .filter(|path| at_base.contains_key(path))
        .filter(|path| !story.own.iter().any(|own| Path::new(path).starts_with(own)))
        .filter(|path| !is_test_path(Path::new(path)))
        .filter(|path| !fixed.paths().any(|fixed| fixed == path.as_str()))
        .filter(|path| !names_file(story_text, path))
        .filter(|path| !homes.iter().any(|(_, home)| home == path))
        .collect()
}

/// The files as the model left them, to be written back when the tests fail without its
/// changes to them as well.
pub struct Set {
    files: Vec<(String, Option<Vec<u8>>)>,
}

/// Puts `files` back as commit `since` has them; what it returns writes the model's versions
/// back.
pub fn set_aside(dir: &Path, since: &str, files: &[String]) -> Set {
    let set = keep_aside(dir, files);
    put_back_as_of(dir, since, files);
    set
}

/// The model's versions of `files`, to be written back after the tool changes them.
pub fn keep_aside(dir: &Path, files: &[String]) -> Set {
    Set {
        files: files
            .iter()
            .map(|path| (path.clone(), std::fs::read(dir.join(path)).ok()))
            .collect(),
    }
}

impl Set {
    /// Writes the model's versions back.
    pub fn restore(self, dir: &Path) {
        for (path, bytes) in self.files {
            if !write_back(&dir.join(&path), bytes.as_deref()) {
                tracing::warn!("cannot write {path} back as the agent left it");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vcs::test_support::{sh, unborn_repo, write};

    #[test]
    fn only_changed_files_the_story_does_not_name_are_stray_and_they_come_back() {
        let repo = unborn_repo();
        let dir = repo.path();
        let pricing =
            "def apply_discount(amount, percent):\n    return amount * (100 - percent) // 100\n";
        write(dir, "inventory/pricing.py", pricing);
        write(dir, "inventory/cart.py", "class Cart:\n    pass\n");
        write(
            dir,
            "tests/test_pricing.py",
            "def test_discount():\n    pass\n",
        );
        // A board git tracks, and the tool's config.
        write(
            dir,
            ".agentic-sdlc/backlog/read-a-quantity.md",
            "---\n---\n",
        );
        write(dir, ".agentic-sdlc.json", "{}\n");
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-q", "-m", "base"]);
        let base = sh(dir, &["rev-parse", "HEAD"]).trim().to_string();
        // Recorded (inventory, parse-quantity): the new module, and a rewrite of a file beside it,
        // committed by a failed implement as its partial work.
        let rewritten = "import math\n\ndef apply_discount(amount, percent):\n    return max(0, amount - math.floor(amount * percent / 100))\n";
        write(dir, "inventory/pricing.py", rewritten);
        sh(dir, &["commit", "-q", "-am", "partial implementation"]);
        write(
            dir,
            "inventory/parse.py",
            "def parse_quantity(text):\n    return int(text)\n",
        );
        write(
            dir,
            "tests/test_pricing.py",
            "def test_discount():\n    assert True\n",
        );
        write(dir, "inventory/cart.py", "class Cart:\n    items = {}\n");
        // The story moved on the board, and a setting changed.
        std::fs::remove_file(dir.join(".agentic-sdlc/backlog/read-a-quantity.md")).unwrap();
        write(
            dir,
            ".agentic-sdlc/in-progress/read-a-quantity.md",
            "---\n---\n",
        );
        write(dir, ".agentic-sdlc.json", "{\"concurrency\": 2}\n");
        let story = "Read a quantity\nAdd a new module inventory/parse.py with `parse_quantity(text)`.\nKeep `cart.py` as it is.\n";
        let homes = [(
            "parse_quantity".to_string(),
            "inventory/parse.py".to_string(),
        )];

        let own = [
            PathBuf::from(".agentic-sdlc.json"),
            PathBuf::from(".agentic-sdlc"),
        ];
        let scope = StoryScope {
            text: story,
            homes: &homes,
            fixed: &FixedTests::default(),
            own: &own,
        };

        let stray = stray_files(dir, &base, &scope);
        assert_eq!(
            stray,
            ["inventory/pricing.py"],
            "new, test, named and the tool's own files stay"
        );

        let set = set_aside(dir, &base, &stray);
        assert_eq!(
            std::fs::read_to_string(dir.join("inventory/pricing.py")).unwrap(),
            pricing
        );
        set.restore(dir);
        assert_eq!(
            std::fs::read_to_string(dir.join("inventory/pricing.py")).unwrap(),
            rewritten
        );
    }
}
