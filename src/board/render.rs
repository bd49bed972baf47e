//! How the tool writes a frontmatter entry: block style as serde_norway emits it, dates quoted
//! for YAML 1.1 readers, and flow style with escapes for the few values libyaml would misread.

/// Renders `key: value` the way the tool writes new entries: block style, and calendar dates
/// quoted so that YAML 1.1 readers (js-yaml, PyYAML) keep them as strings instead of turning
/// `2026-11-22` or a timestamp into a date.
///
/// serde_norway has no way to ask for a quoted scalar, so each date is serialised as a
/// placeholder token and the token is then replaced by the quoted date. The token's prefix is
/// chosen so that it occurs nowhere in the entry serialised without placeholders: since a token
/// is a whole plain scalar, the prefix then occurs exactly where the tokens are, and no text a
/// person or an agent wrote can be mistaken for one (a fixed marker character could).
pub(super) fn render_entry(key: &str, value: &serde_norway::Value) -> String {
    let mut text = render_block(key, value);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // libyaml's emitter and parser disagree on a few characters (U+2028 and U+0085 end a line
    // for one and not the other): a value that would not read back as written is written in
    // flow style with every such character escaped.
    let reads_back = serde_norway::from_str::<serde_norway::Mapping>(&text)
        .ok()
        .and_then(|mapping| mapping.into_iter().next())
        .is_some_and(|(_, read)| read == *value);
    if reads_back {
        text
    } else {
        let mut flow = format!("{key}: ");
        write_flow(value, &mut flow);
        flow.push('\n');
        flow
    }
}

/// A value in YAML flow style, strings double-quoted with everything but printable ASCII
/// escaped, so that it reads back exactly whatever it holds.
fn write_flow(value: &serde_norway::Value, out: &mut String) {
    use serde_norway::Value;
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => {
            out.push('"');
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    ' '..='~' => out.push(c),
                    c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", c as u32)),
                    c => out.push_str(&format!("\\U{:08X}", c as u32)),
                }
            }
            out.push('"');
        }
        Value::Sequence(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow(item, out);
            }
            out.push(']');
        }
        Value::Mapping(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_flow(k, out);
                out.push_str(": ");
                write_flow(v, out);
            }
            out.push('}');
        }
        Value::Tagged(tagged) => write_flow(&tagged.value, out),
    }
}

fn render_block(key: &str, value: &serde_norway::Value) -> String {
    let serialise = |value: serde_norway::Value| {
        let mut single = serde_norway::Mapping::new();
        single.insert(serde_norway::Value::String(key.to_string()), value);
        serde_norway::to_string(&single)
            .expect("a one-entry mapping with a string key and a YAML value always serialises")
    };
    let plain = serialise(value.clone());
    if !contains_date(value) {
        return plain;
    }
    let prefix = (0u32..)
        .map(|n| format!("datez{n}q"))
        .find(|prefix| !plain.contains(prefix.as_str()))
        .expect("the text is finite, so some datez<n>q prefix does not occur in it");
    let mut dates = Vec::new();
    let marked = serialise(replace_dates(value.clone(), &prefix, &mut dates));
    let mut out = String::with_capacity(marked.len() + 2 * dates.len());
    let mut rest = marked.as_str();
    while let Some(at) = rest.find(prefix.as_str()) {
        out.push_str(&rest[..at]);
        let token = &rest[at + prefix.len()..];
        let digits = token.bytes().take_while(u8::is_ascii_digit).count();
        let index: usize = token[..digits].parse().expect(
            "the prefix occurs nowhere in the plain text, so each occurrence is a token replace_dates wrote with its index",
        );
        out.push_str(&format!("'{}'", dates[index]));
        // Skip the digits and the `x` that ends the token.
        rest = &token[digits + 1..];
    }
    out.push_str(rest);
    out
}

fn contains_date(value: &serde_norway::Value) -> bool {
    use serde_norway::Value;
    match value {
        Value::String(s) => looks_like_date(s),
        Value::Sequence(items) => items.iter().any(contains_date),
        Value::Mapping(map) => map
            .iter()
            .any(|(k, v)| contains_date(k) || contains_date(v)),
        _ => false,
    }
}

/// Replaces every date-like string by `<prefix><index>x`, collecting the dates by index.
fn replace_dates(
    value: serde_norway::Value,
    prefix: &str,
    dates: &mut Vec<String>,
) -> serde_norway::Value {
    use serde_norway::Value;
    match value {
        Value::String(s) if looks_like_date(&s) => {
            dates.push(s);
            Value::String(format!("{prefix}{}x", dates.len() - 1))
        }
        Value::Sequence(items) => Value::Sequence(
            items
                .into_iter()
                .map(|v| replace_dates(v, prefix, dates))
                .collect(),
        ),
        Value::Mapping(map) => Value::Mapping(
            map.into_iter()
                .map(|(k, v)| {
                    let k = replace_dates(k, prefix, dates);
                    (k, replace_dates(v, prefix, dates))
                })
                .collect(),
        ),
        other => other,
    }
}

fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
        && b[8..10].iter().all(u8::is_ascii_digit)
        && s[10..]
            .chars()
            .all(|c| c.is_ascii_digit() || "TtZz:.+- ".contains(c))
}
