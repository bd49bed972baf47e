//! Edits written the way aider's edit formats have models write them, which small models write
//! unprompted: a whole file in a code fence under its path, or SEARCH/REPLACE blocks. They
//! become write_file and edit_file calls, so the guards of those tools apply to them.

use serde_json::json;

use super::form::{CallForm, TextCall};

const SEARCH: &str = "<<<<<<< SEARCH";
const DIVIDER: &str = "=======";
const REPLACE: &str = ">>>>>>> REPLACE";

/// Languages whose fences hold calls or commands, never a file.
const NOT_FILES: &[&str] = &[
    "json",
    "json5",
    "jsonc",
    "tool_call",
    "tool",
    "bash",
    "sh",
    "shell",
    "console",
    "zsh",
    "diff",
    "text",
    "txt",
    "output",
];

/// The whole-file fences and SEARCH/REPLACE blocks of `text`, in the order written. With a
/// `default_file` and no fence naming its file, the longest code fence is that file.
pub(super) fn file_edits(text: &str, default_file: Option<&str>) -> Vec<TextCall> {
    let lines: Vec<&str> = text.lines().collect();
    let mut edits = Vec::new();
    let mut pathless: Vec<&[&str]> = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.trim() == SEARCH {
            match search_replace(&lines, at) {
                Some((edit, next)) => {
                    edits.push(edit);
                    at = next;
                }
                None => at += 1,
            }
            continue;
        }
        let Some((marker, info)) = fence(line) else {
            at += 1;
            continue;
        };
        let end = (at + 1..lines.len())
            .find(|&i| closes(lines[i], marker))
            .unwrap_or(lines.len());
        let body = &lines[at + 1..end.min(lines.len())];
        if body.iter().any(|l| l.trim() == SEARCH) {
            // SEARCH/REPLACE blocks inside a fence: read them where they are.
            at += 1;
            continue;
        }
        let files = whole_file(&lines[..at], info, body);
        if !files.is_empty() {
            edits.extend(files);
        } else if label_above(&lines[..at]) != Some(Shown::Before) && is_code(info, body) {
            pathless.push(body);
        }
        at = end + 1;
    }
    if let (true, Some(path)) = (edits.is_empty(), default_file) {
        if let Some(body) = pathless.into_iter().max_by_key(|body| body.len()) {
            edits.push(write_call(path, body));
        } else if !lines.iter().any(|line| fence(line).is_some()) {
            let loose = loose_python(&lines);
            if !loose.is_empty() {
                let loose: Vec<&str> = loose.iter().map(String::as_str).collect();
                edits.push(write_call(path, &loose));
            }
        }
    }
    edits
}

/// The Python statements of an answer with no fence at all, prose left out: the lines that
/// begin an assertion, an import, a definition or a `with` block, and the indented lines under
/// them. Recorded from Qwen2.5-Coder-1.5B, told to give its test file's path and the file in
/// a code block (a drive, 2026-11-29): the file's stem on one line, then bare
/// `assert to_kelvin(0) == 273.15` lines, six answers in a row. A list item that quotes an
/// assertion in backticks is one too, under the test name it gives: "- `test_zero`: `assert
/// to_kelvin(0) == 273.15`" (the same drive, the answer after).
fn loose_python(lines: &[&str]) -> Vec<String> {
    const OPENINGS: [&str; 6] = ["assert ", "from ", "import ", "def ", "class ", "with "];
    let mut kept: Vec<String> = Vec::new();
    // Blank lines are kept only between statements, so a test's body may have some.
    let mut blanks = 0;
    let mut in_block = false;
    let mut named_tests: Vec<String> = Vec::new();
    for line in lines {
        if line.trim().is_empty() {
            blanks += 1;
            continue;
        }
        let starts_statement = !line.starts_with([' ', '\t'])
            && OPENINGS.iter().any(|opening| line.starts_with(opening));
        let continues = in_block && line.starts_with([' ', '\t']);
        let quoted = (!starts_statement && !continues)
            .then(|| quoted_assertion(line))
            .flatten();
        if starts_statement || continues || quoted.is_some() {
            if !kept.is_empty() {
                kept.extend(std::iter::repeat_n(String::new(), blanks));
            }
            match quoted {
                Some((Some(name), assertion)) => {
                    let mut name = name.to_string();
                    while named_tests.contains(&name) {
                        name.push('_');
                    }
                    kept.push(format!("def {name}():\n    {assertion}\n"));
                    named_tests.push(name);
                }
                Some((None, assertion)) => kept.push(assertion.to_string()),
                None => kept.push(line.to_string()),
            }
            in_block = line.trim_end().ends_with(':') || continues;
        } else {
            in_block = false;
        }
        blanks = 0;
    }
    kept
}

