//! A tool call's arguments, read into each tool's own serde `Args` type, tolerantly: models send
//! numbers as strings, `null` for absent optional arguments, `""` for a call without arguments,
//! and words of their own for a name (`file_path` for `path`; the `Args` types list such
//! aliases). A mismatch is explained in words the model can act on.

use serde::de::{DeserializeOwned, Deserializer};
use serde::Deserialize;
use serde_json::{Map, Value};

/// Reads a call's JSON arguments into `A`, or says what is wrong with them.
pub(super) fn parse<A: DeserializeOwned>(raw: &str) -> Result<A, String> {
    let value = if raw.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(map)) => Value::Object(map),
            Ok(Value::Null) => Value::Object(Map::new()),
            Ok(_) => return Err("arguments must be a JSON object".to_string()),
            Err(err) => {
                return Err(format!(
                    "arguments are not valid JSON ({err}); send one JSON object, e.g. {{\"path\": \"src/main.rs\"}}"
                ))
            }
        }
    };
    serde_path_to_error::deserialize(value).map_err(|err| {
        let key = err.path().to_string();
        explain(&key, &err.into_inner().to_string())
    })
}

/// serde's words ("missing field `path`", "invalid type: integer `3`, expected a string") as a
/// sentence about the argument.
fn explain(key: &str, serde_words: &str) -> String {
    if let Some(rest) = serde_words.strip_prefix("missing field `") {
        let missing = rest.split('`').next().unwrap_or(rest);
        return format!("missing required argument '{missing}'");
    }
    let expected = serde_words
        .rsplit_once(", expected ")
        .map(|(_, expected)| expected);
    match (key, expected) {
        (".", _) | ("", _) => format!("arguments do not fit: {serde_words}"),
        (key, Some(expected)) => format!("argument '{key}' must be {expected}"),
        (key, None) => format!("argument '{key}': {serde_words}"),
    }
}

/// An optional whole number, also when sent as a string (`"20"`); negative or fractional
/// numbers are refused.
pub(super) fn opt_count<'de, D: Deserializer<'de>>(de: D) -> Result<Option<usize>, D::Error> {
    let Some(number) = opt_number(de)? else {
        return Ok(None);
    };
    if number < 0.0 || number.fract() != 0.0 {
        return Err(serde::de::Error::custom(
            "invalid value, expected a non-negative integer",
        ));
    }
    // Saturates for absurd values, which then simply read past the end.
    Ok(Some(number as usize))
}

/// An optional positive number of seconds, also when sent as a string.
pub(super) fn opt_seconds<'de, D: Deserializer<'de>>(de: D) -> Result<Option<f64>, D::Error> {
    match opt_number(de)? {
        Some(secs) if secs <= 0.0 => Err(serde::de::Error::custom(
            "invalid value, expected a positive number",
        )),
        other => Ok(other),
    }
}

/// A flag, also when sent as the string `"true"` or `"false"`.
pub(super) fn lenient_bool<'de, D: Deserializer<'de>>(de: D) -> Result<bool, D::Error> {
    match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(flag),
        Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(text)) if text.trim().eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(serde::de::Error::custom(
            "invalid type, expected true or false",
        )),
    }
}

fn opt_number<'de, D: Deserializer<'de>>(de: D) -> Result<Option<f64>, D::Error> {
    let number = match Option::<Value>::deserialize(de)? {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(number)) => number.as_f64(),
        Some(Value::String(text)) => text.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    match number {
        Some(number) if number.is_finite() => Ok(Some(number)),
        _ => Err(serde::de::Error::custom("invalid type, expected a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Sample {
        #[serde(alias = "file_path")]
        path: String,
        #[serde(default, deserialize_with = "opt_count")]
        offset: Option<usize>,
        #[serde(default, deserialize_with = "opt_seconds")]
        timeout: Option<f64>,
        #[serde(default, deserialize_with = "lenient_bool")]
        overwrite: bool,
    }

    #[test]
    fn arguments_are_read_tolerantly_and_mismatches_explained() {
        let cases: [(&str, Result<Sample, &str>); 9] = [
            (
                r#"{"path": "a", "offset": "3", "timeout": null, "overwrite": "true"}"#,
                Ok(Sample {
                    path: "a".into(),
                    offset: Some(3),
                    timeout: None,
                    overwrite: true,
                }),
            ),
            (
                r#"{"file_path": "b", "extra": 1}"#,
                Ok(Sample {
                    path: "b".into(),
                    offset: None,
                    timeout: None,
                    overwrite: false,
                }),
            ),
            ("", Err("missing required argument 'path'")),
            ("null", Err("missing required argument 'path'")),
            ("[1]", Err("arguments must be a JSON object")),
            (r#"{"path": "#, Err("arguments are not valid JSON")),
            (r#"{"path": 3}"#, Err("argument 'path' must be a string")),
            (
                r#"{"path": "a", "offset": -1}"#,
                Err("argument 'offset' must be a non-negative integer"),
            ),
            (
                r#"{"path": "a", "timeout": 0}"#,
                Err("argument 'timeout' must be a positive number"),
            ),
        ];
        for (raw, expected) in cases {
            match (parse::<Sample>(raw), expected) {
                (Ok(got), Ok(want)) => assert_eq!(got, want, "{raw}"),
                (Err(got), Err(want)) => assert!(got.contains(want), "{raw}: {got}"),
                (got, want) => panic!("{raw}: got {got:?}, want {want:?}"),
            }
        }
    }
}
