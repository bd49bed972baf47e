//! A reply that copies its prompt back (docs/design.md §15). Asked to write a file, the 1.5B
//! model sometimes answers with its prompt instead, word for word from `# Story: …` on, through
//! the plan and the repository map: at a few tokens a second that ran 215 and twice 300 seconds
//! in one implement of the inventory benchmark (2026-12-06), and a narrowed definition once
//! copied its prompt's repository map for 80 seconds. An agent that answers with code or files
//! never needs its prompt back, so for such a request the transport stops a reply once it has
//! copied [`ECHO_SPAN`] bytes of a user message from where the message starts. Only from there:
//! a file written out whole copies the prompt too (the prompt shows the file, and a tool's
//! result holds it), but from inside the message, never from its first line.

/// The shortest copy that stops a reply: about a hundred tokens.
pub(crate) const ECHO_SPAN: usize = 400;

/// The finish reason of a reply stopped as an echo, which the transcript shows: the reply is
/// over, but it was neither finished by the model nor cut off at the cap.
pub(crate) const ECHO_FINISH: &str = "echo";

/// The prompt texts a reply must not copy back.
#[derive(Debug, Clone, Default)]
pub(crate) struct EchoWatch {
    texts: Vec<String>,
}

impl EchoWatch {
    /// A watch over `texts` (the user messages of a request); one shorter than [`ECHO_SPAN`]
    /// cannot be echoed.
    pub(crate) fn new<'a>(texts: impl IntoIterator<Item = &'a str>) -> Self {
        let texts = texts
            .into_iter()
            .filter(|text| text.len() >= ECHO_SPAN)
            .map(str::to_string)
            .collect();
        EchoWatch { texts }
    }

    /// Whether `reply`, from one of its line starts, copies [`ECHO_SPAN`] bytes or more of one
    /// of the texts from that text's start.
    pub(crate) fn echoed(&self, reply: &str) -> bool {
        line_starts(reply).any(|from| {
            let rest = &reply.as_bytes()[from..];
            self.texts
                .iter()
                .any(|text| common_prefix(rest, text.as_bytes()) >= ECHO_SPAN)
        })
    }
}

/// The offsets in `text` where its lines start.
fn line_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(
        text.match_indices('\n')
            .map(|(at, _)| at + 1)
            .filter(move |&at| at < text.len()),
    )
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The start of the prompt the 1.5B model copied back in the inventory benchmark's
    /// `receipt-line` implement (2026-12-06), shortened.
    const PROMPT: &str = "# Story: A receipt line\n\nType: feature\n\n## Summary\nThe task involves adding a function `receipt_line(name, cents)` to the `inventory/money.py` file, which formats the item's name with a colon and a space, and its price as `format_price` writes it.\n\n## Acceptance Criteria\n- [ ] `receipt_line(\"Apple\", 250)` returns `\"Apple: $2.50\"`\n- [ ] `receipt_line(\"TV\", 129900)` returns `\"TV: $1,299.00\"`\n- [ ] `receipt_line` calls `format_price`\n- [ ] a test in tests/test_money.py covers it\n\n# Files the story names, as they are now\n\n## inventory/money.py\n```python\n# Money, for people.\n\ndef format_price(cents):\n    \"\"\"\n    Format a price in dollars with a $ sign, a comma between thousands and two decimals.\n\n    Args:\n    cents (int): The price in cents.\n\n    Returns:\n    str: The formatted price string.\n    \"\"\"\n    return \"${:,.2f}\".format(cents / 100)\n\n\ndef format_cents(cents):\n    \"\"\"The amount as cents, for the books.\"\"\"\n    return f\"{cents} cents\"\n```\n\n## Task\nMake the change now: write out each file you change, whole, under its path.\n";

    /// A tool's result under the text protocol: the file, after one line of its own.
    const READ_RESULT: &str = "Result of read_file:\n# Inventory\n\nA shop's cart and prices, in cents throughout.\n\n## Install\n\npip install -e .\n\n## Use\n\nCreate a `Cart`, `add` items by SKU with a quantity, read `quantity(sku)` and `total_items()`. Prices are whole cents; `apply_discount(amount, percent)` takes a percentage off, rounded down to a whole cent, and `format_price(cents)` writes an amount for people, with a dollar sign, commas between thousands and two decimals.\n\n## Develop\n\nRun the tests with pytest from the repository root; every module has a test file of its own under tests/.\n";

    #[test]
    fn the_prompt_copied_from_its_start_is_an_echo() {
        let watch = EchoWatch::new([PROMPT]);
        let reply = format!("```markdown\n{}", &PROMPT[..ECHO_SPAN + 10]);
        assert!(watch.echoed(&reply));
        // Until the copy is long enough, the reply goes on.
        let short = format!("```markdown\n{}", &PROMPT[..ECHO_SPAN - 10]);
        assert!(!watch.echoed(&short));
    }

    #[test]
    fn a_file_written_out_as_the_prompt_or_a_result_shows_it_is_no_echo() {
        let watch = EchoWatch::new([PROMPT, READ_RESULT]);
        let from = PROMPT.find("## inventory/money.py").unwrap();
        let to = PROMPT.find("## Task").unwrap();
        let shown = &PROMPT[from..to];
        assert!(shown.len() > ECHO_SPAN);
        assert!(!watch.echoed(&format!("{shown}Notes: the file is unchanged.\n")));
        let readme = READ_RESULT.strip_prefix("Result of read_file:\n").unwrap();
        assert!(readme.len() > ECHO_SPAN);
        assert!(!watch.echoed(&format!("README.md\n```markdown\n{readme}```\n")));
    }

    #[test]
    fn a_copy_from_inside_the_prompt_or_of_a_short_one_is_no_echo() {
        let watch = EchoWatch::new([PROMPT]);
        let from = PROMPT.find("## Summary").unwrap();
        assert!(!watch.echoed(&PROMPT[from..]));
        let short = "# Story: x\n\n## Summary\ny\n";
        assert!(!EchoWatch::new([short]).echoed(short));
        let answer = "inventory/money.py\n```python\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\"\n```\nAdded `receipt_line` to inventory/money.py; it calls `format_price`.\n";
        assert!(!watch.echoed(answer));
    }
}
