//! The tools through `ToolBox::call`, as the model sees them.

use super::*;
use crate::exec::OUTPUT_BUDGET;
use serde_json::json;
use std::fs;
use std::os::unix::fs::symlink;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;
use tempfile::TempDir;

/// The read cap the fixture uses, smaller than the default to keep files small.
const READ_BYTE_CAP: usize = 100 * 1024;

const MAIN_RS: &str = "fn main() {\n    println!(\"hello\");\n}\n";

struct Fixture {
    dir: TempDir,
    root: PathBuf,
    tools: ToolBox,
}

impl Fixture {
    fn new(access: ToolAccess) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let files = [
            ("repo/src/main.rs", MAIN_RS),
            ("repo/README.md", "# Demo\nhello world\n"),
            ("repo/.git/config", "[core]\nhello = git\n"),
            ("repo/.agentic-sdlc/backlog/story.md", "hello board\n"),
            ("repo/target/debug/out.txt", "hello build\n"),
            ("outside/secret.txt", "hello secret\n"),
        ];
        for (path, text) in files {
            let path = dir.path().join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
        let board = root.join(".agentic-sdlc");
        let limits = ToolLimits {
            max_read_bytes: READ_BYTE_CAP,
            timeout: Duration::from_secs(30),
        };
        let tools = ToolBox::new(root.clone(), board, access, limits);
        Self { dir, root, tools }
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    async fn call(&self, name: &str, args: Value) -> ToolOutcome {
        self.tools.call(name, &args.to_string()).await
    }

    /// Asserts that read_file refuses every one of `paths`, with `needle` in the error.
    async fn refuses_to_read(&self, paths: &[&str], needle: &str) {
        for path in paths {
            let out = self.call("read_file", json!({ "path": path })).await;
            assert_error(&out, needle);
        }
    }

    /// Asserts that write_file refuses `path`, with `needle` in the error.
    async fn refuses_to_write(&self, path: &str, needle: &str) {
        let out = self
            .call("write_file", json!({"path": path, "content": "x"}))
            .await;
        assert_error(&out, needle);
    }
}

fn rw() -> Fixture {
    Fixture::new(ToolAccess::ReadWrite)
}

#[track_caller]
fn assert_error(outcome: &ToolOutcome, needle: &str) {
    assert!(outcome.is_error(), "expected an error, got {outcome:?}");
    assert!(outcome.content.starts_with("Error: "), "{outcome:?}");
    assert!(
        outcome.content.contains(needle),
        "{outcome:?} lacks {needle:?}"
    );
}

#[track_caller]
fn assert_ok(outcome: &ToolOutcome) -> &str {
    assert!(!outcome.is_error(), "expected success, got {outcome:?}");
    &outcome.content
}

fn names(definitions: &[Value]) -> Vec<&str> {
    definitions
        .iter()
        .map(|def| def["function"]["name"].as_str().unwrap())
        .collect()
}

#[test]
fn definitions_follow_access() {
    let read_only = Fixture::new(ToolAccess::ReadOnly).tools.definitions();
    assert_eq!(names(&read_only), ["read_file", "list_files", "search"]);
    let all = rw().tools.definitions();
    assert_eq!(
        names(&all),
        [
            "read_file",
            "list_files",
            "search",
            "write_file",
            "edit_file",
            "run_command"
        ]
    );
    for def in &all {
        assert_eq!(def["type"], "function");
        assert_eq!(def["function"]["parameters"]["type"], "object");
        assert!(def["function"]["description"].is_string());
    }
    let edit = &all[4]["function"]["parameters"];
    assert_eq!(
        edit["required"],
        json!(["path", "old_string", "new_string"])
    );
    let run = &all[5]["function"]["parameters"]["properties"];
    assert!(run["timeout_seconds"].is_object());
}

#[tokio::test]
async fn read_file_returns_raw_text() {
    let fx = rw();
    let out = fx.call("read_file", json!({"path": "src/main.rs"})).await;
    assert_eq!(assert_ok(&out), MAIN_RS);
    fs::write(fx.root.join("empty.txt"), "").unwrap();
    let out = fx.call("read_file", json!({"path": "empty.txt"})).await;
    assert_eq!(assert_ok(&out), "(empty file)");
}

#[tokio::test]
async fn read_file_slices_lines_and_says_how_to_read_on() {
    let fx = rw();
    let out = fx
        .call(
            "read_file",
            json!({"path": "src/main.rs", "offset": 1, "limit": 1}),
        )
        .await;
    assert_eq!(
        assert_ok(&out),
        "    println!(\"hello\");\n[cut: showed lines 2-2 of 3; read on with offset=2]"
    );
    // Models sometimes send numbers as strings.
    let out = fx
        .call("read_file", json!({"path": "src/main.rs", "offset": "2"}))
        .await;
    assert_eq!(assert_ok(&out), "}\n");
    let out = fx
        .call("read_file", json!({"path": "src/main.rs", "offset": 9}))
        .await;
    assert_error(&out, "past the end");
}

#[tokio::test]
async fn read_file_caps_bytes() {
    let fx = rw();
    let line = "x".repeat(99) + "\n";
    fs::write(fx.root.join("big.txt"), line.repeat(1500)).unwrap();
    let out = fx.call("read_file", json!({"path": "big.txt"})).await;
    let text = assert_ok(&out);
    assert!(text.len() <= READ_BYTE_CAP + 100);
    assert!(
        text.ends_with("read on with offset=1024]"),
        "{}",
        &text[text.len() - 80..]
    );
}

#[tokio::test]
async fn read_file_refuses_binary_and_folders_and_missing_files() {
    let fx = rw();
    fs::write(fx.root.join("blob.bin"), b"abc\0def").unwrap();
    assert_error(
        &fx.call("read_file", json!({"path": "blob.bin"})).await,
        "binary",
    );
    assert_error(
        &fx.call("read_file", json!({"path": "src"})).await,
        "folder",
    );
    assert_error(
        &fx.call("read_file", json!({"path": "nope.txt"})).await,
        "'nope.txt' does not exist",
    );
}

#[tokio::test]
async fn list_files_sorts_marks_folders_and_hides_git_and_board() {
    let fx = rw();
    let out = fx.call("list_files", json!({})).await;
    assert_eq!(assert_ok(&out), "README.md\nsrc/\ntarget/");
    let out = fx.call("list_files", json!({"path": "src"})).await;
    assert_eq!(assert_ok(&out), "src/main.rs");
    fs::create_dir(fx.root.join("empty")).unwrap();
    let out = fx.call("list_files", json!({"path": "empty"})).await;
    assert_eq!(assert_ok(&out), "(empty folder)");
    let out = fx.call("list_files", json!({"path": "README.md"})).await;
    assert_error(&out, "not a folder");
}

#[tokio::test]
async fn list_files_caps_entries() {
    let fx = rw();
    let many = fx.root.join("many");
    fs::create_dir(&many).unwrap();
    for i in 0..1005 {
        fs::write(many.join(format!("f{i:04}")), "").unwrap();
    }
    let out = fx.call("list_files", json!({"path": "many"})).await;
    let text = assert_ok(&out);
    assert_eq!(text.lines().count(), 1001);
    assert!(text.ends_with("... and 5 more entries not shown"));
}

#[tokio::test]
async fn search_finds_substrings_and_skips_git_board_build_and_binary() {
    let fx = rw();
    fs::write(fx.root.join("blob.bin"), b"hello\0").unwrap();
    fs::create_dir_all(fx.root.join("node_modules/x")).unwrap();
    fs::write(fx.root.join("node_modules/x/a.js"), "hello\n").unwrap();
    let out = fx.call("search", json!({"pattern": "hello"})).await;
    assert_eq!(
        assert_ok(&out),
        "README.md:2: hello world\nsrc/main.rs:2:     println!(\"hello\");"
    );
    let out = fx
        .call("search", json!({"pattern": "hello", "path": "src/main.rs"}))
        .await;
    assert_eq!(assert_ok(&out), "src/main.rs:2:     println!(\"hello\");");
    // Case-sensitive, and no match is not an error.
    let out = fx.call("search", json!({"pattern": "HELLO"})).await;
    assert_eq!(assert_ok(&out), "No matches for 'HELLO' in '.'.");
}

#[tokio::test]
async fn search_caps_matches() {
    let fx = rw();
    fs::write(fx.root.join("many.txt"), "needle\n".repeat(250)).unwrap();
    let out = fx.call("search", json!({"pattern": "needle"})).await;
    let text = assert_ok(&out);
    assert_eq!(text.lines().count(), 201);
    assert!(text.ends_with("narrow the pattern or the path]"));
}

#[tokio::test]
async fn write_file_creates_parents_atomically_with_normal_mode() {
    let fx = rw();
    let out = fx
        .call(
            "write_file",
            json!({"path": "new/dir/a.txt", "content": "hi\n"}),
        )
        .await;
    assert_eq!(assert_ok(&out), "Wrote 3 bytes to new/dir/a.txt");
    let written = fx.root.join("new/dir/a.txt");
    assert_eq!(fs::read_to_string(&written).unwrap(), "hi\n");
    let mode = fs::metadata(&written).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    // No temporary file is left behind.
    assert_eq!(fs::read_dir(fx.root.join("new/dir")).unwrap().count(), 1);
}

#[tokio::test]
async fn a_new_python_file_of_nothing_but_comments_is_not_written() {
    let fx = rw();
    // Recorded (Qwen2.5-Coder-1.5B, a drive's implement, 2026-12-07).
    let junk = json!({"path": "shelf/migrations/0001_initial.py", "content": "# shelf/migrations/0001_initial.py\n"});
    let out = fx.call("write_file", junk).await;
    assert!(
        assert_ok(&out).starts_with("Nothing was written to 'shelf/migrations/0001_initial.py'"),
        "{out:?}"
    );
    assert!(!fx.root.join("shelf").exists());
    // A package's `__init__.py` may be empty, and a file that exists is the edit's to judge.
    let package = json!({"path": "shelf/__init__.py", "content": ""});
    assert_eq!(
        assert_ok(&fx.call("write_file", package).await),
        "Wrote 0 bytes to shelf/__init__.py"
    );
    fs::write(fx.root.join("notes.py"), "x = 1\n").unwrap();
    let emptied = json!({"path": "notes.py", "content": "# nothing\n", "overwrite": true});
    assert_ok(&fx.call("write_file", emptied).await);
    assert_eq!(
        fs::read_to_string(fx.root.join("notes.py")).unwrap(),
        "# nothing\n"
    );
}

#[tokio::test]
async fn a_folder_written_in_other_letter_case_is_the_one_the_repository_has() {
    let fx = rw();
    fs::create_dir_all(fx.root.join("inventory")).unwrap();
    fs::write(fx.root.join("inventory/cart.py"), "class Cart:\n    pass\n").unwrap();
    // Recorded (Qwen2.5-Coder-1.5B, inventory `format-price`, 2026-12-05): `# Inventory/money.py`.
    let out = fx
        .call(
            "write_file",
            json!({"path": "Inventory/money.py", "content": "def format_price(cents):\n    return ''\n", "merge": true}),
        )
        .await;
    assert_eq!(
        assert_ok(&out),
        "Wrote 39 bytes to inventory/money.py (the folders as the repository spells them)"
    );
    assert!(fx.root.join("inventory/money.py").is_file());
    assert!(!fx.root.join("Inventory").exists());
    // A file of the repository is read, and edited, as it is spelt in any case.
    let read = fx
        .call("read_file", json!({"path": "INVENTORY/Cart.py"}))
        .await;
    assert!(assert_ok(&read).contains("class Cart"), "{read:?}");
    // With two folders alike but for case, the path stays as given.
    fs::create_dir_all(fx.root.join("Docs")).unwrap();
    fs::create_dir_all(fx.root.join("docs")).unwrap();
    let out = fx
        .call("write_file", json!({"path": "DOCS/a.md", "content": "a\n"}))
        .await;
    assert_eq!(assert_ok(&out), "Wrote 2 bytes to DOCS/a.md");
}

#[tokio::test]
async fn a_refused_write_to_a_file_the_story_does_not_name_is_elsewhere() {
    let fx = rw();
    fs::create_dir_all(fx.root.join("inventory")).unwrap();
    fs::write(fx.root.join("inventory/cart.py"), "class Cart:\n    pass\n").unwrap();
    let tools = fx
        .tools
        .clone()
        .elsewhere(&["inventory/cart.py".to_string()]);
    // Recorded in kind (Qwen2.5-Coder-1.5B, inventory `parse-quantity`, 2026-12-05): the
    // repository map's line written out as the cart's file.
    let map_line = json!({"path": "inventory/cart.py", "content": "class Cart  # Items by SKU\n", "overwrite": true});
    let out = tools.call("write_file", &map_line.to_string()).await;
    assert_eq!(out.failure, Some(CallFailure::Elsewhere), "{out:?}");
    assert!(out.content.contains("not be valid Python"), "{out:?}");
    assert!(!CallFailure::Elsewhere.holds_the_check());
    // The story's own file refused the same way holds the check until it is written.
    let own = json!({"path": "inventory/parse.py", "content": "def parse(\n"});
    let out = tools.call("write_file", &own.to_string()).await;
    assert_eq!(out.failure, Some(CallFailure::ForModel), "{out:?}");
    assert!(CallFailure::ForModel.holds_the_check());
}

#[tokio::test]
async fn a_test_file_that_parses_once_mended_is_written_with_each_mend_said() {
    let fx = rw();
    // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-07), with a `def` name of words added
    // (tollbooth, 2026-12-07): neither parses, both mends together do.
    let written = "tests/test_reading_time.py\n  def test_negative pages():\n    assert reading_minutes(-1) raises ValueError\n";
    let call = json!({"path": "tests/test_reading_time.py", "content": written});
    let out = fx.call("write_file", call).await;
    let said = assert_ok(&out);
    assert!(
        said.ends_with("(without the path line and the indent around the code) (with the words of each `def` name joined by `_`) (with each `… raises …` line written as a `pytest.raises` block)"),
        "{said}"
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("tests/test_reading_time.py")).unwrap(),
        "def test_negative_pages():\n  with pytest.raises(ValueError):\n      reading_minutes(-1)\n"
    );
    // What no mend makes parse is refused as it came.
    let broken = json!({"path": "tests/test_other.py", "content": "assert f(-1) raises ValueError\ndef g(:\n"});
    let out = fx.call("write_file", broken).await;
    assert!(out.content.contains("line 1: invalid syntax"), "{out:?}");
}

