//! The classes a story names and the objects it calls them by (docs/design.md §21): `cart` is
//! a `Cart`, `log` a `HarvestLog`, and `total_items` a method of the class the story puts it
//! in. Pure functions of the story's text.

use crate::agents::prompts::{backtick_spans, mentioned_names};

/// The class the story names for an object it calls methods on: `cart` → `Cart`,
/// `price_list` → `PriceList`, or the one class whose name ends in the object's words, `log`
/// → `HarvestLog` (orchard `variety-totals`, 2026-12-06: "Given a log with trees …,
/// `log.totals_by_variety()` returns …" beside "the `HarvestLog` class", and the tool said the
/// story did not name the class of `log`). `None` when the story names no such class, or
/// several end so.
pub fn class_of(text: &str, object: &str) -> Option<String> {
    let plain = object.replace('_', "");
    if plain.is_empty() || !object.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
        return None;
    }
    let classes: Vec<String> = mentioned_names(text)
        .into_iter()
        .filter(|name| name.starts_with(|c: char| c.is_ascii_uppercase()))
        .collect();
    if let Some(exact) = classes
        .iter()
        .find(|name| name.to_ascii_lowercase() == plain)
    {
        return Some(exact.clone());
    }
    let words: Vec<&str> = object.split('_').filter(|w| !w.is_empty()).collect();
    let mut ending = classes.into_iter().filter(|class| {
        let class_words = camel_words(class);
        let tail = class_words.len().checked_sub(words.len());
        tail.is_some_and(|tail| {
            tail > 0 && class_words[tail..].iter().zip(&words).all(|(a, b)| a == b)
        })
    });
    match (ending.next(), ending.next()) {
        (Some(class), None) => Some(class),
        _ => None,
    }
}

/// The words of a CamelCase name, lowercased: `HarvestLog` → `["harvest", "log"]`.
fn camel_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for c in name.chars() {
        match words.last_mut() {
            Some(word) if !c.is_ascii_uppercase() => word.push(c),
            _ => words.push(c.to_ascii_lowercase().to_string()),
        }
    }
    words
}

/// The object and class a story makes `name` a method of, as `(object, class)`: a span that
/// calls it on an object of a class the story names (`cart.total_items()` → `("cart",
/// "Cart")`) or on the class (`Cart.total_items()`), or a line that calls it a method beside a
/// class's name in backticks ("Add a method `total_items()` to the `Cart` class"). Such a
/// story's examples may still write the call bare ("an empty cart's `total_items()` returns
/// `0`"), and the tool's test of it then imported `total_items` from cart.py, which no code
/// the story asks for defines (a drive, 2026-12-06). `None` when the story makes it no method.
pub fn method_owner(text: &str, name: &str) -> Option<(String, String)> {
    let called_on = format!(".{name}(");
    let spans = backtick_spans(text);
    let on_object = spans.iter().find_map(|(span, _)| {
        let at = span.find(&called_on)?;
        let receiver = span[..at]
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()?;
        if receiver.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Some((snake_case(receiver), receiver.to_string()));
        }
        Some((receiver.to_string(), class_of(text, receiver)?))
    });
    on_object.or_else(|| {
        text.lines()
            .filter(|line| line.to_ascii_lowercase().contains("method"))
            .find_map(|line| {
                let spans = backtick_spans(line);
                let names_it = spans.iter().any(|(span, _)| {
                    let span = span.trim();
                    span == name || span.starts_with(&format!("{name}("))
                });
                let class = spans.iter().map(|(span, _)| span.trim()).find(|span| {
                    span.starts_with(|c: char| c.is_ascii_uppercase())
                        && span.chars().all(|c| c.is_alphanumeric() || c == '_')
                        && !span.ends_with("Error")
                })?;
                names_it.then(|| (snake_case(class), class.to_string()))
            })
    })
}

/// `PriceList` → `price_list`: the object name [`class_of`] reads back as the class.
pub fn snake_case(class: &str) -> String {
    let mut out = String::new();
    for (at, c) in class.chars().enumerate() {
        if c.is_ascii_uppercase() && at > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_s_class_is_the_named_class_of_its_name_or_the_one_ending_in_it() {
        let story = "Add a method `totals_by_variety()` to the `HarvestLog` class.\n- [ ] `log.totals_by_variety()` returns `{}`; a `PriceList` and a `Cart` stay";
        assert_eq!(class_of(story, "cart").as_deref(), Some("Cart"));
        assert_eq!(class_of(story, "price_list").as_deref(), Some("PriceList"));
        assert_eq!(class_of(story, "log").as_deref(), Some("HarvestLog"));
        assert_eq!(class_of(story, "list").as_deref(), Some("PriceList"));
        assert_eq!(
            method_owner(story, "totals_by_variety"),
            Some(("log".to_string(), "HarvestLog".to_string()))
        );
        // A word inside a name is no ending of it, and two classes ending so are no answer.
        assert_eq!(class_of(story, "harvest"), None);
        assert_eq!(
            class_of(&format!("{story}, an `ErrorLog` too"), "log"),
            None
        );
    }

    #[test]
    fn a_method_belongs_to_the_class_the_story_calls_it_on_or_names_beside_it() {
        let owner = |text: &str| method_owner(text, "total_items");
        let pair = |object: &str, class: &str| Some((object.to_string(), class.to_string()));
        assert_eq!(
            owner("`cart.total_items()` returns `5` (class `Cart`)"),
            pair("cart", "Cart")
        );
        assert_eq!(
            owner("`PriceList.total_items()` sums them"),
            pair("price_list", "PriceList")
        );
        assert_eq!(
            owner("Add a method `total_items()` to the `Cart` class in cart.py"),
            pair("cart", "Cart")
        );
        // A function, a method of an object whose class the story never names, and a method
        // line of another name are not the story's methods.
        assert_eq!(owner("Add `total_items(cart)` to `Cart`'s module"), None);
        assert_eq!(owner("`basket.total_items()` returns `5`"), None);
        assert_eq!(
            owner("Add a method `count()` to `Cart`.\n- [ ] `total_items()` returns `0`"),
            None
        );
    }
}
