//! After a run that was killed mid-action (docs/design.md §12): the agent's uncommitted work on
//! a story branch saved, and the person's checkout put back on their branch.

use super::*;
use crate::hint::message_and_hint;

/// Puts back what a run killed in the middle of an action left (docs/design.md §12): the agent's
/// uncommitted work is committed on its story's branch, a merge it was resolving is concluded
/// or given up, and the user's branch is checked out again. Returns what it did, for warnings.
/// Runs under the board lock, so no other run can be using these trees.
pub fn recover_interrupted(root: &Path, board_dir: &Path, config: &Config) -> Vec<String> {
    if !git::is_repo(root) {
        return Vec::new();
    }
    let mut own_paths = vec![PathBuf::from(crate::config::CONFIG_FILE)];
    if let Ok(relative) = board_dir.strip_prefix(root) {
        own_paths.push(relative.to_path_buf());
    }
    own_paths.push(PathBuf::from(crate::config::WORKTREES_DIR));
    let ignore: Vec<&Path> = own_paths.iter().map(PathBuf::as_path).collect();
    let mut done = Vec::new();
    let checkouts = match git::checkouts(root) {
        Ok(checkouts) => checkouts,
        Err(err) => return vec![format!("could not list the repository's checkouts: {err}")],
    };
    let worktrees = root.join(crate::config::WORKTREES_DIR);
    let switched_by_tool = git::remembered_return_branch(root).ok().flatten().is_some();
    for (dir, branch) in checkouts {
        let Some(branch) = branch.filter(|b| b.starts_with(git::BRANCH_PREFIX)) else {
            continue;
        };
        // Only the tool's own: a worktree in its folder, or the user's checkout while the tool
        // had switched it, and a branch it made. A person working on a branch of that name
        // keeps their uncommitted files to themselves.
        let tools_tree = if dir_is(&dir, root) {
            switched_by_tool
        } else {
            fs_err::canonicalize(&dir)
                .ok()
                .zip(fs_err::canonicalize(&worktrees).ok())
                .is_some_and(|(dir, folder)| dir.starts_with(folder))
        };
        let tools_branch = git::made_by_tool(root, &branch).unwrap_or(false);
        if !tools_tree || !tools_branch {
            continue;
        }
        let slug = &branch[git::BRANCH_PREFIX.len()..];
        let logs = board_dir.join("logs").join(format!("recovered-{slug}"));
        // The person's untracked files, remembered when the tool took the tree, stay theirs.
        let persons: Vec<PathBuf> = git::remembered_persons_files(&dir)
            .unwrap_or_default()
            .into_iter()
            .map(PathBuf::from)
            .collect();
        let mut ignore = ignore.clone();
        ignore.extend(persons.iter().map(PathBuf::as_path));
        match save_leftover_work(&dir, &branch, &ignore, &logs) {
            Ok(Some(note)) => done.push(note),
            Ok(None) => {}
            Err(err) => done.push(format!("could not save the work left on {branch}: {err}")),
        }
        if dir_is(&dir, root) {
            done.push(put_user_branch_back(root, &branch, config));
        }
    }
    done
}

fn dir_is(dir: &Path, root: &Path) -> bool {
    fs_err::canonicalize(dir).ok() == fs_err::canonicalize(root).ok()
}

fn save_leftover_work(
    dir: &Path,
    branch: &str,
    ignore: &[&Path],
    logs: &Path,
) -> Result<Option<String>> {
    if let Some(unresolved) = give_up_unresolved_merge(dir, &[], logs)? {
        return Ok(Some(format!("{branch}: {unresolved}")));
    }
    let message = format!(
        "agentic-sdlc: work left on {branch} by an interrupted run\n\nCommitted by the next run so that nothing is lost."
    );
    Ok(git::commit_all(dir, &message, ignore)?.map(|commit| {
        format!("committed the work an interrupted run left on {branch} ({commit:.7})")
    }))
}

fn put_user_branch_back(root: &Path, story_branch: &str, config: &Config) -> String {
    let target = git::remembered_return_branch(root)
        .ok()
        .flatten()
        .or_else(|| config.git.base_branch.as_ref().map(ToString::to_string));
    let Some(target) = target else {
        return message_and_hint(
            &format!(
                "the checkout is on {story_branch} after an interrupted run, and the branch it \
                 came from is unknown"
            ),
            "check out your branch (`git switch main`)",
        );
    };
    match git::switch_back(root, &target) {
        Ok(()) => format!(
            "checked out {target} again (an interrupted run had left {story_branch} checked out)"
        ),
        Err(err) => format!("could not check out {target} again after an interrupted run: {err}"),
    }
}
