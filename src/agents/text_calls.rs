//! Tool calls written in a reply's text rather than sent as native tool calls.
//!
//! Small models served without (or despite) tool-call parsing write their calls as text: a JSON
//! object with a tool name and arguments in a ```json fence, in `<tool_call>` tags (the Qwen and
//! Hermes form), or bare; and under the text protocol, a shell command in a ```bash fence. Their
//! JSON is often not quite JSON: Qwen2.5's own chat template shows the call as `{{"name": …}}`,
//! and code inside arguments comes in Python's `"""…"""` quotes. This module finds such calls
//! and reads them as leniently as it can without guessing: anything it cannot read is reported,
//! so the model can be told, never run half-understood.

use serde_json::{Map, Value};

pub use answer::without_calls;
pub use form::{CallForm, TextCall};

/// What a reply's text holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub calls: Vec<TextCall>,
    /// Files written out as edits (whole files in fences, SEARCH/REPLACE blocks): the model's
    /// change, which ends its turn as aider's formats do.
    pub edits: Vec<TextCall>,
    /// Something that looks like a call but could not be read, and why; for the model.
    pub unreadable: Option<String>,
}

/// What to look for.
#[derive(Debug, Clone, Copy)]
pub struct Expect<'a> {
    /// The tools the agent has. A JSON object naming another tool is a call only when
    /// `any_name` holds (the text protocol, where the model must hear that the tool is unknown).
    pub tools: &'a [&'a str],
    pub any_name: bool,
    /// A ```bash fence is a run_command call (only under the text protocol: elsewhere a shell
    /// fence is usually an example for a person).
    pub bash: bool,
    /// Whole files in fences and SEARCH/REPLACE blocks are edits (for an agent that writes).
    pub edits: bool,
    /// Where a reply's code fence goes when no fence of it names a file (see
    /// `ConverseOptions::default_file`).
    pub default_file: Option<&'a str>,
}

/// The markup of chat templates that small models copy into their answers: Qwen's tool result
/// wrapper most of all, which their own template shows them after every call.
const TEMPLATE_MARKUP: [&str; 7] = [
    "<tool_response>",
    "</tool_response>",
    "<tool_call>",
    "</tool_call>",
    "<|im_start|>assistant",
    "<|im_end|>",
    "<|endoftext|>",
];

/// An answer without the chat-template markup the model copied into it, trimmed.
pub fn without_template_markup(text: &str) -> String {
    let mut out = text.to_string();
    for marker in TEMPLATE_MARKUP {
        out = out.replace(marker, "");
    }
    out.trim().to_string()
}

/// The tool a bash fence calls, and its argument.
const SHELL_TOOL: &str = "run_command";
const SHELL_ARGUMENT: &str = "command";

/// Finds the calls in `text`, in the order written.
pub fn extract(text: &str, expect: Expect<'_>) -> Extraction {
    let mut found = Extraction::default();
    let outside_tags = tagged_calls(text, expect, &mut found);
    let outside_fences = fenced_calls(&outside_tags, expect, &mut found);
    if found.calls.is_empty() {
        bare_calls(&outside_fences, expect, &mut found);
    }
    if expect.edits {
        found.edits = edits::file_edits(text, expect.default_file);
    }
    if !found.calls.is_empty() || !found.edits.is_empty() {
        found.unreadable = None;
    }
    found
}

/// Reads every `<tool_call>` block (an unclosed last one runs to the end) and returns the text
/// around them.
fn tagged_calls(text: &str, expect: Expect<'_>, found: &mut Extraction) -> String {
    const OPEN: &str = "<tool_call>";
    const CLOSE: &str = "</tool_call>";
    let mut rest = text;
    let mut outside = String::new();
    while let Some(start) = rest.find(OPEN) {
        outside.push_str(&rest[..start]);
        let body_start = start + OPEN.len();
        let (body, next) = match rest[body_start..].find(CLOSE) {
            Some(end) => (
                &rest[body_start..body_start + end],
                body_start + end + CLOSE.len(),
            ),
            None => (&rest[body_start..], rest.len()),
        };
        let body = strip_fence(body.trim());
        read_block(body, CallForm::ToolCallTags, expect, found);
        rest = &rest[next..];
    }
    outside.push_str(rest);
    outside
}

