//! A reply that repeats itself word for word until the token cap (docs/design.md §10): a small
//! model at temperature 0.2 sometimes falls into a loop, the same line or block again and
//! again. On a laptop CPU, at about 7 tokens a second, such a reply ran into the 300-second
//! request timeout five times in the benchmark runs of 2026-11-27/29, ten minutes of one
//! hour-long run, and gave nothing back. Watching a streamed reply, the transport stops it once
//! its end has repeated for [`MIN_SPAN`] bytes; a reply cut off at the cap keeps one copy of
//! what it repeated.

/// The shortest stretch of repetition that stops a reply: about a hundred tokens. Code repeats
/// lines, but not one line or block over and over for this long.
pub(crate) const MIN_SPAN: usize = 400;
/// The longest block whose repetition is looked for.
const MAX_PERIOD: usize = 1000;
/// How many times a block must follow itself before it is a loop.
const MIN_COPIES: usize = 3;

/// Where the repetition at the end of `text` begins and the length of the block repeated:
/// `Some((start, period))` when the text ends with a block repeated back to back at least
/// [`MIN_COPIES`] times over at least [`MIN_SPAN`] bytes (the shortest such block).
pub(crate) fn repeated_tail(text: &str) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let length = bytes.len();
    (1..=MAX_PERIOD).find_map(|period| {
        let span = MIN_SPAN.max(MIN_COPIES * period);
        if span > length {
            return None;
        }
        let from = length - span;
        if bytes[from..length - period] != bytes[from + period..] {
            return None;
        }
        // As far back as the block goes on repeating.
        let mut start = from;
        while start > 0 && bytes[start - 1] == bytes[start - 1 + period] {
            start -= 1;
        }
        // A repeated line is one from its start, not from the newline before it.
        if start > 0 && bytes[start - 1] != b'\n' {
            if let Some(newline) = bytes[start..start + period]
                .iter()
                .position(|&b| b == b'\n')
            {
                start += newline + 1;
            }
        }
        Some((start, period))
    })
}

/// The shortest block whose repetition with other numbers is a loop: longer than a line.
const MIN_NUMBERED_PERIOD: usize = 80;
/// How many times a block with numbers must follow itself, over how many bytes.
const MIN_NUMBERED_COPIES: usize = 4;
const MIN_NUMBERED_SPAN: usize = 800;

/// Whether `text` ends in a loop: a block repeated word for word ([`repeated_tail`]), or a
/// longer block repeated with only its numbers changed, longer still. Recorded from
/// Qwen2.5-Coder-1.5B, a research retry (a drive, 2026-11-29): list items "24. **Update the
/// `temperature.py` file**: …", "25. **Update the `test_temperature.py` file**: …", "26.
/// **Review …", "27. **Review …", then the same four numbered 28 to 31, and on until the
/// 1,536-token cap, 170 seconds in all. Numbers alone differing in a short line is no loop: a
/// test file says `assert is_prime(2)`, `assert is_prime(3)` and on.
pub(crate) fn loops(text: &str) -> bool {
    if repeated_tail(text).is_some() {
        return true;
    }
    let numbered = text.contains(|c: char| c.is_ascii_digit());
    numbered && {
        let shape = without_numbers(text);
        let bytes = shape.as_bytes();
        // The shortest block that repeats: a short line said with other numbers is no loop,
        // and neither are two or three of them taken together.
        let shortest = (1..=MAX_PERIOD).find(|&period| {
            let span = MIN_NUMBERED_SPAN.max(MIN_NUMBERED_COPIES * period);
            span <= bytes.len() && {
                let from = bytes.len() - span;
                bytes[from..bytes.len() - period] == bytes[from + period..]
            }
        });
        shortest.is_some_and(|period| period >= MIN_NUMBERED_PERIOD)
    }
}

/// `text` with every run of digits written as one `0`.
fn without_numbers(text: &str) -> String {
    let mut shape = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_number {
                shape.push('0');
            }
            in_number = true;
        } else {
            shape.push(c);
            in_number = false;
        }
    }
    shape
}

/// `text` with what it repeats at its end kept once ([`repeated_tail`]); `None` when it does
/// not end in repetition.
pub(crate) fn without_repeated_tail(text: &str) -> Option<String> {
    let (start, period) = repeated_tail(text)?;
    let mut end = start + period;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Some(text[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_said_over_and_over_is_a_loop_and_kept_once() {
        let head = "def test_slug():\n";
        let line = "    assert slugify('Hello, World!') == 'hello-world'\n";
        let looping = format!("{head}{}", line.repeat(12));
        let (start, period) = repeated_tail(&looping).unwrap();
        assert_eq!(period, line.len());
        assert_eq!(start, head.len());
        assert_eq!(
            without_repeated_tail(&looping).unwrap(),
            format!("{head}{line}")
        );
        // Blanks, and a block of several lines, loop too.
        assert!(repeated_tail(&" ".repeat(MIN_SPAN)).is_some());
        let block = "x = 1\ny = 2\nprint(x + y)\n";
        assert!(repeated_tail(&format!("start\n{}", block.repeat(20))).is_some());
    }

    #[test]
    fn a_numbered_list_that_goes_round_is_a_loop_and_short_numbered_lines_are_not() {
        let items = [
            "**Update the `temperature.py` file**: Update the `temperature.py` file to include the `to_kelvin` function.",
            "**Update the `test_temperature.py` file**: Update the `test_temperature.py` file to include the `to_kelvin` function.",
            "**Review the `temperature.py` file**: Review the `temperature.py` file to ensure that the `to_kelvin` function is correctly implemented.",
        ];
        let list: String = (1..=12)
            .map(|n| format!("{n}. {}\n", items[(n - 1) % 3]))
            .collect();
        assert!(repeated_tail(&list).is_none());
        assert!(loops(&format!("### Steps\n{list}")));
        let tests: String = (2..200)
            .map(|n| format!("    assert is_prime({n})\n"))
            .collect();
        assert!(!loops(&tests));
        let cases: String = (2..60)
            .map(|n| {
                format!(
                    "def test_case_{n}():\n    assert double({n}) == {}\n\n",
                    2 * n
                )
            })
            .collect();
        assert!(!loops(&cases));
        assert!(!loops(
            "1. Add `to_kelvin` to temperature.py.\n2. Test it.\n"
        ));
    }

    #[test]
    fn code_that_repeats_briefly_or_varies_is_no_loop() {
        let varied: String = (0..40)
            .map(|n| format!("    assert double({n}) == {}\n", n * 2))
            .collect();
        assert!(repeated_tail(&varied).is_none());
        // Three copies, but short of the span.
        assert!(repeated_tail(&"    pass\n".repeat(3)).is_none());
        let separator = format!("{}\n", "#".repeat(79));
        assert!(repeated_tail(&format!("x = 1\n{separator}")).is_none());
        assert!(without_repeated_tail("Done.").is_none());
        // A block that repeats once more than the rest of the text is not cut at a
        // character's middle.
        let accented = format!("a{}", "é".repeat(MIN_SPAN));
        assert_eq!(without_repeated_tail(&accented).unwrap(), "aé");
    }
}
