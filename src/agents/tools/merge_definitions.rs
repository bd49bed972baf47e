//! A whole file written in the model's reply, read as the definitions it changes: the
//! definitions of the file that the reply leaves out are kept where they were, the ones it
//! writes replace their namesakes, and what is new is added. A small model asked to add a
//! function to a file very often writes back only the new function (measured with a 1.5B model:
//! the commonest way a story failed); taken literally, that write would delete the rest of the
//! file, and refused, the model rarely recovers. The reply's intent is the change it shows.
//!
//! Blocks are found by indentation, as `definitions::source_of` finds a definition: a line at
//! the shallowest indentation starts a block, deeper lines and blank lines belong to it, and a
//! closing bracket at its own indentation ends it. A class whose new version leaves out some of
//! its methods is merged the same way, one level in.

use super::definitions::{defined_name, names};

/// The merged file and the definitions it kept that the written content left out.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Merged {
    pub content: String,
    pub kept: Vec<String>,
}

/// `after` written over `before` as changed definitions; `None` when `after` leaves none of
/// `before`'s definitions out (it is the whole file) or names no definition at all (it is no
/// file of definitions, and merging would paste it into one).
pub(super) fn keep_left_out(before: &str, after: &str) -> Option<Merged> {
    let written = names(after);
    if written.is_empty() {
        return None;
    }
    let kept: Vec<String> = names(before)
        .into_iter()
        .filter(|name| !written.contains(name))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let mut content = merge_lines(&old, &new, 0).join("\n");
    content.push('\n');
    Some(Merged { content, kept })
}

/// `after` without its top-level definitions that `before` has too, and their names: what a
/// whole file adds to `before` and nothing it rewrites.
pub(super) fn without_namesakes(before: &str, after: &str) -> (String, Vec<String>) {
    let existing = names(before);
    let lines: Vec<&str> = after.lines().collect();
    let mut dropped = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    let mut from = 0;
    for block in blocks(&lines) {
        match block.name.filter(|name| existing.contains(name)) {
            Some(name) => {
                kept.extend(&lines[from..block.start]);
                from = block.end;
                dropped.push(name);
            }
            None => continue,
        }
    }
    kept.extend(&lines[from.min(lines.len())..]);
    (format!("{}\n", kept.join("\n").trim_end()), dropped)
}

/// One top-level block of a run of lines: `start..end`, trailing blank lines excluded.
#[derive(Debug, Clone)]
struct Block {
    start: usize,
    end: usize,
    /// The name it defines, when it is a definition.
    name: Option<String>,
}

fn depth(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn is_closing(line: &str) -> bool {
    line.trim_start().starts_with(['}', ')', ']'])
}

/// The blocks of `lines` at their shallowest indentation.
fn blocks(lines: &[&str]) -> Vec<Block> {
    let Some(base) = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| depth(line))
        .min()
    else {
        return Vec::new();
    };
    let mut found: Vec<Block> = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let continues = depth(line) > base
            || is_closing(line)
            // A decorator belongs to the definition under it.
            || found.last().is_some_and(|block| {
                block.name.is_none() && lines[block.start].trim_start().starts_with('@')
            });
        match found.last_mut() {
            Some(block) if continues => {
                block.end = at + 1;
                if block.name.is_none() {
                    block.name = defined_name(line).filter(|_| depth(line) == base);
                }
            }
            _ => found.push(Block {
                start: at,
                end: at + 1,
                name: defined_name(line),
            }),
        }
    }
    found
}

/// Lines that bring names in from elsewhere, which go with the file's other imports.
fn is_import(line: &str) -> bool {
    let line = line.trim_start();
    [
        "import ", "from ", "use ", "#include", "require ", "require(", "using ",
    ]
    .iter()
    .any(|start| line.starts_with(start))
}

/// Lines that say nothing the file needs twice: comments and docstrings.
fn is_remark(line: &str) -> bool {
    let line = line.trim_start();
    ["#", "//", "/*", "*", "\"\"\"", "'''"]
        .iter()
        .any(|start| line.starts_with(start))
        && !is_import(line)
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|line| line.to_string()).collect()
}

/// `new` over `old`, block by block; `level` 0 is the file, deeper levels a class's body.
fn merge_lines(old: &[&str], new: &[&str], level: usize) -> Vec<String> {
    let old_blocks = blocks(old);
    let mut splices: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut imports: Vec<String> = Vec::new();
    let mut added: Vec<Vec<String>> = Vec::new();
    for block in blocks(new) {
        let text = &new[block.start..block.end];
        let namesake = block.name.as_ref().and_then(|name| {
            old_blocks
                .iter()
                .find(|old_block| old_block.name.as_ref() == Some(name))
        });
        if let Some(old_block) = namesake {
            let replaced = &old[old_block.start..old_block.end];
            splices.push((
                old_block.start,
                old_block.end,
                merge_block(replaced, text, level),
            ));
            continue;
        }
        let first = text[0];
        let already = |line: &&str| old.iter().any(|old_line| old_line.trim() == line.trim());
        if block.name.is_none() && text.iter().all(already) {
            continue;
        }
        if block.name.is_none() && is_import(first) {
            imports.extend(
                text.iter()
                    .filter(|line| !already(line))
                    .map(|l| l.to_string()),
            );
        } else if block.name.is_some() || !is_remark(first) {
            added.push(owned(text));
        }
    }

    let mut merged = owned(old);
    while merged.last().is_some_and(|line| line.trim().is_empty()) {
        merged.pop();
    }
    let gap = if level == 0 { 2 } else { 1 };
    for block in added {
        if !merged.is_empty() {
            merged.extend(std::iter::repeat_n(String::new(), gap));
        }
        merged.extend(block);
    }
    if !imports.is_empty() {
        splices.push((import_point(old, &old_blocks), 0, imports));
    }
    // From the bottom up, so that each splice's line numbers still hold.
    splices.sort_by_key(|(start, end, _)| std::cmp::Reverse((*start, *end)));
    for (start, end, lines) in splices {
        let end = end.max(start);
        merged.splice(start..end.min(merged.len()), lines);
    }
    merged
}