/// Reads the JSON and shell fences and returns the text outside them.
fn fenced_calls(text: &str, expect: Expect<'_>, found: &mut Extraction) -> String {
    let mut outside = String::new();
    let mut lines = text.split_inclusive('\n');
    while let Some(line) = lines.next() {
        let (marker, info) = match fence_open(line) {
            Some(opened) => opened,
            None => match fence_opened_at_end(line) {
                Some((lead_in, marker, info)) => {
                    outside.push_str(lead_in);
                    outside.push('\n');
                    (marker, info)
                }
                None => {
                    outside.push_str(line);
                    continue;
                }
            },
        };
        let mut body = String::new();
        for inner in lines.by_ref() {
            if closes_fence(inner, marker) {
                break;
            }
            body.push_str(inner);
        }
        let language = fence_language(info);
        match language.as_str() {
            "bash" | "sh" | "shell" | "console" | "zsh" if expect.bash => {
                let command = shell_command(&body);
                if !command.is_empty() {
                    let mut arguments = Map::new();
                    arguments.insert(SHELL_ARGUMENT.into(), Value::String(command));
                    found.calls.push(TextCall {
                        name: SHELL_TOOL.to_string(),
                        arguments: Value::Object(arguments).to_string(),
                        form: CallForm::BashFence,
                    });
                }
            }
            language if holds_json(language) => {
                read_block(body.trim(), CallForm::JsonFence, expect, found);
            }
            _ => {}
        }
    }
    outside
}

/// The language a fence's info string names, lower-cased ("" for none).
fn fence_language(info: &str) -> String {
    info.split_whitespace()
        .next()
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Whether a fence of this language is where a model writes its JSON calls.
fn holds_json(language: &str) -> bool {
    matches!(
        language,
        "" | "json" | "json5" | "jsonc" | "tool_call" | "tool" | "javascript" | "js"
    )
}

/// Whether `line` closes a fence opened with `marker`.
fn closes_fence(line: &str, marker: &str) -> bool {
    line.trim_start().starts_with(marker)
        && line
            .trim()
            .trim_matches(marker.chars().next().unwrap_or('`'))
            .is_empty()
}

/// A fence's opening line: its marker and info string.
fn fence_open(line: &str) -> Option<(&'static str, &str)> {
    let trimmed = line.trim_start();
    ["```", "~~~"].into_iter().find_map(|marker| {
        trimmed.strip_prefix(marker).map(|info| {
            (
                marker,
                info.trim_start_matches(marker.chars().next().unwrap_or('`'))
                    .trim(),
            )
        })
    })
}

/// A fence opened at the end of a line of prose, as the 1.5B model wrote its plans' steps
/// (the inventory benchmark, 2026-11-29): "- **Action**: ```json", then a call or nothing, then
/// the closing marker on a line of its own. The prose before the marker, the marker and the
/// info string.
fn fence_opened_at_end(line: &str) -> Option<(&str, &'static str, &str)> {
    let (lead_in, info) = line.trim_end().rsplit_once("```")?;
    let one_word = info.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!lead_in.trim().is_empty() && !lead_in.contains('`') && one_word)
        .then_some((lead_in, "```", info))
}

fn strip_fence(body: &str) -> &str {
    let Some(first_break) = body.find('\n') else {
        return body;
    };
    if !body.starts_with("```") {
        return body;
    }
    let inner = &body[first_break + 1..];
    inner.trim_end().strip_suffix("```").unwrap_or(inner).trim()
}

