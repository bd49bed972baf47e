//! Python source read as lines, the way the test checks and mends need it: how far a line is
//! indented, where a definition starts and ends, which test holds a line. The source is read as
//! the 1.5B model writes it, top-level `def test_…` functions with their decorators, not parsed.

use std::ops::Range;

/// How far a line is indented.
pub(crate) fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// What follows the opening of a raising block on `line` (`with pytest.raises(`, or
/// `with raises(` where `raises` is imported from pytest): `ValueError):` of
/// `with pytest.raises(ValueError):`. `None` for any other line.
pub(crate) fn after_raises_opening(line: &str) -> Option<&str> {
    ["with pytest.raises(", "with raises("]
        .iter()
        .find_map(|start| line.strip_prefix(start))
}

/// The lines of the definition whose `def` line is `lines[start]`: its decorators, its body
/// and the blank lines after it.
pub(crate) fn definition_block(lines: &[&str], start: usize) -> Range<usize> {
    let level = indent(lines[start]);
    let first = crate::agents::tools::decorators_start(lines, start);
    let mut end = start + 1;
    while end < lines.len() && (lines[end].trim().is_empty() || indent(lines[end]) > level) {
        end += 1;
    }
    first..end
}

/// The line of `lines` that defines the function `name` (`def` or `async def`).
pub(crate) fn def_line(lines: &[&str], name: &str) -> Option<usize> {
    lines.iter().position(|line| {
        let line = line.trim_start();
        (line.starts_with("def ") || line.starts_with("async def "))
            && crate::agents::tools::defined_name(line).as_deref() == Some(name)
    })
}

/// The `def test…` line of the test function that `lines[at]` stands in, if it stands in one.
pub(crate) fn enclosing_test<S: AsRef<str>>(lines: &[S], at: usize) -> Option<usize> {
    let depth = indent(lines[at].as_ref());
    (0..at).rev().find(|&above| {
        let line = lines[above].as_ref();
        line.trim_start().starts_with("def test") && indent(line) < depth
    })
}

/// `lines` without those `gone` marks, joined again.
pub(crate) fn kept_lines(lines: &[&str], gone: &[bool]) -> String {
    lines
        .iter()
        .zip(gone)
        .filter(|(_, gone)| !**gone)
        .map(|(line, _)| *line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The statements of `text`, one line each: a line that leaves a bracket open takes the lines
/// up to the one that closes it, joined with a space (brackets inside string literals are not
/// counted). The 1.5B model wrote `assert account.charges_by_plate() == {` with the expected
/// dict on the lines below, and the check of the story's examples, reading line by line, found
/// the example missing (tollbooth `charges-by-plate`, 2026-12-07).
pub(crate) fn statements(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open = 0i32;
    for line in text.lines() {
        match out.last_mut() {
            Some(statement) if open > 0 => {
                statement.push(' ');
                statement.push_str(line.trim());
            }
            _ => out.push(line.to_string()),
        }
        open = (open + bracket_balance(line)).max(0);
    }
    out
}

/// How many more brackets `line` opens than it closes, outside its string literals.
fn bracket_balance(line: &str) -> i32 {
    let mut balance = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in line.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' => break,
                '(' | '[' | '{' => balance += 1,
                ')' | ']' | '}' => balance -= 1,
                _ => {}
            },
        }
    }
    balance
}

/// `text` with each line that `replace` gives lines for replaced by them (by none: the line
/// goes), its last newline kept; `None` when no line is replaced.
pub fn lines_replaced(
    text: &str,
    mut replace: impl FnMut(&str) -> Option<Vec<String>>,
) -> Option<String> {
    let mut out: Vec<String> = Vec::new();
    let mut replaced = false;
    for line in text.lines() {
        match replace(line) {
            Some(lines) => {
                replaced = true;
                out.extend(lines);
            }
            None => out.push(line.to_string()),
        }
    }
    if !replaced {
        return None;
    }
    let ending = if text.ends_with('\n') { "\n" } else { "" };
    Some(format!("{}{ending}", out.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TESTS: &str = "import pytest\n\n\n@pytest.mark.parametrize(\"n\", [1, 2])\ndef test_one(n):\n    value = n\n\n    assert value\n\n\nasync def test_two():\n    assert True\n";

    #[test]
    fn a_test_is_found_by_name_with_its_decorators_and_blank_lines() {
        let lines: Vec<&str> = TESTS.lines().collect();
        let one = def_line(&lines, "test_one").unwrap();
        assert_eq!(lines[one], "def test_one(n):");
        assert_eq!(definition_block(&lines, one), 3..10);
        assert_eq!(
            lines[def_line(&lines, "test_two").unwrap()],
            "async def test_two():"
        );
        assert_eq!(def_line(&lines, "test_on"), None);
    }

    #[test]
    fn a_line_belongs_to_the_test_above_it_that_is_less_indented() {
        let lines: Vec<&str> = TESTS.lines().collect();
        let assertion = lines
            .iter()
            .position(|l| l.trim() == "assert value")
            .unwrap();
        assert_eq!(
            enclosing_test(&lines, assertion),
            def_line(&lines, "test_one")
        );
        assert_eq!(enclosing_test(&lines, 0), None);
        let owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(
            enclosing_test(&owned, assertion),
            def_line(&lines, "test_one")
        );
    }

    #[test]
    fn a_statement_over_several_lines_is_one_and_brackets_in_strings_do_not_count() {
        let text = "def test_x():\n    assert f(\"(\") == {\n        \"a\": 1,\n    }\n    g()\n";
        assert_eq!(
            statements(text),
            [
                "def test_x():",
                "    assert f(\"(\") == { \"a\": 1, }",
                "    g()"
            ]
        );
    }
}
