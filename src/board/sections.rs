//! `## Section` blocks of a story's Markdown body, edited without touching the rest.

/// The sections a new story is written with, in order.
pub const STANDARD_SECTIONS: [&str; 6] = [
    "Summary",
    "Acceptance Criteria",
    "Research",
    "Implementation Plan",
    "Implementation Notes",
    "Review Notes",
];

/// A level-2 heading found in the body: its name and the byte ranges of heading and content.
#[derive(Debug, Clone, PartialEq)]
struct Heading {
    name: String,
    start: usize,
    content_start: usize,
    end: usize,
}

/// One line of Markdown as the section logic sees it.
struct Line<'a> {
    offset: usize,
    text: &'a str,
    /// 1 or 2 for a `#`/`##` heading outside fenced code, else 0.
    heading_level: usize,
    /// The heading's text, trimmed.
    heading: &'a str,
}

/// A line that could open or close a fenced code block (CommonMark): up to three spaces, then at
/// least three backticks or tildes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fence {
    marker: u8,
    len: usize,
    /// Nothing but whitespace follows the marker, so the line can close a block.
    bare: bool,
    /// The line can open a block (a backtick fence's info string has no backticks).
    opens: bool,
}

fn fence_of(line: &str) -> Option<Fence> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let marker = *rest
        .as_bytes()
        .first()
        .filter(|b| matches!(b, b'`' | b'~'))?;
    let len = rest.bytes().take_while(|&b| b == marker).count();
    if len < 3 {
        return None;
    }
    let info = &rest[len..];
    Some(Fence {
        marker,
        len,
        bare: info.trim().is_empty(),
        opens: marker == b'~' || !info.contains('`'),
    })
}

impl Fence {
    /// A line (without its line break) that closes a block this fence opened.
    fn closing_line(&self) -> String {
        String::from_utf8(vec![self.marker; self.len]).expect("fence markers are ASCII")
    }

    fn closes(&self, open: &Fence) -> bool {
        self.bare && self.marker == open.marker && self.len >= open.len
    }
}

/// The level and text of an ATX heading (`# `/`## `, up to three spaces of indentation).
fn heading_of(line: &str) -> Option<(usize, &str)> {
    let indent = line.bytes().take_while(|&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.bytes().take_while(|&b| b == b'#').count();
    let after = &rest[level..];
    let is_heading = (1..=6).contains(&level)
        && (after.is_empty() || after.starts_with([' ', '\t', '\r', '\n']));
    is_heading.then(|| (level, after.trim()))
}

/// Splits Markdown into lines, recognising level-1 and level-2 headings outside ``` and ~~~
/// fences (a `## ` inside a code block is not a heading).
///
/// A fence that is never closed does not open a block here, although CommonMark would run it to
/// the end of the text. The headings are what keep a story's sections apart, and one stray fence
/// (an agent's unfinished answer, an older version's write, a slip of the hand) must not be able
/// to hide every section after it, or a later rewrite of its section would delete them. Whatever
/// the tool writes has its fences closed ([`contain`]), so both readings agree on it.
fn scan(text: &str) -> Vec<Line<'_>> {
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    let fences: Vec<Option<Fence>> = raw.iter().map(|line| fence_of(line)).collect();
    // The longest closing fence of each marker at or after each line, so that whether an
    // opener is ever closed is known in constant time (the scan stays linear).
    let mut longest_closer = vec![[0usize; 2]; raw.len() + 1];
    for i in (0..raw.len()).rev() {
        longest_closer[i] = longest_closer[i + 1];
        if let Some(fence) = fences[i].filter(|f| f.bare) {
            let slot = &mut longest_closer[i][usize::from(fence.marker == b'~')];
            *slot = (*slot).max(fence.len);
        }
    }
    let mut open: Option<Fence> = None;
    let mut offset = 0;
    let mut lines = Vec::with_capacity(raw.len());
    for (i, line) in raw.into_iter().enumerate() {
        let mut in_code = open.is_some();
        match (open, fences[i]) {
            (Some(opener), Some(fence)) if fence.closes(&opener) => open = None,
            (None, Some(fence))
                if fence.opens
                    && longest_closer[i + 1][usize::from(fence.marker == b'~')] >= fence.len =>
            {
                open = Some(fence);
                in_code = true;
            }
            _ => {}
        }
        let heading = heading_of(line)
            .filter(|&(level, _)| !in_code && level <= 2)
            .unwrap_or((0, ""));
        lines.push(Line {
            offset,
            text: line,
            heading_level: heading.0,
            heading: heading.1,
        });
        offset += line.len();
    }
    lines
}