/// The assertion a prose line quotes in backticks, with the test name quoted before it, if
/// any: "- `test_zero`: `assert to_kelvin(0) == 273.15`".
fn quoted_assertion(line: &str) -> Option<(Option<&str>, &str)> {
    let spans: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
    let at = spans.iter().position(|span| span.starts_with("assert "))?;
    let name = spans[..at].iter().rev().find(|span| {
        span.starts_with("test") && span.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    Some((name.copied(), spans[at].trim()))
}

/// Whether a fence without a path holds code a file could be: not a call, a command or output,
/// nor paths alone (recorded from Qwen2.5-Coder-1.5B, told to give a test file's path and then
/// its content, 2026-11-29: "```\ntest_add_to_celsius.py\n```" and nothing more, which
/// written to that file as its content was a test file of no test).
fn is_code(info: &str, body: &[&str]) -> bool {
    let language = info
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let first = body.first().map(|l| l.trim()).unwrap_or("");
    let paths_alone = body
        .iter()
        .map(|line| line.trim())
        .filter(|line| !line.is_empty())
        .all(|line| path_like(line).is_some());
    !NOT_FILES.contains(&language.as_str())
        && !first.starts_with('{')
        && !paths_alone
        && body
            .iter()
            .any(|line| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
}

/// A write_file call of `body`, dedented, to `path`.
fn write_call(path: &str, body: &[&str]) -> TextCall {
    let mut text = dedented(body).join("\n");
    text.push('\n');
    TextCall {
        name: "write_file".to_string(),
        // A file in a reply that leaves out some of the file's definitions is read as the
        // definitions it changes (see `merge_definitions`).
        arguments: json!({"path": path, "content": text, "merge": true}).to_string(),
        form: CallForm::FileFence,
    }
}

fn fence(line: &str) -> Option<(&'static str, &str)> {
    let trimmed = line.trim_start();
    ["```", "~~~"].into_iter().find_map(|marker| {
        trimmed
            .strip_prefix(marker)
            .map(|info| (marker, info.trim()))
    })
}

fn closes(line: &str, marker: &str) -> bool {
    let trimmed = line.trim();
    trimmed.starts_with(marker) && trimmed.chars().all(|c| marker.starts_with(c))
}

/// A fence holding a whole file, or several ([`split_at_named_files`]): its path named in the
/// info string, on the line before it, or in a comment on its first line.
fn whole_file(before: &[&str], info: &str, body: &[&str]) -> Vec<TextCall> {
    let Some((path, content)) = file_in_fence(before, info, body) else {
        return Vec::new();
    };
    split_at_named_files(path, &content)
        .into_iter()
        .map(|(path, content)| write_call(&path, content))
        .collect()
}

/// A fence's file split where a line at its left edge, after a blank line, is only a comment
/// naming another file (`# tests/test_cart.py`): each part is that file, whole. The 1.5B model
/// wrote cart.py and two test files in one fence so, each under such a comment (a drive,
/// 2026-12-06); all of it went into cart.py, and two test functions reached the base branch
/// beside the code.
fn split_at_named_files<'a>(path: String, content: &'a [&'a str]) -> Vec<(String, &'a [&'a str])> {
    let mut files: Vec<(String, &[&str])> = Vec::new();
    let (mut current, mut start) = (path, 0);
    for at in 1..content.len() {
        let line = content[at];
        let named = (!line.starts_with(char::is_whitespace) && content[at - 1].trim().is_empty())
            .then(|| comment_path(line.trim_end()))
            .flatten()
            .filter(|named| *named != current);
        if let Some(named) = named {
            files.push((std::mem::replace(&mut current, named), &content[start..at]));
            start = at + 1;
        }
    }
    files.push((current, &content[start..]));
    files
        .into_iter()
        .map(|(path, lines)| {
            let kept = lines.len()
                - lines
                    .iter()
                    .rev()
                    .take_while(|l| l.trim().is_empty())
                    .count();
            (path, &lines[..kept])
        })
        .collect()
}

/// The path a fence's file is named by and its content, the naming line taken out.
fn file_in_fence<'a>(
    before: &[&str],
    info: &str,
    body: &[&'a str],
) -> Option<(String, Vec<&'a str>)> {
    let mut words = info.split_whitespace();
    let language = words.next().unwrap_or("").to_ascii_lowercase();
    if NOT_FILES.contains(&language.as_str()) {
        return None;
    }
    let first = body.first().map(|l| l.trim()).unwrap_or("");
    if first.starts_with('{') && body.iter().any(|l| l.contains("\"name\"")) {
        return None; // a JSON call in an untagged fence
    }
    let mut content: Vec<&str> = body.to_vec();
    let path = path_like(&language)
        .or_else(|| words.find_map(path_like))
        .or_else(|| announced_path(before))
        .or_else(|| after_change_path(before))
        .or_else(|| {
            // A comment naming the file, or the path alone in a bare fence with the file in a
            // fence of its own inside it, or set apart from the code under it by a blank line
            // (a bare path over more paths is a listing, no file).
            let nested = body.get(1).is_some_and(|line| fence(line).is_some());
            let headed = body.get(1).is_some_and(|line| line.trim().is_empty())
                && body[2..]
                    .iter()
                    .any(|line| !line.trim().is_empty() && path_like(line.trim()).is_none());
            let named =
                comment_path(first).or_else(|| path_like(first).filter(|_| nested || headed))?;
            content.remove(0);
            if nested || headed {
                content.remove(0);
            }
            Some(named)
        })?;
    Some((path, content))
}

/// What a short label line over a fence says it shows, in an answer that shows a file before and
/// after its change. Recorded from Qwen2.5-Coder-1.5B, asked to make a change whole-file (the
/// inventory benchmark, 2026-11-29): "### inventory/cart.py", then "**Before Change:**" over the
/// file as it is, then "**After Change:**" over the right change, twice in a row; read as no
/// file, both rounds changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Before,
    After,
}

fn shown(line: &str) -> Option<Shown> {
    const BEFORE: [&str; 4] = ["before", "original", "old", "current"];
    const AFTER: [&str; 6] = ["after", "updated", "new", "modified", "changed", "fixed"];
    let words: Vec<String> = line
        .split_whitespace()
        .map(|word| {
            word.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_ascii_lowercase()
        })
        .filter(|word| !word.is_empty())
        .collect();
    let has = |set: &[&str]| words.iter().any(|word| set.contains(&word.as_str()));
    match words.len() {
        1..=6 if has(&BEFORE) => Some(Shown::Before),
        1..=6 if has(&AFTER) => Some(Shown::After),
        _ => None,
    }
}

/// The label on the nearest non-empty line above a fence, if that line is one.
fn label_above(before: &[&str]) -> Option<Shown> {
    let line = *before.iter().rev().find(|line| !line.trim().is_empty())?;
    announced_path(&[line])
        .is_none()
        .then(|| shown(line))
        .flatten()
}

/// The path over a fence labelled as the file after its change: on one of the two lines above
/// the label, or above the file before its change and its label when that stands between. Any
/// other fence between is another file's, and its path is not this one's.
fn after_change_path(before: &[&str]) -> Option<String> {
    if label_above(before) != Some(Shown::After) {
        return None;
    }
    let lines: Vec<&str> = before
        .iter()
        .copied()
        .filter(|line| !line.trim().is_empty())
        .collect();
    let mut label = lines.len() - 1;
    if label > 0 && fence(lines[label - 1]).is_some() {
        let opening = (0..label - 1).rev().find(|&i| fence(lines[i]).is_some())?;
        if label_above(&lines[..opening]) != Some(Shown::Before) {
            return None;
        }
        label = opening - 1;
    }
    lines[..label]
        .iter()
        .rev()
        .take(2)
        .take_while(|line| fence(line).is_none())
        .find_map(|line| announced_path(&[line]))
}

/// The lines without the indentation they all share: a fence nested in a list item indents the
/// whole file, and a file never starts indented as a whole.
fn dedented<'a>(lines: &[&'a str]) -> Vec<&'a str> {
    let shared = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start_matches([' ', '\t']).len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|line| line.get(shared..).unwrap_or("").trim_end_matches('\r'))
        .map(|line| if line.trim().is_empty() { "" } else { line })
        .collect()
}

