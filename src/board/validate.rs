//! `validate`: every problem on the board that a person should fix, with path and line.

use foldhash::{HashMap, HashMapExt, HashSet};
use std::path::PathBuf;

use serde::Serialize;

use super::store::Board;
use super::story::Story;
use super::summary::Listed;
use crate::names::StoryId;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    pub path: PathBuf,
    pub line: usize,
    pub kind: &'static str,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.path.display(), self.line, self.message)
    }
}

pub fn check_board(board: &Board<Story>) -> Vec<Problem> {
    let mut problems: Vec<Problem> = board
        .broken
        .iter()
        .map(|e| Problem {
            path: e.path.clone(),
            line: e.line,
            kind: "parse",
            message: e.message.clone(),
        })
        .collect();
    for story in &board.stories {
        problems.extend(check_story(story));
    }
    problems.extend(duplicate_ids(board));
    problems.extend(dependency_problems(board));
    problems
}

fn problem(story: &Story, key: &str, kind: &'static str, message: String) -> Problem {
    Problem {
        path: story.path.clone(),
        line: story.line_of(key).unwrap_or(1),
        kind,
        message,
    }
}

/// Keys that only `details` and the workflow read; the loader skips them, so check them here.
fn check_story(story: &Story) -> Vec<Problem> {
    let mut problems = Vec::new();
    if let Err(err) = story.frontmatter().to_mapping() {
        problems.push(Problem {
            path: story.path.clone(),
            line: err.line + 2,
            kind: "parse",
            message: err.message,
        });
    }
    let typed = [
        story.review_history().err(),
        story.refinement_iterations().err(),
        story.phase_reviews().err(),
        story.usage().err(),
    ];
    problems.extend(typed.into_iter().flatten().map(|e| Problem {
        path: e.path,
        line: e.line,
        kind: "parse",
        message: e.message,
    }));
    if let Some(status) = &story.meta.status {
        if status != story.column.name() {
            problems.push(problem(
                story,
                "status",
                "status-mismatch",
                format!(
                    "status is `{status}` but the file is in {}/ (the folder wins; `agentic-sdlc move` sets both)",
                    story.column
                ),
            ));
        }
    }
    if !story.meta.story_type.is_known() {
        problems.push(problem(
            story,
            "type",
            "invalid-value",
            format!(
                "type `{}` is not one of {}",
                story.meta.story_type,
                super::vocabulary::StoryType::KNOWN.join(", ")
            ),
        ));
    }
    problems
}

fn duplicate_ids(board: &Board<Story>) -> Vec<Problem> {
    let mut by_id: HashMap<&str, Vec<&Story>> = HashMap::new();
    for story in &board.stories {
        by_id.entry(story.id()).or_default().push(story);
    }
    let mut problems = Vec::new();
    for (id, stories) in by_id.into_iter().filter(|(_, s)| s.len() > 1) {
        let paths: Vec<String> = stories
            .iter()
            .map(|s| s.path.display().to_string())
            .collect();
        for story in &stories {
            problems.push(problem(
                story,
                "id",
                "duplicate-id",
                format!("id `{id}` is used by {}", paths.join(", ")),
            ));
        }
    }
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    problems
}

fn dependency_problems(board: &Board<Story>) -> Vec<Problem> {
    let ids: HashSet<&str> = board.stories.iter().map(|s| s.id().as_str()).collect();
    let mut problems = Vec::new();
    for story in &board.stories {
        for dep in &story.meta.depends_on {
            if !ids.contains(dep.as_str()) {
                problems.push(problem(
                    story,
                    "depends_on",
                    "unknown-dependency",
                    format!("depends_on names unknown story `{dep}`"),
                ));
            } else if dep == story.id() {
                problems.push(problem(
                    story,
                    "depends_on",
                    "dependency-cycle",
                    "a story cannot depend on itself".into(),
                ));
            }
        }
    }
    for cycle in dependency_cycles(board) {
        let first = board
            .get(&cycle[0])
            .expect("a cycle member has depends_on edges, so it is a story on the board");
        problems.push(problem(
            first,
            "depends_on",
            "dependency-cycle",
            format!("dependency cycle: {}", cycle.join(" -> ")),
        ));
    }
    problems
}

/// Each cycle in `depends_on` (longer than a self-loop), as ids ending where they began.
pub fn dependency_cycles<S: Listed>(board: &Board<S>) -> Vec<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    let deps: HashMap<&str, Vec<&str>> = board
        .stories
        .iter()
        .map(|s| {
            (
                s.id(),
                s.meta()
                    .depends_on
                    .iter()
                    .map(StoryId::as_str)
                    .filter(|d| *d != s.id())
                    .collect(),
            )
        })
        .collect();
    let mut marks: HashMap<&str, Mark> = HashMap::new();
    let mut cycles = Vec::new();
    let mut roots: Vec<&str> = deps.keys().copied().collect();
    roots.sort();
    for root in roots {
        if marks.contains_key(root) {
            continue;
        }
        // Iterative DFS so a long chain cannot overflow the stack.
        let mut path: Vec<&str> = vec![root];
        let mut next_child: Vec<usize> = vec![0];
        marks.insert(root, Mark::Visiting);
        while let Some(&node) = path.last() {
            let index = next_child
                .last_mut()
                .expect("next_child holds one index per node of the non-empty path");
            let children = deps.get(node).map(Vec::as_slice).unwrap_or(&[]);
            if let Some(&child) = children.get(*index) {
                *index += 1;
                match marks.get(child) {
                    Some(Mark::Visiting) => {
                        let start = path
                            .iter()
                            .position(|n| *n == child)
                            .expect("a node marked Visiting is on the current path");
                        let mut cycle: Vec<String> =
                            path[start..].iter().map(|s| s.to_string()).collect();
                        cycle.push(child.to_string());
                        cycles.push(cycle);
                    }
                    Some(Mark::Done) => {}
                    None if deps.contains_key(child) => {
                        marks.insert(child, Mark::Visiting);
                        path.push(child);
                        next_child.push(0);
                    }
                    None => {}
                }
            } else {
                marks.insert(node, Mark::Done);
                path.pop();
                next_child.pop();
            }
        }
    }
    cycles
}
