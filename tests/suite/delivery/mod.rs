//! Done means delivered (docs/design.md §12): real git repositories in temporary folders, driven
//! through the binary, with the model faked over HTTP.

mod faults;
mod merge;
mod ownership;
mod pull_requests;
mod recovery;
mod rework;

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value as Json};

use crate::suite::common::{Outcome, TestEnv};
use crate::suite::fake_llm::{FakeLlm, Recorded, Reply};

/// A git repository holding a board, and the fake model its runs talk to.
pub(super) struct Repo {
    pub env: TestEnv,
    pub fake: FakeLlm,
}

/// A story as the tests name it.
pub(super) struct Story {
    pub id: String,
    pub slug: String,
    pub title: String,
}

impl Story {
    pub fn branch(&self) -> String {
        format!("agentic-sdlc/{}", self.slug)
    }
}

impl Repo {
    /// `init`, a repository on `main` with one commit of a source file; the board and the
    /// config stay out of git, as most users keep them.
    pub async fn new() -> Repo {
        let repo = Repo {
            env: TestEnv::init(),
            fake: FakeLlm::start().await,
        };
        repo.git(&["init", "--quiet", "-b", "main"]);
        repo.git(&["config", "user.name", "Test Person"]);
        repo.git(&["config", "user.email", "test@example.com"]);
        repo.git(&["config", "commit.gpgsign", "false"]);
        repo.env
            .write(".gitignore", ".agentic-sdlc/\n.agentic-sdlc.json\n");
        repo.env.write("src/lib.rs", "pub fn base() {}\n");
        repo.git(&["add", "--all"]);
        repo.git(&["commit", "--quiet", "-m", "Initial commit"]);
        repo.env.use_git_branches();
        repo
    }

    /// Runs git in the repository; panics when it fails, returns trimmed stdout.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let (ok, stdout, stderr) = self.try_git(args);
        assert!(ok, "git {args:?} failed: {stderr}");
        stdout
    }

    pub fn try_git(&self, args: &[&str]) -> (bool, String, String) {
        git_in(&self.env.root(), args)
    }

    /// Merges `patch` into `.agentic-sdlc.json`, as a person edits it.
    pub fn configure(&self, patch: Json) {
        self.env.configure_json(&patch);
    }

    /// A story in backlog, depending on `depends_on`.
    #[track_caller]
    pub fn story(&self, title: &str, depends_on: &[&Story]) -> Story {
        let mut args = Vec::new();
        for dependency in depends_on {
            args.extend(["--depends-on", dependency.id.as_str()]);
        }
        let (id, slug, _) = self.env.add(title, &args);
        Story {
            id,
            slug,
            title: title.to_string(),
        }
    }

    /// The story's next implement writes each `(path, content)` with `write_file`, then reports.
    pub fn implement_writes(&self, story: &Story, files: &[(&str, &str)]) {
        let marker = marker(story);
        for (path, content) in files {
            self.fake.push_for(
                "implement",
                &marker,
                // Whole files replaced on purpose: without `overwrite`, a write that drops most
                // of a file's definitions is refused.
                Reply::tool(
                    "write_file",
                    json!({"path": path, "content": content, "overwrite": true}),
                ),
            );
        }
        self.fake.push_for(
            "implement",
            &marker,
            Reply::text(format!("Wrote {} file(s).", files.len())),
        );
    }

    pub fn run(&self, args: &[&str]) -> Outcome {
        self.env.run_with_llm(&self.fake, args)
    }

    /// `details --json` of a story.
    #[track_caller]
    pub fn details(&self, story: &Story) -> Json {
        self.env.run_json(&["details", &story.slug])["story"].clone()
    }

    /// The story's `last_error`; panics when there is none.
    #[track_caller]
    pub fn last_error(&self, story: &Story) -> String {
        let details = self.details(story);
        details["last_error"]
            .as_str()
            .unwrap_or_else(|| panic!("no last_error in {details}"))
            .to_string()
    }

    #[track_caller]
    pub fn column(&self, story: &Story) -> String {
        self.env
            .story_path(&story.slug)
            .parent()
            .and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .unwrap_or_default()
            .to_string()
    }

    /// The file at `path` in `rev`, or `None` when it is not there.
    pub fn show(&self, rev: &str, path: &str) -> Option<String> {
        let (ok, stdout, _) = self.try_git(&["show", &format!("{rev}:{path}")]);
        ok.then_some(stdout)
    }

    /// Every commit reachable from `rev`.
    pub fn commits(&self, rev: &str) -> Vec<String> {
        self.git(&["rev-list", rev])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The requests of `role` about one story.
    pub fn requests_about(&self, role: &str, story: &Story) -> Vec<Recorded> {
        let marker = marker(story);
        self.fake
            .requests_for(role)
            .into_iter()
            .filter(|r| r.user_message().contains(&marker))
            .collect()
    }

    /// The checked-out branch.
    pub fn head_branch(&self) -> String {
        self.git(&["rev-parse", "--abbrev-ref", "HEAD"])
    }

    /// Changes outside the board and the config, as `git status --porcelain` lists them.
    pub fn dirty(&self) -> String {
        self.git(&["status", "--porcelain"])
    }
}

/// The line every prompt about a story carries.
pub(super) fn marker(story: &Story) -> String {
    format!("# Story: {}", story.title)
}

/// Runs git with the machine's own config shut out, so a developer's settings cannot change a
/// test; returns (success, trimmed stdout, stderr).
pub(super) fn git_in(dir: &Path, args: &[&str]) -> (bool, String, String) {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .expect("run git");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

/// Every message the model was sent in one request, as text (tool results included).
pub(super) fn conversation(request: &Recorded) -> String {
    request.body["messages"].to_string()
}
