//! What the two front ends, the command line and the MCP server, both give: the JSON views,
//! adding a story, and starting a run. Here, above both, so that neither imports the other
//! (docs/design.md, "Layers of the code").

pub(crate) mod launch;
pub(crate) mod new_story;
pub(crate) mod status;
pub(crate) mod story;

/// The `schemaVersion` of every `--json` document.
pub const SCHEMA_VERSION: u32 = 1;

/// The JSON envelope every `--json` document shares.
pub fn envelope(
    kind: &str,
    mut body: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let mut out = serde_json::Map::new();
    out.insert("schemaVersion".into(), SCHEMA_VERSION.into());
    out.insert("kind".into(), kind.into());
    out.append(&mut body);
    serde_json::Value::Object(out)
}
