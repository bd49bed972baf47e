//! The envelope every `--json` document shares.

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