#[tokio::test]
async fn a_whole_file_keeps_the_project_tests_of_other_work_and_adds_new_ones() {
    let fx = rw();
    let project = "from inventory.pricing import apply_discount\n\n\ndef test_discount():\n    assert apply_discount(1000, 10) == 900\n";
    fs::create_dir_all(fx.root.join("tests")).unwrap();
    fs::write(fx.root.join("tests/test_pricing.py"), project).unwrap();
    let tools = fx
        .tools
        .clone()
        .keeping_tests_of(&["tests/test_pricing.py".to_string()]);
    // Recorded in kind (Qwen2.5-Coder-1.5B, inventory `receipt-line`, 2026-12-05): the
    // project's test written again wrongly, beside a new one.
    let written = "import pytest\nfrom inventory.pricing import apply_discount\n\n\ndef test_discount():\n    assert apply_discount(1000, 10) == 24\n\n\ndef test_no_discount():\n    assert apply_discount(1000, 0) == 1000\n";
    let out = tools
        .call(
            "write_file",
            &json!({"path": "tests/test_pricing.py", "content": written, "merge": true})
                .to_string(),
        )
        .await;
    assert!(
        assert_ok(&out).ends_with(
            "; your test_discount left out: the project's tests of other work stay as they are"
        ),
        "{out:?}"
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("tests/test_pricing.py")).unwrap(),
        "from inventory.pricing import apply_discount\nimport pytest\n\n\ndef test_discount():\n    assert apply_discount(1000, 10) == 900\n\n\ndef test_no_discount():\n    assert apply_discount(1000, 0) == 1000\n"
    );
    // Only the project's tests again: nothing is written.
    let again = json!({"path": "tests/test_pricing.py", "content": "def test_discount():\n    assert False\n", "merge": true});
    let out = tools.call("write_file", &again.to_string()).await;
    assert!(assert_ok(&out).contains("nothing was written"), "{out:?}");
    assert!(fs::read_to_string(fx.root.join("tests/test_pricing.py"))
        .unwrap()
        .contains("== 900"));
    // A write the model means as a call (not a file out of its reply) is its own.
    let called = json!({"path": "tests/test_pricing.py", "content": "def test_discount():\n    assert True\n", "overwrite": true});
    assert!(assert_ok(&tools.call("write_file", &called.to_string()).await).starts_with("Wrote"));
}

