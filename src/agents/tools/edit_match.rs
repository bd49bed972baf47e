//! Finding where an edit goes when the model's search text is not quite the file's.
//!
//! Small models copy code with the wrong indentation, collapse or add spaces, or drop a blank
//! line. As aider does with its SEARCH/REPLACE blocks, an edit is matched exactly first, then
//! again ignoring whitespace differences, and when that fails too, the model is shown the lines
//! of the file that come closest, so its next try can copy them.

use strsim::normalized_levenshtein;

/// Where and how an edit applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Applied {
    pub(super) text: String,
    /// `Some` when whitespace was ignored to find the text: the 1-based lines it matched.
    pub(super) loose_lines: Option<(usize, usize)>,
}

/// Why an edit found no single place to go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Miss {
    /// Not found, not even ignoring whitespace: the closest lines, quoted with their numbers.
    NotFound { closest: Option<String> },
    /// Found at several places; the 1-based first lines of each.
    Ambiguous { lines: Vec<usize> },
}

/// Windows the closest-lines search compares at most; a huge file is searched by the first
/// line of the old text only.
const CLOSEST_BUDGET: usize = 200_000;
/// Lines of context quoted around the closest match.
const CLOSEST_CONTEXT: usize = 1;
/// Below this similarity the "closest" lines have nothing to do with the old text.
const CLOSEST_FLOOR: f64 = 0.3;

/// Replaces the one occurrence of `old` in `text` with `new`: exactly, or else ignoring
/// whitespace differences. `old` must not be empty.
pub(super) fn apply(text: &str, old: &str, new: &str) -> Result<Applied, Miss> {
    match exact_starts(text, old).as_slice() {
        [_] => {
            return Ok(Applied {
                text: text.replacen(old, new, 1),
                loose_lines: None,
            })
        }
        [] => {}
        many => {
            return Err(Miss::Ambiguous {
                lines: many.iter().map(|at| line_of(text, *at)).collect(),
            })
        }
    }
    if let Some(applied) = by_lines(text, old, new)? {
        return Ok(applied);
    }
    if let Some(applied) = by_characters(text, old, new)? {
        return Ok(applied);
    }
    Err(Miss::NotFound {
        closest: closest_lines(text, old),
    })
}

/// Byte offsets of every occurrence, overlapping ones included: `aa` in `aaa` is ambiguous.
fn exact_starts(text: &str, needle: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let at = from + found;
        starts.push(at);
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    starts
}

/// The 1-based line a byte offset is on.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// A line with its whitespace runs collapsed and its ends trimmed.
fn normalized(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Whole lines, compared with whitespace collapsed and blank lines skipped; the new text is
/// re-indented by the difference between the model's indentation and the file's.
fn by_lines(text: &str, old: &str, new: &str) -> Result<Option<Applied>, Miss> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let wanted: Vec<(String, &str)> = old
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| (normalized(line), line))
        .collect();
    if wanted.is_empty() {
        return Ok(None);
    }
    let present: Vec<(usize, String)> = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| (index, normalized(line)))
        .collect();
    let spans: Vec<(usize, usize)> = present
        .windows(wanted.len())
        .filter(|window| {
            window
                .iter()
                .zip(&wanted)
                .all(|(have, want)| have.1 == want.0)
        })
        .map(|window| (window[0].0, window[window.len() - 1].0))
        .collect();
    let (first, last) = match spans.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        many => {
            return Err(Miss::Ambiguous {
                lines: many.iter().map(|(first, _)| first + 1).collect(),
            })
        }
    };
    let replacement = reindent(new, indentation(wanted[0].1), indentation(lines[first]));
    let mut out = String::with_capacity(text.len() + new.len());
    lines[..first].iter().for_each(|line| out.push_str(line));
    out.push_str(&replacement);
    let block_ended_line = lines[last].ends_with('\n');
    if block_ended_line && !replacement.is_empty() && !replacement.ends_with('\n') {
        out.push('\n');
    }
    lines[last + 1..].iter().for_each(|line| out.push_str(line));
    Ok(Some(Applied {
        text: out,
        loose_lines: Some((first + 1, last + 1)),
    }))
}

/// Moves `new` from the model's indentation to the file's: what the model put in front of its
/// first line is swapped for what the file has there, on every line that starts with it.
fn reindent(new: &str, model: &str, file: &str) -> String {
    if model == file {
        return new.to_string();
    }
    new.split_inclusive('\n')
        .map(|line| {
            if line.trim().is_empty() {
                line.to_string()
            } else if let Some(rest) = line.strip_prefix(model) {
                format!("{file}{rest}")
            } else {
                line.to_string()
            }
        })
        .collect()
}

/// Within lines: the text with all whitespace removed is searched for the old text with all
/// whitespace removed, and the span it covers in the file is replaced.
fn by_characters(text: &str, old: &str, new: &str) -> Result<Option<Applied>, Miss> {
    let needle: String = old.chars().filter(|c| !c.is_whitespace()).collect();
    if needle.is_empty() {
        return Ok(None);
    }
    // The file without whitespace, and where each of its characters sits in the file.
    let mut dense = String::with_capacity(text.len());
    let mut origin: Vec<usize> = Vec::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        if !c.is_whitespace() {
            origin.extend(std::iter::repeat_n(at, c.len_utf8()));
            dense.push(c);
        }
    }
    let starts = exact_starts(&dense, &needle);
    let start = match starts.as_slice() {
        [] => return Ok(None),
        [one] => *one,
        many => {
            return Err(Miss::Ambiguous {
                lines: many.iter().map(|at| line_of(text, origin[*at])).collect(),
            })
        }
    };
    let last_byte = origin[start + needle.len() - 1];
    let from = origin[start];
    let to = last_byte + text[last_byte..].chars().next().map_or(1, char::len_utf8);
    // The model's leading and trailing whitespace framed its old text, not the file's.
    let lead = &old[..old.len() - old.trim_start().len()];
    let trail = &old[old.trim_end().len()..];
    let body = new.strip_prefix(lead).unwrap_or(new);
    let body = body.strip_suffix(trail).unwrap_or(body);
    let mut out = String::with_capacity(text.len() + new.len());
    out.push_str(&text[..from]);
    out.push_str(body);
    out.push_str(&text[to..]);
    Ok(Some(Applied {
        text: out,
        loose_lines: Some((line_of(text, from), line_of(text, last_byte))),
    }))
}

