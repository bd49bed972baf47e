//! The FAILURES part of pytest's default (long) report, read test by test: which test failed,
//! on which line of its own, and on what, raised where (docs/design.md §21).

use super::unasked_tests::FailedTest;

/// One test's part of pytest's FAILURES: its `___ name ___` heading and the lines below it.
pub struct Section<'a> {
    heading: &'a str,
    lines: Vec<&'a str>,
}

impl Section<'_> {
    /// The test, by the file of its own frame (the first `path.py:N:` line) and the heading's
    /// name: `TestCart.test_add[1]` is `test_add`.
    pub fn test(&self) -> Option<FailedTest> {
        let file = self
            .lines
            .iter()
            .find_map(|line| place(line).map(|p| p.0))?;
        let name = self.heading.rsplit('.').next()?;
        let name = name.split('[').next()?;
        Some(FailedTest {
            file: file.to_string(),
            name: name.to_string(),
        })
    }

    /// The line of the test's own frame that raised: pytest marks it with `>`.
    pub fn stopped_on(&self) -> Option<&str> {
        self.lines
            .iter()
            .find_map(|line| line.strip_prefix('>'))
            .map(str::trim)
    }

    /// The exception the test failed on, as the last frame's place names it
    /// (`inventory/cart.py:10: ValueError`).
    pub fn raised(&self) -> Option<&str> {
        self.lines
            .iter()
            .rev()
            .find_map(|line| place(line).map(|p| p.1))
            .filter(|raised| !raised.is_empty())
    }

    /// The file of the last frame, where the exception was raised: `orchard/units.py` of
    /// `orchard/units.py:26: ValueError`.
    pub fn raised_in(&self) -> Option<&str> {
        self.lines
            .iter()
            .rev()
            .find_map(|line| place(line).map(|p| p.0))
    }

    /// The exception's own line as pytest prints it (`E   ValueError: unknown weight unit in
    /// '2000'`), without the `E`.
    pub fn error(&self) -> Option<&str> {
        self.lines
            .iter()
            .find_map(|line| line.strip_prefix("E "))
            .map(str::trim)
    }
}

/// `tests/test_cart.py:26: ` → the file and what follows its line number.
fn place(line: &str) -> Option<(&str, &str)> {
    let (file, rest) = line.split_once(".py:")?;
    let (number, after) = rest.split_once(':')?;
    let file = &line[..file.len() + 3];
    let plain = !file.is_empty() && !file.contains(char::is_whitespace);
    (plain && !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
        .then(|| (file, after.trim()))
}

/// The FAILURES part of pytest's report, test by test.
pub fn sections(output: &str) -> Vec<Section<'_>> {
    let mut sections: Vec<Section> = Vec::new();
    let mut inside = false;
    for line in output.lines() {
        if let Some(heading) = heading(line) {
            sections.push(Section {
                heading,
                lines: Vec::new(),
            });
            inside = true;
        } else if line.starts_with("====") {
            inside = false;
        } else if let (true, Some(section)) = (inside, sections.last_mut()) {
            section.lines.push(line);
        }
    }
    sections
}

/// `_____ test_name _____` → `test_name`; a line of frames' separators (`_ _ _`) is none.
fn heading(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("__")?.trim_start_matches('_');
    let inner = inner.strip_suffix("__")?.trim_end_matches('_').trim();
    (!inner.is_empty() && !inner.contains(' ')).then_some(inner)
}