/// The command of a shell fence: `$ ` prompts removed, comment-only lines dropped.
fn shell_command(body: &str) -> String {
    body.lines()
        .map(|line| line.strip_prefix("$ ").unwrap_or(line))
        .filter(|line| !line.trim_start().starts_with('#') && !line.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads the JSON values of a tag or fence body; a body that names a tool but cannot be read
/// is reported as unreadable.
fn read_block(body: &str, form: CallForm, expect: Expect<'_>, found: &mut Extraction) {
    let before = found.calls.len();
    let mut rest = body;
    let mut failure = None;
    while !rest.trim().is_empty() {
        let start = rest.len() - rest.trim_start().len();
        match lenient_value(&rest[start..]) {
            Ok((value, used)) => {
                push_calls(&value, form, expect, found);
                rest = &rest[start + used..];
            }
            Err(why) => {
                failure = Some(why);
                break;
            }
        }
    }
    if found.calls.len() == before && (form == CallForm::ToolCallTags || names_a_tool(body, expect))
    {
        let why = failure.unwrap_or_else(|| "it holds no tool name and arguments".to_string());
        found.unreadable.get_or_insert(format!(
            "a tool call in your reply could not be read: {why}"
        ));
    }
}

/// Whether a text mentions one of the tools, so that a failure to read it is worth reporting.
fn names_a_tool(text: &str, expect: Expect<'_>) -> bool {
    expect.tools.iter().any(|tool| text.contains(tool)) || text.contains("\"name\"")
}

/// Bare JSON objects in prose: every `{` or `[` that starts a readable value.
fn bare_calls(text: &str, expect: Expect<'_>, found: &mut Extraction) {
    let mut at = 0;
    while let Some(offset) = text[at..].find(['{', '[']) {
        let start = at + offset;
        match lenient_value(&text[start..]) {
            Ok((value, used)) => {
                let before = found.calls.len();
                push_calls(&value, CallForm::BareJson, expect, found);
                at = if found.calls.len() > before {
                    start + used
                } else {
                    start + 1
                };
            }
            Err(_) => at = start + 1,
        }
    }
}

/// Adds the calls one JSON value describes: an object, or an array of them.
fn push_calls(value: &Value, form: CallForm, expect: Expect<'_>, found: &mut Extraction) {
    if let Value::Array(items) = value {
        for item in items {
            push_calls(item, form, expect, found);
        }
        return;
    }
    if let Some((name, arguments)) = call_of(value, expect) {
        found.calls.push(TextCall {
            name,
            arguments,
            form,
        });
    }
}

const NAME_KEYS: [&str; 5] = ["name", "tool", "tool_name", "function", "action"];
const ARGUMENT_KEYS: [&str; 5] = ["arguments", "parameters", "args", "input", "action_input"];

/// The tool and arguments of one JSON object, in the shapes models write:
/// `{"name", "arguments"}` (also `parameters`, `args`, `input`), `{"function": {"name",
/// "arguments"}}`, `{"tool": …}`, and `{"read_file": {"path": …}}`.
fn call_of(value: &Value, expect: Expect<'_>) -> Option<(String, String)> {
    let object = value.as_object()?;
    if let Some(inner) = object.get("function").filter(|f| f.is_object()) {
        return call_of(inner, expect);
    }
    let named = NAME_KEYS
        .iter()
        .find_map(|key| object.get(*key).and_then(Value::as_str));
    if let Some(name) = named {
        let name = name.trim();
        let known = expect.tools.contains(&name);
        let plausible = expect.any_name && is_identifier(name);
        if !(known || plausible) {
            return None;
        }
        let arguments = ARGUMENT_KEYS
            .iter()
            .find_map(|key| object.get(*key))
            .map_or_else(|| Ok(Value::Object(Map::new())), arguments_object)
            .ok()?;
        // A tool's definition echoed from the chat template (`<tools>` in Qwen's) names the
        // tool and has a JSON schema for "parameters": it describes a call, it is not one.
        if is_schema(&arguments) {
            return None;
        }
        // An object with a name and other keys but no arguments is data, not a call.
        let other_keys = object.keys().any(|key| {
            !NAME_KEYS.contains(&key.as_str())
                && !ARGUMENT_KEYS.contains(&key.as_str())
                && key != "type"
                && key != "id"
        });
        if other_keys && !ARGUMENT_KEYS.iter().any(|key| object.contains_key(*key)) {
            return None;
        }
        return Some((name.to_string(), arguments.to_string()));
    }
    // `{"read_file": {"path": "a.py"}}`: the tool's name as the only key.
    match object.iter().collect::<Vec<_>>().as_slice() {
        [(name, arguments)] if expect.tools.contains(&name.as_str()) && arguments.is_object() => {
            Some((name.to_string(), arguments.to_string()))
        }
        _ => None,
    }
}

/// `{"type": "object", "properties": {…}}`: a JSON schema, as a tool's definition has.
fn is_schema(arguments: &Value) -> bool {
    arguments.get("type").and_then(Value::as_str) == Some("object")
        && arguments.get("properties").is_some_and(Value::is_object)
}

/// Arguments as an object: given as one, or as a JSON string holding one.
fn arguments_object(value: &Value) -> Result<Value, ()> {
    match value {
        Value::Object(_) => Ok(value.clone()),
        Value::Null => Ok(Value::Object(Map::new())),
        Value::String(text) => match lenient_value(text.trim()) {
            Ok((inner @ Value::Object(_), _)) => Ok(inner),
            _ => Err(()),
        },
        _ => Err(()),
    }
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// Reads one JSON value at the start of `text`: as JSON, else with the slips small models make
/// repaired (doubled braces, Python triple-quoted strings, trailing commas). Returns the value
/// and the bytes of `text` it took.
pub(crate) fn lenient_value(text: &str) -> Result<(Value, usize), String> {
    let strict = first_value(text);
    let strict_error = match strict {
        Ok(found) => return Ok(found),
        Err(err) => err,
    };
    // `{{"name": …}}`: a template's escaped braces copied literally.
    if let Some(inner) = text.strip_prefix("{{") {
        if let Ok((value, used)) = lenient_value(&format!("{{{inner}")) {
            let mut used = used + 1;
            while text[used..].starts_with('}') {
                used += 1;
            }
            return Ok((value, used.min(text.len())));
        }
    }
    let end = balanced_end(text).unwrap_or(text.len());
    let slice = &text[..end];
    // Code inside arguments comes either as a Python string (`"content": """…"""`) or as a
    // JSON string with the code's own quotes left unescaped (a docstring's `"""`).
    let repairs = [
        triple_quotes_as_json(slice),
        stray_quotes_escaped(slice),
        stray_quotes_escaped(&triple_quotes_as_json(slice)),
    ];
    repairs
        .iter()
        .find_map(|repaired| first_value(&without_trailing_commas(repaired)).ok())
        .map(|(value, _)| (value, end))
        .ok_or(strict_error)
}

/// Escapes the quotes inside JSON strings that cannot be where a string ends: a `"` closes a
/// string only when what follows it (spaces aside) is `,` `:` `}` `]` or the end.
fn stray_quotes_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut escaped = false;
    for (at, c) in text.char_indices() {
        if !in_string {
            in_string = c == '"';
            out.push(c);
            continue;
        }
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '"') => {
                let next = text[at + 1..].chars().find(|n| !n.is_whitespace());
                if matches!(next, None | Some(',' | ':' | '}' | ']')) {
                    in_string = false;
                } else {
                    out.push('\\');
                }
            }
            (false, '\n') => {
                out.push_str("\\n");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

fn first_value(text: &str) -> Result<(Value, usize), String> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match stream.next() {
        Some(Ok(value)) => Ok((value, stream.byte_offset())),
        Some(Err(err)) => Err(err.to_string()),
        None => Err("no JSON value".to_string()),
    }
}

/// Where the object or array that `text` starts with ends, counting brackets outside strings
/// (both `"…"` and `"""…"""`).
fn balanced_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' if text[at..].starts_with("\"\"\"") => {
                at = text[at + 3..].find("\"\"\"").map(|end| at + 3 + end + 3)?;
                continue;
            }
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(at + 1);
                }
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// Python's `"""…"""` strings written as JSON strings; adjacent ones are joined, as Python
/// joins them.
fn triple_quotes_as_json(text: &str) -> String {
    const TRIPLE: &str = "\"\"\"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(TRIPLE) {
        let mut joined = String::new();
        let mut after = &rest[start + TRIPLE.len()..];
        let mut closed = false;
        while let Some(end) = after.find(TRIPLE) {
            joined.push_str(&after[..end]);
            after = &after[end + TRIPLE.len()..];
            closed = true;
            match after.trim_start().strip_prefix(TRIPLE) {
                Some(next) => after = next,
                None => break,
            }
        }
        if !closed {
            break;
        }
        out.push_str(&rest[..start]);
        out.push_str(&Value::String(joined).to_string());
        rest = after;
    }
    out.push_str(rest);
    out
}

/// `,}` and `,]` (whitespace between allowed) outside strings, with the comma removed.
fn without_trailing_commas(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let chars: Vec<char> = text.chars().collect();
    for (index, c) in chars.iter().enumerate() {
        if in_string {
            out.push(*c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if *c == '"' {
            in_string = true;
        }
        if *c == ',' {
            let next = chars[index + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}') | Some(']')) {
                continue;
            }
        }
        out.push(*c);
    }
    out
}

mod answer;
mod edits;
mod form;
#[cfg(test)]
mod tests;
