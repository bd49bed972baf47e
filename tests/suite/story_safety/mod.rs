//! docs/design.md §13 "Stories": a story file is untrusted input. Whatever bytes it holds, whatever
//! an agent writes into it, and whatever a person does to it while a run works, the board keeps
//! working and nothing anyone wrote is lost.

mod concurrent;
mod damage;
mod fuzz;
mod hostile_input;

use std::path::Path;

use super::common::TestEnv;

/// A story file in the shape the tool writes, with `extra` frontmatter lines and `body`.
pub fn story_text(id: &str, title: &str, status: &str, extra: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\ntitle: {title}\npriority: 10\nstatus: {status}\ntype: feature\n{extra}research_complete: false\nplan_complete: false\nimplementation_complete: false\nreviews_complete: false\n---\n{body}"
    )
}

/// Every story id in `status --json`, in board order, with repeats.
pub fn status_ids(env: &TestEnv) -> Vec<String> {
    let status = env.status_json();
    let columns = status["columns"].as_object().expect("columns");
    columns
        .values()
        .flat_map(|stories| stories.as_array().cloned().unwrap_or_default())
        .map(|story| story["id"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Writes `text` to `path` the way an editor saves: a temporary file renamed over it.
pub fn save_like_an_editor(path: &Path, text: &str) {
    let temp = path.with_file_name(".editor-save.tmp");
    std::fs::write(&temp, text).expect("write the editor's temporary file");
    std::fs::rename(&temp, path).expect("rename the editor's file into place");
}
