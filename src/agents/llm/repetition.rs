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
/// The longest block whose repetition is looked for: a 1.5B model's implement reply went
/// round its prompt's repository map and the file it quoted, 1,100 characters a round, until
/// the 300-second deadline (the inventory benchmark, 2026-11-29).
const MAX_PERIOD: usize = 4000;

/// What makes a repeated end a loop.
struct LoopShape {
    /// How many times the block must follow itself.
    copies: usize,
    /// Over how many bytes at least.
    span: usize,
    /// How long the shortest repeated block must be.
    min_period: usize,
}

/// A block said word for word three times over [`MIN_SPAN`] bytes.
const WORD_FOR_WORD: LoopShape = LoopShape {
    copies: 3,
    span: MIN_SPAN,
    min_period: 1,
};

/// A block longer than a line said three times over 800 bytes with only its numbers changed.
/// Recorded from Qwen2.5-Coder-1.5B, a research retry and then its plan (a drive, 2026-11-29):
/// list items "24. **Update the `temperature.py` file**: …", "25. **Update the
/// `test_temperature.py` file**: …", "26. **Review …", "27. **Review …", then the same four
/// numbered 28 to 31, and on until the cap: 170 and 277 seconds. A short line said with other
/// numbers is no loop: a test file says `assert is_prime(2)`, `assert is_prime(3)` and on.
const NUMBERS_CHANGED: LoopShape = LoopShape {
    copies: 3,
    span: 800,
    min_period: 80,
};

/// Where the repetition at the end of `bytes` begins and the length of the block repeated
/// (the shortest that repeats), when it makes a loop of `shape`.
fn periodic_tail(bytes: &[u8], shape: &LoopShape) -> Option<(usize, usize)> {
    let length = bytes.len();
    let period = (1..=MAX_PERIOD).find(|&period| {
        let span = shape.span.max(shape.copies * period);
        span <= length && {
            let from = length - span;
            bytes[from..length - period] == bytes[from + period..]
        }
    })?;
    if period < shape.min_period {
        return None;
    }
    // As far back as the block goes on repeating.
    let mut start = length - shape.span.max(shape.copies * period);
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
}

/// Where the word-for-word repetition at the end of `text` begins, and the length of the block
/// repeated.
pub(crate) fn repeated_tail(text: &str) -> Option<(usize, usize)> {
    periodic_tail(text.as_bytes(), &WORD_FOR_WORD)
}

/// One line said [`COUNTED_LINES`] times in a row with only its numbers changed. Recorded from
/// Qwen2.5-Coder-1.5B writing acceptance tests (textkit `headline`, 2026-12-06): `assert
/// headline("the quick brown fox", 14) == "The Quick Brown fox!"`, then 15, 16 and on to 149,
/// until the 300-second deadline. A test file's short run of numbered lines is no loop.
const COUNTED: LoopShape = LoopShape {
    copies: COUNTED_LINES,
    span: MIN_SPAN,
    min_period: 1,
};
/// How many lines in a row, alike but for their numbers, make a count a loop: more than any
/// test file's table of cases written out one assertion a line.
const COUNTED_LINES: usize = 48;

