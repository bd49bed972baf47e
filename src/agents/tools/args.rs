//! A tool call's arguments, read tolerantly.

use serde_json::{Map, Value};

/// The JSON object of one call's arguments, read tolerantly: models send numbers as strings
/// and `null` for absent optional arguments.
pub(super) struct Args(Map<String, Value>);

impl Args {
    pub(super) fn parse(raw: &str) -> Result<Args, String> {
        // Some models send "" for a call without arguments.
        if raw.trim().is_empty() {
            return Ok(Args(Map::new()));
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(map)) => Ok(Args(map)),
            Ok(Value::Null) => Ok(Args(Map::new())),
            Ok(_) => Err("arguments must be a JSON object".to_string()),
            Err(err) => Err(format!(
                "arguments are not valid JSON ({err}); send one JSON object, e.g. {{\"path\": \"src/main.rs\"}}"
            )),
        }
    }

    fn present(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|value| !value.is_null())
    }

    pub(super) fn string(&self, key: &str) -> Result<&str, String> {
        self.opt_string(key)?
            .ok_or_else(|| format!("missing required argument '{key}'"))
    }

    pub(super) fn opt_string(&self, key: &str) -> Result<Option<&str>, String> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(format!("argument '{key}' must be a string")),
        }
    }

    pub(super) fn opt_count(&self, key: &str) -> Result<Option<usize>, String> {
        let Some(number) = self.opt_number(key)? else {
            return Ok(None);
        };
        if number < 0.0 || number.fract() != 0.0 {
            return Err(format!("argument '{key}' must be a non-negative integer"));
        }
        // Saturates for absurd values, which then simply read past the end.
        Ok(Some(number as usize))
    }

    pub(super) fn opt_seconds(&self, key: &str) -> Result<Option<f64>, String> {
        match self.opt_number(key)? {
            Some(secs) if secs <= 0.0 => Err(format!("argument '{key}' must be positive")),
            other => Ok(other),
        }
    }

    fn opt_number(&self, key: &str) -> Result<Option<f64>, String> {
        let number = match self.present(key) {
            None => return Ok(None),
            Some(Value::Number(number)) => number.as_f64(),
            Some(Value::String(text)) => text.trim().parse::<f64>().ok(),
            Some(_) => None,
        };
        match number {
            Some(number) if number.is_finite() => Ok(Some(number)),
            _ => Err(format!("argument '{key}' must be a number")),
        }
    }
}
