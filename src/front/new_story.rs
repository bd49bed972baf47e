//! A new story in backlog, however it was asked for (`add`, an MCP client).

use std::collections::HashSet;

use crate::board::frontmatter::Frontmatter;
use crate::board::{ids, lookup, sections, store, Board, Column, Slug, Story, StoryType};
use crate::config::Project;
use crate::error::{Error, Result};

/// A story to add, however it was asked for (`add`, an MCP client).
#[derive(Debug, Clone, Default)]
pub(crate) struct NewStory {
    pub title: String,
    pub story_type: StoryType,
    /// Lower runs first; `None` puts it after every story on the board.
    pub priority: Option<i64>,
    /// Added to the config's `defaultLabels`.
    pub labels: Vec<String>,
    /// Stories (ids, slugs or unique prefixes) that must be done first.
    pub depends_on: Vec<String>,
    /// Markdown: its own `## ` sections, or the summary.
    pub description: Option<String>,
}

/// The type a caller named; none (or blank) is a feature, an unknown one a usage error that
/// lists the types.
pub(crate) fn type_named(name: Option<&str>) -> Result<StoryType> {
    match name.map(str::trim) {
        None | Some("") => Ok(StoryType::Feature),
        Some(name) => match StoryType::from(name) {
            StoryType::Other(_) => Err(Error::Usage(format!(
                "type `{name}`: use one of {}",
                StoryType::KNOWN.join(", ")
            ))),
            known => Ok(known),
        },
    }
}

/// Writes a new story into backlog and returns it, with its path and slug.
pub(crate) fn create(project: &Project, new: NewStory) -> Result<Story> {
    let title = new.title.trim();
    if title.is_empty() {
        return Err(Error::Usage("the title must not be empty".into()));
    }
    // A title is shown on terminals and pages as one line: a newline, an escape sequence or a
    // bell in it is a mistake or an attack, never a title (docs/design.md §22).
    if let Some(bad) = title.chars().find(|c| c.is_control()) {
        return Err(Error::Usage(format!(
            "the title must be one line without control characters; it holds {:?}",
            bad
        )));
    }
    let board_dir = project.board_dir();
    let board = Board::load(&board_dir)?;
    let depends_on = new
        .depends_on
        .iter()
        .map(|query| lookup::find_on_board(&board, query).map(|s| s.id().to_string()))
        .collect::<Result<Vec<_>>>()?;
    let body = match &new.description {
        Some(text) => body_from_file(title, text),
        None => sections::template(title, None),
    };
    let priority = new.priority.unwrap_or_else(|| {
        board
            .stories
            .iter()
            .map(|s| s.meta.priority)
            .max()
            .map_or(10, |max| max.saturating_add(10))
    });
    let mut labels = project.config.default_labels.clone();
    for label in new.labels {
        if !labels.contains(&label) {
            labels.push(label);
        }
    }
    let today = crate::board::today();
    let mut front = Frontmatter::empty();
    front.set("id", &ids::new_story_id());
    front.set("title", &title);
    front.set("priority", &priority);
    front.set("status", &Column::Backlog.name());
    front.set("type", &new.story_type);
    front.set("created", &today);
    front.set("updated", &today);
    front.set("labels", &labels);
    // The flags a new story shows (docs/reference.md, the story file).
    for flag in crate::board::Phase::flagged()
        .filter(|phase| phase.flag_on_new_story())
        .filter_map(crate::board::Phase::flag)
    {
        front.set(flag, &false);
    }
    front.set(crate::board::meta::REVIEWS_FLAG, &false);
    if !depends_on.is_empty() {
        front.set("depends_on", &depends_on);
    }
    let mut story = Story::new(
        front,
        body,
        Column::Backlog,
        Slug::from(ids::slugify(title)),
    )?;
    store::create_unique(&board_dir, &mut story, &taken_slugs(&board, &project.root))?;
    story.slug = crate::board::story::slug_from_path(&story.path);
    Ok(story)
}

/// The slugs a new story must not take: every story file's in any column (a broken one's
/// too), and every existing story branch's, which may hold another story's work. A slug is a
/// story's for life, so a done story's slug is never handed out again.
fn taken_slugs(board: &Board, root: &std::path::Path) -> HashSet<Slug> {
    let mut taken: HashSet<Slug> = board.stories.iter().map(|s| s.slug.clone()).collect();
    taken.extend(
        board
            .broken
            .iter()
            .map(|broken| crate::board::story::slug_from_path(&broken.path)),
    );
    if crate::vcs::is_repo(root) {
        match crate::vcs::story_branch_slugs(root) {
            Ok(slugs) => taken.extend(slugs.into_iter().map(Slug::from)),
            Err(err) => tracing::warn!("cannot list the story branches: {err}"),
        }
    }
    taken
}

/// A body file with its own `## ` sections is used as written (missing standard sections are
/// added); plain text becomes the summary. So does the text a file with sections opens with when
/// it has no `## Summary`: a person who writes a sentence and then the criteria, in the page's
/// box or a file, means that sentence as the summary, and refine reads the Summary section.
fn body_from_file(title: &str, text: &str) -> String {
    if sections::non_empty(text).is_empty() && !text.lines().any(|l| l.starts_with("## ")) {
        return sections::template(title, Some(text));
    }
    let opening = sections::opening(text);
    let heading = opening.title.unwrap_or(title);
    let mut body = if opening.text.is_empty() {
        format!("# {heading}\n\n{}", opening.sections)
    } else if sections::get(opening.sections, "Summary").is_none() {
        format!(
            "# {heading}\n\n## Summary\n{}\n\n{}",
            opening.text, opening.sections
        )
    } else {
        format!("# {heading}\n\n{}\n\n{}", opening.text, opening.sections)
    };
    for name in sections::STANDARD_SECTIONS {
        if sections::get(&body, name).is_none() {
            body = sections::set(&body, name, "");
        }
    }
    body
}
