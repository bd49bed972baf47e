//! A reply that copies its prompt back (docs/design.md §15). Asked to write a file, the 1.5B
//! model sometimes answers with its prompt instead, word for word from `# Story: …` on, through
//! the plan and the repository map: at a few tokens a second that ran 215 and twice 300 seconds
//! in one implement of the inventory benchmark (2026-12-06), and a narrowed definition once
//! copied its prompt's repository map for 80 seconds. An agent that answers with code or files
//! never needs its prompt back, so for such a request the transport stops a reply once it has
//! copied [`ECHO_SPAN`] bytes of a user message from where the message starts. Only from there:
//! a file written out whole copies the prompt too (the prompt shows the file, and a tool's
//! result holds it), but from inside the message, never from its first line.
//!
//! Research once answered with one sentence, then its prompt twice from `## Summary` on, the
//! second copy inside a code block; the story's file then showed `## Summary` and
//! `## Acceptance Criteria` twice (CI's textkit `mean-empty`, 2026-12-06). An agent that
//! answers in prose ([`ReplyShape::Prose`]) is stopped by a copy that starts at any of the
//! prompt's headings and runs on past the next one, and its answer keeps only what came before.

use super::ReplyShape;

/// The shortest copy that stops a reply: about a hundred tokens.
pub(crate) const ECHO_SPAN: usize = 400;

/// The finish reason of a reply stopped as an echo, which the transcript shows: the reply is
/// over, but it was neither finished by the model nor cut off at the cap.
pub(crate) const ECHO_FINISH: &str = "echo";

/// Where a copy of one prompt text may start, and how long it must run to be an echo.
#[derive(Debug, Clone)]
struct Start {
    at: usize,
    span: usize,
}

#[derive(Debug, Clone)]
struct Watched {
    text: String,
    starts: Vec<Start>,
}

/// The prompt texts a reply must not copy back.
#[derive(Debug, Clone, Default)]
pub(crate) struct EchoWatch {
    texts: Vec<Watched>,
}

impl EchoWatch {
    /// A watch over `texts` (the user messages of a request) for the copies a reply of `shape`
    /// must not make; a copy shorter than [`ECHO_SPAN`] is never an echo.
    pub(crate) fn new<'a>(texts: impl IntoIterator<Item = &'a str>, shape: ReplyShape) -> Self {
        let texts = texts
            .into_iter()
            .map(|text| Watched {
                starts: starts(text, shape),
                text: text.to_string(),
            })
            .filter(|watched| !watched.starts.is_empty())
            .collect();
        EchoWatch { texts }
    }

    /// Whether `reply` echoes one of the texts.
    pub(crate) fn echoed(&self, reply: &str) -> bool {
        self.echo_start(reply).is_some()
    }

    /// The first of `reply`'s line starts from which it echoes one of the texts.
    pub(crate) fn echo_start(&self, reply: &str) -> Option<usize> {
        line_starts(reply).find(|&from| {
            let rest = &reply.as_bytes()[from..];
            self.texts.iter().any(|watched| {
                watched.starts.iter().any(|start| {
                    common_prefix(rest, &watched.text.as_bytes()[start.at..]) >= start.span
                })
            })
        })
    }
}

/// Where in `text` a copy may start for a reply of `shape`, and how long it must run.
fn starts(text: &str, shape: ReplyShape) -> Vec<Start> {
    match shape {
        ReplyShape::Free => Vec::new(),
        ReplyShape::Files if text.len() >= ECHO_SPAN => vec![Start {
            at: 0,
            span: ECHO_SPAN,
        }],
        ReplyShape::Files => Vec::new(),
        ReplyShape::Prose => {
            let headings = headings(text);
            headings
                .windows(2)
                .map(|pair| Start {
                    at: pair[0],
                    // Through the next heading's marks and the space after them.
                    span: ECHO_SPAN.max(pair[1] - pair[0] + 3),
                })
                .filter(|start| start.at + start.span <= text.len())
                .collect()
        }
    }
}

