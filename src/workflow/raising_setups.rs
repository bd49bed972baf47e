//! Calls a test makes before the `pytest.raises` block that expects the same call to raise
//! (docs/design.md §21). Made first, outside the block, the call raises there, and the test
//! fails whatever the code does: the 1.5B model's test of `Order.add` refusing a 7201 mm piece
//! began with `order.add("spruce", "47x100", 7201)`, then asserted that the same call raises
//! (sawmill `overlength-pieces`, 2026-12-07). Such a call is taken out, never the block.

use super::python_lines::{after_raises_opening, definition_block, indent, kept_lines};

/// `text` (Python tests) without each statement of a test function that stands before a
/// `pytest.raises` block of the same test holding the same statement, with the statements
/// taken out; `None` when there is none.
pub fn raised_calls_made_before(text: &str) -> Option<(String, Vec<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut gone = vec![false; lines.len()];
    let mut taken = Vec::new();
    let tests = (0..lines.len()).filter(|&at| {
        let line = lines[at].trim_start();
        line.starts_with("def test") || line.starts_with("async def test")
    });
    for start in tests {
        let body = start + 1..definition_block(&lines, start).end;
        let Some(level) = body
            .clone()
            .map(|at| lines[at])
            .find(|line| !line.trim().is_empty())
            .map(indent)
        else {
            continue;
        };
        let mut made: Vec<usize> = Vec::new();
        let mut at = body.start;
        while at < body.end {
            let line = lines[at];
            if line.trim().is_empty() || indent(line) != level {
                at += 1;
                continue;
            }
            let statement = line.trim();
            let Some(rest) = raising_block(statement) else {
                made.push(at);
                at += 1;
                continue;
            };
            // The block's statements: after its colon on the same line, or indented under it.
            let mut raised: Vec<&str> = Vec::new();
            if !rest.is_empty() {
                raised.push(rest);
            }
            at += 1;
            while at < body.end && (lines[at].trim().is_empty() || indent(lines[at]) > level) {
                if !lines[at].trim().is_empty() {
                    raised.push(lines[at].trim());
                }
                at += 1;
            }
            for &before in &made {
                if !gone[before] && raised.contains(&lines[before].trim()) {
                    gone[before] = true;
                    taken.push(lines[before].trim().to_string());
                }
            }
        }
    }
    if taken.is_empty() {
        return None;
    }
    let ending = if text.ends_with('\n') { "\n" } else { "" };
    Some((format!("{}{ending}", kept_lines(&lines, &gone)), taken))
}

/// What follows the colon of a `with pytest.raises(…):` line (empty for a block under it);
/// `None` for any other line.
fn raising_block(statement: &str) -> Option<&str> {
    let rest = after_raises_opening(statement)?;
    // The colon after the closing bracket of `raises(…)`, and an optional `as` name.
    let close = rest.find("):").or_else(|| {
        let at = rest.find(") as ")?;
        rest[at..].find(':').map(|colon| at + colon - 1)
    })?;
    Some(rest[close + 2..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_made_before_the_block_that_expects_it_to_raise_is_taken_out() {
        // Recorded (Qwen2.5-Coder-1.5B, sawmill `overlength-pieces`, 2026-12-07), shortened.
        let tests = "def test_order_add_raises():\n    order = Order(\"Customer\")\n    order.add(\"spruce\", \"47x100\", 7201)\n    with pytest.raises(OverlengthError) as e:\n        order.add(\"spruce\", \"47x100\", 7201)\n\n\ndef test_one_line():\n    f(1)\n    with pytest.raises(ValueError): f(1)\n";
        let (mended, taken) = raised_calls_made_before(tests).unwrap();
        assert_eq!(
            mended,
            "def test_order_add_raises():\n    order = Order(\"Customer\")\n    with pytest.raises(OverlengthError) as e:\n        order.add(\"spruce\", \"47x100\", 7201)\n\n\ndef test_one_line():\n    with pytest.raises(ValueError): f(1)\n"
        );
        assert_eq!(taken, ["order.add(\"spruce\", \"47x100\", 7201)", "f(1)"]);
    }

    #[test]
    fn other_calls_and_calls_in_other_tests_stay() {
        let tests = "def test_a():\n    order.add(\"pine\", \"47x100\", 100)\n    with pytest.raises(ValueError):\n        order.add(\"pine\", \"47x100\", 7201)\n\n\ndef test_b():\n    f(1)\n\n\ndef test_c():\n    with pytest.raises(ValueError):\n        f(1)\n    f(1)\n";
        assert_eq!(raised_calls_made_before(tests), None);
    }
}
