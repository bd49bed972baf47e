//! The agents through the real binary and the real HTTP client, against the fake OpenAI server:
//! prompts, phase outputs, tools, git, review, API failures, usage, the key and transcripts.

mod acceptance;
mod api;
mod blockers;
mod fail_closed;
mod git;
mod implement;
mod models_output;
mod models_requests;
mod models_verdicts;
mod phases;
mod prompts;
mod review;
mod secrets;
mod small_models;
mod usage;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as Json;

use super::common::{outcome, Outcome, TestEnv};
use super::fake_llm::{FakeLlm, Recorded, Reply};

/// A project with a board and a fake model server; every command talks to the fake.
/// The config pair that turns the acceptance phase off, for a test with a test command that is
/// about another phase.
pub const OFF_ACCEPTANCE: (&str, &str) = ("phases.acceptance.enabled", "false");

/// Runs each `tests/test_*.py`'s test functions, as pytest would, with python3 alone: a failure
/// or a module that does not import is named with its file, and the failure's frame as pytest
/// names it (`ledger.py:2: NameError`); the passed are counted.
pub const PY_RUNNER: &str = r#"import glob, os, runpy, sys, traceback
sys.path.insert(0, ".")
failed = False
passed = 0
for path in sorted(glob.glob("tests/test_*.py")):
    try:
        module = runpy.run_path(path)
    except Exception as err:
        print(f"ERROR {path} - {type(err).__name__}: {err}")
        failed = True
        continue
    for name, test in module.items():
        if name.startswith("test_") and callable(test):
            try:
                test()
                passed += 1
            except Exception as err:
                print(f"FAILED {path}::{name} - {type(err).__name__}: {err}")
                frame = traceback.extract_tb(err.__traceback__)[-1]
                print(f"{os.path.relpath(frame.filename)}:{frame.lineno}: {type(err).__name__}")
                failed = True
print(f"{passed} passed")
sys.exit(1 if failed else 0)
"#;

pub struct Project {
    pub env: TestEnv,
    pub fake: FakeLlm,
}

/// A story made by a test: its id and slug.
pub struct Made {
    pub id: String,
    pub slug: String,
}

impl Project {
    pub async fn new() -> Project {
        Project {
            env: TestEnv::init(),
            fake: FakeLlm::start().await,
        }
    }

    /// A command pointed at the fake through `OPENAI_BASE_URL`.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = self.env.cmd(args);
        cmd.env("OPENAI_BASE_URL", self.fake.base_url());
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Outcome {
        outcome(&mut self.cmd(args))
    }

    /// Runs the story's next action of type `step`.
    pub fn step(&self, story: &Made, step: &str) -> Outcome {
        self.run(&["run", "--story", &story.id, "--step", step])
    }

    /// Commits the files written so far as a git project whose tests [`PY_RUNNER`] runs
    /// (`python3 run_tests.py`), and sets `settings` too.
    pub fn python_git_project(&self, settings: &[(&str, &str)]) {
        self.env.write("run_tests.py", PY_RUNNER);
        self.git_init(false);
        self.config(&[("review.testCommand", "python3 run_tests.py")]);
        self.config(settings);
    }

    /// A planned story that asks `total(entries)` in ledger.py to add amounts exactly, its
    /// example compared with a `Decimal`.
    pub fn exact_totals_story(&self) -> Made {
        self.story(
            "Exact totals",
            "Make `total(entries)` in ledger.py add amounts given as text exactly.",
            "- [ ] `total(['0.10', '0.20']) == Decimal('0.30')`",
            "ready",
            &["research", "plan"],
        )
    }

    /// Sets config keys through the `config` command, so they are validated.
    pub fn config(&self, pairs: &[(&str, &str)]) {
        for (key, value) in pairs {
            self.env.run(&["config", key, value]).success();
        }
    }

    /// Adds a story with this summary and these criteria and moves it to `column`, with the
    /// phase flags named in `complete` set by hand.
    #[track_caller]
    pub fn story(
        &self,
        title: &str,
        summary: &str,
        criteria: &str,
        column: &str,
        complete: &[&str],
    ) -> Made {
        let body = self.env.write(
            format!("../{}-body.md", self.root_name()),
            &format!("## Summary\n{summary}\n\n## Acceptance Criteria\n{criteria}\n"),
        );
        let (id, slug, _) = self
            .env
            .add(title, &["--body-file", body.to_str().unwrap()]);
        std::fs::remove_file(body).unwrap();
        if column != "backlog" {
            self.env.run(&["move", &id, column]).success();
        }
        for phase in complete {
            self.set_flag(&slug, &format!("{phase}_complete"), true);
        }
        Made { id, slug }
    }

    /// A story in ready whose refinement is done.
    #[track_caller]
    pub fn ready(&self, title: &str) -> Made {
        self.story(title, "A summary.", "- [ ] It works", "ready", &[])
    }

    /// A story in ready whose research is done: plan is its next step.
    #[track_caller]
    pub fn researched(&self, title: &str) -> Made {
        self.story(
            title,
            "A summary.",
            "- [ ] It works",
            "ready",
            &["research"],
        )
    }

    /// A story in ready whose research and plan are done: implement is its next step.
    #[track_caller]
    pub fn planned(&self, title: &str) -> Made {
        self.story(
            title,
            "A summary.",
            "- [ ] It works",
            "ready",
            &["research", "plan"],
        )
    }

    /// A story in in-progress whose implementation is done, waiting for review.
    #[track_caller]
    pub fn implemented(&self, title: &str) -> Made {
        self.story(
            title,
            "A summary.",
            "- [ ] It works",
            "in-progress",
            &["research", "plan", "implementation"],
        )
    }

