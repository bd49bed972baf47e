//! Assertions a Python test file holds outside any test function (docs/design.md §21),
//! gathered into tests: pytest runs none of them as a test, and a failing one is a collection
//! error that names no test.

use super::python_lines::after_raises_opening;

/// A Python test file whose assertions stand at the top level, outside any test function,
/// with them gathered into one test function at its end (`def test_<name>():`): pytest runs
/// none of them as a test, a failing one is a collection error no test is named in, and the
/// 1.5B model wrote `format_price`'s examples so. A `with pytest.raises(…):` block at the top
/// level becomes a test of its own (`def test_<name>_raises_<n>():`), so that one example that
/// does not raise names its test and the others still run: the 1.5B model wrote
/// `parse_quantity`'s three raising examples so, and every round after heard only "DID NOT
/// RAISE" from the collection.
///
/// A `try:` at the top level whose clauses assert is such a test too: the 1.5B model wrote
/// `f_to_c(-459.67)` in one, `except ValueError` and `else: assert False`, and it ran at
/// collection (a drive, 2026-12-07).
///
/// A call standing alone before an assertion (`cart.add("apple", 3)`) is the assertions' setup
/// and goes with them, in its place: left at the top it ran at collection, and the 1.5B model's
/// `assert cart.total_items() == 0`, two `cart.add(…)` and `assert cart.total_items() == 5`
/// became one test asserting both totals of the same empty cart (a drive, 2026-12-06).
/// `None` when there is nothing at the top level to gather.
pub fn loose_assertions_gathered(text: &str, name: &str) -> Option<String> {
    let statements = top_level_statements(text);
    if !statements
        .iter()
        .any(|(kind, _)| matches!(kind, Statement::Assertion | Statement::Raising))
    {
        return None;
    }
    let last_assertion = statements
        .iter()
        .rposition(|(kind, _)| *kind == Statement::Assertion);
    let mut kept: Vec<&str> = Vec::new();
    let mut gathered: Vec<Vec<&str>> = Vec::new();
    let mut with_setup = false;
    let mut raising: Vec<Vec<&str>> = Vec::new();
    for (at, (kind, lines)) in statements.into_iter().enumerate() {
        match kind {
            Statement::Assertion => gathered.push(lines),
            Statement::Call if last_assertion.is_some_and(|last| at < last) => {
                with_setup = true;
                gathered.push(lines)
            }
            Statement::Raising => raising.push(lines),
            Statement::Call | Statement::Other => kept.extend(lines),
        }
    }
    // Assertions with no calls between them depend on nothing but themselves: each is a test
    // of its own, so that a run names every one that fails, not the first alone. The 1.5B
    // model's `load_value` failed three rounds on the first of four examples gathered in one
    // test, and never saw what the other three expected (orchard `pricing-module`,
    // 2026-12-06).
    let tests: Vec<Vec<&str>> = match with_setup {
        true => vec![gathered.concat()],
        false => gathered,
    };
    Some(with_tests(&kept, &tests, &raising, name))
}

/// `kept` with a test for each of the `gathered` statements (named `test_<name>` when there is
/// one) and one test for each `raising` block after them.
fn with_tests(kept: &[&str], gathered: &[Vec<&str>], raising: &[Vec<&str>], name: &str) -> String {
    let mut out = kept.join("\n").trim_end().to_string();
    let indented = |out: &mut String, lines: &[&str]| {
        for line in lines {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    };
    for (at, lines) in gathered.iter().enumerate() {
        let test = match gathered.len() {
            1 => format!("test_{name}"),
            _ => format!("test_{name}_{}", at + 1),
        };
        // Two blank lines before each test: the first follows the kept lines, trimmed.
        let gap = if at == 0 { "\n\n\n" } else { "\n\n" };
        out.push_str(&format!("{gap}def {test}():\n"));
        indented(&mut out, lines);
    }
    if !out.ends_with('\n') {
        // Nothing was gathered: the kept lines end without one.
        out.push('\n');
    }
    for (at, block) in raising.iter().enumerate() {
        out.push_str(&format!("\n\ndef test_{name}_raises_{}():\n", at + 1));
        indented(&mut out, block);
    }
    out
}

/// What a statement at the top level of a test file is, for gathering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Statement {
    /// `assert …`
    Assertion,
    /// `with pytest.raises(…):` and its body, or a `try:` whose clauses assert (`except
    /// ValueError: pass` / `else: assert False`).
    Raising,
    /// A call standing alone: `cart.add("apple", 3)`.
    Call,
    /// Anything else, each line on its own: imports, definitions and their bodies, comments.
    Other,
}

