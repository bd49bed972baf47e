//! Frontmatter values simple enough to read without a YAML parser.
//!
//! Loading a board reads about fifteen keys of every story, and starting serde_norway (libyaml)
//! for each of them costs far more than the value is worth: on a board of 10,000 stories it was
//! most of `status`. Nearly all of those values are a one-line plain scalar (`priority: 10`,
//! `status: ready`, `research_complete: true`) or a block list of them (`depends_on:` then
//! `- story-…` lines). This module recognises exactly those shapes and hands them to serde
//! resolved the way YAML 1.2 (serde_norway) resolves them. Anything it is not certain about —
//! quotes, comments, flow collections other than `[]`, numbers other than plain decimals, a type
//! the caller did not expect — is declined, and the caller parses the entry with serde_norway as
//! before. So the fast path can only agree with the slow one, never differ from it.

use serde::de::{self, DeserializeSeed, Deserializer, SeqAccess, Visitor};

/// A value read without YAML, or `None` when the entry needs the real parser. `first` is the
/// text after `key:` on the entry's first line; `rest` is the entry's continuation lines.
pub(super) fn read<'a>(first: &'a str, rest: &'a str) -> Option<Simple<'a>> {
    let value = yaml_trim(first);
    if value.is_empty() {
        return block_list(rest).map(Simple::List);
    }
    if rest.lines().any(|l| !yaml_trim(l).is_empty()) {
        // A plain scalar folded over several lines, or a value followed by something odd.
        return None;
    }
    if value == "[]" {
        return Some(Simple::List(Vec::new()));
    }
    scalar(value).map(Simple::Scalar)
}

/// `- item` lines at one indentation, each item a simple scalar.
fn block_list(rest: &str) -> Option<Vec<Scalar<'_>>> {
    let mut items = Vec::new();
    let mut indent = None;
    for line in rest.lines() {
        if yaml_trim(line).is_empty() {
            continue;
        }
        let stripped = line.trim_start_matches(' ');
        let depth = line.len() - stripped.len();
        // YAML indents with spaces only; a tab is an error the parser should report.
        if *indent.get_or_insert(depth) != depth {
            return None;
        }
        let item = stripped.strip_prefix("- ")?;
        items.push(scalar(yaml_trim(item))?);
    }
    // `key:` with nothing after it is null, which the caller has already handled.
    (!items.is_empty()).then_some(items)
}

/// Trims what YAML counts as white space around a value: spaces and tabs (and the line break).
/// `str::trim` would also take Unicode spaces such as U+2000, which YAML keeps.
pub(super) fn yaml_trim(text: &str) -> &str {
    text.trim_matches([' ', '\t', '\r', '\n'])
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Scalar<'a> {
    Bool(bool),
    Unsigned(u64),
    Negative(i64),
    Str(&'a str),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Simple<'a> {
    Scalar(Scalar<'a>),
    List(Vec<Scalar<'a>>),
}

/// A trimmed, one-line plain scalar whose YAML meaning is certain.
fn scalar(value: &str) -> Option<Scalar<'_>> {
    match value {
        "" => return None,
        "true" | "True" | "TRUE" => return Some(Scalar::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Scalar::Bool(false)),
        // Null in any spelling is left to the parser (the caller handles the common ones).
        "null" | "Null" | "NULL" | "~" => return None,
        _ => {}
    }
    let bytes = value.as_bytes();
    let (negative, digits) = match value.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, value),
    };
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        // YAML 1.2 reads `007` as a string and `-0` as an integer; leave both to the parser.
        if digits.len() > 1 && digits.starts_with('0') || negative && digits == "0" {
            return None;
        }
        return if negative {
            value.parse().ok().map(Scalar::Negative)
        } else {
            value.parse().ok().map(Scalar::Unsigned)
        };
    }
    // A string must start with a letter: then it is never a number, bool, null, alias, tag,
    // anchor, quote, flow collection or block indicator. Inside it, `: ` would start a mapping
    // and ` #` a comment, and a trailing `:` makes it a key.
    let plain = bytes[0].is_ascii_alphabetic()
        && !value.contains(": ")
        && !value.contains(":\t")
        && !value.contains(" #")
        && !value.contains("\t#")
        && !value.ends_with(':');
    plain.then_some(Scalar::Str(value))
}

/// Declines the value; the caller falls back to serde_norway, whose result and error stand.
#[derive(Debug)]
pub(super) struct Declined;

impl std::fmt::Display for Declined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a simple value")
    }
}