/// Makes text safe to put inside a section: level-1 and level-2 headings outside code become
/// `###`, and a code fence left open is closed at the end. Fences are read the CommonMark way
/// here (an opener runs to its closer or the end), so text that a Markdown viewer would show as
/// code stays code. The result can neither end a section nor hide the headings after it.
pub fn contain(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut open: Option<Fence> = None;
    for line in text.split_inclusive('\n') {
        match (open, fence_of(line)) {
            (Some(opener), Some(fence)) if fence.closes(&opener) => open = None,
            (None, Some(fence)) if fence.opens => open = Some(fence),
            (None, _) => {
                if let Some((1 | 2, heading)) = heading_of(line) {
                    let ending = if line.ends_with('\n') { "\n" } else { "" };
                    out.push_str(&format!("### {heading}{ending}"));
                    continue;
                }
            }
            _ => {}
        }
        out.push_str(line);
    }
    if let Some(opener) = open {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&opener.closing_line());
    }
    out
}

/// Closes each fence a person left open at the end of its section (right before the next
/// heading), so that a Markdown viewer and the section finder agree on where sections are, and
/// a fence the tool writes later cannot pair with the stray one and hide the headings between.
/// Only fences that [`scan`] already ignores are closed, so no heading appears or vanishes.
fn close_stray_fences<'a>(body: &'a str, eol: &str) -> std::borrow::Cow<'a, str> {
    let mut open: Option<Fence> = None;
    let mut repaired: Option<String> = None;
    for line in scan(body) {
        if line.heading_level > 0 {
            if let Some(opener) = open.take() {
                let out = repaired.get_or_insert_with(|| body[..line.offset].to_string());
                if !out.ends_with('\n') {
                    out.push_str(eol);
                }
                out.push_str(&opener.closing_line());
                out.push_str(eol);
            }
        }
        match (open, fence_of(line.text)) {
            (Some(opener), Some(fence)) if fence.closes(&opener) => open = None,
            (None, Some(fence)) if fence.opens => open = Some(fence),
            _ => {}
        }
        if let Some(out) = repaired.as_mut() {
            out.push_str(line.text);
        }
    }
    match repaired {
        Some(text) => std::borrow::Cow::Owned(text),
        None => std::borrow::Cow::Borrowed(body),
    }
}

/// The fence still open at the end of `text`, read the CommonMark way.
fn fence_open_at_end(text: &str) -> Option<Fence> {
    let mut open: Option<Fence> = None;
    for line in text.split_inclusive('\n') {
        match (open, fence_of(line)) {
            (Some(opener), Some(fence)) if fence.closes(&opener) => open = None,
            (None, Some(fence)) if fence.opens => open = Some(fence),
            _ => {}
        }
    }
    open
}

/// Finds every `## ` heading. A section runs until the next heading of level 1 or 2, so `###`
/// sub-headings stay inside their section.
fn headings(body: &str) -> Vec<Heading> {
    let mut found: Vec<Heading> = Vec::new();
    // Whether the last section found still runs (a `# ` heading ends it as well).
    let mut open = false;
    for line in scan(body).into_iter().filter(|l| l.heading_level > 0) {
        if let Some(last) = found.last_mut().filter(|_| open) {
            last.end = line.offset;
        }
        open = line.heading_level == 2;
        if open {
            found.push(Heading {
                name: line.heading.to_string(),
                start: line.offset,
                content_start: line.offset + line.text.len(),
                end: body.len(),
            });
        }
    }
    found
}

fn find<'a>(all: &'a [Heading], name: &str) -> Option<&'a Heading> {
    all.iter().find(|h| h.name.eq_ignore_ascii_case(name))
}

/// The trimmed content of a section, `None` when the heading is absent.
pub fn get<'a>(body: &'a str, name: &str) -> Option<&'a str> {
    let all = headings(body);
    find(&all, name).map(|h| body[h.content_start..h.end].trim())
}