/// A SEARCH/REPLACE block starting at line `at`, under the path named on the line before it;
/// and the line after it.
fn search_replace(lines: &[&str], at: usize) -> Option<(TextCall, usize)> {
    let divider = (at + 1..lines.len()).find(|&i| lines[i].trim() == DIVIDER)?;
    let end = (divider + 1..lines.len()).find(|&i| lines[i].trim() == REPLACE)?;
    let before: Vec<&str> = lines[..at]
        .iter()
        .copied()
        .filter(|line| fence(line).is_none())
        .collect();
    let path = announced_path(&before)?;
    let join = |part: &[&str]| {
        let mut text = part.join("\n");
        if !part.is_empty() {
            text.push('\n');
        }
        text
    };
    let call = TextCall {
        name: "edit_file".to_string(),
        arguments: json!({"path": path, "old_string": join(&lines[at + 1..divider]),
                          "new_string": join(&lines[divider + 1..end])})
        .to_string(),
        form: CallForm::SearchReplace,
    };
    Some((call, end + 1))
}

/// The path the last non-blank line before a block names: alone on the line (`stats.py`,
/// `**src/app.py**`, `# File: a.rs`), or as the line's end before a colon (`Here is the
/// updated `stats.py`:`).
fn announced_path(before: &[&str]) -> Option<String> {
    let mut above = before
        .iter()
        .rev()
        .map(|line| line.trim())
        .filter(|line| !line.is_empty());
    let line = above.next()?;
    if fence(line).is_some_and(|(_, info)| info.is_empty()) {
        // The path alone in a fence of its own, right above the file's fence (recorded from
        // Qwen2.5-Coder-1.5B: "```\ntextkit.py\n```\n```python\n…").
        let (path, opening) = (above.next()?, above.next()?);
        return fence(opening).and_then(|_| path_like(path));
    }
    // Emphasis anywhere on the line goes: `**Path**: `stats.py`` reads as `Path: `stats.py``.
    let plain = line.replace("**", "");
    let bare = without_list_number(plain.trim_start_matches(['#', '*', '-', '>', ' ']))
        .trim_start_matches(['*', ' '])
        .trim_end_matches(['*', ' ']);
    let bare = ["File:", "file:", "Filename:", "filename:", "Path:", "path:"]
        .iter()
        .find_map(|prefix| bare.strip_prefix(prefix))
        .unwrap_or(bare)
        .trim();
    if let Some(path) = path_like(bare.trim_end_matches(':')) {
        return Some(path);
    }
    // A heading that ends with the path (`### Fix to `calc.py``), or a line that ends with
    // it and a colon (`Here is the updated `stats.py`:`), emphasis aside (recorded from
    // Qwen2.5-Coder-1.5B: `**Changed `inventory/cart.py`:**`).
    let plain = plain.trim();
    let ending = match (plain.starts_with('#'), plain.strip_suffix(':')) {
        (true, _) => plain.trim_end_matches(':'),
        (false, Some(ending)) => ending,
        // Without a colon, only a line that opens with what was changed names a file: the
        // 1.5B model's right `fare` under `**Changed `transit/fares.py`**` was read as no file,
        // and it was told its reply changed none (transit, 2026-12-06).
        (false, None) => return changed_path(plain.trim_start_matches(['*', '-', '>', ' '])),
    };
    let last_word = |text: &str| path_like(text.split_whitespace().next_back()?);
    // A note after the path: `### stats.py (exists)`, the map's words for a file, over the
    // right `median` in a recorded reply (textkit, 2026-12-05) that was read as no file.
    last_word(ending)
        .or_else(|| last_word(without_note(ending)?))
        .or_else(|| changed_path(ending.trim_start_matches(['#', '*', '-', '>', ' '])))
}