/// Where new imports go: after the file's last import, or after its opening remarks.
fn import_point(old: &[&str], old_blocks: &[Block]) -> usize {
    if let Some(last) = old_blocks
        .iter()
        .rev()
        .find(|block| block.name.is_none() && is_import(old[block.start]))
    {
        return last.end;
    }
    old_blocks
        .iter()
        .take_while(|block| block.name.is_none() && is_remark(old[block.start]))
        .last()
        .map_or(0, |block| block.end)
}

/// A definition written again: the new one, unless it leaves out definitions the old one
/// holds (a class with only its new method), when its body is merged one level in.
fn merge_block(old: &[&str], new: &[&str], level: usize) -> Vec<String> {
    let inner = |lines: &[&str]| names(&lines[1..].join("\n"));
    let left_out = inner(old).iter().any(|name| !inner(new).contains(name));
    if !left_out || inner(new).is_empty() || old.len() < 2 || new.len() < 2 {
        return owned(new);
    }
    let body_end = |lines: &[&str]| {
        let last = lines[lines.len() - 1];
        match is_closing(last) && depth(last) <= depth(lines[0]) {
            true => lines.len() - 1,
            false => lines.len(),
        }
    };
    let (old_end, new_end) = (body_end(old), body_end(new));
    let mut merged = vec![new[0].to_string()];
    merged.extend(merge_lines(&old[1..old_end], &new[1..new_end], level + 1));
    merged.extend(owned(&new[new_end..]));
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTKIT: &str = "\"\"\"Small text helpers.\"\"\"\n\n\ndef shout(text):\n    \"\"\"Loud.\"\"\"\n    return text.upper() + \"!\"\n";

    #[test]
    fn a_new_function_alone_is_added_to_the_file() {
        let merged = keep_left_out(
            TEXTKIT,
            "def word_count(text):\n    return len(text.split())\n",
        )
        .unwrap();
        assert_eq!(merged.kept, ["shout"]);
        assert_eq!(
            merged.content,
            format!("{TEXTKIT}\n\ndef word_count(text):\n    return len(text.split())\n")
        );
    }

    #[test]
    fn a_changed_function_replaces_its_namesake_and_new_imports_join_the_old() {
        let before = "import math\n\n\ndef mean(values):\n    return sum(values) / len(values)\n\n\ndef spread(values):\n    return max(values) - min(values)\n";
        let after = "import math\nimport statistics\n\n\ndef mean(values):\n    if not values:\n        return 0.0\n    return sum(values) / len(values)\n";
        let merged = keep_left_out(before, after).unwrap();
        assert_eq!(merged.kept, ["spread"]);
        assert_eq!(
            merged.content,
            "import math\nimport statistics\n\n\ndef mean(values):\n    if not values:\n        return 0.0\n    return sum(values) / len(values)\n\n\ndef spread(values):\n    return max(values) - min(values)\n"
        );
    }

    #[test]
    fn a_test_file_keeps_its_tests_and_gains_the_new_import() {
        let before = "from textkit import shout\n\n\ndef test_shout():\n    assert shout(\"hi\") == \"HI!\"\n";
        let after = "import pytest\nfrom textkit import word_count\n\n\n@pytest.mark.parametrize(\"text\", [\"a b\"])\ndef test_word_count(text):\n    assert word_count(text) == 2\n";
        let merged = keep_left_out(before, after).unwrap();
        assert_eq!(merged.kept, ["test_shout"]);
        assert_eq!(
            merged.content,
            "from textkit import shout\nimport pytest\nfrom textkit import word_count\n\n\ndef test_shout():\n    assert shout(\"hi\") == \"HI!\"\n\n\n@pytest.mark.parametrize(\"text\", [\"a b\"])\ndef test_word_count(text):\n    assert word_count(text) == 2\n"
        );
    }

    #[test]
    fn a_class_written_with_only_its_new_method_keeps_the_others() {
        let before = "class Stack:\n    def push(self, x):\n        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n";
        let after = "class Stack:\n    def peek(self):\n        return self.items[-1]\n";
        let merged = keep_left_out(before, after).unwrap();
        assert_eq!(merged.kept, ["push", "pop"]);
        assert_eq!(
            merged.content,
            "class Stack:\n    def push(self, x):\n        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n\n    def peek(self):\n        return self.items[-1]\n"
        );
    }

    #[test]
    fn braces_close_their_blocks() {
        let before = "fn a() {\n    1;\n}\n\nfn b() {\n    2;\n}\n";
        let after = "fn b() {\n    3;\n}\n\nfn c() {}\n";
        let merged = keep_left_out(before, after).unwrap();
        assert_eq!(merged.kept, ["a"]);
        assert_eq!(
            merged.content,
            "fn a() {\n    1;\n}\n\nfn b() {\n    3;\n}\n\n\nfn c() {}\n"
        );
    }

    #[test]
    fn whole_files_and_files_without_definitions_are_not_merged() {
        let whole = format!("{TEXTKIT}\n\ndef more():\n    pass\n");
        assert_eq!(keep_left_out(TEXTKIT, &whole), None, "nothing left out");
        assert_eq!(
            keep_left_out(TEXTKIT, "print(shout('x'))\n"),
            None,
            "no definitions: a snippet, not a file"
        );
    }
}