/// A body cut where its sections begin: the `# ` title line, the text a person wrote above the
/// first `## ` section, and the sections.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opening<'a> {
    /// The first line's text after `# `, when the body opens with one.
    pub title: Option<&'a str>,
    /// What comes between the title line and the first section, trimmed.
    pub text: &'a str,
    /// The body from its first `## ` heading on (empty without one).
    pub sections: &'a str,
}

/// The body's opening: what `non_empty` and `get` never see, as it is in no section.
pub fn opening(body: &str) -> Opening<'_> {
    let end = headings(body).first().map_or(body.len(), |h| h.start);
    let (before, sections) = body.split_at(end);
    let trimmed = before.trim_start();
    let (title, text) = match trimmed.strip_prefix("# ") {
        Some(after) => {
            let (line, rest) = after.split_once('\n').unwrap_or((after, ""));
            (Some(line.trim_end()), rest)
        }
        None => (None, trimmed),
    };
    Opening {
        title,
        text: text.trim(),
        sections,
    }
}

/// Every section with its trimmed content, in body order.
pub fn all(body: &str) -> Vec<(String, String)> {
    headings(body)
        .into_iter()
        .map(|h| (h.name, body[h.content_start..h.end].trim().to_string()))
        .collect()
}

/// Every section with non-empty content, in body order.
pub fn non_empty(body: &str) -> Vec<(String, String)> {
    all(body)
        .into_iter()
        .filter(|(_, content)| !content.is_empty())
        .collect()
}

/// The line ending a text uses: that of its first line, `\n` when it has none.
pub fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(at) if text[..at].ends_with('\r') => "\r\n",
        _ => "\n",
    }
}

/// `text` with every line ending made `eol`.
fn with_line_ending(text: &str, eol: &str) -> String {
    let unix = text.replace("\r\n", "\n");
    if eol == "\n" {
        unix
    } else {
        unix.replace('\n', eol)
    }
}

/// Replaces a section's content (or adds the section at the end), keeping the rest byte for byte.
/// The content is [`contain`]ed first, so it cannot open sections of its own or hide later ones.
pub fn set(body: &str, name: &str, content: &str) -> String {
    set_with_line_ending(body, name, content, line_ending(body))
}

/// [`set`], writing new lines with `eol` (the story file's own line ending).
pub fn set_with_line_ending(body: &str, name: &str, content: &str, eol: &str) -> String {
    let body = &close_stray_fences(body, eol);
    let all = headings(body);
    let content = with_line_ending(contain(content.trim()).trim_end(), eol);
    let block = if content.is_empty() {
        String::new()
    } else {
        format!("{content}{eol}")
    };
    match find(&all, name) {
        Some(h) => {
            let next_heading = h.end < body.len();
            let separator = if next_heading && !block.is_empty() {
                eol
            } else {
                ""
            };
            let mut head = body[..h.content_start].to_string();
            // A heading on the body's last line without a line break.
            if !head.ends_with('\n') && !block.is_empty() {
                head.push_str(eol);
            }
            format!("{head}{block}{separator}{}", &body[h.end..])
        }
        None => {
            let mut out = body.to_string();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push_str(eol);
            }
            // A fence a person left open at the end would swallow the new heading in a viewer.
            if let Some(opener) = fence_open_at_end(&out) {
                out.push_str(&opener.closing_line());
                out.push_str(eol);
            }
            if !out.is_empty() && !out.ends_with(&format!("{eol}{eol}")) {
                out.push_str(eol);
            }
            out.push_str(&format!("## {name}{eol}{block}"));
            out
        }
    }
}

/// Appends a block to the end of a section's content.
pub fn append(body: &str, name: &str, addition: &str) -> String {
    append_with_line_ending(body, name, addition, line_ending(body))
}

/// [`append`], writing new lines with `eol`.
pub fn append_with_line_ending(body: &str, name: &str, addition: &str, eol: &str) -> String {
    // The existing text's own open fence is closed first, so the addition is not read as code.
    let existing = contain(get(body, name).unwrap_or(""));
    let combined = if existing.trim().is_empty() {
        addition.trim().to_string()
    } else {
        format!("{}\n\n{}", existing.trim_end(), addition.trim())
    };
    set_with_line_ending(body, name, &combined, eol)
}

