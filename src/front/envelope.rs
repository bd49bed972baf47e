//! The envelope every `--json` document shares: `schemaVersion`, `kind`, then the document's
//! own fields, each document a struct of its own.

use serde::Serialize;

/// The `schemaVersion` of every `--json` document.
pub const SCHEMA_VERSION: u32 = 1;

/// A `--json` document: the envelope's two keys, then `body`'s fields.
#[derive(Debug, Serialize)]
pub struct Envelope<'a, T> {
    #[serde(rename = "schemaVersion")]
    schema_version: u32,
    kind: &'a str,
    #[serde(flatten)]
    body: T,
}

/// `body` in the envelope, as the document `kind`.
pub fn envelope<T: Serialize>(kind: &str, body: T) -> Envelope<'_, T> {
    Envelope {
        schema_version: SCHEMA_VERSION,
        kind,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_comes_first_then_the_body() {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Added {
            story_id: &'static str,
        }
        let text = serde_json::to_string(&envelope("added", Added { story_id: "s-1" })).unwrap();
        assert_eq!(
            text,
            r#"{"schemaVersion":1,"kind":"added","storyId":"s-1"}"#
        );
    }
}
