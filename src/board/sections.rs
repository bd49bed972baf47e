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

/// Splits Markdown into lines, recognising level-1 and level-2 headings outside ``` and ~~~
/// fences (a `## ` inside a code block is not a heading).
fn scan(text: &str) -> Vec<Line<'_>> {
    let mut fence: Option<&str> = None;
    let mut offset = 0;
    let mut lines = Vec::new();
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            _ => {}
        }
        let level = trimmed.chars().take_while(|&c| c == '#').count();
        let after = &trimmed[level..];
        let is_heading = fence.is_none()
            && marker.is_none()
            && (level == 1 || level == 2)
            && (after.starts_with(' ') || after.trim().is_empty());
        lines.push(Line {
            offset,
            text: line,
            heading_level: if is_heading { level } else { 0 },
            heading: if is_heading { after.trim() } else { "" },
        });
        offset += line.len();
    }
    lines
}

/// Finds every `## ` heading. A section runs until the next heading of level 1 or 2, so `###`
/// sub-headings stay inside their section.
fn headings(body: &str) -> Vec<Heading> {
    let mut found: Vec<Heading> = Vec::new();
    for line in scan(body).into_iter().filter(|l| l.heading_level > 0) {
        if let Some(last) = found.last_mut() {
            last.end = line.offset;
        }
        if line.heading_level == 2 {
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

/// Replaces a section's content (or adds the section at the end), keeping the rest byte for byte.
pub fn set(body: &str, name: &str, content: &str) -> String {
    let all = headings(body);
    let content = content.trim();
    let block = if content.is_empty() {
        String::new()
    } else {
        format!("{content}\n")
    };
    match find(&all, name) {
        Some(h) => {
            let next_heading = h.end < body.len();
            let separator = if next_heading && !block.is_empty() {
                "\n"
            } else {
                ""
            };
            format!(
                "{}{block}{separator}{}",
                &body[..h.content_start],
                &body[h.end..]
            )
        }
        None => {
            let mut out = body.to_string();
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            if !out.is_empty() && !out.ends_with("\n\n") {
                out.push('\n');
            }
            out.push_str(&format!("## {name}\n{block}"));
            out
        }
    }
}

/// Appends a block to the end of a section's content.
pub fn append(body: &str, name: &str, addition: &str) -> String {
    let existing = get(body, name).unwrap_or("");
    let combined = if existing.is_empty() {
        addition.trim().to_string()
    } else {
        format!("{existing}\n\n{}", addition.trim())
    };
    set(body, name, &combined)
}

/// Fits an agent's answer under a section: a leading heading that repeats the section's name is
/// dropped, and level-1/2 headings become `###`, so the answer cannot open sections of its own
/// (which would duplicate or shadow the story's).
pub fn nest(text: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut first_content_line = true;
    for line in scan(text.trim()) {
        let repeats_name = line.heading_level > 0 && line.heading.eq_ignore_ascii_case(name);
        if first_content_line && repeats_name {
            first_content_line = false;
            continue;
        }
        if !line.text.trim().is_empty() {
            first_content_line = false;
        }
        if line.heading_level > 0 {
            out.push_str(&format!("### {}\n", line.heading));
        } else {
            out.push_str(line.text);
        }
    }
    out.trim().to_string()
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

    #[test]
    fn template_has_every_section() {
        let body = template("T", Some("S"));
        for name in STANDARD_SECTIONS {
            assert!(get(&body, name).is_some(), "{name}");
        }
        assert_eq!(get(&body, "Summary"), Some("S"));
    }
}