/// Fits an agent's answer under a section: a leading heading that repeats the section's name is
/// dropped, and level-1/2 headings become `###`, so the answer cannot open sections of its own
/// (which would duplicate or shadow the story's).
pub fn nest(text: &str, name: &str) -> String {
    let text = text.trim();
    let first = scan(text)
        .into_iter()
        .find(|line| !line.text.trim().is_empty());
    let rest = match first {
        Some(line) if line.heading_level > 0 && line.heading.eq_ignore_ascii_case(name) => {
            &text[line.offset + line.text.len()..]
        }
        _ => text,
    };
    contain(rest.trim()).trim().to_string()
}

/// `text` with each heading named one of `names` (any level, a colon or bold marks around the
/// name aside, outside code fences) made a level-2 `## <name>` heading: asked for
/// `## Summary` and `## Acceptance Criteria`, the 1.5B model answered with `### Summary` and
/// `### Acceptance Criteria`, twice, and a precise story was lost at refine (inventory
/// `format-price`, 2026-12-05).
///
/// An answer that put all of its named headings inside one Markdown code block (```` ```markdown ````)
/// is read from inside that block: kept as it was, the whole block went into the summary, and the
/// story's file showed `## Summary` and `## Acceptance Criteria` twice (CI's textkit
/// `mean-empty`, 2026-12-06).
///
/// A name with no heading of its own may stand as a label on a line of its own
/// (`Acceptance criteria:` or `**Acceptance criteria**`), and the label becomes its heading: the
/// 1.5B model copied a story's "Acceptance criteria:" line and list as they were, twice, and
/// refine was refused for lacking the section (a drive, 2026-12-07).
pub fn leveled(text: &str, names: &[&str]) -> String {
    let text = unwrapped(text, names);
    let mut in_code = false;
    let mut headed: Vec<&str> = Vec::new();
    for line in text.split_inclusive('\n') {
        if fence_of(line).is_some() {
            in_code = !in_code;
        }
        if let Some((_, name)) = named_heading(line, names).filter(|_| !in_code) {
            headed.push(name);
        }
    }
    let unheaded: Vec<&str> = names
        .iter()
        .copied()
        .filter(|name| !headed.contains(name))
        .collect();
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for line in text.split_inclusive('\n') {
        if fence_of(line).is_some() {
            in_code = !in_code;
        }
        let labelled = label_of(line, &unheaded).map(|name| (0, name));
        let heading = named_heading(line, names).or(labelled);
        match heading.filter(|&(level, _)| level != 2 && !in_code) {
            Some((_, wanted)) => {
                let eol = &line[line.trim_end_matches(['\r', '\n']).len()..];
                out.push_str(&format!("## {wanted}{eol}"));
            }
            None => out.push_str(line),
        }
    }
    out
}

/// Which of `names` `line` is as a label: the name alone on its line, ending with a colon or
/// set in bold (`Acceptance criteria:`, `**Acceptance Criteria**`).
fn label_of<'n>(line: &str, names: &[&'n str]) -> Option<&'n str> {
    let line = line.trim();
    let marked = line.ends_with(':') || (line.starts_with("**") && line.ends_with("**"));
    let name = line.trim_matches(|c: char| c == '*' || c == ':' || c.is_whitespace());
    let wanted = names
        .iter()
        .find(|wanted| wanted.eq_ignore_ascii_case(name))?;
    marked.then_some(*wanted)
}

/// The level of `line`'s heading and which of `names` it is, if it is one of them.
fn named_heading<'n>(line: &str, names: &[&'n str]) -> Option<(usize, &'n str)> {
    let (level, heading) = heading_of(line)?;
    let name = heading.trim_matches(|c: char| c == '*' || c == ':' || c.is_whitespace());
    let wanted = names
        .iter()
        .find(|wanted| wanted.eq_ignore_ascii_case(name))?;
    Some((level, wanted))
}