/// The statements at the top level of `text`, each with its lines: an assertion, a raising
/// block or a call with the lines indented under it or inside its open brackets.
fn top_level_statements(text: &str) -> Vec<(Statement, Vec<&str>)> {
    let mut statements = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let kind = if line.starts_with("assert ") {
            Statement::Assertion
        } else if is_raising_block(line) || line.trim_end() == "try:" {
            Statement::Raising
        } else if is_call_statement(line) {
            Statement::Call
        } else {
            statements.push((Statement::Other, vec![line]));
            continue;
        };
        let mut block = vec![line];
        let mut open = bracket_depth(line);
        // Continuation lines of a long statement, and a block's body, are indented under it
        // or close its brackets.
        // A `try:` goes on with its clauses.
        let trial = line.trim_end() == "try:";
        while let Some(next) = lines.peek() {
            let continues = (next.starts_with(char::is_whitespace) && !next.trim().is_empty())
                || (open > 0 && !next.trim().is_empty())
                || (trial && is_try_clause(next));
            if !continues {
                break;
            }
            open += bracket_depth(next);
            block.push(next);
            lines.next();
        }
        if trial && !block.iter().any(|line| asserts(line.trim_start())) {
            // `try: from x import y` / `except ImportError: y = None` binds a name the
            // tests use: it stays at the top level.
            statements.push((Statement::Other, block));
            continue;
        }
        statements.push((kind, block));
    }
    statements
}

/// How many more brackets `line` opens than it closes.
fn bracket_depth(line: &str) -> i32 {
    line.matches(['(', '[', '{']).count() as i32 - line.matches([')', ']', '}']).count() as i32
}

/// A line at the top level that is a call and nothing else (`cart.add("apple", 3)`), other
/// than a call of a test or of a test runner.
fn is_call_statement(line: &str) -> bool {
    let callee: String = line
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    let first = callee.split('.').next().unwrap_or("");
    let keyword = matches!(
        first,
        "if" | "elif"
            | "while"
            | "for"
            | "with"
            | "return"
            | "yield"
            | "del"
            | "raise"
            | "not"
            | "assert"
            | "lambda"
            | "await"
    );
    !first.is_empty()
        && first.starts_with(|c: char| c.is_alphabetic() || c == '_')
        && !keyword
        && !first.starts_with("test")
        && !callee.ends_with(".main")
        && line[callee.len()..].starts_with('(')
}

/// A clause of a `try:` at the top level: `except …:`, `else:` or `finally:`.
fn is_try_clause(line: &str) -> bool {
    let line = line.trim_end();
    (line.starts_with("except") || line == "else:" || line == "finally:") && line.ends_with(':')
}

/// Whether a statement fails a test: `assert …`, `pytest.fail(…)` or `raise AssertionError`.
fn asserts(statement: &str) -> bool {
    ["assert ", "pytest.fail(", "raise AssertionError"]
        .iter()
        .any(|start| statement.starts_with(start))
}