/// The path a line opens with as what was changed: `Changed `inventory/cart.py` with the
/// following changes`, over the right `Cart.add` in a recorded reply of Qwen2.5-Coder-1.5B that
/// was read as no file, three rounds in a row (inventory `add-positive`, 2026-12-05). The path
/// must come in backticks right after the verb (or "the file"): "Here are the tests for
/// `stats.py`" names the file the tests are not.
fn changed_path(line: &str) -> Option<String> {
    const CHANGED: [&str; 8] = [
        "changed", "updated", "modified", "edited", "rewrote", "wrote", "created", "fixed",
    ];
    let mut words = line.split_whitespace();
    let verb = words.next()?.to_ascii_lowercase();
    if !CHANGED.contains(&verb.as_str()) {
        return None;
    }
    let object =
        words.find(|word| !matches!(word.to_ascii_lowercase().as_str(), "the" | "file"))?;
    object.starts_with('`').then(|| path_like(object))?
}

/// `text` without a parenthesised note at its end: `stats.py` for `stats.py (exists)`.
fn without_note(text: &str) -> Option<&str> {
    let open = text.strip_suffix(')')?.rfind(" (")?;
    Some(text[..open].trim_end())
}

/// A line without the number of a numbered list item (`1. `, `2) `).
fn without_list_number(line: &str) -> &str {
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return line;
    }
    line[digits..]
        .strip_prefix(". ")
        .or_else(|| line[digits..].strip_prefix(") "))
        .unwrap_or(line)
}