/// The inside of the first Markdown code block (no info string, `markdown` or `md`) that holds a
/// heading named one of `names`, when no such heading stands outside code; else `text`.
fn unwrapped<'a>(text: &'a str, names: &[&str]) -> &'a str {
    let mut open: Option<(Fence, usize, bool)> = None;
    let mut inside = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let next = offset + line.len();
        match (open, fence_of(line)) {
            (Some((opener, start, markdown)), Some(fence)) if fence.closes(&opener) => {
                open = None;
                let block = &text[start..offset];
                let named = block.lines().any(|l| named_heading(l, names).is_some());
                if markdown && named && inside.is_none() {
                    inside = Some(block);
                }
            }
            (None, Some(fence)) if fence.opens => {
                let info = line.trim().trim_start_matches(['`', '~']).trim();
                let markdown = ["", "markdown", "md"].contains(&info.to_ascii_lowercase().as_str());
                open = Some((fence, next, markdown));
            }
            (None, _) if named_heading(line, names).is_some() => return text,
            _ => {}
        }
        offset = next;
    }
    // A block the answer never closed (cut off by the cap) runs to the end.
    if let Some((_, start, true)) = open {
        let block = &text[start..];
        if inside.is_none() && block.lines().any(|l| named_heading(l, names).is_some()) {
            inside = Some(block);
        }
    }
    inside.unwrap_or(text)
}

