//! Output capture with bounded memory: the head and the tail of what a command printed.

use std::collections::VecDeque;

/// Bytes of command output that reach the model (head and tail halves).
pub const OUTPUT_BUDGET: usize = 16 * 1024;

/// Keeps the first and the last half of the output budget as it streams in, so a command that
/// prints gigabytes costs bounded memory.
pub(crate) struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: usize,
    budget: usize,
}

impl Capture {
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
            budget,
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        let room = (self.budget / 2).saturating_sub(self.head.len());
        let (to_head, to_tail) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(to_tail);
        let excess = self
            .tail
            .len()
            .saturating_sub(self.budget - self.budget / 2);
        self.tail.drain(..excess);
        self.omitted += excess;
    }

    pub(crate) fn render(&self) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return non_empty(String::from_utf8_lossy(&all).into_owned());
        }
        // Cut on character boundaries so the ends do not show broken characters.
        let head_end = utf8_complete_prefix(&self.head);
        let tail_start = utf8_continuation_prefix(&tail);
        let omitted = self.omitted + (self.head.len() - head_end) + tail_start;
        join_cut(
            &String::from_utf8_lossy(&self.head[..head_end]),
            &String::from_utf8_lossy(&tail[tail_start..]),
            omitted,
        )
    }
}

fn non_empty(text: String) -> String {
    if text.is_empty() {
        "(no output)".to_string()
    } else {
        text
    }
}

/// Length of `bytes` without a trailing, incomplete UTF-8 sequence.
fn utf8_complete_prefix(bytes: &[u8]) -> usize {
    let start = bytes.len().saturating_sub(3);
    for at in (start..bytes.len()).rev() {
        let byte = bytes[at];
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let width = match byte {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        return if at + width > bytes.len() {
            at
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

/// Number of leading continuation bytes (the end of a character cut off at the front).
fn utf8_continuation_prefix(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|byte| *byte & 0xC0 == 0x80)
        .count()
}

/// Keeps the first and last halves of `text` (about `max_bytes` in all, cut on character
/// boundaries) with a line saying how much was left out between them. Errors and summaries
/// usually sit at the start or the end of command output, rarely in the middle.
pub fn head_tail(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let head_end = floor_char_boundary(text, max_bytes / 2);
    let tail_start = ceil_char_boundary(text, text.len() - (max_bytes - max_bytes / 2));
    join_cut(
        &text[..head_end],
        &text[tail_start..],
        tail_start - head_end,
    )
}

fn join_cut(head: &str, tail: &str, omitted: usize) -> String {
    let newline = if head.ends_with('\n') { "" } else { "\n" };
    format!("{head}{newline}... [{omitted} bytes omitted] ...\n{tail}")
}

/// The largest character boundary of `text` at or below `index`.
pub(crate) fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_tail_keeps_both_ends_on_char_boundaries() {
        assert_eq!(head_tail("short", 16), "short");
        let text = format!("{}{}", "a".repeat(50), "b".repeat(50));
        assert_eq!(
            head_tail(&text, 20),
            format!(
                "{}\n... [80 bytes omitted] ...\n{}",
                "a".repeat(10),
                "b".repeat(10)
            )
        );
        // 100 bytes of two-byte characters: 7 head bytes round down to 6.
        let accents = "é".repeat(50);
        assert_eq!(
            head_tail(&accents, 15),
            format!("ééé\n... [86 bytes omitted] ...\n{}", "é".repeat(4))
        );
    }

    #[test]
    fn capture_cuts_raw_bytes_on_char_boundaries() {
        let mut capture = Capture::new(8);
        capture.push("aéé".as_bytes()); // 5 bytes: head keeps "aé" and half of the next é
        capture.push(&[b'x'; 10]); // the tail keeps the last 4 bytes: "xzé"
        capture.push("zé".as_bytes());
        let text = capture.render();
        assert_eq!(text, "aé\n... [11 bytes omitted] ...\nxzé");
    }
}
