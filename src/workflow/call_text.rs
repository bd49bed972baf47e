//! The text of a Python call as a line writes it: its argument list, split at top-level commas
//! with string quotes minded. Shared by the checks that read calls in tests (`unknown_methods`,
//! `contradicted_tests`), so that both read `f("a, b", [1, 2])` as two arguments.

/// The arguments of the parenthesised list `text` starts with, split at its top-level commas;
/// `None` when it does not close on the line.
pub fn arguments(text: &str) -> Option<Vec<String>> {
    let end = list_end(text);
    if end > text.len() || !text.starts_with('(') {
        return None;
    }
    Some(split_arguments(&text[1..end - 1]))
}

/// The parameters of `list` (a parenthesised list, `(self, sku, qty=1)`) when it is a
/// signature's, each name without its default or annotation and with its `*` or `**`: `self`,
/// `sku`, `qty`. `None` when it is a call's with values (`("apple", 2)`, `(None)`): an example,
/// not a signature.
pub fn signature_parameters(list: &str) -> Option<Vec<String>> {
    let names: Vec<String> = arguments(list.trim())?
        .iter()
        .map(|param| {
            param
                .split(['=', ':'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect();
    let is_parameter = |name: &String| {
        let bare = name.trim_start_matches('*');
        bare.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && bare.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !["True", "False", "None"].contains(&bare)
    };
    names.iter().all(is_parameter).then_some(names)
}

/// What a call calls: `median` of `median([1])`, `cart.remove` of `cart.remove('a')`.
pub fn callee(call: &str) -> &str {
    call.split('(').next().unwrap_or("").trim()
}

/// The argument text between a call's parentheses, split at its top-level commas, each trimmed;
/// a trailing comma adds no argument.
pub fn split_arguments(inner: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut start = 0;
    for (at, _, _) in outside_quotes(inner).filter(|&(_, c, depth)| c == ',' && depth == 0) {
        args.push(inner[start..at].trim().to_string());
        start = at + 1;
    }
    let last = inner[start..].trim();
    if !last.is_empty() {
        args.push(last.to_string());
    }
    args
}

/// Where the parenthesised list `text` starts with ends: the index after its `)`, or past the
/// end when it does not close.
pub fn list_end(text: &str) -> usize {
    outside_quotes(text)
        .find(|&(_, c, depth)| matches!(c, ')' | ']' | '}') && depth == 0)
        .map_or(text.len() + 1, |(at, _, _)| at + 1)
}

/// The characters of `text` that stand outside string quotes, each with its index and the
/// bracket depth once it is read.
fn outside_quotes(text: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    let (mut depth, mut quote) = (0i32, None::<char>);
    text.char_indices()
        .filter_map(move |(at, c)| match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                None
            }
            (Some(_), _) => None,
            (None, '\'' | '"') => {
                quote = Some(c);
                None
            }
            (None, '(' | '[' | '{') => {
                depth += 1;
                Some((at, c, depth))
            }
            (None, ')' | ']' | '}') => {
                depth -= 1;
                Some((at, c, depth))
            }
            (None, c) => Some((at, c, depth)),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_has_parameters_and_an_example_has_none() {
        assert_eq!(
            signature_parameters("(self, sku, qty: int = 1, *rest)").unwrap(),
            ["self", "sku", "qty", "*rest"]
        );
        assert_eq!(signature_parameters("()").unwrap(), Vec::<String>::new());
        assert_eq!(signature_parameters("(\"apple\", 2)"), None);
        assert_eq!(signature_parameters("(None)"), None);
        assert_eq!(signature_parameters("(sku"), None);
    }

    #[test]
    fn arguments_split_at_top_level_commas_only() {
        assert_eq!(
            arguments("(\"a, b\", [1, 2], f(x, y)) + 1"),
            Some(vec![
                "\"a, b\"".to_string(),
                "[1, 2]".to_string(),
                "f(x, y)".to_string()
            ])
        );
        assert_eq!(arguments("()"), Some(Vec::new()));
        assert_eq!(arguments("(a, b,)"), Some(vec!["a".into(), "b".into()]));
        assert_eq!(arguments("(a, \")\""), None, "an unclosed list is none");
        assert_eq!(arguments("a, b)"), None, "the text must start the list");
    }

    #[test]
    fn the_list_ends_after_its_own_parenthesis() {
        assert_eq!(list_end("(a, \")\") + g(b)"), 8);
        assert_eq!(list_end("(a"), 3, "past the end when it does not close");
    }
}
