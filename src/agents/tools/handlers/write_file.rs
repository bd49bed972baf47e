//! write_file: a whole file, created or replaced; a replacement that would drop most of an
//! existing file's definitions is refused unless the call says it means to replace the file.
//! A file the model wrote out whole in its reply (not a tool call), and a write that adds a
//! definition, are merged instead: what they leave out of the existing file is kept
//! (`merge_definitions`).

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::json;

use super::super::args::lenient_bool;
use super::super::definitions::{mostly_dropped, names, source_of};
use super::super::fsio::{read_for_edit, write_atomic};
use super::super::merge_definitions::{keep_left_out, without_namesakes};
use super::super::registry::{blocking, ToolHandler, ToolSpec};
use super::super::syntax;
use super::super::toolbox::{ToolBox, ToolError, ToolLimits};

/// Definitions named at most in a refusal.
const NAMES_SHOWN: usize = 12;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(alias = "file_path", alias = "filename", alias = "file")]
    path: String,
    #[serde(alias = "text", alias = "contents", alias = "code")]
    content: String,
    /// The model means to replace the file, even if that drops most of its definitions.
    #[serde(default, deserialize_with = "lenient_bool")]
    overwrite: bool,
    /// Set on the write_file call read from a file the model wrote out in its reply: the
    /// definitions it leaves out of the existing file are kept rather than the write refused.
    #[serde(default)]
    merge: bool,
}

pub(super) struct WriteFile;

#[async_trait]
impl ToolHandler for WriteFile {
    fn name(&self) -> &'static str {
        "write_file"
    }

    fn writes(&self) -> bool {
        true
    }

    fn spec(&self, _limits: &ToolLimits) -> ToolSpec {
        ToolSpec {
            description: "Create a file, or replace a whole file with the given content. \
                          Parent folders are created. To change part of an existing file, \
                          use edit_file. An existing file must have been read first, and a \
                          write that would drop most of its functions and classes is refused, \
                          unless overwrite is true."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "File path relative to the repository root." },
                    "content": { "type": "string", "description": "The complete new content of the file." },
                    "overwrite": { "type": "boolean", "description": "true to replace an existing file even though the new content drops most of its definitions. Default false." }
                },
                "required": ["path", "content"]
            }),
        }
    }

    async fn handle(&self, tools: &ToolBox, arguments: &str) -> Result<String, ToolError> {
        blocking(tools, self.name(), arguments, write_file).await
    }
}

/// Whether `content`, written to the Python file `path`, is nothing but comments and blank
/// lines, where the file is no package's `__init__.py` (which may be empty). The 1.5B model
/// wrote four such files in one reply of a drive's implement (`shelf/boards.py`,
/// `shelf/migrations/0001_initial.py`, each its own path as a comment, 2026-12-07); they
/// stood in the repository map of every prompt after, and the model wrote them out again in
/// every reply.
fn holds_nothing(path: &str, content: &str) -> bool {
    let python = path.ends_with(".py") && !path.ends_with("__init__.py");
    python
        && content
            .lines()
            .all(|line| line.trim().is_empty() || line.trim_start().starts_with('#'))
}

/// A rewrite of Python source that may make it parse; `None` when it finds nothing to set right.
type Mend<'a> = dyn Fn(&str) -> Option<String> + 'a;