/// `with pytest.raises(ValueError):` (or `with raises(…)`, as imported from pytest).
fn is_raising_block(line: &str) -> bool {
    after_raises_opening(line).is_some() && line.trim_end().ends_with(':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertions_at_the_top_level_are_gathered_into_a_test_each() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, inventory `format_price`), shortened.
        let loose = "from inventory.money import format_price\n# Test for format_price(123456)\nassert format_price(123456) == \"$1,234.56\"\n\nassert format_price(\n    5) == \"$0.05\"\n";
        assert_eq!(
            loose_assertions_gathered(loose, "story_examples").unwrap(),
            "from inventory.money import format_price\n# Test for format_price(123456)\n\n\ndef test_story_examples_1():\n    assert format_price(123456) == \"$1,234.56\"\n\n\ndef test_story_examples_2():\n    assert format_price(\n        5) == \"$0.05\"\n"
        );
        let one = "from inventory.money import format_price\nassert format_price(5) == \"$0.05\"\n";
        assert!(loose_assertions_gathered(one, "story_examples")
            .unwrap()
            .contains("def test_story_examples():\n"));
        let proper = "def test_it():\n    assert 1 == 1\n";
        assert_eq!(loose_assertions_gathered(proper, "x"), None);
    }

    #[test]
    fn raising_blocks_at_the_top_level_become_tests_of_their_own() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-29, inventory `parse_quantity`), shortened.
        let loose = "import pytest\nfrom inventory.parse import parse_quantity\n\n\
            assert parse_quantity(\" 3 \") == 3\n\n\
            # Test: parse_quantity(\"abc\") raises ValueError\n\
            with pytest.raises(ValueError):\n    parse_quantity(\"abc\")\n\n\
            with pytest.raises(ValueError):\n    parse_quantity(\"-1\")\n";
        assert_eq!(
            loose_assertions_gathered(loose, "story_examples").unwrap(),
            "import pytest\nfrom inventory.parse import parse_quantity\n\n\n\
             # Test: parse_quantity(\"abc\") raises ValueError\n\n\n\
             def test_story_examples():\n    assert parse_quantity(\" 3 \") == 3\n\n\n\
             def test_story_examples_raises_1():\n    with pytest.raises(ValueError):\n        parse_quantity(\"abc\")\n\n\n\
             def test_story_examples_raises_2():\n    with pytest.raises(ValueError):\n        parse_quantity(\"-1\")\n"
        );
        let inside = "def test_it():\n    with pytest.raises(ValueError):\n        f()\n";
        assert_eq!(loose_assertions_gathered(inside, "x"), None);
    }

    #[test]
    fn a_try_at_the_top_level_that_asserts_is_a_test_of_its_own() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive's `f_to_c`, 2026-12-07): the try ran at
        // collection, beside the two examples the tool had gathered.
        let loose = "import thermo.convert\n\ntry:\n    thermo.convert.f_to_c(-459.67)\nexcept ValueError:\n    assert True\nelse:\n    assert False\n\n\ndef test_story_examples_1():\n    assert thermo.convert.f_to_c(212) == 100.0\n";
        assert_eq!(
            loose_assertions_gathered(loose, "story_examples").unwrap(),
            "import thermo.convert\n\n\n\ndef test_story_examples_1():\n    assert thermo.convert.f_to_c(212) == 100.0\n\n\ndef test_story_examples_raises_1():\n    try:\n        thermo.convert.f_to_c(-459.67)\n    except ValueError:\n        assert True\n    else:\n        assert False\n"
        );
        // A try that only binds a name stays where it is.
        let optional = "try:\n    from m import f\nexcept ImportError:\n    f = None\n\n\ndef test_f():\n    assert f\n";
        assert_eq!(loose_assertions_gathered(optional, "x"), None);
    }

    #[test]
    fn calls_before_an_assertion_are_its_setup_and_keep_their_place() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-06): the tool added the import.
        let loose = "import cart\n# Test that total_items correctly counts items\nassert cart.total_items() == 0\n\n# Test that total_items counts apples\ncart.add(\"apple\", 3)\ncart.add(\"pear\",\n    2)\nassert cart.total_items() == 5\n";
        assert_eq!(
            loose_assertions_gathered(loose, "story_examples").unwrap(),
            "import cart\n# Test that total_items correctly counts items\n\n# Test that total_items counts apples\n\n\ndef test_story_examples():\n    assert cart.total_items() == 0\n    cart.add(\"apple\", 3)\n    cart.add(\"pear\",\n        2)\n    assert cart.total_items() == 5\n"
        );
        // A call after the last assertion is no setup of it; a call alone gathers nothing.
        let after = "from m import f\nassert f() == 1\nmain()\n";
        assert_eq!(
            loose_assertions_gathered(after, "x").unwrap(),
            "from m import f\nmain()\n\n\ndef test_x():\n    assert f() == 1\n"
        );
        assert_eq!(loose_assertions_gathered("setup()\n", "x"), None);
        let closing = "reset(\n    1,\n)\nassert f() == 1\n";
        assert_eq!(
            loose_assertions_gathered(closing, "x").unwrap(),
            "\n\n\ndef test_x():\n    reset(\n        1,\n    )\n    assert f() == 1\n"
        );
    }
}
