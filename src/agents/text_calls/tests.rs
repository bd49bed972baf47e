//! Reading calls out of text: replies recorded from a real small model, then one row per shape.

use serde_json::{json, Value};

use super::*;

const TOOLS: &[&str] = &[
    "read_file",
    "list_files",
    "search",
    "write_file",
    "edit_file",
    "run_command",
];

const AUTO: Expect<'static> = Expect {
    tools: TOOLS,
    any_name: false,
    bash: false,
    edits: false,
    default_file: None,
};

const TEXT: Expect<'static> = Expect {
    tools: TOOLS,
    any_name: true,
    bash: true,
    edits: false,
    default_file: None,
};

/// The reply text of a recording: a chat completion's message content, or a prefix the turn
/// was begun with followed by the model's continuation.
fn recorded(json: &str) -> String {
    let recording: Value = serde_json::from_str(json).unwrap();
    let response = &recording["response"];
    match response["choices"][0]["message"]["content"].as_str() {
        Some(content) => content.to_string(),
        None => format!(
            "{}{}",
            recording["reply_prefix"].as_str().unwrap(),
            response["content"].as_str().unwrap()
        ),
    }
}

fn only_call(text: &str, expect: Expect<'_>) -> (String, Value, CallForm) {
    let found = extract(text, expect);
    assert_eq!(found.calls.len(), 1, "{text:?} gave {found:?}");
    let call = &found.calls[0];
    let arguments: Value = serde_json::from_str(&call.arguments).unwrap();
    (call.name.clone(), arguments, call.form)
}

#[test]
fn a_recorded_json_fence_is_a_call() {
    let reply = recorded(include_str!("recorded/json_fence.json"));
    assert_eq!(
        only_call(&reply, AUTO),
        (
            "read_file".into(),
            json!({"path": "stats.py"}),
            CallForm::JsonFence
        )
    );
}

#[test]
fn a_recorded_tool_call_tag_is_a_call_even_unclosed() {
    let reply = recorded(include_str!("recorded/tool_call_tags.json"));
    assert!(reply.starts_with("<tool_call>") && !reply.contains("</tool_call>"));
    assert_eq!(
        only_call(&reply, AUTO),
        (
            "read_file".into(),
            json!({"path": "stats.py"}),
            CallForm::ToolCallTags
        )
    );
}

#[test]
fn a_recorded_bare_json_object_is_a_call() {
    let reply = recorded(include_str!("recorded/bare_json.json"));
    assert_eq!(
        only_call(&reply, AUTO),
        (
            "read_file".into(),
            json!({"path": "stats.py"}),
            CallForm::BareJson
        )
    );
}

#[test]
fn a_recorded_bash_fence_is_a_command_under_the_text_protocol_only() {
    let reply = recorded(include_str!("recorded/bash_fence.json"));
    assert_eq!(
        only_call(&reply, TEXT),
        (
            "run_command".into(),
            json!({"command": "git checkout main"}),
            CallForm::BashFence
        )
    );
    assert_eq!(extract(&reply, AUTO), Extraction::default());
}

#[test]
fn recorded_slips_are_repaired_doubled_braces_and_triple_quotes() {
    let reply = recorded(include_str!("recorded/double_braces.json"));
    let (name, arguments, form) = only_call(&reply, AUTO);
    assert_eq!((name.as_str(), form), ("edit_file", CallForm::BareJson));
    assert_eq!(arguments["old_string"], "return sum(values)");

    let reply = recorded(include_str!("recorded/triple_quotes.json"));
    let (name, arguments, form) = only_call(&reply, AUTO);
    assert_eq!((name.as_str(), form), ("write_file", CallForm::JsonFence));
    // Two adjacent triple-quoted strings join, as in Python.
    assert_eq!(
        arguments["content"],
        "Small statistics helpers.def mean(values):\n            return sum(values) / len(values)"
    );
}

