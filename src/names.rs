//! The names that cross the rooms of the tool: a story's id, its slug, a git branch. Each is a
//! type of its own, so that one never stands in for another unseen; each reads as a `&str`
//! wherever one is wanted, and serialises as the plain string.

/// Declares a name type around a `String`, with the conversions every name has.
macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize,
            serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(name: String) -> Self {
                $name(name)
            }
        }

        impl From<&str> for $name {
            fn from(name: &str) -> Self {
                $name(name.to_string())
            }
        }

        impl From<&$name> for $name {
            fn from(name: &$name) -> Self {
                name.clone()
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> Self {
                name.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<&$name> for $name {
            fn eq(&self, other: &&$name) -> bool {
                self == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

name_type!(
    /// A story's id (`story-<base36 milliseconds>-<4 base36 chars>`, or whatever a hand-written
    /// story holds): what names a story between rooms, never its slug or a query.
    StoryId
);

name_type!(
    /// A story's slug: its file's name without `.md`, and the tail of its branch. A story's for
    /// life (docs/design.md §17).
    Slug
);

name_type!(
    /// A git branch's short name (`agentic-sdlc/<slug>`, `main`).
    BranchName
);

/// A story's id names its folders (logs, pending gate output): it is one path component.
impl AsRef<std::path::Path> for StoryId {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_reads_as_its_string_and_serialises_as_one() {
        let id = StoryId::from("story-1");
        assert_eq!(&*id, "story-1");
        assert_eq!(id, "story-1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"story-1\"");
        let back: Slug = serde_json::from_str("\"add-median\"").unwrap();
        assert_eq!(back.to_string(), "add-median");
    }
}
