//! The nesting depth of frontmatter YAML, measured before a YAML parser sees it.
//!
//! A story file is untrusted input (an agent's command can write one). libyaml and serde take time
//! that grows faster than the input with its nesting (100,000 levels took 43 s), and nothing a
//! person writes by hand comes near 64 levels. So the frontmatter is scanned once, in linear
//! time, and anything deeper than [`MAX_DEPTH`] is a parse error on the line where it gets there.
//!
//! The scan knows enough YAML to count what nests: block collections by their indentation and
//! their `- ` and `key:` indicators, flow collections by their brackets. It skips what cannot
//! nest: quoted scalars, block scalars (`|`, `>`) and comments, so a `[[[[` inside a string is
//! text. Where it has to guess (a plain scalar continued over lines that looks like `key: value`),
//! it guesses deeper, never shallower: an odd file may be refused, a deep one never gets through.

/// The deepest nesting a story's frontmatter may have (docs/design.md §13).
pub const MAX_DEPTH: usize = 64;

/// The 0-based line where the frontmatter first nests deeper than [`MAX_DEPTH`], if it does.
pub fn too_deep(text: &str) -> Option<usize> {
    if clearly_shallow(text) {
        return None;
    }
    Scanner::default().first_too_deep(text)
}

/// A cheap upper bound: every bracket could open a level, and a line's block depth is at most two
/// levels (a mapping and a sequence) per column of indentation, plus the `- `/`? ` indicators it
/// starts with and a mapping after them. Story frontmatter nearly always passes this and skips
/// the exact scan; the bound reads only the start of each line, as loading a large board reads
/// every story's frontmatter.
fn clearly_shallow(text: &str) -> bool {
    let brackets = memchr::memchr2_iter(b'[', b'{', text.as_bytes()).count();
    if brackets >= MAX_DEPTH {
        return false;
    }
    super::lines::inclusive(text).all(|line| {
        let bytes = line.strip_suffix('\n').unwrap_or(line).as_bytes();
        let indent = bytes
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let mut at = indent;
        let mut indicators = 0;
        while is_indicator(bytes, at, b'-') || is_indicator(bytes, at, b'?') {
            indicators += 1;
            at += 1;
            at += bytes[at..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count();
        }
        // `<`, not `<=`: one more level for a mapping after the indicators (`- key: value`).
        brackets + 2 * (indent + 1) + indicators < MAX_DEPTH
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Mapping,
    Sequence,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Quote {
    Single,
    Double,
}

#[derive(Default)]
struct Scanner {
    /// Open block collections: the column their entries start at, and what they are.
    blocks: Vec<(usize, Kind)>,
    /// Open flow collections (`[`, `{`), which may span lines.
    flow: usize,
    /// A quoted scalar that continues on the next line.
    quote: Option<Quote>,
    /// Inside a block scalar: its content is the lines indented deeper than this column.
    block_scalar_above: Option<usize>,
}

impl Scanner {
    fn first_too_deep(mut self, text: &str) -> Option<usize> {
        for (index, line) in text.split('\n').enumerate() {
            let line = line.strip_suffix('\r').unwrap_or(line);
            if self.line_depth(line) > MAX_DEPTH {
                return Some(index);
            }
        }
        None
    }

    /// The deepest nesting reached on this line.
    fn line_depth(&mut self, line: &str) -> usize {
        let bytes = line.as_bytes();
        let indent = bytes.iter().take_while(|&&b| b == b' ').count();
        let blank = line.trim().is_empty();
        if let Some(column) = self.block_scalar_above {
            if blank || indent > column {
                return self.blocks.len();
            }
            self.block_scalar_above = None;
        }
        if self.quote.is_some() || self.flow > 0 {
            return self.scan_inline(bytes, 0, false);
        }
        if blank || bytes[indent] == b'#' {
            return self.blocks.len();
        }
        // Close the collections this line is no longer inside.
        while self
            .blocks
            .last()
            .is_some_and(|&(column, _)| column > indent)
        {
            self.blocks.pop();
        }
        let mut at = indent;
        let starts_item = is_indicator(bytes, at, b'-') || is_indicator(bytes, at, b'?');
        match self.blocks.last() {
            Some(&(column, kind)) if column == indent => match (kind, starts_item) {
                (Kind::Sequence, true) | (Kind::Mapping, false) => {}
                // `key:` followed by `- item` lines at the key's own column.
                (Kind::Mapping, true) => self.blocks.push((indent, Kind::Sequence)),
                // A key after such a sequence ends it.
                (Kind::Sequence, false) => {
                    self.blocks.pop();
                    if !self
                        .blocks
                        .last()
                        .is_some_and(|&(c, k)| c == indent && k == Kind::Mapping)
                    {
                        self.blocks.push((indent, Kind::Mapping));
                    }
                }
            },
            _ => self.blocks.push((
                indent,
                if starts_item {
                    Kind::Sequence
                } else {
                    Kind::Mapping
                },
            )),
        }
        // Compact nesting on one line: `- - item`, `- key: value`.
        if starts_item {
            at += 1;
            loop {
                at += bytes[at..].iter().take_while(|&&b| b == b' ').count();
                if is_indicator(bytes, at, b'-') || is_indicator(bytes, at, b'?') {
                    self.blocks.push((at, Kind::Sequence));
                    at += 1;
                } else {
                    break;
                }
            }
            if at < bytes.len() && key_end(bytes, at).is_some() {
                self.blocks.push((at, Kind::Mapping));
            }
        }
        let value_start = key_end(bytes, at).map_or(at, |end| end + 1);
        self.scan_inline(bytes, value_start, true)
    }

    /// Scans the rest of a line for flow brackets, quotes, comments and a block scalar indicator.
    /// `at_value` says the scan starts where a value starts (a quote or bracket there opens).
    fn scan_inline(&mut self, bytes: &[u8], from: usize, mut at_value: bool) -> usize {
        let key_column = self.blocks.last().map_or(0, |&(column, _)| column);
        let mut deepest = self.blocks.len() + self.flow;
        let mut i = from;
        while i < bytes.len() {
            let b = bytes[i];
            match self.quote {
                Some(Quote::Single) => {
                    if b == b'\'' {
                        if bytes.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            self.quote = None;
                        }
                    }
                    i += 1;
                    continue;
                }
                Some(Quote::Double) => {
                    match b {
                        b'\\' => i += 1,
                        b'"' => self.quote = None,
                        _ => {}
                    }
                    i += 1;
                    continue;
                }
                None => {}
            }
            let opens_here = at_value || self.flow > 0;
            match b {
                b' ' | b'\t' => {}
                b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => break,
                b'\'' if opens_here && starts_node(bytes, i) => self.quote = Some(Quote::Single),
                b'"' if opens_here && starts_node(bytes, i) => self.quote = Some(Quote::Double),
                b'[' | b'{' if opens_here => {
                    self.flow += 1;
                    deepest = deepest.max(self.blocks.len() + self.flow);
                }
                b']' | b'}' if self.flow > 0 => self.flow -= 1,
                b'|' | b'>' if at_value && self.flow == 0 => {
                    self.block_scalar_above = Some(key_column);
                    break;
                }
                _ => {
                    if self.flow == 0 {
                        // A plain scalar: nothing else on this line can open a collection.
                        at_value = false;
                    }
                }
            }
            if !matches!(b, b' ' | b'\t') && self.flow == 0 && self.quote.is_none() {
                at_value = false;
            }
            i += 1;
        }
        deepest
    }
}

/// Whether a quote at `i` starts a scalar (after a flow indicator or a space), rather than sitting
/// inside a plain one like `it's`.
fn starts_node(bytes: &[u8], i: usize) -> bool {
    i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'[' | b'{' | b',' | b':')
}

/// `-` or `?` followed by a space or the end of the line: a block indicator.
fn is_indicator(bytes: &[u8], at: usize, indicator: u8) -> bool {
    bytes.get(at) == Some(&indicator) && matches!(bytes.get(at + 1), None | Some(b' ' | b'\t'))
}

/// The index of the `:` that ends a block mapping key starting at `from`, if the line has one.
fn key_end(bytes: &[u8], from: usize) -> Option<usize> {
    match bytes.get(from)? {
        quote @ (b'"' | b'\'') => {
            let close = from + 1 + bytes[from + 1..].iter().position(|b| b == quote)?;
            (bytes.get(close + 1) == Some(&b':')
                && matches!(bytes.get(close + 2), None | Some(b' ' | b'\t')))
            .then_some(close + 1)
        }
        b'[' | b'{' | b'#' | b'|' | b'>' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' => None,
        _ => (from..bytes.len())
            .find(|&i| bytes[i] == b':' && matches!(bytes.get(i + 1), None | Some(b' ' | b'\t'))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_limit_hit(text: &str) -> Option<usize> {
        Scanner::default().first_too_deep(text)
    }

    /// Nested block mappings, `levels` deep.
    fn block_mappings(levels: usize) -> String {
        (0..levels)
            .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
            .collect::<String>()
            + &" ".repeat(levels)
            + "leaf: 1\n"
    }

    #[test]
    fn ordinary_frontmatter_is_shallow() {
        let text = "id: story-1\ntitle: \"Fix [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ bug\"\nlabels: [a, b]\nreview_history:\n- timestamp: '2026'\n  blockers: []\n  issues:\n  - severity: LOW\n    description: |\n      [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n  feedback: it's [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\nnote: plain [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ text # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n";
        assert_eq!(too_deep(text), None);
    }

    #[test]
    fn deep_flow_collections_are_found_on_their_line() {
        let ok = format!("id: a\nx: {}{}\n", "[".repeat(63), "]".repeat(63));
        assert_eq!(too_deep(&ok), None);
        let deep = format!("id: a\nx: {}{}\n", "[".repeat(64), "]".repeat(64));
        assert_eq!(too_deep(&deep), Some(1));
        let spread = format!("id: a\nx:\n{}\n", "{a:\n".repeat(70));
        assert_eq!(too_deep(&spread), Some(65));
    }

    #[test]
    fn deep_block_collections_are_found() {
        assert_eq!(depth_limit_hit(&block_mappings(63)), None);
        assert_eq!(depth_limit_hit(&block_mappings(64)), Some(64));
        assert_eq!(too_deep(&block_mappings(200)), Some(64));
        let compact = format!("x:\n{}item\n", "- ".repeat(80));
        assert_eq!(too_deep(&compact), Some(1));
        // `k0:`, `- k1:`, `  - k2:`, …: a sequence and a mapping per step of indentation.
        let mixed: String = std::iter::once("k0:\n".to_string())
            .chain((1..40).map(|i| format!("{}- k{i}:\n", " ".repeat(2 * (i - 1)))))
            .collect();
        assert_eq!(too_deep(&mixed), Some(32));
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config { cases: 512, failure_persistence: None, ..Default::default() })]

        /// The fast check never lets through what the exact scan refuses.
        #[test]
        fn the_cheap_bound_is_an_upper_bound(
            tokens in proptest::collection::vec(proptest::sample::select(&[
                "- ", "? ", "-", " ", "  ", "\t", "\n", "[", "]", "{", "}", "k: ", "k:", "'", "\"",
                "|", ">", "#", " #", ",", "x", "a: b",
            ][..]), 0..600)
        ) {
            let text = tokens.concat();
            if clearly_shallow(&text) {
                proptest::prop_assert_eq!(Scanner::default().first_too_deep(&text), None);
            }
        }
    }

    #[test]
    fn sequences_at_their_key_column_count_once() {
        let text = "a:\n- b\n- c\nd:\n- e:\n  - f\n  g: 1\nh: 2\n";
        let mut scanner = Scanner::default();
        let depths: Vec<usize> = text.lines().map(|l| scanner.line_depth(l)).collect();
        assert_eq!(depths, [1, 2, 2, 1, 3, 4, 3, 1]);
    }
}