/// Where a repetition with only numbers changed at the end of `text` begins, and where its
/// first copy ends, as byte offsets of `text`: a block longer than a line, or one line
/// counted on and on.
fn renumbered_tail(text: &str) -> Option<(usize, usize)> {
    if !text.contains(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (shape, offsets) = without_numbers(text);
    let bytes = shape.as_bytes();
    let (start, period) = periodic_tail(bytes, &NUMBERS_CHANGED).or_else(|| {
        let (start, period) = periodic_tail(bytes, &COUNTED)?;
        let lines = bytes[start..start + period]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        let counting = lines == 1 && counts_on(&text[offsets[start]..]);
        counting.then_some((start, period))
    })?;
    Some((offsets[start], offsets[start + period]))
}

/// Whether the last [`COUNTED_LINES`] whole lines of `text` count: each one's numbers are the
/// line before's with one of them one more. A table of cases changes more than that
/// (`assert double(3) == 6`, then `assert double(4) == 8`).
fn counts_on(text: &str) -> bool {
    let numbers = |line: &str| -> Vec<u64> {
        line.split(|c: char| !c.is_ascii_digit())
            .filter_map(|digits| digits.parse().ok())
            .collect()
    };
    let lines: Vec<Vec<u64>> = text.lines().map(numbers).collect();
    let whole = match text.ends_with('\n') {
        true => &lines[..],
        false => &lines[..lines.len().saturating_sub(1)],
    };
    let last = &whole[whole.len().saturating_sub(COUNTED_LINES)..];
    last.len() == COUNTED_LINES
        && last.windows(2).all(|pair| {
            let (before, after) = (&pair[0], &pair[1]);
            let changed: Vec<(u64, u64)> = before
                .iter()
                .zip(after)
                .filter(|(a, b)| a != b)
                .map(|(a, b)| (*a, *b))
                .collect();
            before.len() == after.len()
                && matches!(changed.as_slice(), [(a, b)] if a.checked_add(1) == Some(*b))
        })
}

/// Whether `text` ends in a loop: a block repeated word for word, or a longer one repeated
/// with only its numbers changed, or a line counted on and on.
pub(crate) fn loops(text: &str) -> bool {
    repeated_tail(text).is_some() || renumbered_tail(text).is_some()
}

/// `text` with every run of digits written as one `0`, and for each byte of that (and its end)
/// the offset in `text` it comes from.
fn without_numbers(text: &str) -> (String, Vec<usize>) {
    let mut shape = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len() + 1);
    let mut in_number = false;
    for (at, c) in text.char_indices() {
        let digit = c.is_ascii_digit();
        if digit && in_number {
            continue;
        }
        in_number = digit;
        let c = if digit { '0' } else { c };
        for _ in 0..c.len_utf8() {
            offsets.push(at);
        }
        shape.push(c);
    }
    offsets.push(text.len());
    (shape, offsets)
}

/// `text` with what it repeats at its end kept once (the first copy of the loop); `None`
/// when it does not end in a loop.
pub(crate) fn without_repeated_tail(text: &str) -> Option<String> {
    let (start, end) = match repeated_tail(text) {
        Some((start, period)) => (start, start + period),
        None => renumbered_tail(text)?,
    };
    let mut end = end.max(start);
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
        // A long block, a file quoted again and again, loops too.
        let quoted: String = (0..30)
            .map(|n| format!("    def method_{n}(self):\n        return {n}\n"))
            .collect();
        assert!(quoted.len() > 1000);
        assert!(repeated_tail(&format!("Here:\n{}", quoted.repeat(3))).is_some());
        assert!(repeated_tail(&format!("Here:\n{}", quoted.repeat(2))).is_none());
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
        let looping = format!("### Steps\n{list}");
        assert!(loops(&looping));
        // The first round of the list is kept.
        let kept = without_repeated_tail(&looping).unwrap();
        assert!(kept.starts_with("### Steps\n1. **Update"), "{kept}");
        assert!(kept.ends_with("3. **Review the `temperature.py` file**: Review the `temperature.py` file to ensure that the `to_kelvin` function is correctly implemented.\n"), "{kept}");
        let tests: String = (2..40)
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
    fn one_line_counted_on_and_on_is_a_loop_and_kept_once() {
        // Recorded (Qwen2.5-Coder-1.5B, textkit `headline` acceptance, 2026-12-06), shortened.
        let head = "```python\nfrom textkit import headline\n\n\ndef test_headline():\n    assert headline(\"  the quick fox \", 20) == \"The Quick Fox\"\n";
        let line = |n: usize| {
            format!(
                "    assert headline(\"the quick brown fox\", {n}) == \"The Quick Brown fox!\"\n"
            )
        };
        let counted = |to: usize| format!("{head}{}", (14..to).map(line).collect::<String>());
        assert!(!loops(&counted(14 + COUNTED_LINES - 1)));
        let looping = counted(150);
        assert!(loops(&looping));
        assert_eq!(
            without_repeated_tail(&looping).unwrap(),
            format!("{head}{}", line(14))
        );
        // A table of cases changes more than a count.
        let table: String = (0..60)
            .map(|n| format!("    assert double({n}) == {}\n", 2 * n))
            .collect();
        assert!(!loops(&table));
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