/// The lines of `text` most like `old`, numbered, with a line of context; `None` when nothing
/// comes near.
pub(super) fn closest_lines(text: &str, old: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut wanted: Vec<String> = old
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(normalized)
        .collect();
    if lines.is_empty() || wanted.is_empty() {
        return None;
    }
    if lines.len().saturating_mul(wanted.len()) > CLOSEST_BUDGET {
        wanted.truncate(1);
    }
    let normalized_lines: Vec<String> = lines.iter().map(|line| normalized(line)).collect();
    let span = wanted.len().min(lines.len());
    let (best_start, best_score) = (0..=lines.len() - span)
        .map(|start| {
            let score: f64 = wanted
                .iter()
                .zip(&normalized_lines[start..start + span])
                .map(|(want, have)| normalized_levenshtein(want, have))
                .sum::<f64>()
                / span as f64;
            (start, score)
        })
        .fold(
            (0, f64::MIN),
            |best, next| {
                if next.1 > best.1 {
                    next
                } else {
                    best
                }
            },
        );
    if best_score < CLOSEST_FLOOR {
        return None;
    }
    let from = best_start.saturating_sub(CLOSEST_CONTEXT);
    let to = (best_start + span + CLOSEST_CONTEXT).min(lines.len());
    let width = to.to_string().len();
    Some(
        lines[from..to]
            .iter()
            .enumerate()
            .map(|(offset, line)| {
                let number = from + offset + 1;
                if line.is_empty() {
                    format!("{number:>width$}|")
                } else {
                    format!("{number:>width$}| {line}")
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "\"\"\"Small statistics helpers.\"\"\"\n\n\ndef mean(values):\n    return sum(values) / len(values)\n\n\ndef median(values):\n    ordered = sorted(values)\n    mid = len(ordered) // 2\n    if len(ordered) % 2:\n        return ordered[mid]\n    return (ordered[mid - 1] + ordered[mid]) / 2\n";

    #[test]
    fn an_exact_match_is_replaced_as_it_is() {
        let applied = apply(STATS, "return sum(values) / len(values)", "return 0.0").unwrap();
        assert_eq!(applied.loose_lines, None);
        assert!(applied.text.contains("    return 0.0\n"));
    }

    #[test]
    fn a_block_copied_with_a_shifted_indentation_is_matched_and_the_new_text_shifted_back() {
        // Copied two spaces to the right of the file, as small models do.
        let old = "  def median(values):\n      ordered = sorted(values)";
        let new = "  def median(values):\n      if not values:\n          return None\n      ordered = sorted(values)";
        let applied = apply(STATS, old, new).unwrap();
        assert_eq!(applied.loose_lines, Some((8, 9)));
        assert!(
            applied.text.contains(
                "def median(values):\n    if not values:\n        return None\n    ordered = sorted(values)\n    mid"
            ),
            "{}",
            applied.text
        );
    }

    #[test]
    fn collapsed_spaces_and_missing_blank_lines_are_matched() {
        let old = "def mean(values):\n    return sum(values)/len(values)\ndef median(values):";
        let new = "def mean(values):\n    return sum(values) / max(len(values), 1)\n\n\ndef median(values):";
        let applied = apply(STATS, old, new).unwrap();
        assert!(applied.loose_lines.is_some());
        assert!(applied.text.contains(
            "    return sum(values) / max(len(values), 1)\n\n\ndef median(values):\n    ordered"
        ));
        assert_eq!(applied.text.matches("def median").count(), 1);
    }

    #[test]
    fn part_of_a_line_is_matched_ignoring_spaces() {
        let applied = apply(
            STATS,
            "sum(values)/len( values )",
            "sum(values) / (len(values) or 1)",
        )
        .unwrap();
        assert_eq!(applied.loose_lines, Some((5, 5)));
        assert!(
            applied
                .text
                .contains("    return sum(values) / (len(values) or 1)\n"),
            "{}",
            applied.text
        );
    }

    #[test]
    fn several_places_are_ambiguous_and_named_by_line() {
        let text = "a = 1\nb = 2\na  =  1\n";
        assert_eq!(
            apply(text, "a = 1 ", "c"),
            Err(Miss::Ambiguous { lines: vec![1, 3] })
        );
        assert_eq!(
            apply("x x\n", "x", "y"),
            Err(Miss::Ambiguous { lines: vec![1, 1] })
        );
    }

    #[test]
    fn a_miss_quotes_the_closest_lines_with_their_numbers() {
        let old = "def mean(self, values):\n    return sum(self.values) / len(self.values)";
        let Err(Miss::NotFound { closest }) = apply(STATS, old, "x") else {
            panic!("should miss");
        };
        assert_eq!(
            closest.as_deref(),
            Some("3|\n4| def mean(values):\n5|     return sum(values) / len(values)\n6|")
        );
        let Err(Miss::NotFound { closest }) = apply(STATS, "zzzz qqqq wwww", "x") else {
            panic!("should miss");
        };
        assert_eq!(closest, None, "nothing alike is quoted");
    }
}
