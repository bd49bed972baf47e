//! Finding a story from what a person typed: an id or a slug, any case, or a unique prefix.

use super::store::Board;
use super::story::slug_from_path;
use super::summary::{Listed, StorySummary};
use crate::error::{Error, Result};

/// Like [`find`] on the whole board: a query that names a story file that does not parse gets
/// that file's path, line and problem rather than "not found" (docs/design.md §3).
pub fn find_on_board<'a>(board: &'a Board, query: &str) -> Result<&'a StorySummary> {
    find(&board.stories, query).map_err(|err| match err {
        Error::StoryNotFound { .. } => {
            let wanted = query.trim();
            board
                .broken
                .iter()
                .find(|broken| slug_from_path(&broken.path).eq_ignore_ascii_case(wanted))
                .map_or(err, |broken| broken.clone().into())
        }
        other => other,
    })
}

/// The one story file whose slug (from its file name) is `query`, any case, found from the
/// folder listings alone, without reading a story: what makes `details <slug>` cheap on a
/// large board. `None` when no file or several have that slug, or the query could also be an
/// id (ids are `story-…`), so that the full lookup, with its ambiguity check, decides.
pub fn find_by_file_name(board_dir: &std::path::Path, query: &str) -> Option<std::path::PathBuf> {
    let wanted = query.trim().to_lowercase();
    if wanted.is_empty() || wanted.starts_with("story-") {
        return None;
    }
    let mut found = None;
    for (path, _) in super::reader::list_columns(board_dir).ok()? {
        if slug_from_path(&path).to_lowercase() == wanted {
            if found.is_some() {
                return None;
            }
            found = Some(path);
        }
    }
    found
}

pub fn find<'a, S: Listed>(stories: &'a [S], query: &str) -> Result<&'a S> {
    let wanted = query.trim().to_lowercase();
    let exact = |s: &&S| s.id().to_lowercase() == wanted || s.slug().to_lowercase() == wanted;
    let exact_matches: Vec<&S> = stories.iter().filter(exact).collect();
    if let [only] = exact_matches.as_slice() {
        return Ok(only);
    }
    if exact_matches.len() > 1 {
        return Err(ambiguous(query, &exact_matches));
    }
    let prefixed: Vec<&S> = stories
        .iter()
        .filter(|s| {
            !wanted.is_empty()
                && (s.id().to_lowercase().starts_with(&wanted)
                    || s.slug().to_lowercase().starts_with(&wanted))
        })
        .collect();
    match prefixed.as_slice() {
        [only] => Ok(only),
        [] => Err(Error::StoryNotFound {
            query: query.to_string(),
            close_matches: close_matches(stories, &wanted),
        }),
        many => Err(ambiguous(query, many)),
    }
}

fn ambiguous<S: Listed>(query: &str, stories: &[&S]) -> Error {
    Error::AmbiguousStory {
        query: query.to_string(),
        candidates: stories
            .iter()
            .map(|s| format!("{} ({})", s.slug(), s.id()))
            .collect(),
    }
}

/// Up to five stories whose slug, id or title resemble the query, best first.
fn close_matches<S: Listed>(stories: &[S], wanted: &str) -> Vec<String> {
    let mut scored: Vec<(f64, &S)> = stories
        .iter()
        .map(|s| {
            let title = s.meta().title.to_lowercase();
            let score = [&s.slug().to_lowercase(), &s.id().to_lowercase(), &title]
                .iter()
                .map(|candidate| {
                    let similarity = strsim::jaro_winkler(candidate, wanted);
                    if wanted.len() >= 3 && candidate.contains(wanted) {
                        similarity.max(0.9)
                    } else {
                        similarity
                    }
                })
                .fold(0.0, f64::max);
            (score, s)
        })
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored
        .into_iter()
        .take(5)
        .map(|(_, s)| s.slug().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Column;
    use crate::board::Story;
    use std::path::PathBuf;

    fn story(id: &str, slug: &str) -> Story {
        let text = format!("---\nid: {id}\ntitle: {slug} title\n---\n");
        Story::parse(
            &text,
            PathBuf::from(format!("ready/{slug}.md")),
            Column::Ready,
        )
        .unwrap()
    }

    #[test]
    fn finds_by_id_slug_case_and_prefix() {
        let stories = vec![
            story("story-abc-0001", "dark-mode"),
            story("story-abd-0002", "login-page"),
        ];
        assert_eq!(find(&stories, "STORY-ABC-0001").unwrap().slug, "dark-mode");
        assert_eq!(find(&stories, "Dark-Mode").unwrap().slug, "dark-mode");
        assert_eq!(find(&stories, "login").unwrap().slug, "login-page");
        assert_eq!(find(&stories, "story-abd").unwrap().slug, "login-page");
        assert!(matches!(
            find(&stories, "story-ab"),
            Err(Error::AmbiguousStory { .. })
        ));
        match find(&stories, "dark-mod3") {
            Err(Error::StoryNotFound { close_matches, .. }) => {
                assert_eq!(close_matches, ["dark-mode"])
            }
            other => panic!("{other:?}"),
        }
    }
}
