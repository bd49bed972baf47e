//! Story ids and slugs.

use std::hash::{BuildHasher, Hasher};

use crate::names::StoryId;

fn base36(mut n: u128) -> String {
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).expect("base36 digits are ASCII")
}

/// `story-<base36 milliseconds>-<4 base36 chars>` (docs/design.md §2).
pub fn new_story_id() -> StoryId {
    let millis = chrono::Utc::now().timestamp_millis().max(0) as u128;
    // RandomState is seeded from the OS per process; mixing in a counter keeps ids made in the
    // same millisecond by one process apart.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    hasher.write_u128(millis);
    let suffix = base36(u128::from(hasher.finish()) % 36u128.pow(4));
    StoryId::from(format!("story-{}-{:0>4}", base36(millis), suffix))
}

/// Why `id` cannot be a story id, if it cannot: an id names folders (the story's logs, its
/// pending gate output), so it must be one path component (docs/design.md §22). A `/` or `\`,
/// `..`, a NUL, a leading `.` and control characters are refused.
pub fn id_problem(id: &str) -> Option<&'static str> {
    if id.contains('/') || id.contains('\\') {
        Some("holds a path separator")
    } else if id.starts_with('.') {
        Some("starts with a dot")
    } else if id.chars().any(char::is_control) {
        Some("holds a control character")
    } else if id.len() > 200 {
        Some("is longer than 200 bytes")
    } else {
        None
    }
}

/// A file-name-safe slug: lowercase ASCII letters and digits separated by single dashes.
pub fn slugify(title: &str) -> String {
    let mut slug = String::new();
    for c in title.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let mut slug = slug.trim_end_matches('-').to_string();
    if slug.len() > 60 {
        slug.truncate(60);
        slug = slug.trim_end_matches('-').to_string();
    }
    if slug.is_empty() {
        "story".into()
    } else {
        slug
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_contract_shape() {
        let id = new_story_id();
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(parts.len(), 3, "{id}");
        assert_eq!(parts[0], "story");
        assert_eq!(parts[2].len(), 4);
        assert_ne!(new_story_id(), new_story_id());
    }

    #[test]
    fn an_id_is_one_path_component() {
        for bad in [
            "/abs/x",
            "../../x",
            "a/b",
            "a\\b",
            "..",
            ".hidden",
            "nul\0byte",
            "esc\u{1b}[2J",
            "two\nlines",
        ] {
            assert!(id_problem(bad).is_some(), "{bad:?} was accepted");
        }
        for good in ["story-abc-1234", "STORY_9", "naïve-id", "a..b"] {
            assert_eq!(id_problem(good), None, "{good:?}");
        }
        assert_eq!(id_problem(&new_story_id()), None);
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("Add dark mode toggle!"), "add-dark-mode-toggle");
        assert_eq!(slugify("  Ünïcode & stuff  "), "n-code-stuff");
        assert_eq!(slugify("***"), "story");
    }
}