#[tokio::test]
async fn a_write_of_what_the_file_already_holds_says_nothing_changed() {
    let fx = rw();
    fs::write(
        fx.root.join("calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    let same =
        json!({"path": "calc.py", "content": "def add(a, b):\n    return a + b\n", "merge": true});
    assert_eq!(
        assert_ok(&fx.call("write_file", same).await),
        "'calc.py' already holds exactly this content: nothing changed"
    );
    let changed = json!({"path": "calc.py", "content": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n", "merge": true});
    assert!(assert_ok(&fx.call("write_file", changed).await).starts_with("Wrote "));
}

#[tokio::test]
async fn edit_file_replaces_exactly_one_match() {
    let fx = rw();
    fs::write(fx.root.join("e.txt"), "one two two\n").unwrap();
    let edit = |old: &str| json!({"path": "e.txt", "old_string": old, "new_string": "three"});
    assert_error(&fx.call("edit_file", edit("four")).await, "not found");
    assert_error(
        &fx.call("edit_file", edit("two")).await,
        "matches 2 times in 'e.txt' (line 1); give more context",
    );
    let out = fx.call("edit_file", edit("one")).await;
    assert_eq!(assert_ok(&out), "Edited e.txt: replaced 1 occurrence");
    assert_eq!(
        fs::read_to_string(fx.root.join("e.txt")).unwrap(),
        "three two two\n"
    );
}

#[tokio::test]
async fn edit_file_with_empty_old_string_creates_only_missing_files() {
    let fx = rw();
    let args = json!({"path": "docs/new.md", "old_string": "", "new_string": "# New\n"});
    assert_ok(&fx.call("edit_file", args).await);
    assert_eq!(
        fs::read_to_string(fx.root.join("docs/new.md")).unwrap(),
        "# New\n"
    );
    let args = json!({"path": "README.md", "old_string": "", "new_string": "x"});
    assert_error(&fx.call("edit_file", args).await, "already exists");
    let args = json!({"path": "gone.md", "old_string": "a", "new_string": "b"});
    assert_error(&fx.call("edit_file", args).await, "does not exist");
}

#[tokio::test]
async fn paths_outside_the_root_are_refused() {
    let fx = rw();
    for path in ["../x", "src/../../x", "/etc/passwd"] {
        let out = fx.call("read_file", json!({ "path": path })).await;
        assert_error(&out, &format!("path '{path}' is outside the repository"));
    }
    fx.refuses_to_write("../x", "outside the repository").await;
    assert!(!fx.dir.path().join("x").exists());
}

#[tokio::test]
async fn absolute_paths_inside_the_root_are_allowed() {
    let fx = rw();
    let path = fx.root.join("src/main.rs");
    let out = fx
        .call("read_file", json!({"path": path.to_str().unwrap()}))
        .await;
    assert_eq!(assert_ok(&out), MAIN_RS);
    let out = fx
        .call("read_file", json!({"path": "src/../README.md"}))
        .await;
    assert_ok(&out);
}

#[tokio::test]
async fn symlinks_leading_outside_are_refused() {
    let fx = rw();
    symlink(fx.outside(), fx.root.join("escape")).unwrap();
    symlink(fx.outside().join("secret.txt"), fx.root.join("secret.txt")).unwrap();
    symlink(fx.root.join("README.md"), fx.root.join("inside.md")).unwrap();
    let paths = ["escape/secret.txt", "secret.txt", "escape"];
    fx.refuses_to_read(&paths, "outside the repository through a symbolic link")
        .await;
    fx.refuses_to_write("escape/new.txt", "symbolic link").await;
    assert!(!fx.outside().join("new.txt").exists());
    let out = fx.call("search", json!({"pattern": "secret"})).await;
    assert_eq!(assert_ok(&out), "No matches for 'secret' in '.'.");
    let out = fx.call("read_file", json!({"path": "inside.md"})).await;
    assert_ok(&out);
}

#[tokio::test]
async fn git_folder_is_refused() {
    let fx = rw();
    let paths = [".git/config", ".git", "src/../.git/config"];
    fx.refuses_to_read(&paths, "inside .git").await;
    fx.refuses_to_write(".git/hooks/pre-commit", "inside .git")
        .await;
    // A link to .git is no way around it.
    symlink(fx.root.join(".git"), fx.root.join("g")).unwrap();
    fx.refuses_to_read(&["g/config"], "inside .git").await;
}

#[tokio::test]
async fn board_folder_is_refused() {
    let fx = rw();
    let story = ".agentic-sdlc/backlog/story.md";
    assert_error(
        &fx.call("read_file", json!({ "path": story })).await,
        "board folder",
    );
    assert_error(
        &fx.call("list_files", json!({"path": ".agentic-sdlc"}))
            .await,
        "board folder",
    );
    let args = json!({"path": story, "old_string": "hello", "new_string": "bye"});
    assert_error(&fx.call("edit_file", args).await, "board folder");
    assert_eq!(
        fs::read_to_string(fx.root.join(story)).unwrap(),
        "hello board\n"
    );
}

#[tokio::test]
async fn write_tools_are_refused_in_read_only_mode() {
    let fx = Fixture::new(ToolAccess::ReadOnly);
    for name in ["write_file", "edit_file", "run_command"] {
        let out = fx
            .call(name, json!({"path": "a", "content": "", "command": "true"}))
            .await;
        assert_error(&out, "read-only access");
    }
    assert!(!fx.root.join("a").exists());
    assert_ok(&fx.call("read_file", json!({"path": "README.md"})).await);
}

#[tokio::test]
async fn bad_calls_become_error_results() {
    let fx = rw();
    let out = fx.tools.call("read_file", "{\"path\": ").await;
    assert_error(&out, "not valid JSON");
    let out = fx.tools.call("read_file", "[1]").await;
    assert_error(&out, "must be a JSON object");
    let out = fx.call("read_file", json!({})).await;
    assert_error(&out, "missing required argument 'path'");
    let out = fx.call("read_file", json!({"path": 3})).await;
    assert_error(&out, "argument 'path' must be a string");
    let out = fx.call("delete_everything", json!({})).await;
    assert_error(
        &out,
        "unknown tool 'delete_everything'; available tools: read_file",
    );
    // No arguments at all is fine for a tool without required ones.
    assert_ok(&fx.tools.call("list_files", "").await);
}

#[tokio::test]
async fn run_command_reports_exit_code_and_combined_output() {
    let fx = rw();
    let out = fx
        .call(
            "run_command",
            json!({"command": "echo out; echo err >&2; ls src; exit 3"}),
        )
        .await;
    let text = assert_ok(&out);
    assert!(text.starts_with("exit code: 3\n"), "{text}");
    for needle in ["out\n", "err\n", "main.rs\n"] {
        assert!(text.contains(needle), "{text}");
    }
    let out = fx.call("run_command", json!({"command": "true"})).await;
    assert_eq!(assert_ok(&out), "exit code: 0\n(no output)");
}

#[tokio::test]
async fn run_command_timeout_kills_the_whole_group() {
    let fx = rw();
    let started = std::time::Instant::now();
    // Commands run in a PID namespace of their own, so `$!` would be a pid of that namespace;
    // the sleep is found by a duration no other process uses.
    let marker = crate::exec::tests::process_probe::marker();
    let command = format!("sleep {marker} & echo begun; sleep {marker}");
    let out = fx
        .call(
            "run_command",
            json!({"command": command, "timeout_seconds": 1}),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_error(&out, "command timed out after 1s");
    assert!(out.content.contains("begun"), "{out:?}");
    assert_eq!(
        crate::exec::tests::process_probe::live_processes_with(&marker),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn run_command_does_not_wait_for_background_children() {
    let fx = rw();
    let started = std::time::Instant::now();
    let out = fx
        .call(
            "run_command",
            json!({"command": "sleep 100 & echo started"}),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(assert_ok(&out), "exit code: 0\nstarted\n");
}

#[tokio::test]
async fn run_command_output_is_cut_to_head_and_tail() {
    let fx = rw();
    let command =
        "echo first; i=0; while [ $i -lt 5000 ]; do echo line-$i; i=$((i+1)); done; echo last";
    let out = fx.call("run_command", json!({ "command": command })).await;
    let text = assert_ok(&out);
    assert!(text.len() < OUTPUT_BUDGET + 200, "{}", text.len());
    assert!(text.starts_with("exit code: 0\nfirst\n"));
    assert!(text.ends_with("last\n"));
    assert!(text.contains(" bytes omitted] ..."));
}

#[test]
fn timeout_is_the_smaller_of_asked_and_configured() {
    let tools = rw().tools;
    assert_eq!(tools.effective_timeout(None), Duration::from_secs(30));
    assert_eq!(tools.effective_timeout(Some(2.0)), Duration::from_secs(2));
    assert_eq!(
        tools.effective_timeout(Some(1e300)),
        Duration::from_secs(30)
    );
}

#[tokio::test]
async fn a_failure_of_the_tool_itself_is_fatal_and_a_refusal_is_not() {
    let fx = rw();
    let refused = fx
        .call(
            "write_file",
            json!({"path": ".agentic-sdlc.json", "content": "{}"}),
        )
        .await;
    assert_error(&refused, "agentic-sdlc config");
    assert!(!refused.is_fatal());
    // With its folder gone, no command can start: nothing the model can fix.
    fs::remove_dir_all(&fx.root).unwrap();
    let broken = fx.call("run_command", json!({"command": "true"})).await;
    assert_error(&broken, "cannot start sh");
    assert!(broken.is_fatal(), "{broken:?}");
}

#[tokio::test]
async fn the_key_is_blanked_out_of_results() {
    let fx = rw();
    let tools = fx
        .tools
        .clone()
        .with_secrets(vec!["sk-test-0123456789".into()]);
    fs::write(fx.root.join("leak.txt"), "key=sk-test-0123456789\n").unwrap();
    let out = tools
        .call("read_file", &json!({"path": "leak.txt"}).to_string())
        .await;
    assert_eq!(assert_ok(&out), "key=[redacted]\n");
}

#[tokio::test]
async fn gitignored_trees_are_skipped_by_list_files_and_search() {
    let fx = rw();
    fs::write(fx.root.join(".gitignore"), "dist/\n*.log\n").unwrap();
    fs::create_dir_all(fx.root.join("dist")).unwrap();
    fs::write(fx.root.join("dist/bundle.js"), "hello bundle\n").unwrap();
    fs::write(fx.root.join("debug.log"), "hello log\n").unwrap();
    fs::create_dir_all(fx.root.join(".github")).unwrap();
    fs::write(fx.root.join(".github/ci.yml"), "hello ci\n").unwrap();

    let out = fx.call("list_files", json!({})).await;
    assert_eq!(
        assert_ok(&out),
        ".github/\n.gitignore\nREADME.md\nsrc/\ntarget/"
    );
    let out = fx.call("search", json!({"pattern": "hello"})).await;
    assert_eq!(
        assert_ok(&out),
        ".github/ci.yml:1: hello ci\nREADME.md:2: hello world\nsrc/main.rs:2:     println!(\"hello\");"
    );
    // An ignored file can still be read when asked for by name.
    assert_ok(&fx.call("read_file", json!({"path": "debug.log"})).await);
}

#[tokio::test]
async fn search_stops_at_the_byte_cap() {
    let fx = rw();
    let limits = ToolLimits {
        max_read_bytes: 4096,
        timeout: Duration::from_secs(30),
    };
    let board = fx.root.join(".agentic-sdlc");
    let tools = ToolBox::new(fx.root.clone(), board, ToolAccess::ReadOnly, limits);
    let line = format!("needle {}\n", "x".repeat(290));
    fs::write(fx.root.join("wide.txt"), line.repeat(150)).unwrap();
    let out = tools
        .call("search", &json!({"pattern": "needle"}).to_string())
        .await;
    let text = assert_ok(&out);
    assert!(text.len() <= 4096 + 100, "{}", text.len());
    assert!(
        text.ends_with(
            "stopped at 4096 bytes (tools.maxReadBytes); narrow the pattern or the path]"
        ),
        "{}",
        &text[text.len() - 100..]
    );
}

#[tokio::test]
async fn an_edit_off_by_whitespace_is_applied_and_says_so() {
    let fx = rw();
    fs::write(
        fx.root.join("stats.py"),
        "def mean(values):\n    return sum(values) / len(values)\n",
    )
    .unwrap();
    let out = fx
        .call(
            "edit_file",
            json!({"path": "stats.py",
                   "old_string": "return sum(values)/len(values)",
                   "new_string": "return sum(values) / len(values) if values else 0.0"}),
        )
        .await;
    assert_eq!(
        assert_ok(&out),
        "Edited stats.py: replaced 1 occurrence at line 2, matched ignoring whitespace differences"
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("stats.py")).unwrap(),
        "def mean(values):\n    return sum(values) / len(values) if values else 0.0\n"
    );
}

#[tokio::test]
async fn an_edit_that_misses_quotes_the_closest_lines() {
    let fx = rw();
    let out = fx
        .call(
            "edit_file",
            json!({"path": "src/main.rs",
                   "old_string": "println!(\"helo\", name);",
                   "new_string": "x"}),
        )
        .await;
    assert_error(
        &out,
        "not found in 'src/main.rs', not even ignoring whitespace",
    );
    assert!(
        out.content
            .contains("1| fn main() {\n2|     println!(\"hello\");\n3| }"),
        "{}",
        out.content
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("src/main.rs")).unwrap(),
        MAIN_RS
    );
}

#[tokio::test]
async fn a_write_that_drops_most_definitions_is_refused_unless_meant() {
    let fx = rw();
    let before = "def mean(v):\n    pass\n\ndef median(v):\n    pass\n\ndef mode(v):\n    pass\n";
    fs::write(fx.root.join("stats.py"), before).unwrap();
    assert_ok(&fx.call("read_file", json!({"path": "stats.py"})).await);
    let partial = json!({"path": "stats.py", "content": "def mean(v):\n    return 0.0\n"});
    let out = fx.call("write_file", partial.clone()).await;
    assert_error(
        &out,
        "write_file would replace 'stats.py' and drop 2 of its 3 definitions: median, mode.",
    );
    assert!(
        out.content.contains("\"overwrite\": true"),
        "{}",
        out.content
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("stats.py")).unwrap(),
        before
    );

    // The whole file with one function changed is fine, and so is a replacement that says so.
    let whole = before.replace("def mean(v):\n    pass", "def mean(v):\n    return 0.0");
    assert_ok(
        &fx.call("write_file", json!({"path": "stats.py", "content": whole}))
            .await,
    );
    let mut meant = partial;
    meant["overwrite"] = json!(true);
    assert_ok(&fx.call("write_file", meant).await);
    assert_eq!(
        fs::read_to_string(fx.root.join("stats.py")).unwrap(),
        "def mean(v):\n    return 0.0\n"
    );
}

#[tokio::test]
async fn a_write_of_a_new_definition_alone_keeps_the_files_others() {
    let fx = rw();
    let before = "def shout(text):\n    \"\"\"Upper case.\"\"\"\n    return text.upper() + \"!\"\n";
    fs::write(fx.root.join("textkit.py"), before).unwrap();
    assert_ok(&fx.call("read_file", json!({"path": "textkit.py"})).await);
    // The 1.5B model's call, as recorded (textkit `word-count`, 2026-12-05).
    let call = json!({"path": "textkit.py", "content": "def word_count(text):\n    return len(text.split())\n"});
    let out = fx.call("write_file", call).await;
    assert_eq!(
        assert_ok(&out),
        format!(
            "Wrote {} bytes to textkit.py; kept shout, which your file left out, as they were",
            fs::metadata(fx.root.join("textkit.py")).unwrap().len()
        )
    );
    let after = fs::read_to_string(fx.root.join("textkit.py")).unwrap();
    assert!(after.starts_with(before), "{after}");
    assert!(
        after.ends_with("def word_count(text):\n    return len(text.split())\n"),
        "{after}"
    );
}

#[tokio::test]
async fn argument_names_models_use_instead_are_accepted() {
    let fx = rw();
    let out = fx
        .call("write_file", json!({"file_path": "n.txt", "contents": "x"}))
        .await;
    assert_eq!(assert_ok(&out), "Wrote 1 bytes to n.txt");
}

#[tokio::test]
async fn a_rewrite_of_a_file_under_a_guessed_path_is_refused_naming_the_real_one() {
    let fx = rw();
    fs::write(fx.root.join("stats.py"), "def mean(v):\n    return 0\n").unwrap();
    let guessed = json!({"path": "src/lib/stats.py", "content": "def mean(v):\n    return 0.0\n"});
    let out = fx.call("write_file", guessed).await;
    assert_error(&out, "rewrites 'stats.py', which exists");
    assert!(!fx.root.join("src/lib").exists());
    // A new file in a new folder that rewrites nothing is just written.
    let new = json!({"path": "pkg/util.py", "content": "def helper():\n    pass\n"});
    assert_ok(&fx.call("write_file", new).await);
}

#[tokio::test]
async fn an_existing_file_is_replaced_whole_only_once_seen_or_when_meant() {
    let fx = rw();
    let blind = json!({"path": "README.md", "content": "# Demo\nhello again\n"});
    assert_error(
        &fx.call("write_file", blind.clone()).await,
        "'README.md' exists and you have not read it",
    );
    assert_eq!(
        fs::read_to_string(fx.root.join("README.md")).unwrap(),
        "# Demo\nhello world\n"
    );
    assert_ok(&fx.call("read_file", json!({"path": "README.md"})).await);
    assert_ok(&fx.call("write_file", blind).await);
    // Shown in the prompt counts as seen; saying it is meant does too.
    let shown = fx.tools.clone().shown(&["src/main.rs".to_string()]);
    let out = shown
        .call(
            "write_file",
            &json!({"path": "src/main.rs", "content": "fn main() {}\n"}).to_string(),
        )
        .await;
    assert_ok(&out);
}
