//! `add`: a new story in backlog.

use std::path::PathBuf;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;

use super::context::Context;
use crate::board::StoryType;
use crate::error::{ExitStatus, Result};
use crate::front::new_story::{create, NewStory};
use serde::Serialize;

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The story's title.
    pub title: String,
    /// feature, bug, chore or spike.
    #[arg(long = "type", value_name = "T", default_value = "feature", value_parser = story_type_parser())]
    pub story_type: StoryType,
    /// Lower runs first. Default: after every story on the board.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub priority: Option<i64>,
    /// A label (repeatable); added to the config's defaultLabels.
    #[arg(long = "label", value_name = "L")]
    pub labels: Vec<String>,
    /// A story (id or slug) that must be done before this one goes past refinement (repeatable).
    #[arg(long = "depends-on", value_name = "ID")]
    pub depends_on: Vec<String>,
    /// A Markdown file with the story's description (its `## ` sections, or the summary).
    #[arg(long, value_name = "F")]
    pub body_file: Option<PathBuf>,
}

/// Only the known types are offered here; an unknown one can only come from a hand edit.
fn story_type_parser() -> impl TypedValueParser<Value = StoryType> {
    PossibleValuesParser::new(StoryType::KNOWN).map(StoryType::from)
}

/// `add --json`.
#[derive(Serialize)]
struct Added<'a> {
    id: &'a str,
    slug: &'a str,
    path: &'a std::path::Path,
}

pub fn run(args: AddArgs, context: &Context) -> Result<ExitStatus> {
    let project = context.project()?;
    let description = match &args.body_file {
        Some(path) => Some(fs_err::read_to_string(context.cwd.join(path))?),
        None => None,
    };
    let story = create(
        &project,
        NewStory {
            title: args.title,
            story_type: args.story_type,
            priority: args.priority,
            labels: args.labels,
            depends_on: args.depends_on,
            description,
        },
    )?;
    let printer = &context.printer;
    printer.json_line(&crate::front::envelope(
        "added",
        Added {
            id: story.id(),
            slug: &story.slug,
            path: &story.path,
        },
    ));
    let palette = printer.palette();
    printer.out(format!(
        "Created {} ({})",
        palette.id(&story.slug),
        story.id()
    ));
    printer.out(format!("  {}", story.path.display()));
    Ok(ExitStatus::Success)
}
