//! A temporary project folder and the real `agentic-sdlc` binary, for every integration test.
//!
//! `TestEnv::new()` is an empty folder; `TestEnv::init()` is a folder where `init` ran. Commands
//! run with the folder as their working directory, with colour off and without the variables that
//! would point the tool at a real model, so a developer's shell cannot change a test's outcome.

#![allow(dead_code)] // Each test module uses a different part of this helper.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;

use super::fake_llm::FakeLlm;

/// The five board columns, in board order.
pub const COLUMNS: [&str; 5] = ["backlog", "ready", "in-progress", "done", "blocked"];

/// The default board folder (docs/design.md §2).
pub const DEFAULT_BOARD: &str = ".agentic-sdlc";

/// The environment variables a developer may have set that would change what the tool does.
const SCRUBBED_ENV: [&str; 4] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AGENTIC_SDLC_MODEL",
    "RUST_LOG",
];

/// One project folder, deleted when the test ends.
pub struct TestEnv {
    dir: tempfile::TempDir,
}

/// What a finished command left behind: its exit code and its output as text.
#[derive(Debug)]
pub struct Outcome {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    /// Asserts the exit code, showing both streams when it differs.
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        assert_eq!(
            self.code, expected,
            "unexpected exit code\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn success(&self) -> &Self {
        self.code(0)
    }

    #[track_caller]
    pub fn stdout_has(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout,
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n--- stderr\n{}",
            self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stdout_empty(&self) -> &Self {
        assert!(
            self.stdout.is_empty(),
            "stdout should be empty\n--- stdout\n{}",
            self.stdout
        );
        self
    }

    /// Stdout as one JSON document.
    #[track_caller]
    pub fn json(&self) -> Json {
        serde_json::from_str(&self.stdout).unwrap_or_else(|err| {
            panic!(
                "stdout is not one JSON document: {err}\n--- stdout\n{}",
                self.stdout
            )
        })
    }
}

impl TestEnv {
    /// An empty project folder; nothing has run in it.
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("agentic-sdlc-test-")
            .tempdir()
            .expect("create a temporary folder");
        TestEnv { dir }
    }

    /// A project folder with a board made by `init`. It is no git repository, so
    /// `git.branchPerStory` is set to false: a run that may implement refuses to start outside
    /// a repository otherwise. Tests that make it a repository set it back (see
    /// [`TestEnv::use_git_branches`]).
    pub fn init() -> Self {
        let env = Self::new();
        env.run(&["init"]).success();
        env.configure_json(&serde_json::json!({"git": {"branchPerStory": false}}));
        env
    }

    /// Stories get branches of their own again (the default), for a folder made a repository.
    pub fn use_git_branches(&self) {
        self.configure_json(&serde_json::json!({"git": {"branchPerStory": true}}));
    }

    /// The project root, as the tool sees it (symlinks resolved).
    pub fn root(&self) -> PathBuf {
        self.dir
            .path()
            .canonicalize()
            .expect("the temporary folder exists")
    }

