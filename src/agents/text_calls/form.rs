//! A call read from a reply's text, and the form it was written in.

use serde::Serialize;

/// How a call reached the tool; recorded with every call in the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallForm {
    /// OpenAI function calling: the server parsed the call.
    Native,
    /// A JSON object in a code fence.
    JsonFence,
    /// A JSON object between `<tool_call>` and `</tool_call>`.
    ToolCallTags,
    /// A JSON object in the prose.
    BareJson,
    /// A ```bash fence, read as run_command (text protocol only).
    BashFence,
    /// A whole file in a code fence under its path, read as write_file (aider's "whole" format).
    FileFence,
    /// A SEARCH/REPLACE block under a path, read as edit_file (aider's "diff" format).
    SearchReplace,
}

impl CallForm {
    pub fn name(self) -> &'static str {
        match self {
            CallForm::Native => "native",
            CallForm::JsonFence => "json_fence",
            CallForm::ToolCallTags => "tool_call_tags",
            CallForm::BareJson => "bare_json",
            CallForm::BashFence => "bash_fence",
            CallForm::FileFence => "file_fence",
            CallForm::SearchReplace => "search_replace",
        }
    }

    /// The protocol the call came through: `native` or `text`.
    pub fn protocol(self) -> &'static str {
        match self {
            CallForm::Native => "native",
            _ => "text",
        }
    }
}

/// A call read from text: the tool's name and its arguments as a JSON object's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCall {
    pub name: String,
    pub arguments: String,
    pub form: CallForm,
}
