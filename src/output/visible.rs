//! Text from outside the tool (story text, model output, tool output, file names) can hold
//! terminal control sequences: a window title, a clipboard write (OSC 52), a cleared screen.
//! Everything the printer writes for a person passes through [`visible`], which shows control
//! characters other than newline and tab as escapes (`\x1b`) instead of sending them. JSON output
//! escapes them as JSON does.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character but `\n` and `\t` written as an escape. With
/// `keep_colours`, the tool's own colour codes (`ESC [ digits;… m`, which can only change
/// colours) are let through; every other sequence is shown.
pub fn visible(text: &str, keep_colours: bool) -> Cow<'_, str> {
    if !text.chars().any(is_hidden_control) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_colours && c == '\u{1b}' {
            if let Some(length) = colour_code_length(rest) {
                shown.push_str(&rest[..length]);
                rest = &rest[length..];
                continue;
            }
        }
        if is_hidden_control(c) {
            let code = u32::from(c);
            if code <= 0xff {
                let _ = write!(shown, "\\x{code:02x}");
            } else {
                let _ = write!(shown, "\\u{{{code:x}}}");
            }
        } else {
            shown.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(shown)
}

fn is_hidden_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// The length of a colour code (SGR: `ESC [`, digits and semicolons, `m`) at the start of
/// `text`, if one is there.
fn colour_code_length(text: &str) -> Option<usize> {
    let body = text.strip_prefix("\u{1b}[")?;
    let digits = body
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    (body.as_bytes().get(digits) == Some(&b'm')).then_some(2 + digits + 1)
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn control_characters_are_shown_not_sent() {
        for (raw, keep, shown) in [
            (
                "plain text\n\twith a tab",
                false,
                "plain text\n\twith a tab",
            ),
            ("\u{1b}]0;owned\u{7}", false, "\\x1b]0;owned\\x07"),
            (
                "\u{1b}]52;c;ZXZpbA==\u{7}",
                true,
                "\\x1b]52;c;ZXZpbA==\\x07",
            ),
            ("\u{1b}[2J\u{1b}[H", true, "\\x1b[2J\\x1b[H"),
            ("a\rb\u{8}c\u{7f}", false, "a\\x0db\\x08c\\x7f"),
            ("\u{9b}31m", true, "\\x9b31m"),
            ("\u{1b}[1;31mred\u{1b}[0m", true, "\u{1b}[1;31mred\u{1b}[0m"),
            ("\u{1b}[1;31mred\u{1b}[0m", false, "\\x1b[1;31mred\\x1b[0m"),
            ("ünïcödé ✓", false, "ünïcödé ✓"),
        ] {
            assert_eq!(visible(raw, keep), shown, "{raw:?}");
        }
    }
}