    /// Every transcript line written for a story, oldest file first (files are named by time).
    pub fn transcript_lines(&self, story_id: &str) -> Vec<Json> {
        let dir = self.board().join("logs").join(story_id);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("list {}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
            .collect();
        files.sort();
        files
            .iter()
            .flat_map(|file| {
                std::fs::read_to_string(file)
                    .unwrap()
                    .lines()
                    .map(|line| serde_json::from_str(line).expect("a transcript line is JSON"))
                    .collect::<Vec<Json>>()
            })
            .collect()
    }

    /// The board folder named by the config's `sdlcFolder`, or the default one.
    pub fn board(&self) -> PathBuf {
        let folder = std::fs::read_to_string(self.root().join(".agentic-sdlc.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Json>(&text).ok())
            .and_then(|config| config["sdlcFolder"].as_str().map(str::to_string))
            .unwrap_or_else(|| DEFAULT_BOARD.to_string());
        self.root().join(folder)
    }

    /// A command for the binary, run in the project root with a scrubbed environment.
    pub fn cmd(&self, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
        cmd.current_dir(self.root()).env("NO_COLOR", "1").args(args);
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        cmd
    }

    /// Merges `patch` into `.agentic-sdlc.json` key by key, as a person edits the file.
    pub fn configure_json(&self, patch: &Json) {
        let path = self.path(".agentic-sdlc.json");
        let mut config: Json = serde_json::from_str(&self.read(&path)).expect("the config is JSON");
        merge_json(&mut config, patch);
        self.write(&path, &serde_json::to_string_pretty(&config).unwrap());
    }

    /// Runs a command to completion.
    pub fn run(&self, args: &[&str]) -> Outcome {
        outcome(&mut self.cmd(args))
    }

    /// A command whose agents talk to the fake model server. A run that loops is killed after
    /// a while (exit code -1), so a test fails instead of hanging.
    pub fn cmd_with_llm(&self, llm: &FakeLlm, args: &[&str]) -> assert_cmd::Command {
        let mut cmd = self.cmd(args);
        cmd.env("OPENAI_BASE_URL", llm.base_url())
            .timeout(std::time::Duration::from_secs(120));
        cmd
    }

    /// Runs a command to completion against the fake model server.
    pub fn run_with_llm(&self, llm: &FakeLlm, args: &[&str]) -> Outcome {
        outcome(&mut self.cmd_with_llm(llm, args))
    }

    /// Starts a command against the fake model server without waiting for it, for tests that
    /// signal it or act while it works. Its output is piped; `finish` collects it.
    pub fn spawn_with_llm(&self, llm: &FakeLlm, args: &[&str]) -> std::process::Child {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
        cmd.current_dir(self.root())
            .env("NO_COLOR", "1")
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        for var in SCRUBBED_ENV {
            cmd.env_remove(var);
        }
        cmd.env("OPENAI_BASE_URL", llm.base_url());
        cmd.spawn().expect("start agentic-sdlc")
    }

    /// Runs a command with `--json`, asserts it succeeded and parses its stdout.
    #[track_caller]
    pub fn run_json(&self, args: &[&str]) -> Json {
        let mut args = args.to_vec();
        args.push("--json");
        let out = self.run(&args);
        out.success();
        out.json()
    }

    /// Adds a story through `add --json`; returns its id, slug and path.
    #[track_caller]
    pub fn add(&self, title: &str, extra_args: &[&str]) -> (String, String, PathBuf) {
        let mut args = vec!["add", title];
        args.extend_from_slice(extra_args);
        let added = self.run_json(&args);
        assert_eq!(added["schemaVersion"], 1, "{added}");
        assert_eq!(added["kind"], "added", "{added}");
        let field = |key: &str| {
            added[key]
                .as_str()
                .unwrap_or_else(|| panic!("`{key}` missing in {added}"))
                .to_string()
        };
        (field("id"), field("slug"), PathBuf::from(field("path")))
    }

    /// The file of the story `slug` in whichever column it sits, in either naming layout.
    #[track_caller]
    pub fn story_path(&self, slug: &str) -> PathBuf {
        let matches = self.story_paths(slug);
        match matches.as_slice() {
            [only] => only.clone(),
            other => panic!("expected one file for slug `{slug}`, found {other:?}"),
        }
    }

    /// Every file of the story `slug` on the board: two while a move is under way, since the
    /// tool writes the new file before it removes the old one.
    pub fn story_paths(&self, slug: &str) -> Vec<PathBuf> {
        let board = self.board();
        COLUMNS
            .iter()
            .filter_map(|column| std::fs::read_dir(board.join(column)).ok())
            .flatten()
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| file_slug(path).as_deref() == Some(slug))
            .collect()
    }

    /// A path inside the project: relative paths are taken from the root.
    pub fn path(&self, path: impl AsRef<Path>) -> PathBuf {
        self.root().join(path)
    }

    #[track_caller]
    pub fn read(&self, path: impl AsRef<Path>) -> String {
        let path = self.path(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    /// Writes a file, creating its folders.
    #[track_caller]
    pub fn write(&self, path: impl AsRef<Path>, text: &str) -> PathBuf {
        let path = self.path(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent folders");
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// Replaces one occurrence of `from` by `to` in a file, the way a person edits it by hand.
    #[track_caller]
    pub fn edit(&self, path: impl AsRef<Path>, from: &str, to: &str) {
        let path = self.path(path);
        let text = self.read(&path);
        assert!(
            text.contains(from),
            "{} does not contain {from:?}:\n{text}",
            path.display()
        );
        self.write(&path, &text.replacen(from, to, 1));
    }

    /// Writes a hand-made story file into a column and returns its path.
    pub fn write_story(&self, column: &str, file_name: &str, text: &str) -> PathBuf {
        self.write(self.board().join(column).join(file_name), text)
    }

    /// A story file's frontmatter as YAML.
    #[track_caller]
    pub fn frontmatter(&self, path: impl AsRef<Path>) -> serde_norway::Value {
        let text = self.read(path);
        let (front, _) = split_frontmatter(&text);
        serde_norway::from_str(front).unwrap_or_else(|e| panic!("frontmatter: {e}\n{front}"))
    }

    /// A story file's Markdown body (everything after the closing `---`).
    #[track_caller]
    pub fn body(&self, path: impl AsRef<Path>) -> String {
        split_frontmatter(&self.read(path)).1.to_string()
    }

    /// `status --json`.
    #[track_caller]
    pub fn status_json(&self) -> Json {
        self.run_json(&["status"])
    }

    /// Every file under the project root with its bytes, to prove a command wrote nothing.
    pub fn files(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        collect_files(&self.root(), &self.root(), &mut files);
        files
    }

    /// insta settings that hide what changes from run to run: the temporary folder, story ids
    /// and dates.
    pub fn snapshot_settings(&self) -> insta::Settings {
        let mut settings = insta::Settings::clone_current();
        for (pattern, replacement) in self.snapshot_filters() {
            settings.add_filter(&pattern, replacement);
        }
        settings.set_prepend_module_to_snapshot(false);
        settings
    }

    /// The regex filters behind [`TestEnv::snapshot_settings`], for callers that build their own.
    pub fn snapshot_filters(&self) -> Vec<(String, &'static str)> {
        let mut filters = Vec::new();
        // The canonical root comes first: on macOS the raw path is its `/var` alias.
        for root in [self.root(), self.dir.path().to_path_buf()] {
            filters.push((regex_escape(&root.display().to_string()), "[ROOT]"));
        }
        filters.push((r"story-[0-9a-z]+-[0-9a-z]{4}".to_string(), "[ID]"));
        filters.push((r"\d{4}-\d{2}-\d{2}".to_string(), "[DATE]"));
        filters
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs a prepared command (for callers that change its directory or environment first).
pub fn outcome(cmd: &mut assert_cmd::Command) -> Outcome {
    let output = cmd.output().expect("run agentic-sdlc");
    Outcome {
        // A signal leaves no code; -1 can never be an expected exit code.
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// Waits for a spawned command to end and collects what it printed.
pub fn finish(child: std::process::Child) -> Outcome {
    let output = child.wait_with_output().expect("wait for agentic-sdlc");
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The slug a story file name stands for: `<slug>.md` or the older `NN-<slug>.md`.
fn file_slug(path: &Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    if path.extension()? != "md" {
        return None;
    }
    let slug = match stem.split_once('-') {
        Some((digits, rest))
            if (1..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) =>
        {
            rest
        }
        _ => stem,
    };
    Some(slug.to_string())
}

/// Splits a story file into frontmatter text and body.
#[track_caller]
pub fn split_frontmatter(text: &str) -> (&str, &str) {
    let rest = text
        .strip_prefix("---\n")
        .unwrap_or_else(|| panic!("no frontmatter in:\n{text}"));
    let end = rest
        .find("\n---\n")
        .unwrap_or_else(|| panic!("unclosed frontmatter in:\n{text}"));
    (&rest[..=end], &rest[end + 5..])
}

fn collect_files(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let entries = std::fs::read_dir(dir).expect("list a folder");
    for entry in entries {
        let path = entry.expect("read a folder entry").path();
        if path.is_dir() {
            collect_files(root, &path, out);
        } else {
            let relative = path
                .strip_prefix(root)
                .expect("under the root")
                .to_path_buf();
            out.insert(relative, std::fs::read(&path).expect("read a file"));
        }
    }
}

/// Escapes regex metacharacters so a literal path can be used as an insta filter.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Asserts that a story id has the contract shape `story-<base36>-<4 base36 chars>`.
#[track_caller]
pub fn assert_story_id(id: &str) {
    let base36 = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
    };
    let parts: Vec<&str> = id.split('-').collect();
    assert!(
        parts.len() == 3
            && parts[0] == "story"
            && base36(parts[1])
            && parts[2].len() == 4
            && base36(parts[2]),
        "`{id}` is not a story id"
    );
}

/// Asserts that `text` holds every one of `needles`, and shows the text when one is missing.
#[track_caller]
pub fn assert_contains_all(text: &str, needles: &[&str]) {
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing in:\n{text}");
    }
}

/// The string `field` of every object in the JSON array `list`, in order; panics when `list` is
/// no array or an item has no such string.
#[track_caller]
pub fn strings_of<'a>(list: &'a Json, field: &str) -> Vec<&'a str> {
    let items = list
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {list}"));
    items
        .iter()
        .map(|item| {
            item[field]
                .as_str()
                .unwrap_or_else(|| panic!("no string `{field}` in {item}"))
        })
        .collect()
}

/// Asserts that a text is a calendar date `YYYY-MM-DD`.
#[track_caller]
pub fn assert_date(text: &str) {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    assert!(
        b.len() == 10
            && digits(0..4)
            && b[4] == b'-'
            && digits(5..7)
            && b[7] == b'-'
            && digits(8..10),
        "`{text}` is not a YYYY-MM-DD date"
    );
}

/// Merges `patch` into `base`: objects key by key, anything else replaced.
fn merge_json(base: &mut Json, patch: &Json) {
    match (base, patch) {
        (Json::Object(base), Json::Object(patch)) => {
            for (key, value) in patch {
                merge_json(base.entry(key.clone()).or_insert(Json::Null), value);
            }
        }
        (base, patch) => *base = patch.clone(),
    }
}

/// Writes `script` as the executable `dir/name`, a stand-in for a program (or a git hook).
pub fn write_program(dir: &Path, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `PATH` with `dir` first, so that its programs stand in for the real ones.
pub fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