impl std::error::Error for Declined {}

impl de::Error for Declined {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Declined
    }
}

impl<'de> Deserializer<'de> for Scalar<'_> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self {
            Scalar::Bool(b) => visitor.visit_bool(b),
            Scalar::Unsigned(n) => visitor.visit_u64(n),
            Scalar::Negative(n) => visitor.visit_i64(n),
            Scalar::Str(s) => visitor.visit_str(s),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        // Never null: null is declined before it gets here.
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> Deserializer<'de> for Simple<'_> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self {
            Simple::Scalar(scalar) => scalar.deserialize_any(visitor),
            Simple::List(items) => visitor.visit_seq(Items(items.into_iter())),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Declined> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct Items<'a>(std::vec::IntoIter<Scalar<'a>>);

impl<'de> SeqAccess<'de> for Items<'_> {
    type Error = Declined;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Declined> {
        self.0.next().map(|item| seed.deserialize(item)).transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;

    /// What serde_norway makes of `key: <text>`, the way `Frontmatter::get` reads it.
    fn slow<T: DeserializeOwned>(text: &str) -> Option<T> {
        let mapping: serde_norway::Mapping =
            serde_norway::from_str(&format!("key:{text}\n")).ok()?;
        let value = mapping.into_iter().next()?.1;
        serde_norway::from_value(value).ok()
    }

    fn fast<T: DeserializeOwned>(text: &str) -> Option<T> {
        let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
        T::deserialize(read(first, rest)?).ok()
    }

    /// Every row: the fast path either declines or agrees with serde_norway.
    fn agrees<T: DeserializeOwned + PartialEq + std::fmt::Debug>(text: &str, expect_fast: bool) {
        let quick = fast::<T>(text);
        assert_eq!(
            quick.is_some(),
            expect_fast,
            "{text:?}: fast path gave {quick:?}"
        );
        if let Some(value) = quick {
            assert_eq!(Some(value), slow::<T>(text), "{text:?}");
        }
    }

    #[test]
    fn strings() {
        for (text, taken) in [
            (" ready", true),
            (" Add dark mode toggle", true),
            (" agentic-sdlc/add-dark-mode", true),
            (" https://github.com/acme/shop/pull/12", true),
            (" story-mwrovghh-7lzs   ", true),
            // ` #` starts a comment: YAML reads `Fix issue`, so that is the parser's call.
            (" Fix issue #42", false),
            (" Fix issue#42", true),
            (" Quoted: title", false),
            (" 'quoted'", false),
            (" \"quoted\"", false),
            (" yes", true),
            (" inf", true),
            (" 2026-11-22", false),
            (" Null", false),
            (" &anchor value", false),
            (" key:", false),
            (" Ünïcode", false),
        ] {
            agrees::<String>(text, taken);
        }
    }

    #[test]
    fn numbers_and_bools() {
        for (text, taken) in [
            (" 10", true),
            (" 0", true),
            (" 007", false),
            (" 0x1f", false),
            (" +5", false),
            (" 1.5", false),
            (" 99999999999999999999999", false),
        ] {
            agrees::<u64>(text, taken);
        }
        agrees::<i64>(" -3", true);
        agrees::<i64>(" -0", false);
        agrees::<u32>(" 5000000000", false);
        for (text, taken) in [
            (" true", true),
            (" False", true),
            (" TRUE", true),
            (" yes", false),
        ] {
            agrees::<bool>(text, taken);
        }
        // The right shape with the wrong type is declined, so serde_norway reports the error.
        agrees::<bool>(" 10", false);
        agrees::<i64>(" high", false);
        agrees::<String>(" 10", false);
        agrees::<String>(" true", false);
    }

    #[test]
    fn lists() {
        for (text, taken) in [
            (" []", true),
            ("\n- a\n- b-c\n", true),
            ("\n  - story-1\n  - story-2\n", true),
            ("\n- a\n  - b\n", false),
            ("\n- a\n# comment\n- b\n", false),
            ("\n- 'a'\n", false),
            ("\n- [a]\n", false),
            ("\n- a: b\n", false),
            (" [a, b]", false),
            ("\n-a\n", false),
            ("\n- \n", false),
            ("\n\t- a\n", false),
        ] {
            agrees::<Vec<String>>(text, taken);
        }
        agrees::<Vec<u32>>("\n- 1\n- 2\n", true);
        agrees::<Option<Vec<String>>>("\n- a\n", true);
        agrees::<Option<String>>(" a", true);
    }
}