/// A first line that is only a comment naming a path: `# stats.py`, `// src/lib.rs`.
fn comment_path(line: &str) -> Option<String> {
    let rest = ["#", "//", "--", ";"]
        .iter()
        .find_map(|mark| line.strip_prefix(mark))?
        .trim();
    let rest = ["File:", "file:", "Filename:", "filename:"]
        .iter()
        .find_map(|prefix| rest.strip_prefix(prefix))
        .unwrap_or(rest)
        .trim();
    path_like(rest)
}

/// A relative file path with an extension, as written in prose: quotes, backticks and markup
/// around it are dropped. No spaces, no `..`, not absolute.
fn path_like(token: &str) -> Option<String> {
    let path = token.trim_matches(|c: char| matches!(c, '`' | '*' | '"' | '\'' | ',' | '(' | ')'));
    let path = path.strip_prefix("./").unwrap_or(path);
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    let (stem, extension) = path.rsplit_once('.')?;
    let plausible = !stem.is_empty()
        && !stem.ends_with('/')
        && (1..=6).contains(&extension.len())
        && extension.chars().all(|c| c.is_ascii_alphanumeric())
        && extension.chars().any(|c| c.is_ascii_alphabetic())
        && path.chars().all(allowed)
        && path.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '.')
        && !path.starts_with('/')
        && !path.split('/').any(|part| part == "..");
    plausible.then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn edits(text: &str) -> Vec<(String, Value)> {
        file_edits(text, None)
            .into_iter()
            .map(|edit| (edit.name, serde_json::from_str(&edit.arguments).unwrap()))
            .collect()
    }

    /// Qwen2.5-Coder-1.5B's first answer to the acceptance task of the benchmark's `slugify`
    /// story (2026-11-27), told to write `test_turn_a_title_into_a_url_slug.py`: a fence with a
    /// comment, then the tests in a fence without a path.
    const RECORDED_ACCEPTANCE: &str = "```python\n# /root/.cache/agentic-sdlc-bench/pytest-venv/bin/python -m pytest -q tests/test_turn_a_title_into_a_url_slug.py\n```\n\n```python\ndef test_turn_a_title_into_a_url_slug():\n    assert slugify(\"Hello, World!\") == \"hello-world\"\n    assert slugify(\"  Many   spaces  \") == \"many-spaces\"\n```";

    #[test]
    fn a_path_set_apart_over_the_code_in_its_fence_names_the_file_and_a_listing_does_not() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, inventory), told to write the acceptance
        // tests into that file: the path became the file's first line, a `NameError` on `tests`.
        let recorded = "```\ntests/test_refuse_quantities_that_are_not_positive.py\n\nfrom inventory.cart import Cart\n\n\ndef test_add_counts_quantities():\n    cart = Cart()\n    assert cart.quantity(\"apple\") == 0\n```";
        let written = edits(recorded);
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(
            written[0].1["path"],
            "tests/test_refuse_quantities_that_are_not_positive.py"
        );
        assert_eq!(
            written[0].1["content"],
            "from inventory.cart import Cart\n\n\ndef test_add_counts_quantities():\n    cart = Cart()\n    assert cart.quantity(\"apple\") == 0\n"
        );
        let listing = "```\ntextkit.py\n\ntest_textkit.py\nstats.py\n```";
        assert!(edits(listing).is_empty());
    }

    #[test]
    fn a_fence_without_a_path_goes_to_the_file_the_agent_was_told_to_write() {
        assert!(file_edits(RECORDED_ACCEPTANCE, None).is_empty());
        let told = file_edits(RECORDED_ACCEPTANCE, Some("test_slug.py"));
        assert_eq!(told.len(), 1);
        let args: Value = serde_json::from_str(&told[0].arguments).unwrap();
        assert_eq!(args["path"], "test_slug.py");
        assert!(args["content"]
            .as_str()
            .unwrap()
            .starts_with("def test_turn_a_title_into_a_url_slug():\n    assert slugify("));
        // A fence of the path alone is no file's content.
        let path_alone = "```\ntest_add_to_celsius.py\n```";
        assert!(file_edits(path_alone, Some("test_add_to_celsius.py")).is_empty());
        // A fence that names its file wins over the default.
        let named = file_edits(
            "tests/test_a.py\n```python\ndef test_a():\n    pass\n```",
            Some("test_slug.py"),
        );
        let args: Value = serde_json::from_str(&named[0].arguments).unwrap();
        assert_eq!(args["path"], "tests/test_a.py");
    }

    #[test]
    fn unfenced_statements_go_to_the_file_the_agent_was_told_to_write() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-11-29): the stem, then bare assertions.
        let recorded =
            "test_add_to_kelvin\nassert to_kelvin(0) == 273.15\nassert to_kelvin(-10) == 263.15";
        assert!(file_edits(recorded, None).is_empty());
        let told = file_edits(recorded, Some("test_add_to_kelvin.py"));
        assert_eq!(told.len(), 1, "{told:?}");
        let args: Value = serde_json::from_str(&told[0].arguments).unwrap();
        assert_eq!(args["path"], "test_add_to_kelvin.py");
        assert_eq!(
            args["content"],
            "assert to_kelvin(0) == 273.15\nassert to_kelvin(-10) == 263.15\n"
        );
        // A test function keeps its body; the prose around it stays out.
        let with_prose = "Here are the tests:\nfrom temperature import to_kelvin\n\ndef test_zero():\n    x = to_kelvin(0)\n\n    assert x == 273.15\n\nThese check the criteria.";
        let args: Value =
            serde_json::from_str(&file_edits(with_prose, Some("t.py"))[0].arguments).unwrap();
        assert_eq!(
            args["content"],
            "from temperature import to_kelvin\n\ndef test_zero():\n    x = to_kelvin(0)\n\n    assert x == 273.15\n"
        );
        // Assertions quoted in list items, under the names given; one without a name is loose.
        let listed = "Write the tests now.\n\n- `test_zero`: `assert to_kelvin(0) == 273.15`\n- `test_zero`: `assert to_kelvin(-10) == 263.15`\n- the boiling point: `assert to_kelvin(100) == 373.15`";
        let args: Value =
            serde_json::from_str(&file_edits(listed, Some("t.py"))[0].arguments).unwrap();
        assert_eq!(
            args["content"],
            "def test_zero():\n    assert to_kelvin(0) == 273.15\n\ndef test_zero_():\n    assert to_kelvin(-10) == 263.15\n\nassert to_kelvin(100) == 373.15\n"
        );
        // Prose alone, or an answer with a fence, writes no loose lines.
        assert!(file_edits("I will write the tests now.", Some("t.py")).is_empty());
        assert!(file_edits("```json\n{}\n```\nassert f(1) == 2", Some("t.py")).is_empty());
    }

    #[test]
    fn a_whole_file_under_its_path_is_a_write() {
        let rows = [
            "stats.py\n```python\ndef mean(v):\n    return 0.0\n```",
            "Here is the updated `stats.py`:\n\n```python\ndef mean(v):\n    return 0.0\n```",
            "**stats.py**\n```python\ndef mean(v):\n    return 0.0\n```",
            "```python stats.py\ndef mean(v):\n    return 0.0\n```",
            "```python\n# stats.py\ndef mean(v):\n    return 0.0\n```",
            "Now the updated file stats.py:\n```\ndef mean(v):\n    return 0.0\n```",
            // Recorded from Qwen2.5-Coder-1.5B: the path in a bare fence, the file in a
            // python fence inside it, one closing fence for both.
            "```\nstats.py\n```python\ndef mean(v):\n    return 0.0\n```",
            "```\n# stats.py\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too (and the commonest form of a whole answer): a bold label.
            "### Changes to `mean`\n\n**Path**: `stats.py`\n\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too: a heading that ends with the path.
            "### Fix to `stats.py`\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too: the path in a fence of its own, closed, then the file's fence.
            "```\nstats.py\n```\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too: a fence in a list item, the whole file indented with it.
            "- stats.py\n  ```python\n  def mean(v):\n      return 0.0\n  ```",
            "### Changed Files\n\n1. **stats.py**\n\n   ```python\n   def mean(v):\n       return 0.0\n   ```",
            // Recorded too (2026-11-27, inventory): a bold line or a heading, the colon inside.
            "**Changed `stats.py`:**\n\n```python\ndef mean(v):\n    return 0.0\n```",
            "## Changed `stats.py`:**\n\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too (2026-12-05, textkit): the map's note on a file after its path.
            "### stats.py (exists)\n```python\ndef mean(v):\n    return 0.0\n```",
            "Here is stats.py (changed):\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too (2026-12-05, inventory): the path after the verb, more words after it.
            "Changed `stats.py` with the following changes:\n\n```python\ndef mean(v):\n    return 0.0\n```",
            "Updated the file `stats.py` as follows:\n```python\ndef mean(v):\n    return 0.0\n```",
            // Recorded too (2026-12-06, transit): bold, no colon.
            "**Changed `stats.py`**\n\n```python\ndef mean(v):\n    return 0.0\n```",
        ];
        for text in rows {
            assert_eq!(
                edits(text),
                [(
                    "write_file".to_string(),
                    json!({"path": "stats.py", "content": "def mean(v):\n    return 0.0\n", "merge": true})
                )],
                "{text}"
            );
        }
    }

    #[test]
    fn files_written_one_after_another_in_one_fence_are_each_a_write() {
        // Recorded from Qwen2.5-Coder-1.5B (a drive, 2026-12-06), shortened.
        let text = "```\n# cart.py\nclass Cart:\n    def clear(self):\n        # tests/test_cart.py calls it\n        self.items = {}\n\n# cart.py\nLIMIT = 9\n\n# tests/test_cart.py\nimport cart\n\ndef test_clear():\n    assert True\n\n# tests/test_empty_the_cart.py\nimport pytest\n```\n\nThe changes were made to `cart.py` and the tests.";
        let written: Vec<(String, String)> = edits(text)
            .into_iter()
            .map(|(_, args)| {
                let field = |key: &str| args[key].as_str().unwrap().to_string();
                (field("path"), field("content"))
            })
            .collect();
        let pair = |path: &str, content: &str| (path.to_string(), content.to_string());
        assert_eq!(
            written,
            [
                // An indented comment, or one naming the file it is in, starts no file.
                pair(
                    "cart.py",
                    "class Cart:\n    def clear(self):\n        # tests/test_cart.py calls it\n        self.items = {}\n\n# cart.py\nLIMIT = 9\n"
                ),
                pair(
                    "tests/test_cart.py",
                    "import cart\n\ndef test_clear():\n    assert True\n"
                ),
                pair("tests/test_empty_the_cart.py", "import pytest\n"),
            ]
        );
    }

    #[test]
    fn code_without_a_named_file_is_no_edit() {
        for text in [
            "```python\ndef mean(v):\n    return 0.0\n```",
            "Let's fix the import statement in textkit.py.\n```python\nfrom textkit import x\n```",
            "mean([]) returns 0.0:\n```python\nmean([])\n```",
            "Wrote tests for `stats.py` as follows:\n```python\ndef test_mean():\n    assert mean([1]) == 1\n```",
            "stats.py\n```json\n{\"name\": \"read_file\", \"arguments\": {}}\n```",
            "stats.py\n```bash\nls\n```",
            "### Changed Files:\n```\npyproject.toml\ntextkit.py\ntest_textkit.py\n```",
        ] {
            assert!(edits(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn search_replace_blocks_are_edits_inside_a_fence_or_not() {
        let text = "stats.py\n```python\n<<<<<<< SEARCH\n    return sum(values) / len(values)\n=======\n    if not values:\n        return 0.0\n    return sum(values) / len(values)\n>>>>>>> REPLACE\n```\n\ntest_stats.py\n<<<<<<< SEARCH\n=======\ndef test_empty():\n    assert mean([]) == 0.0\n>>>>>>> REPLACE\n";
        assert_eq!(
            edits(text),
            [
                (
                    "edit_file".to_string(),
                    json!({"path": "stats.py", "old_string": "    return sum(values) / len(values)\n",
                           "new_string": "    if not values:\n        return 0.0\n    return sum(values) / len(values)\n"})
                ),
                (
                    "edit_file".to_string(),
                    json!({"path": "test_stats.py", "old_string": "",
                           "new_string": "def test_empty():\n    assert mean([]) == 0.0\n"})
                ),
            ]
        );
    }

    #[test]
    fn the_file_after_its_change_is_written_under_the_heading_and_the_file_before_is_not() {
        let answer = "I apologize, but as an AI language model, I cannot physically change files.\n\n### inventory/cart.py\n\n**Before Change:**\n```python\nclass Cart:\n    OLD\n```\n\n**After Change:**\n```python\nclass Cart:\n    NEW\n```\n\n### Tests to Verify the Implementation\n\n**Before Change:**\n```python\ndef test_a():\n    OLD\n```\n\n**After Change:**\n```python\ndef test_a():\n    NEW\n```\n";
        let written = edits(answer);
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(written[0].1["path"], "inventory/cart.py");
        assert_eq!(written[0].1["content"], "class Cart:\n    NEW\n");
        // Nor is a file before its change the acceptance file a fence without a path is.
        let before_only = "**Before Change:**\n```python\ndef test_a():\n    OLD\n```\n";
        assert!(file_edits(before_only, Some("tests/test_a.py")).is_empty());
    }

    #[test]
    fn an_updated_file_under_a_heading_is_written_but_not_under_another_files_fence() {
        let headed = "### stats.py\nHere is the updated code:\n```python\nX = 1\n```\n";
        assert_eq!(edits(headed)[0].1["path"], "stats.py");
        let after_another = "### stats.py\n```python\nX = 1\n```\nHere is the new test file:\n```python\ndef test_x():\n    pass\n```\n";
        let written = edits(after_another);
        assert_eq!(written.len(), 1, "{written:?}");
        assert_eq!(written[0].1["content"], "X = 1\n");
    }

    #[test]
    fn paths_are_relative_file_names_with_an_extension() {
        for (token, path) in [
            ("`src/app.py`", Some("src/app.py")),
            ("./stats.py", Some("stats.py")),
            ("0.0", None),
            ("mean([])", None),
            ("/etc/passwd.txt", None),
            ("../x.py", None),
            ("e.g.", None),
            ("README", None),
        ] {
            assert_eq!(path_like(token).as_deref(), path, "{token}");
        }
    }
}
