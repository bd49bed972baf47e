//! Past one machine (docs/design.md §20): several clones of one repository run the board through a
//! bare repository on disk, with the model faked over HTTP.

mod examples;
mod faults;
mod fleet;
mod preflight;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};

use serde_json::{json, Value as Json};

use crate::suite::common::{finish, Outcome, TestEnv};
use crate::suite::delivery::git_in;
use crate::suite::fake_llm::{FakeLlm, Reply};

/// The bare repository every clone pushes to, the fake model, and the clones.
pub(super) struct Fleet {
    /// Holds `origin.git` and the scripts a test puts beside it.
    place: tempfile::TempDir,
    pub fake: FakeLlm,
    /// The clone the board was made in; it also plays the person who edits stories by hand.
    pub seed: TestEnv,
    pub clones: Vec<TestEnv>,
}

/// A story as the tests name it.
#[derive(Debug, Clone)]
pub(super) struct Story {
    pub id: String,
    pub slug: String,
    pub title: String,
}

impl Story {
    /// The line every prompt about the story carries.
    pub fn marker(&self) -> String {
        format!("# Story: {}", self.title)
    }

    /// The file the story's implement writes.
    pub fn work_file(&self) -> String {
        format!("work/{}.txt", self.slug)
    }
}

/// The test every merge must pass: each story's file says it is done.
const CHECK_SCRIPT: &str = "for f in work/*.txt; do grep -q '^done ' \"$f\" || { echo \"$f is not done\"; exit 1; }; done\n";

impl Fleet {
    /// A repository with a board (tracked in git, as `run --remote` needs), `config` merged
    /// into its settings, pushed to a bare `origin` that `clones` fresh clones then clone.
    pub async fn new(clones: usize, config: Json) -> Fleet {
        let place = tempfile::Builder::new()
            .prefix("agentic-sdlc-remote-")
            .tempdir()
            .expect("a temporary folder");
        let bare = place.path().join("origin.git");
        git_ok(
            place.path(),
            &["init", "--quiet", "--bare", "-b", "main", "origin.git"],
        );
        let seed = TestEnv::init();
        git_ok(&seed.root(), &["init", "--quiet", "-b", "main"]);
        identify(&seed.root(), "Seed Person");
        // The fleet's stories are about sharing the board, not their acceptance tests.
        seed.configure_json(&json!({"review": {"testCommand": "sh check.sh"},
                                    "phases": {"acceptance": {"enabled": false}}}));
        seed.configure_json(&config);
        seed.write("check.sh", CHECK_SCRIPT);
        seed.write("work/README", "one file per story\n");
        seed.write(".gitignore", ".agentic-sdlc/runs/\n");
        git_ok(&seed.root(), &["add", "--all"]);
        git_ok(&seed.root(), &["commit", "--quiet", "-m", "Initial commit"]);
        git_ok(
            &seed.root(),
            &["remote", "add", "origin", &bare.display().to_string()],
        );
        git_ok(&seed.root(), &["push", "--quiet", "origin", "main"]);
        let fleet = Fleet {
            place,
            fake: FakeLlm::start().await,
            seed,
            clones: Vec::new(),
        };
        Fleet {
            clones: (0..clones).map(|_| fleet.new_clone()).collect(),
            ..fleet
        }
    }

    pub fn bare(&self) -> PathBuf {
        self.place.path().join("origin.git")
    }

    /// A folder beside the bare repository, for a test's scripts.
    pub fn scratch(&self) -> &Path {
        self.place.path()
    }

    fn new_clone(&self) -> TestEnv {
        let env = TestEnv::new();
        git_ok(
            &env.root(),
            &["clone", "--quiet", &self.bare().display().to_string(), "."],
        );
        identify(&env.root(), "Clone Runner");
        env
    }

    /// Adds stories in the seed clone and pushes them: `(title, dependencies by index)`. Each
    /// story's implement writes its own file, so merges never conflict.
    pub fn stories(&self, plan: &[(&str, &[usize])]) -> Vec<Story> {
        let stories = self.unscripted_stories(plan);
        for story in &stories {
            self.script_implement(story);
        }
        stories
    }

    /// [`Fleet::stories`] without scripting their implement.
    pub fn unscripted_stories(&self, plan: &[(&str, &[usize])]) -> Vec<Story> {
        let mut stories: Vec<Story> = Vec::new();
        for (title, depends_on) in plan {
            let mut args = Vec::new();
            for index in *depends_on {
                args.extend(["--depends-on", stories[*index].id.as_str()]);
            }
            let (id, slug, _) = self.seed.add(title, &args);
            stories.push(Story {
                id,
                slug,
                title: title.to_string(),
            });
        }
        self.seed_push("Add stories");
        for clone in &self.clones {
            git_ok(
                &clone.root(),
                &["pull", "--quiet", "--ff-only", "origin", "main"],
            );
        }
        stories
    }

