//! Which way a model makes tool calls, asked once with a one-tool request (docs/design.md §21,
//! "Defaults found by probing"): a server and model that answer it with a native call get
//! native calls; one that answers in text, or refuses tools, gets them described in the prompt
//! and read from the text, and files written whole.

use serde_json::json;

use super::{ChatMessage, ChatRequest, LlmClient, LlmSettings, Sampling};
use crate::config::ToolProtocol;

/// The one tool of the probe.
pub const PROBE_TOOL: &str = "agentic_sdlc_ready";

/// How the model at `settings` makes tool calls; `None` when the server gave no usable answer
/// (unreachable, the key refused): the run's own checks then say why.
pub async fn tool_protocol(settings: &LlmSettings) -> Option<ToolProtocol> {
    let client = LlmClient::for_a_probe(settings.clone()).ok()?;
    let messages = [
        ChatMessage::System(format!(
            "You check that you can call tools. Call the tool `{PROBE_TOOL}` now, with no arguments."
        )),
        ChatMessage::User(format!("Call `{PROBE_TOOL}`.")),
    ];
    let tools = [json!({
        "type": "function",
        "function": {
            "name": PROBE_TOOL,
            "description": "Says that you are ready. Call it when asked.",
            "parameters": {"type": "object", "properties": {}},
        }
    })];
    let request = ChatRequest {
        messages: &messages,
        tools: &tools,
        max_tokens: Some(64),
        schema: None,
        sampling: Sampling {
            temperature: Some(0.0),
            seed: None,
        },
        shape: super::ReplyShape::Free,
    };
    match client.exchange(&request).await.result {
        Ok(reply) if !reply.tool_calls.is_empty() => Some(ToolProtocol::Native),
        Ok(_) => Some(ToolProtocol::Text),
        Err(err) if err.is_tools_unsupported() => Some(ToolProtocol::Text),
        Err(err) => {
            tracing::debug!("the tool-call probe got no answer: {err}");
            None
        }
    }
}