fn write_file(tools: &ToolBox, args: Args) -> Result<String, ToolError> {
    let path = args.path.as_str();
    let real = tools.resolve(path, true)?;
    tools.check_writable(path, &real)?;
    if real.is_dir() {
        return Err(format!("'{path}' is a folder; give a file path").into());
    }
    if let Some(existing) = rewrite_elsewhere(tools, &real, &args.content) {
        return Err(format!(
            "'{path}' would be a new file in a new folder, but its content rewrites \
             '{existing}', which exists: to change that file, write it under its own path \
             '{existing}'. Nothing was written."
        )
        .into());
    }
    // Said, not failed: a failed write holds the reply's change back from its check until the
    // model acts on it, and this one asks nothing of it.
    if !real.exists() && holds_nothing(path, &args.content) {
        return Ok(format!(
            "Nothing was written to '{path}': a new Python file of nothing but comments adds \
             nothing to the project. Write only the files the change needs."
        ));
    }
    // A file written out in a reply keeps what it leaves out, so it needs no read first (and
    // an agent told to write whole files has no read_file to call).
    if !args.overwrite && !args.merge && real.is_file() && !tools.has_seen(&real) {
        return Err(format!(
            "'{path}' exists and you have not read it: read it first (read_file), then write \
             it whole with everything that stays, or change a part of it with edit_file. \
             Nothing was written."
        )
        .into());
    }
    let mut content = args.content;
    let mut kept = Vec::new();
    // The project's tests of other work keep their tests as they are: the 1.5B model wrote
    // four such test files out again beside its change, and its versions of `test_discount`
    // and `test_remove_nonexistent_item` failed in every round after (inventory
    // `receipt-line`, 2026-12-05).
    let mut theirs = Vec::new();
    if args.merge && tools.others_tests.contains(&real) {
        if let Ok(Some(before)) = read_for_edit(&real, path) {
            let (added, rewritten) = without_namesakes(&before, &content);
            if !rewritten.is_empty() && names(&added).is_empty() {
                return Ok(format!(
                    "'{path}' holds the project's tests of other work, which stay as they are: \
                     nothing was written. Change the code, or add a test under a new name"
                ));
            }
            content = added;
            theirs = rewritten;
        }
    }
    if !args.overwrite {
        // A file that cannot be read as text has no definitions to lose.
        if let Ok(Some(before)) = read_for_edit(&real, path) {
            let merged = match args.merge || adds_a_definition(&before, &content) {
                true => keep_left_out(&before, &content),
                false => None,
            };
            match merged {
                Some(merged) => {
                    content = merged.content;
                    kept = merged.kept;
                }
                None => {
                    let dropped = mostly_dropped(&before, &content);
                    if !dropped.is_empty() {
                        return Err(refusal(path, &before, &dropped).into());
                    }
                }
            }
        }
    }
    // A small model writes out files it has not changed, and then believes it made its change:
    // it is told that nothing changed.
    let before = std::fs::read(&real).ok();
    if before.as_deref() == Some(content.as_bytes()) {
        tools.mark_seen(real);
        return Ok(format!(
            "'{path}' already holds exactly this content: nothing changed"
        ));
    }
    let before = before.map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    // What the tool set right in a write that would not parse, each said in the result. The
    // mends apply one after the other, and the write goes ahead only if the result parses.
    let mut mended: Vec<&str> = Vec::new();
    if let Some(refused) = syntax::refusal(path, before.as_deref(), &content) {
        let mends: [(&Mend<'_>, &str); 3] = [
            (
                &|text| syntax::unwrapped(path, text),
                "without the path line and the indent around the code",
            ),
            (
                &syntax::def_names_joined,
                "with the words of each `def` name joined by `_`",
            ),
            (
                &syntax::raises_as_blocks,
                "with each `… raises …` line written as a `pytest.raises` block",
            ),
        ];
        let mut text = content.clone();
        for (mend, note) in mends {
            if let Some(better) = mend(&text) {
                text = better;
                mended.push(note);
            }
        }
        if syntax::refusal(path, before.as_deref(), &text).is_some() {
            return Err(refused.into());
        }
        content = text;
    }
    write_atomic(&real, content.as_bytes())
        .map_err(|err| format!("cannot write '{path}': {err}"))?;
    let written = tools.display(&real);
    tools.mark_seen(real);
    let mut result = format!("Wrote {} bytes to {path}", content.len());
    let given = path.trim_start_matches("./");
    if written != given && written.eq_ignore_ascii_case(given) {
        result = format!(
            "Wrote {} bytes to {written} (the folders as the repository spells them)",
            content.len()
        );
    }
    for note in mended {
        result.push_str(&format!(" ({note})"));
    }
    if !kept.is_empty() {
        result.push_str(&format!(
            "; kept {}, which your file left out, as they were",
            kept.join(", ")
        ));
    }
    if !theirs.is_empty() {
        result.push_str(&format!(
            "; your {} left out: the project's tests of other work stay as they are",
            theirs.join(", ")
        ));
    }
    Ok(result)
}

/// Whether `content` defines a name that `before` does not: a write that adds a function and
/// leaves the file's others out is the new function, as a small model writes it (`textkit.py`
/// as `def word_count` alone, refused in six replies in a row), so the rest is kept rather than
/// the write refused. A write that only leaves definitions out still needs `overwrite`.
fn adds_a_definition(before: &str, content: &str) -> bool {
    let old = names(before);
    names(content).iter().any(|name| !old.contains(name))
}

/// Files looked at to find the file a misplaced write rewrites.
const SIBLING_SCAN: usize = 20_000;

/// The existing file that a write of `content` to a new file in a new folder really rewrites:
/// one with the same name elsewhere whose definitions the content keeps. A small model that
/// guesses a path (`src/stats.py` for `stats.py`) would otherwise leave the real file as it was.
fn rewrite_elsewhere(tools: &ToolBox, real: &std::path::Path, content: &str) -> Option<String> {
    let folder_is_new = real.parent().is_some_and(|parent| !parent.exists());
    if real.exists() || !folder_is_new {
        return None;
    }
    let name = real.file_name()?;
    let mut files = Vec::new();
    tools.collect_files(&tools.canon_root, &mut files);
    files
        .into_iter()
        .take(SIBLING_SCAN)
        .filter(|file| file.file_name() == Some(name))
        .find(|file| {
            let Ok(text) = std::fs::read_to_string(file) else {
                return false;
            };
            !names(&text).is_empty() && mostly_dropped(&text, content).is_empty()
        })
        .map(|file| tools.display(&file))
}

fn refusal(path: &str, before: &str, dropped: &[String]) -> String {
    let total = names(before).len();
    let mut shown: Vec<&str> = dropped.iter().take(NAMES_SHOWN).map(String::as_str).collect();
    if dropped.len() > NAMES_SHOWN {
        shown.push("…");
    }
    let mut sources = String::new();
    for name in dropped {
        match source_of(before, name) {
            Some(source) if sources.len() + source.len() <= DROPPED_SOURCE_BUDGET => {
                sources.push_str(&source);
                sources.push_str("\n\n");
            }
            _ => break,
        }
    }
    let missing = if sources.is_empty() {
        String::new()
    } else {
        format!(
            "\nWhat your content leaves out, to keep:\n```\n{}\n```",
            sources.trim_end()
        )
    };
    format!(
        "write_file would replace '{path}' and drop {} of its {total} definitions: {}. Nothing \
         was written. Keep them in content (write the whole file), change only a part with \
         edit_file, or call write_file again with \"overwrite\": true if you mean to replace \
         the file.{missing}",
        dropped.len(),
        shown.join(", ")
    )
}

/// The most source of dropped definitions a refusal quotes, so the model can keep them.
const DROPPED_SOURCE_BUDGET: usize = 2_000;