    /// The story's next implement writes its work file, then reports.
    pub fn script_implement(&self, story: &Story) {
        let marker = story.marker();
        self.fake.push_for(
            "implement",
            &marker,
            Reply::tool(
                "write_file",
                json!({"path": story.work_file(), "content": format!("done {}\n", story.slug)}),
            ),
        );
        self.fake
            .push_for("implement", &marker, Reply::text("Wrote the work file."));
    }

    /// Commits everything in the seed clone and pushes it, taking in what others pushed first,
    /// as a person does.
    pub fn seed_push(&self, message: &str) {
        let root = self.seed.root();
        git_ok(&root, &["add", "--all"]);
        git_ok(&root, &["commit", "--quiet", "-m", message]);
        for _ in 0..50 {
            if git_in(&root, &["push", "--quiet", "origin", "main"]).0 {
                return;
            }
            git_ok(&root, &["pull", "--quiet", "--rebase", "origin", "main"]);
        }
        panic!("the seed clone could not push {message:?}");
    }

    /// Starts `agentic-sdlc` in clone `index` against the fake model, as host `clone-<index>`.
    /// A run that never ends is killed after a few minutes (exit code -1), so a test fails
    /// instead of hanging.
    pub fn spawn(&self, index: usize, args: &[&str]) -> Child {
        let child = self
            .command(&self.clones[index], index, args)
            .spawn()
            .expect("start agentic-sdlc");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_secs(180));
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        });
        child
    }

    /// Runs `agentic-sdlc` in clone `index` to completion.
    pub fn run(&self, index: usize, args: &[&str]) -> Outcome {
        finish(self.spawn(index, args))
    }

    fn command(&self, env: &TestEnv, index: usize, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentic-sdlc"));
        cmd.current_dir(env.root())
            .args(args)
            .env("NO_COLOR", "1")
            .env("OPENAI_BASE_URL", self.fake.base_url())
            .env("AGENTIC_SDLC_HOST", format!("clone-{index}"))
            .env_remove("OPENAI_API_KEY")
            .env_remove("AGENTIC_SDLC_MODEL")
            .env_remove("RUST_LOG")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        cmd
    }

    /// Git in the bare repository; trimmed stdout.
    #[track_caller]
    pub fn origin(&self, args: &[&str]) -> String {
        git_ok(&self.bare(), args)
    }

    /// The claims on the remote, by story id.
    pub fn claims(&self) -> Vec<String> {
        self.origin(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/agentic-sdlc/claims/",
        ])
        .lines()
        .filter_map(|r| r.strip_prefix("refs/agentic-sdlc/claims/"))
        .map(str::to_string)
        .collect()
    }

    /// The file at `path` on the remote's main, if there.
    pub fn on_main(&self, path: &str) -> Option<String> {
        let (ok, stdout, _) = git_in(&self.bare(), &["show", &format!("main:{path}")]);
        ok.then_some(stdout)
    }

    /// The story files on the remote's main, as `column/file` paths.
    pub fn board_on_main(&self) -> Vec<String> {
        self.origin(&["ls-tree", "-r", "--name-only", "main", ".agentic-sdlc"])
            .lines()
            .filter_map(|p| p.strip_prefix(".agentic-sdlc/"))
            .filter(|p| p.ends_with(".md"))
            .map(str::to_string)
            .collect()
    }

    /// Agent calls about `story` by `role` (the requests that start a call, not the ones that
    /// carry tool results).
    pub fn calls_about(&self, role: &str, story: &Story) -> usize {
        let marker = story.marker();
        self.fake
            .requests_for(role)
            .into_iter()
            .filter(|r| !r.continues_a_call() && r.user_message().contains(&marker))
            .count()
    }
}

/// Gives a clone an identity of its own and shuts the machine's git config out of the
/// test's own git commands.
fn identify(root: &Path, name: &str) {
    git_ok(root, &["config", "user.name", name]);
    git_ok(root, &["config", "user.email", "person@example.com"]);
    git_ok(root, &["config", "commit.gpgsign", "false"]);
}

/// Points clone `root`'s `origin` through `script`, a stand-in for ssh, at the repository at
/// `path` on a host that does not exist.
pub(super) fn through_ssh(root: &Path, script: &Path, path: &Path) {
    let command = format!("sh {}", script.display());
    git_ok(root, &["config", "core.sshCommand", &command]);
    git_ok(root, &["config", "ssh.variant", "simple"]);
    let url = format!("ssh://git@fakehost{}", path.display());
    git_ok(root, &["remote", "set-url", "origin", &url]);
}

#[track_caller]
pub(super) fn git_ok(dir: &Path, args: &[&str]) -> String {
    let (ok, stdout, stderr) = git_in(dir, args);
    assert!(ok, "git {args:?} in {} failed: {stderr}", dir.display());
    stdout
}

/// The frontmatter value of `key` in a story file's text.
pub(super) fn front_value(text: &str, key: &str) -> Option<String> {
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}:")))
        .map(|v| v.trim().trim_matches('\'').to_string())
}
