//! The calls a failing `pytest.raises` block made, added to pytest's report (docs/design.md
//! §21). pytest quotes a failing test down to the line it stopped on, and a block that raised
//! nothing stops on its `with pytest.raises(ValueError):` line: the call inside, the one input
//! the code got wrong, is never shown. Told only `DID NOT RAISE ValueError` at
//! `tests/test_parse.py:17`, the 1.5B model wrote `parse_quantity` eight times over without the
//! check for `"0"` that the block held (the inventory benchmark's `parse-quantity`, 2026-12-05).

use std::path::Path;

/// How many lines of a block are quoted at most.
const BLOCK_LINES: usize = 3;

/// pytest's `output` from a run in `dir`, with a line after each `DID NOT RAISE` error that
/// quotes the block that raised nothing, read from the test file where pytest says it failed.
/// A one-line block (`with pytest.raises(E): f(x)`) is quoted by pytest already, and output
/// that names no readable test file stays as it is.
pub fn with_unraised_calls(dir: &Path, output: &str) -> String {
    let lines: Vec<&str> = output.lines().collect();
    let mut out = String::with_capacity(output.len());
    for (at, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        if !line
            .trim_start_matches('E')
            .trim_start()
            .starts_with("Failed: DID NOT RAISE")
        {
            continue;
        }
        let block = lines[at + 1..]
            .iter()
            .take_while(|next| !next.starts_with("___"))
            .find_map(|next| failed_at(next))
            .and_then(|(file, number)| block_after(dir, file, number));
        if let Some(block) = block {
            out.push_str(&format!("E       the block that raised nothing: {block}\n"));
        }
    }
    if !output.ends_with('\n') {
        out.pop();
    }
    out
}

/// `tests/test_parse.py:17: Failed` → the file and the line number.
fn failed_at(line: &str) -> Option<(&str, usize)> {
    let place = line.strip_suffix(": Failed")?;
    let (file, number) = place.rsplit_once(':')?;
    let number = number.parse().ok()?;
    (file.ends_with(".py") && !file.contains(' ')).then_some((file, number))
}

/// The statements of the `with` block at line `number` of `dir`'s `file`, joined by `; `:
/// `None` when that line is no `with` whose body follows it.
fn block_after(dir: &Path, file: &str, number: usize) -> Option<String> {
    // The report is the agent's code's output, and the tree is its to link: only a file
    // inside the tree is read.
    if file.starts_with('/') || file.split('/').any(|part| part == "..") {
        return None;
    }
    let real = std::fs::canonicalize(dir.join(file)).ok()?;
    if !real.starts_with(std::fs::canonicalize(dir).ok()?) {
        return None;
    }
    let text = std::fs::read_to_string(real).ok()?;
    let mut lines = text.lines().skip(number.checked_sub(1)?);
    let head = lines.next()?;
    let trimmed = head.trim();
    if !trimmed.starts_with("with ") || !trimmed.ends_with(':') {
        return None;
    }
    let indent = |line: &str| line.len() - line.trim_start().len();
    let depth = indent(head);
    let body: Vec<&str> = lines
        .take_while(|line| line.trim().is_empty() || indent(line) > depth)
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    if body.is_empty() {
        return None;
    }
    let mut quoted = body[..body.len().min(BLOCK_LINES)].join("; ");
    if body.len() > BLOCK_LINES {
        quoted.push_str("; …");
    }
    Some(format!("`{quoted}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded (pytest 8, the inventory benchmark's `parse-quantity`, 2026-12-05).
    const REPORT: &str = "\
.....F...........                                                        [100%]
=================================== FAILURES ===================================
__________________ test_parse_quantity_with_zero_or_negative ___________________

    def test_parse_quantity_with_zero_or_negative():
>       with pytest.raises(ValueError):
E       Failed: DID NOT RAISE ValueError

tests/test_parse.py:17: Failed
=========================== short test summary info ============================
FAILED tests/test_parse.py::test_parse_quantity_with_zero_or_negative - Faile...
1 failed, 16 passed in 0.04s
";

    fn tree(test: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_parse.py"), test).unwrap();
        dir
    }

    #[test]
    fn a_block_that_raised_nothing_is_quoted_under_its_error() {
        let test = format!(
            "{}def test_parse_quantity_with_zero_or_negative():\n    with pytest.raises(ValueError):\n        parse_quantity(\"0\")\n\n    with pytest.raises(ValueError):\n        parse_quantity(\"-1\")\n",
            "import pytest\n".repeat(15)
        );
        let dir = tree(&test);

        let shown = with_unraised_calls(dir.path(), REPORT);

        assert!(
            shown.contains("E       Failed: DID NOT RAISE ValueError\nE       the block that raised nothing: `parse_quantity(\"0\")`\n\ntests/test_parse.py:17: Failed\n"),
            "{shown}"
        );
        assert_eq!(
            shown.replace(
                "E       the block that raised nothing: `parse_quantity(\"0\")`\n",
                ""
            ),
            REPORT
        );
    }

    #[test]
    fn a_one_line_block_or_a_file_that_is_not_there_adds_nothing() {
        let one_line = format!(
            "{}def test_zero():\n    with pytest.raises(ValueError): parse_quantity(\"0\")\n",
            "import pytest\n".repeat(15)
        );
        assert_eq!(with_unraised_calls(tree(&one_line).path(), REPORT), REPORT);
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(with_unraised_calls(empty.path(), REPORT), REPORT);
        let outside = REPORT.replace("tests/test_parse.py:17", "../tests/test_parse.py:17");
        assert_eq!(
            with_unraised_calls(tree(&one_line).path(), &outside),
            outside
        );
    }

    #[test]
    fn a_test_file_linked_out_of_the_tree_is_not_read() {
        let elsewhere = tree(&format!(
            "{}def test_zero():\n    with pytest.raises(ValueError):\n        SECRET = 1\n",
            "import pytest\n".repeat(15)
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("tests")).unwrap();
        std::os::unix::fs::symlink(
            elsewhere.path().join("tests/test_parse.py"),
            dir.path().join("tests/test_parse.py"),
        )
        .unwrap();

        assert_eq!(with_unraised_calls(dir.path(), REPORT), REPORT);
        assert!(with_unraised_calls(elsewhere.path(), REPORT).contains("SECRET"));
    }

    #[test]
    fn a_long_block_is_cut_after_three_statements() {
        let test = format!(
            "{}def test_many():\n    with pytest.raises(ValueError):\n        a = 1\n        # a comment\n        b = 2\n        c = 3\n        parse_quantity(\"0\")\n    assert True\n",
            "import pytest\n".repeat(15)
        );
        let shown = with_unraised_calls(tree(&test).path(), REPORT);
        assert!(
            shown.contains("the block that raised nothing: `a = 1; b = 2; c = 3; …`"),
            "{shown}"
        );
    }
}