/// The offsets of `text`'s heading lines (`#` to `######`, then a space) outside code fences.
fn headings(text: &str) -> Vec<usize> {
    let mut in_code = false;
    line_starts(text)
        .filter(|&at| {
            let line = text[at..].trim_start_matches(' ');
            if line.starts_with("```") || line.starts_with("~~~") {
                in_code = !in_code;
                return false;
            }
            let marks = line.bytes().take_while(|&b| b == b'#').count();
            !in_code && (1..=6).contains(&marks) && line[marks..].starts_with(' ')
        })
        .collect()
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
        let watch = EchoWatch::new([PROMPT], ReplyShape::Files);
        let reply = format!("```markdown\n{}", &PROMPT[..ECHO_SPAN + 10]);
        assert!(watch.echoed(&reply));
        // Until the copy is long enough, the reply goes on.
        let short = format!("```markdown\n{}", &PROMPT[..ECHO_SPAN - 10]);
        assert!(!watch.echoed(&short));
    }

    #[test]
    fn a_file_written_out_as_the_prompt_or_a_result_shows_it_is_no_echo() {
        let watch = EchoWatch::new([PROMPT, READ_RESULT], ReplyShape::Files);
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
        let watch = EchoWatch::new([PROMPT], ReplyShape::Files);
        let from = PROMPT.find("## Summary").unwrap();
        assert!(!watch.echoed(&PROMPT[from..]));
        let short = "# Story: x\n\n## Summary\ny\n";
        assert!(!EchoWatch::new([short], ReplyShape::Files).echoed(short));
        let answer = "inventory/money.py\n```python\ndef receipt_line(name, cents):\n    return f\"{name}: {format_price(cents)}\"\n```\nAdded `receipt_line` to inventory/money.py; it calls `format_price`.\n";
        assert!(!watch.echoed(answer));
    }

    /// `reply` up to where it starts to echo `prompt` for a reply of `shape`; all of it when it
    /// never does.
    fn before_echo<'a>(reply: &'a str, prompt: &str, shape: ReplyShape) -> &'a str {
        match EchoWatch::new([prompt], shape).echo_start(reply) {
            Some(at) => &reply[..at],
            None => reply,
        }
    }

    /// The research prompt of CI's textkit `mean-empty` (2026-12-06), shortened.
    const RESEARCH: &str = "# Story: mean of an empty list returns 0.0\n\nType: bug\n\n## Summary\nThe `mean` function in the `stats.py` module should return `0.0` for an empty list instead of raising a `ZeroDivisionError`.\n\n## Acceptance Criteria\n- [ ] `mean([])` returns `0.0`\n- [ ] `mean([1, 2, 3])` still returns `2`\n- [ ] a test in `test_stats.py` covers the empty list\n\n# Repository\n\n## pyproject.toml, the project's manifest\n```\n[project]\nname = \"textkit\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\naddopts = \"-p no:cacheprovider\"\n```\n\n## Top-level files\n- README.md\n- stats.py\n- test_stats.py\n\n## Task\nResearch this story. Report the relevant files and how they work today.\n";

    #[test]
    fn prose_that_copies_whole_sections_from_a_heading_on_is_an_echo() {
        let from = RESEARCH.find("## Summary").unwrap();
        let finding = "The `mean` function in `stats.py` divides by the length.\n\n";
        let reply = format!("{finding}{}", &RESEARCH[from..]);
        assert_eq!(before_echo(&reply, RESEARCH, ReplyShape::Prose), finding);
        // From its start, the copy is no echo of a file-writing agent's kind.
        assert_eq!(before_echo(&reply, RESEARCH, ReplyShape::Files), reply);
        assert_eq!(before_echo(&reply, RESEARCH, ReplyShape::Free), reply);
    }

    #[test]
    fn prose_that_quotes_one_section_or_a_file_is_no_echo() {
        let criteria = RESEARCH.find("## Acceptance Criteria").unwrap();
        let repository = RESEARCH.find("# Repository").unwrap();
        let one_section = format!(
            "The criteria:\n{}Nothing else.\n",
            &RESEARCH[criteria..repository]
        );
        assert_eq!(
            before_echo(&one_section, RESEARCH, ReplyShape::Prose),
            one_section
        );
        let manifest = RESEARCH.find("[project]").unwrap();
        let end = RESEARCH.find("## Top-level").unwrap();
        let quoted = format!("The manifest:\n```\n{}", &RESEARCH[manifest..end]);
        assert_eq!(before_echo(&quoted, RESEARCH, ReplyShape::Prose), quoted);
    }
}
