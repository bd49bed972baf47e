//! A reply going round the files it already wrote (docs/design.md §15). Asked to write files
//! whole, the 1.5B model wrote nine files, then five of them again, until its 300-second first
//! turn hit the reply cap (orchard `pricing-module`, 2026-12-06). What it wrote after its first
//! round only wrote that round's files again. A reply that answers with files is stopped where
//! it starts a file it already wrote, under the same path.

/// The offset of the line where `text` starts again a file it already wrote: a path on its own
/// line (decorated as a heading, in bold or in backticks, or not at all) right above a code
/// fence, outside code, naming a path it named so before. `None` while every file is new.
pub(crate) fn second_round(text: &str) -> Option<usize> {
    let mut written: Vec<&str> = Vec::new();
    // The marker of the fence the text is inside, if any.
    let mut open: Option<&str> = None;
    // The last non-empty line outside code: its offset and its path, if it is one.
    let mut above: Option<(usize, Option<&str>)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let at = offset;
        offset += line.len();
        let trimmed = line.trim();
        let marker = fence_marker(trimmed);
        match (open, marker) {
            (Some(opener), Some(marker)) if trimmed == marker && marker.starts_with(opener) => {
                open = None;
                above = None;
            }
            (Some(_), _) => {}
            (None, Some(marker)) => {
                open = Some(marker);
                if let Some((heading_at, Some(path))) = above.take() {
                    if written.contains(&path) {
                        return Some(heading_at);
                    }
                    written.push(path);
                }
            }
            (None, None) if trimmed.is_empty() => {}
            (None, None) => above = Some((at, path_of(trimmed))),
        }
    }
    None
}

/// The run of backticks or tildes a fence line starts with (three or more).
fn fence_marker(line: &str) -> Option<&str> {
    let first = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = line.chars().take_while(|c| *c == first).count();
    (len >= 3).then(|| &line[..len])
}

/// The path a line names on its own, its decoration aside: `### a/b.py`, `**a/b.py**`,
/// `` `a/b.py`: ``, `File: a/b.py`, `1. **a/b.py**:`, `- a/b.py`. A word with a dot or a slash and no space is a path here.
fn path_of(line: &str) -> Option<&str> {
    let decoration = |c: char| matches!(c, '#' | '*' | '`' | ':' | '_') || c.is_whitespace();
    let unlisted = line.trim_start_matches(|c: char| c.is_ascii_digit());
    let unlisted = match unlisted.strip_prefix(['.', ')', '-', '+']) {
        Some(rest) if rest.starts_with(' ') => rest,
        _ => line,
    };
    let bare = unlisted.trim_matches(decoration);
    let bare = bare
        .strip_prefix("File")
        .map(|rest| rest.trim_start_matches(decoration))
        .unwrap_or(bare);
    let is_path = !bare.is_empty()
        && !bare.contains(char::is_whitespace)
        && (bare.contains('.') || bare.contains('/'));
    is_path.then_some(bare)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRICING: &str = "orchard/pricing.py\n```python\ndef price(kg):\n    return kg * 2\n```\n\ntests/test_pricing.py\n```python\nfrom orchard.pricing import price\n\ndef test_price():\n    assert price(1) == 2\n```\n\n";

    #[test]
    fn a_file_started_again_under_its_path_is_a_second_round() {
        let again = format!("{PRICING}orchard/pricing.py\n```python\ndef price(kg):\n");
        assert_eq!(second_round(&again), Some(PRICING.len()));
        // Decorated differently each time, it is the same path.
        let decorated =
            "### `orchard/pricing.py`\n```python\nx = 1\n```\n**orchard/pricing.py**\n```python\n";
        assert_eq!(second_round(decorated), decorated.find("**orchard"));
        let listed =
            "1. **calc.py**:\n   ```python\n   x = 1\n   ```\n2. **calc.py**:\n   ```python\n";
        assert_eq!(second_round(listed), listed.find("2."));
    }

    #[test]
    fn new_files_prose_and_code_that_looks_like_a_path_are_no_round() {
        assert_eq!(second_round(PRICING), None);
        let notes = format!("{PRICING}Added `price` to orchard/pricing.py and a test.\n");
        assert_eq!(second_round(&notes), None);
        // Prose above a fence is no path, however often it comes.
        let prose = "Run the tests:\n```sh\npytest\n```\nRun the tests:\n```sh\npytest -q\n```\n";
        assert_eq!(second_round(prose), None);
        // Inside code, a line naming the path is code.
        let inside = "a.py\n```python\n```text\na.py\n```\n";
        assert_eq!(second_round(inside), None);
    }
}