/// A reply, how it is read, and the one call expected from it (or none).
type Row = (
    &'static str,
    Expect<'static>,
    Option<(&'static str, Value, CallForm)>,
);

#[test]
fn a_recorded_docstring_left_unescaped_in_a_json_string_is_repaired() {
    let reply = recorded(include_str!("recorded/docstring_quotes.json"));
    let (name, arguments, form) = only_call(&reply, AUTO);
    assert_eq!((name.as_str(), form), ("write_file", CallForm::JsonFence));
    assert_eq!(
        arguments["content"],
        "import sys\nimport os\n\ndef mean(values):\n    \"\"\"Return the arithmetic mean of a list of numbers.\"\"\"\n    if not values:\n        return 0.0\n    return sum(values) / len(values)"
    );
    assert_eq!(arguments["overwrite"], true);
}

#[test]
fn a_recorded_echo_of_a_tool_definition_is_no_call() {
    let reply = recorded(include_str!("recorded/tools_echo.json"));
    assert!(reply.starts_with("<tools>"), "{reply}");
    for expect in [AUTO, TEXT] {
        let found = extract(&reply, expect);
        assert!(found.calls.is_empty(), "{found:?}");
    }
    // A call whose arguments merely hold a `type` key is still a call.
    let (name, arguments, _) = only_call(
        r#"{"name": "write_file", "arguments": {"path": "a.json", "content": "{}", "type": "object"}}"#,
        AUTO,
    );
    assert_eq!(
        (name.as_str(), &arguments["path"]),
        ("write_file", &json!("a.json"))
    );
}

#[test]
fn shapes_of_calls_one_row_each() {
    let rows: [Row; 13] = [
        (
            "I will read it.\n```json\n{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.py\"}}\n```",
            AUTO,
            Some(("read_file", json!({"path": "a.py"}), CallForm::JsonFence)),
        ),
        (
            "<tool_call>\n{\"name\": \"search\", \"arguments\": \"{\\\"pattern\\\": \\\"x\\\"}\"}\n</tool_call>",
            AUTO,
            Some(("search", json!({"pattern": "x"}), CallForm::ToolCallTags)),
        ),
        (
            "{\"function\": {\"name\": \"list_files\", \"arguments\": {}}}",
            AUTO,
            Some(("list_files", json!({}), CallForm::BareJson)),
        ),
        (
            "{\"read_file\": {\"path\": \"b.py\"}}",
            AUTO,
            Some(("read_file", json!({"path": "b.py"}), CallForm::BareJson)),
        ),
        (
            "{\"tool\": \"run_command\", \"args\": {\"command\": \"ls\",}}",
            AUTO,
            Some(("run_command", json!({"command": "ls"}), CallForm::BareJson)),
        ),
        (
            "```\n{\"name\": \"list_files\"}\n```",
            AUTO,
            Some(("list_files", json!({}), CallForm::JsonFence)),
        ),
        (
            "```sh\n$ python3 -m pytest -q\n```",
            TEXT,
            Some((
                "run_command",
                json!({"command": "python3 -m pytest -q"}),
                CallForm::BashFence,
            )),
        ),
        (
            "{\"name\": \"delete_repo\", \"arguments\": {}}",
            TEXT,
            Some(("delete_repo", json!({}), CallForm::BareJson)),
        ),
        // Not calls: an unknown tool under auto, data with a name, code, prose.
        ("{\"name\": \"delete_repo\", \"arguments\": {}}", AUTO, None),
        (
            "{\"name\": \"read_file\", \"passed\": true, \"issues\": []}",
            AUTO,
            None,
        ),
        (
            "```python\nprint({\"name\": \"read_file\", \"arguments\": {}})\n```",
            AUTO,
            None,
        ),
        ("Done: I changed stats.py.", TEXT, None),
        ("```bash\nls\n```", AUTO, None),
    ];
    for (text, expect, want) in rows {
        let found = extract(text, expect);
        match want {
            None => assert!(found.calls.is_empty(), "{text:?} gave {found:?}"),
            Some((name, arguments, form)) => {
                assert_eq!(
                    only_call(text, expect),
                    (name.to_string(), arguments, form),
                    "{text:?}"
                )
            }
        }
    }
}

#[test]
fn several_calls_come_in_the_order_written() {
    let text = "{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}";
    let found = extract(text, AUTO);
    let paths: Vec<Value> = found
        .calls
        .iter()
        .map(|call| serde_json::from_str::<Value>(&call.arguments).unwrap()["path"].clone())
        .collect();
    assert_eq!(paths, [json!("a"), json!("b")]);
}

#[test]
fn a_call_that_cannot_be_read_is_reported_not_guessed() {
    let text = "```json\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"a.py\" \"old_string\": 1}}\n```";
    let found = extract(text, AUTO);
    assert!(found.calls.is_empty());
    let why = found.unreadable.expect("reported");
    assert!(
        why.starts_with("a tool call in your reply could not be read: "),
        "{why}"
    );

    let found = extract("<tool_call>\nread the file please\n</tool_call>", AUTO);
    assert!(found.unreadable.is_some(), "{found:?}");
    // A fence of other JSON is just JSON.
    assert_eq!(
        extract("```json\n{\"passed\": true}\n```", AUTO),
        Extraction::default()
    );
}

#[test]
fn copied_template_markup_is_taken_out_of_an_answer() {
    assert_eq!(
        without_template_markup("<tool_response>\nAdded a test.\n</tool_response><|im_end|>"),
        "Added a test."
    );
    assert_eq!(without_template_markup("Plain notes."), "Plain notes.");
}
