//! What the acceptance check mends in a Python test file the model wrote before it judges the
//! file (docs/design.md §21): the small model's slips that no code could pass, or that test
//! something the story does not ask, taken out or set right, each said in a note.

use std::path::Path;

use crate::workflow::copied_code;
use crate::workflow::examples::{
    add_missing_imports, file_names_dropped, loose_assertions_gathered, Example,
};
use crate::workflow::invented_expectations::without_invented_expectations;
use crate::workflow::python_imports::{imports_from_homes, without_imports_of_itself};
use crate::workflow::unknown_methods;

/// The story a test file is mended for.
pub struct Mends<'a> {
    /// The story's tree.
    pub dir: &'a Path,
    /// Its title, summary and criteria.
    pub story_text: &'a str,
    pub examples: &'a [Example],
    /// The names it mentions.
    pub story_names: &'a [String],
    /// The functions it names, each with its file.
    pub homes: &'a [(String, String)],
}

impl Mends<'_> {
    /// Mends the Python test file `path`; one note for each thing done.
    pub fn mend(&self, path: &str) -> Vec<String> {
        let mut notes = Vec::new();
        notes.extend(self.drop_file_names(path));
        notes.extend(self.drop_imports_of_itself(path));
        notes.extend(self.drop_calls_of_tests(path));
        notes.extend(self.gather_loose_assertions(path));
        if let Some(taken) = copied_code::take_out(self.dir, path, self.homes) {
            notes.push(taken.note(path));
        }
        notes.extend(self.import_from_homes(path));
        notes.extend(self.add_imports(path));
        notes.extend(self.take_out_invented(path));
        let story = unknown_methods::StoryCalls {
            names: self.story_names,
            story_text: self.story_text,
        };
        notes.extend(unknown_methods::take_out(self.dir, path, &story));
        notes
    }

    /// Rewrites `path` with `mended` of its text, when that gives a new text.
    fn rewrite(&self, path: &str, mended: impl FnOnce(&str) -> Option<String>) -> Option<()> {
        let full = self.dir.join(path);
        let text = std::fs::read_to_string(&full).ok()?;
        let new = mended(&text)?;
        crate::atomic_file::write(&full, new.as_bytes()).ok()
    }

    /// Drops the lines that hold nothing but a file's name ([`file_names_dropped`]).
    fn drop_file_names(&self, path: &str) -> Option<String> {
        self.rewrite(path, file_names_dropped)?;
        Some(format!(
            "took the lines of `{path}` that held only a file's name out: Python reads them as code"
        ))
    }

    /// Drops the file's imports of its own module ([`without_imports_of_itself`]): a 1.5B
    /// model began its test file `test_add_to_celsius.py` with `import test_add_to_celsius`
    /// (a drive, 2026-11-29).
    fn drop_imports_of_itself(&self, path: &str) -> Option<String> {
        // pytest imports `tests/test_x.py` as `test_x` too.
        let file_name = Path::new(path).file_name()?.to_string_lossy().into_owned();
        self.rewrite(path, |text| {
            let kept = without_imports_of_itself(text, path);
            let kept = without_imports_of_itself(&kept, &file_name);
            (kept != text).then_some(kept)
        })?;
        Some(format!("took `{path}`'s import of itself out"))
    }

    /// Drops the statements outside any function that call a test ([`without_calls_of_tests`]).
    fn drop_calls_of_tests(&self, path: &str) -> Option<String> {
        self.rewrite(path, without_calls_of_tests)?;
        Some(format!(
            "took the calls of tests out of the top of `{path}`: pytest calls the tests itself"
        ))
    }

    /// Gathers the assertions and `pytest.raises` blocks a Python test file holds outside any
    /// test function into tests (`loose_assertions_gathered`); says so.
    fn gather_loose_assertions(&self, path: &str) -> Option<String> {
        self.rewrite(path, |text| {
            loose_assertions_gathered(text, "story_examples")
        })?;
        Some(format!(
            "gathered the assertions of `{path}` that stood outside any test into \
             `test_story_examples` (each `pytest.raises` block into a test of its own)"
        ))
    }

    /// Takes the expectations the story does not give out of a Python test file where the story
    /// pins the function down with examples (docs/design.md §21); says what it took out.
    fn take_out_invented(&self, path: &str) -> Option<String> {
        let mut removed = Vec::new();
        self.rewrite(path, |text| {
            let pruned = without_invented_expectations(text, self.examples, self.story_text)?;
            removed = pruned.removed;
            Some(pruned.text)
        })?;
        Some(format!(
            "took `{}` out of `{path}`: the story's own examples and values are what it asks",
            removed.join("`, `")
        ))
    }

    /// Adds the imports a Python test file lacks for the story's functions (a small model
    /// calls `slugify` without importing it) and for the modules of the tree it calls through
    /// (`inventory.pricing.total_with_discount(…)` with no `import inventory.pricing`); says
    /// what it added.
    /// Imports each function the story names from its file where the tests take it from a
    /// module that does not define it ([`imports_from_homes`]).
    fn import_from_homes(&self, path: &str) -> Option<String> {
        let mut replaced = Vec::new();
        self.rewrite(path, |text| {
            let (mended, lines) = imports_from_homes(self.dir, text, self.homes)?;
            replaced = lines;
            Some(mended)
        })?;
        Some(format!(
            "`{}` in `{path}` now imports from the file the story names instead",
            replaced.join("`, `")
        ))
    }

    fn add_imports(&self, path: &str) -> Option<String> {
        let imports = add_missing_imports(self.dir, path, self.homes)?;
        Some(format!("added `{}` to `{path}`", imports.join("`, `")))
    }
}

/// `text` without the statements at its top level that call a test (`test_x(…)`, with the
/// lines a call's open brackets carry on); `None` when it has none. Recorded from the 1.5B
/// model (textkit `word-count`, 2026-12-05): `test_word_count_empty_string('assert
/// word_count("") == 0')` under an import of the file itself, four times. Its import of the
/// missing `word_count` failed first on the base, as a feature's test should; once the code
/// was there, the file failed on `NameError` in every round.
fn without_calls_of_tests(text: &str) -> Option<String> {
    let mut kept = Vec::new();
    let mut open_brackets = 0i32;
    let mut dropped = false;
    for line in text.lines() {
        let calls_a_test = line.starts_with("test")
            && line
                .split_once('(')
                .is_some_and(|(name, _)| name.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if open_brackets > 0 || calls_a_test {
            open_brackets += line.matches(['(', '[', '{']).count() as i32
                - line.matches([')', ']', '}']).count() as i32;
            open_brackets = open_brackets.max(0);
            dropped = true;
            continue;
        }
        kept.push(line);
    }
    dropped.then(|| {
        let mut out = kept.join("\n");
        out.push('\n');
        out
    })
}

#[cfg(test)]
mod tests {
    use super::without_calls_of_tests;

    #[test]
    fn calls_of_tests_at_the_top_of_the_file_are_taken_out() {
        let recorded = "from textkit import word_count\ntest_word_count_empty_string('assert word_count(\"\") == 0')\n\ntest_word_count_multiple_words(\n    'assert word_count(\"  a   b \") == 2')\n\ndef test_story_examples():\n    assert word_count(\"hello big world\") == 3\n    test_helper = 1\n";
        assert_eq!(
            without_calls_of_tests(recorded).unwrap(),
            "from textkit import word_count\n\n\ndef test_story_examples():\n    assert word_count(\"hello big world\") == 3\n    test_helper = 1\n"
        );
        assert_eq!(
            without_calls_of_tests("def test_a():\n    test_b()\ntesting = (1)\n"),
            None
        );
    }
}
