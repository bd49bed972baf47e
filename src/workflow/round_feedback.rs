//! What a failing implement test round tells the model (docs/design.md §18, §21): first what
//! the tool did to its reply (nothing changed; acceptance tests or test files put back), then
//! the failure and what to do about it, which depends on whose tests fail.

use super::unasked_tests::Unasked;
use crate::agents::prompts::backticked;

/// A failing round, as the model hears it.
pub struct RoundFailure<'a> {
    /// The failure as the tests report it.
    pub failure: &'a str,
    /// How files are changed under the edit format.
    pub how: &'a str,
    /// Set when only the implementer's own tests of what the story does not ask fail.
    pub unasked: Option<&'a Unasked>,
    /// The failing tests, none of them acceptance tests, of what the story adds.
    pub own: Vec<String>,
    /// The story's acceptance criteria.
    pub criteria: Option<&'a str>,
}

impl RoundFailure<'_> {
    /// The feedback, after `notes` (each a paragraph of its own).
    pub fn told(&self, notes: &[String]) -> String {
        let (failure, how) = (self.failure, self.how);
        let told = match (self.unasked, self.own.is_empty(), self.criteria) {
            (Some(unasked), _, _) => format!(
                "The tests fail.\n{failure}\n\n{} Then {how}.",
                unasked.feedback()
            ),
            (None, false, Some(criteria)) => format!(
                "The tests fail, so the work is not done yet.\n{failure}\n\n{} {} what this \
                 story adds, and a test written for it can be wrong too. The story's acceptance \
                 criteria:\n{criteria}\n\nMake the code do what they say, and correct a test \
                 that expects something else: {how}.",
                backticked(&self.own),
                if self.own.len() == 1 { "tests" } else { "test" },
            ),
            _ => format!(
                "The tests fail, so the work is not done yet.\n{failure}\n\nFix the code (not \
                 the tests, unless a test itself is wrong): {how}."
            ),
        };
        notes
            .iter()
            .map(String::as_str)
            .chain([told.as_str()])
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing(own: Vec<String>, criteria: Option<&str>) -> String {
        RoundFailure {
            failure: "FAILED t.py::test_slugify",
            how: "write each file out whole",
            unasked: None,
            own,
            criteria,
        }
        .told(&["First note.".into(), "Second note.".into()])
    }

    #[test]
    fn the_notes_come_first_then_the_failure_and_what_to_do() {
        let told = failing(Vec::new(), Some("- slugify('A B') == 'a-b'"));
        assert!(told.starts_with("First note.\n\nSecond note.\n\nThe tests fail, so the work is not done yet.\nFAILED t.py::test_slugify\n\nFix the code (not the tests"), "{told}");
        // A failing test of the model's own, of what the story adds, is weighed against the
        // criteria.
        let told = failing(
            vec!["test_slugify".into()],
            Some("- slugify('A B') == 'a-b'"),
        );
        assert!(
            told.contains("`test_slugify` tests what this story adds"),
            "{told}"
        );
        assert!(
            told.contains("criteria:\n- slugify('A B') == 'a-b'\n\nMake the code"),
            "{told}"
        );
    }
}