    /// Changes the story's type by hand (`chore`, `spike`, …).
    #[track_caller]
    pub fn set_type(&self, story: &Made, story_type: &str) {
        let path = self.path_of(story);
        let kind = self.front(story)["type"].as_str().unwrap().to_string();
        self.env.edit(
            &path,
            &format!("type: {kind}"),
            &format!("type: {story_type}"),
        );
    }

    /// Sets a boolean frontmatter key by hand, the way a person would.
    #[track_caller]
    pub fn set_flag(&self, slug: &str, key: &str, value: bool) {
        let path = self.env.story_path(slug);
        self.env.edit(
            &path,
            &format!("{key}: {}", !value),
            &format!("{key}: {value}"),
        );
    }

    pub fn path_of(&self, story: &Made) -> PathBuf {
        self.env.story_path(&story.slug)
    }

    pub fn front(&self, story: &Made) -> serde_norway::Value {
        self.env.frontmatter(self.path_of(story))
    }

    /// The story's `last_error`, or nothing when it has none.
    pub fn last_error(&self, story: &Made) -> String {
        self.front(story)["last_error"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn body(&self, story: &Made) -> String {
        self.env.body(self.path_of(story))
    }

    /// The column the story's file sits in.
    pub fn column(&self, story: &Made) -> String {
        let path = self.path_of(story);
        let column = path.parent().unwrap().file_name().unwrap();
        column.to_str().unwrap().to_string()
    }

    /// `details --json` of the story.
    pub fn details(&self, story: &Made) -> Json {
        self.env.run_json(&["details", &story.id])["story"].clone()
    }

    /// The last entry of the story's review_history.
    pub fn last_review(&self, story: &Made) -> Json {
        let history = &self.details(story)["review_history"];
        history
            .as_array()
            .and_then(|h| h.last())
            .cloned()
            .unwrap_or_else(|| panic!("no review_history in {history}"))
    }

    /// The temporary folder's own name, unique per test, for files next to the project.
    pub fn root_name(&self) -> String {
        self.env
            .root()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// Makes the project a git repository on `main` with one commit of what is there, leaving
    /// out the board and config unless `with_board`.
    pub fn git_init(&self, with_board: bool) {
        self.git(&["init", "--quiet", "-b", "main"]);
        self.git(&["config", "user.name", "Test User"]);
        self.git(&["config", "user.email", "test@example.com"]);
        self.git(&["config", "commit.gpgsign", "false"]);
        if with_board {
            self.git(&["add", "--all"]);
        } else {
            self.git(&[
                "add",
                "--all",
                "--",
                ".",
                ":!.agentic-sdlc",
                ":!.agentic-sdlc.json",
            ]);
        }
        self.git(&["commit", "--quiet", "-m", "Initial commit"]);
        self.env.use_git_branches();
    }

    /// Runs git in the project and returns its trimmed stdout; panics when it fails.
    #[track_caller]
    pub fn git(&self, args: &[&str]) -> String {
        let output = self.git_output(args);
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    }

    pub fn git_output(&self, args: &[&str]) -> std::process::Output {
        Command::new("git")
            .current_dir(self.env.root())
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .expect("run git")
    }
}

/// The content of every `tool` message of a request, in order, with its call id.
/// Every transcript entry of the story with this event, across its transcript files.
pub fn transcript_entries(p: &Project, story: &Made, event: &str) -> Vec<Json> {
    p.env
        .transcript_lines(&story.id)
        .into_iter()
        .filter(|entry| entry["event"] == event)
        .collect()
}

/// A whole-file write the scripted model means (it has not read the file first).
pub fn write_call(path: &str, content: &str) -> Reply {
    Reply::tool(
        "write_file",
        serde_json::json!({"path": path, "content": content, "overwrite": true}),
    )
}

pub fn tool_results(request: &Recorded) -> Vec<(String, String)> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

pub fn messages(request: &Recorded) -> Vec<Json> {
    request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Every `tool` result the implement agent got over a conversation (the last request holds
/// the whole history), keyed by the tool name the model asked for.
pub fn results_by_tool(last_request: &Recorded) -> Vec<(String, String)> {
    let history = messages(last_request);
    let mut names = std::collections::HashMap::new();
    for message in &history {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            names.insert(
                call["id"].as_str().unwrap_or_default().to_string(),
                call["function"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    tool_results(last_request)
        .into_iter()
        .map(|(id, content)| (names.get(&id).cloned().unwrap_or(id), content))
        .collect()
}

/// How often `## <name>` heads a line of the body.
pub fn heading_count(body: &str, name: &str) -> usize {
    let heading = format!("## {name}");
    body.lines().filter(|l| l.trim_end() == heading).count()
}

/// The text of a `## <name>` section (up to the next `## `), trimmed.
pub fn section(body: &str, name: &str) -> String {
    let heading = format!("## {name}");
    let mut lines = body.lines().skip_while(|l| l.trim_end() != heading);
    assert!(lines.next().is_some(), "no {heading} in:\n{body}");
    lines
        .take_while(|l| !l.starts_with("## "))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

/// Whether a file's path contains `needle` anywhere under `dir`.
pub fn files_containing(
    files: &std::collections::BTreeMap<PathBuf, Vec<u8>>,
    needle: &str,
) -> Vec<PathBuf> {
    files
        .iter()
        .filter(|(_, bytes)| bytes.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .map(|(path, _)| path.clone())
        .collect()
}

pub fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}