/// The body of a new story: a title heading and the standard sections, empty.
pub fn template(title: &str, summary: Option<&str>) -> String {
    let mut body = format!("# {title}\n\n");
    for name in STANDARD_SECTIONS {
        body.push_str(&format!("## {name}\n"));
        if name == "Summary" {
            if let Some(summary) = summary.map(str::trim).filter(|s| !s.is_empty()) {
                body.push_str(summary);
                body.push('\n');
            }
        }
        body.push('\n');
    }
    body.truncate(body.trim_end().len());
    body.push('\n');
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_headings_of_any_level_become_sections() {
        // Recorded (Qwen2.5-Coder-1.5B, inventory `format-price` refine, 2026-12-05).
        let answer = "### Summary\nAdd `format_price(cents)`.\n\n### Acceptance Criteria:\n- [ ] `format_price(5)` returns `\"$0.05\"`\n#### Notes\n```md\n# Summary\n```\n";
        assert_eq!(
            leveled(answer, &["Summary", "Acceptance Criteria"]),
            "## Summary\nAdd `format_price(cents)`.\n\n## Acceptance Criteria\n- [ ] `format_price(5)` returns `\"$0.05\"`\n#### Notes\n```md\n# Summary\n```\n"
        );
        assert_eq!(get(&leveled(answer, &["Summary"]), "Summary"), Some("Add `format_price(cents)`.\n\n### Acceptance Criteria:\n- [ ] `format_price(5)` returns `\"$0.05\"`\n#### Notes\n```md\n# Summary\n```"));
    }

    #[test]
    fn a_section_given_as_a_label_line_becomes_its_heading() {
        let names = ["Summary", "Acceptance Criteria"];
        // Recorded (Qwen2.5-Coder-1.5B, a drive's refine, 2026-12-07), shortened.
        let answer = "## Summary\nAdd `average_rating(ratings)` to `shelf/books.py`.\n\nAcceptance criteria:\n- `average_rating([4, 5])` returns `4.5`\n- `average_rating([])` returns `0.0`\n";
        let out = leveled(answer, &names);
        assert_eq!(
            get(&out, "Acceptance Criteria"),
            Some("- `average_rating([4, 5])` returns `4.5`\n- `average_rating([])` returns `0.0`")
        );
        assert_eq!(
            get(&out, "Summary"),
            Some("Add `average_rating(ratings)` to `shelf/books.py`.")
        );
        let bold = answer.replace("Acceptance criteria:", "**Acceptance Criteria**");
        assert!(get(&leveled(&bold, &names), "Acceptance Criteria").is_some());
        // A heading of its own wins, and words that only begin with the name stay words.
        let headed = format!("{answer}\n## Acceptance Criteria\n- [ ] x\n");
        assert_eq!(leveled(&headed, &names), headed);
        let words = "## Summary\nAcceptance criteria are below.\n";
        assert_eq!(leveled(words, &names), words);
    }

    #[test]
    fn sections_wrapped_in_a_markdown_block_are_read_from_inside_it() {
        let names = ["Summary", "Acceptance Criteria"];
        let wrapped = "Here is the refined story:\n\n```markdown\n## Summary\nMean of a list.\n\n### Acceptance Criteria\n- [ ] `mean([])` returns `0`\n```\n";
        let out = leveled(wrapped, &names);
        assert_eq!(
            out,
            "## Summary\nMean of a list.\n\n## Acceptance Criteria\n- [ ] `mean([])` returns `0`\n"
        );
        assert_eq!(get(&out, "Summary"), Some("Mean of a list."));
        // Cut off before its closing fence.
        let cut = "```md\n## Summary\nMean.\n## Acceptance Criteria\n- [ ] x\n";
        assert_eq!(
            get(&leveled(cut, &names), "Acceptance Criteria"),
            Some("- [ ] x")
        );
        // A heading outside code wins: the block is an example inside the answer.
        let example = "## Summary\nS.\n```md\n## Summary\n```\n";
        assert_eq!(leveled(example, &names), example);
        // Code in another language is code.
        let python = "```python\n# Summary\nx = 1\n```\n";
        assert_eq!(leveled(python, &names), python);
    }

    const BODY: &str = "# Title\n\n## Summary\nHello.\n\n## Research\n```\n## not a heading\n```\n### Sub\ntext\n\n## Review Notes\n";

    #[test]
    fn reads_sections_around_fences_and_subheadings() {
        assert_eq!(get(BODY, "summary"), Some("Hello."));
        assert_eq!(
            get(BODY, "Research"),
            Some("```\n## not a heading\n```\n### Sub\ntext")
        );
        assert_eq!(get(BODY, "Review Notes"), Some(""));
        assert_eq!(get(BODY, "Missing"), None);
    }

    #[test]
    fn set_replaces_only_that_section() {
        let out = set(BODY, "Summary", "New summary.");
        assert_eq!(out, BODY.replace("Hello.", "New summary."));
        let twice = set(&out, "Summary", "New summary.");
        assert_eq!(twice, out, "setting the same content is idempotent");
    }

    #[test]
    fn set_last_and_missing_sections() {
        let out = set(BODY, "Review Notes", "All good.");
        assert!(out.ends_with("## Review Notes\nAll good.\n"));
        let added = set(BODY, "Implementation Plan", "1. Do it");
        assert!(added.starts_with(BODY));
        assert!(added.ends_with("\n## Implementation Plan\n1. Do it\n"));
    }

    #[test]
    fn append_adds_after_existing_content() {
        let out = append(BODY, "Summary", "More.");
        assert_eq!(get(&out, "Summary"), Some("Hello.\n\nMore."));
    }

    #[test]
    fn nest_keeps_answers_inside_their_section() {
        assert_eq!(
            nest("## Research\nFound it.\n## Risks\nNone.", "Research"),
            "Found it.\n### Risks\nNone."
        );
        assert_eq!(nest("```\n## kept\n```", "Research"), "```\n## kept\n```");
        let body = set(BODY, "Research", &nest("## Research\nNew.", "Research"));
        assert_eq!(get(&body, "Research"), Some("New."));
        assert_eq!(
            non_empty(&body)
                .iter()
                .filter(|(n, _)| n == "Research")
                .count(),
            1
        );
    }

    /// Every section name in order.
    fn names(body: &str) -> Vec<String> {
        all(body).into_iter().map(|(name, _)| name).collect()
    }

    #[test]
    fn fences_follow_commonmark_lengths_and_markers() {
        let body =
            "## A\n````md\n```\n## not a heading\n```\n````\n~~~\n## nor this\n```\n~~~\n## B\n";
        assert_eq!(names(body), ["A", "B"]);
        let indented = "## A\n    ```\n## B\n    ```\n";
        assert_eq!(
            names(indented),
            ["A", "B"],
            "four spaces make code, not a fence"
        );
        assert_eq!(names("## A\n    ## not a heading\n   ## B\n"), ["A", "B"]);
    }

    #[test]
    fn an_unclosed_fence_hides_nothing_and_a_rewrite_deletes_nothing() {
        // What an older version wrote for research output that ended inside a code block.
        let body = "# T\n\n## Research\n```rust\nfn half(\n\n## Implementation Plan\n1. Plan\n\n## My Notes\nhand written\n";
        assert_eq!(names(body), ["Research", "Implementation Plan", "My Notes"]);
        let rewritten = set(body, "Research", "Fresh findings.");
        assert_eq!(get(&rewritten, "Implementation Plan"), Some("1. Plan"));
        assert_eq!(get(&rewritten, "My Notes"), Some("hand written"));
        assert_eq!(get(&rewritten, "Research"), Some("Fresh findings."));
    }

    #[test]
    fn written_text_has_its_fences_closed_and_its_headings_nested() {
        let body = template("T", None) + "\n## My Notes\nkeep\n```\ncode\n```\n";
        let plan = "```rust\nfn main() {\n## Implementation Notes\n# Title";
        let out = set(&body, "Implementation Plan", plan);
        assert_eq!(
            get(&out, "Implementation Plan"),
            Some("```rust\nfn main() {\n## Implementation Notes\n# Title\n```")
        );
        let out = set(&out, "Implementation Notes", "Done.");
        assert_eq!(names(&out), names(&body), "no section appeared or vanished");
        assert_eq!(get(&out, "Implementation Notes"), Some("Done."));
        assert_eq!(get(&out, "My Notes"), Some("keep\n```\ncode\n```"));
        let feedback = "Looks fine\n## Summary\nhijacked\n~~~~\nopen";
        let out = append(&out, "Review Notes", feedback);
        assert_eq!(names(&out), names(&body));
        assert_eq!(get(&out, "Summary"), Some(""));
        assert!(get(&out, "Review Notes").unwrap().contains("### Summary"));
    }

    #[test]
    fn a_new_section_after_a_fence_left_open_stays_a_heading() {
        let body = "## Notes\n```\nunfinished\n";
        let out = set(body, "Research", "Found.");
        assert_eq!(
            out,
            "## Notes\n```\nunfinished\n```\n\n## Research\nFound.\n"
        );
    }

    #[test]
    fn a_fence_a_person_left_open_cannot_pair_with_one_the_tool_writes() {
        // Found by the fuzz test: the stray fence in Summary used to pair with the fence written
        // into Research and hide Acceptance Criteria.
        let body = template("T", Some("```\nhalf a code block"));
        let out = set(&body, "Research", "```\ncode\n```");
        assert_eq!(names(&out), names(&body));
        assert_eq!(get(&out, "Summary"), Some("```\nhalf a code block\n\n```"));
        assert_eq!(get(&out, "Research"), Some("```\ncode\n```"));
    }

    #[test]
    fn a_level_one_heading_ends_a_section() {
        let body = "## Summary\nS.\n# Part two\nloose text\n## Research\nR.\n";
        assert_eq!(get(body, "Summary"), Some("S."));
        let out = set(body, "Summary", "New.");
        assert_eq!(out, body.replace("S.\n", "New.\n\n"));
    }

    #[test]
    fn crlf_bodies_get_crlf_lines() {
        let body = "## Summary\r\nHello.\r\n\r\n## Review Notes\r\n";
        let out = set(body, "Summary", "New\nlines\r\nmixed");
        assert_eq!(
            out,
            "## Summary\r\nNew\r\nlines\r\nmixed\r\n\r\n## Review Notes\r\n"
        );
        let out = append(&out, "Review Notes", "One\nTwo");
        let out = set(&out, "Research", "```\nx");
        assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
    }

    #[test]
    fn template_has_every_section() {
        let body = template("T", Some("S"));
        for name in STANDARD_SECTIONS {
            assert!(get(&body, name).is_some(), "{name}");
        }
        assert_eq!(get(&body, "Summary"), Some("S"));
    }

    #[test]
    fn the_opening_is_what_stands_above_the_first_section() {
        let body = "# Round prices\n\nPrices like `1.005`.\n\n```\n## not a section\n```\n## Summary\nWhy.\n";
        let opening = opening(body);
        assert_eq!(opening.title, Some("Round prices"));
        assert_eq!(
            opening.text,
            "Prices like `1.005`.\n\n```\n## not a section\n```"
        );
        assert_eq!(opening.sections, "## Summary\nWhy.\n");
        let bare = super::opening("Just text");
        assert_eq!(
            (bare.title, bare.text, bare.sections),
            (None, "Just text", "")
        );
        assert_eq!(super::opening(&template("T", Some("S"))).text, "");
    }
}
