//! Python a write would leave unparseable is not written (docs/design.md §21, "Passing work is
//! kept"). A 1.5B model writing every file of its map out whole broke a neighbouring function it
//! was never asked to touch (`def shout(text)  # …` without its colon), and every test round
//! after failed on that file instead of on the story's work.
//!
//! Python's own parser judges (`ast.parse`, which runs nothing), started isolated (`-I -S`:
//! neither the repository nor site packages are on its path) from `/`. Where no `python3` is
//! found, or a file did not parse before the write (a syntax newer than this interpreter), the
//! write goes ahead unjudged.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const PARSE: &str = "import ast, sys\n\
src = sys.stdin.buffer.read()\n\
try:\n    ast.parse(src, sys.argv[1])\n\
except SyntaxError as e:\n    print(f'line {e.lineno}: {e.msg}: {(e.text or \"\").strip()}')\n    sys.exit(3)\n";

/// Exit status of [`PARSE`] for a syntax error; anything else but success is no verdict.
const SYNTAX_ERROR: i32 = 3;

/// Why the write of `after` to `path` is refused: Python source that does not parse, where the
/// file was new or parsed before.
pub(crate) fn refusal(path: &str, before: Option<&str>, after: &str) -> Option<String> {
    if Path::new(path).extension().is_none_or(|ext| ext != "py") {
        return None;
    }
    let error = syntax_error(path, after)?;
    if before.is_some_and(|before| syntax_error(path, before).is_some()) {
        return None;
    }
    Some(format!(
        "Nothing was written to '{path}': it would not be valid Python ({error}). Write it again \
         with that fixed, or leave the file as it is if the story does not change it."
    ))
}

/// `content` without the layout of the prompt's repository map around the code: a first line
/// that is the file's path (or `# File: <path>`), and an indent every line shares. A 1.5B model
/// wrote its tests so in every round (`test_x.py` on a line, then `  def test_…():`), and the
/// code under it was sound. `None` when there is no such layout to take off.
pub(crate) fn unwrapped(path: &str, content: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let mut lines: Vec<&str> = content.lines().collect();
    let first = lines.iter().position(|line| !line.trim().is_empty())?;
    let heading = lines[first]
        .trim()
        .trim_start_matches('#')
        .trim()
        .trim_start_matches("File:")
        .trim()
        .trim_matches('`');
    let had_path = heading == path || heading == name;
    if had_path {
        lines.drain(..=first);
    }
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0);
    if !had_path && indent == 0 {
        return None;
    }
    let body: Vec<&str> = lines
        .iter()
        .map(|line| line.get(indent..).unwrap_or(""))
        .collect();
    let mut text = body.join("\n").trim_matches('\n').to_string();
    text.push('\n');
    Some(text)
}

/// `content` with each `def` name the model wrote as words joined into one name:
/// `def test_toll Raises_unknown_vehicle_class_error():` becomes
/// `def test_toll_Raises_unknown_vehicle_class_error():`. The 1.5B model wrote two such tests
/// into a file of seven, twice; both writes were refused for the syntax, it answered "Done", and
/// the phase heard "no test file was written" (tollbooth `unknown-vehicle-class`, 2026-12-07).
/// `None` when no `def` line has such a name.
pub(crate) fn def_names_joined(content: &str) -> Option<String> {
    lines_mended(content, |line| {
        let start = line.len() - line.trim_start().len();
        let rest = line[start..].strip_prefix("def ")?;
        let (name, after) = rest.split_once('(')?;
        let words: Vec<&str> = name.split_whitespace().collect();
        let identifiers = words
            .iter()
            .all(|word| word.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if words.len() < 2 || !identifiers {
            return None;
        }
        Some(format!("{}def {}({after}", &line[..start], words.join("_")))
    })
}

/// `content` with each line that says a call raises as if Python had such words (`assert
/// reading_minutes(-1) raises ValueError`, or without the `assert`) written as the block that
/// checks it: `with pytest.raises(ValueError):` over the call. The 1.5B model wrote a story's
/// raising criterion so, twice, and both writes of its test file were refused (a drive,
/// 2026-12-07). The import of `pytest` is left to the checks of the tests. `None` when no line
/// says so.
pub(crate) fn raises_as_blocks(content: &str) -> Option<String> {
    lines_mended(content, |line| {
        let start = line.len() - line.trim_start().len();
        let statement = line[start..].trim_end();
        let statement = statement.strip_prefix("assert ").unwrap_or(statement);
        let (call, raised) = statement.rsplit_once(" raises ")?;
        let raised = raised.trim();
        let is_exception = !raised.is_empty()
            && raised.split('.').all(|part| {
                !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        // A call, not words: a comment or a docstring saying "… raises ValueError" stays.
        let call_like = call.trim().ends_with(')') && !call.trim_start().starts_with('#');
        if !is_exception || !call_like {
            return None;
        }
        let indent = &line[..start];
        Some(format!(
            "{indent}with pytest.raises({raised}):\n{indent}    {}",
            call.trim()
        ))
    })
}

/// `content` with each line that `mend` rewrites rewritten, keeping a final newline; `None`
/// when it rewrites none.
fn lines_mended(content: &str, mend: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut changed = false;
    let lines: Vec<String> = content
        .lines()
        .map(|line| match mend(line) {
            Some(mended) => {
                changed = true;
                mended
            }
            None => line.to_string(),
        })
        .collect();
    changed.then(|| {
        let mut text = lines.join("\n");
        if content.ends_with('\n') {
            text.push('\n');
        }
        text
    })
}

/// The parser's complaint about `source`, if it has one.
fn syntax_error(path: &str, source: &str) -> Option<String> {
    let output = isolated_python(PARSE, path, source)?;
    (output.status.code() == Some(SYNTAX_ERROR))
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

/// What `script` prints and how it ends, run by `python3` isolated from the repository and
/// from site packages (`-I -S`, from `/`) with `source` on its standard input and `path` as its
/// one argument. `None` when no `python3` could be started.
pub(crate) fn isolated_python(script: &str, path: &str, source: &str) -> Option<Output> {
    let mut child = Command::new("python3")
        .args(["-I", "-S", "-c", script, path])
        .current_dir("/")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // A write error means the interpreter is gone; its status says so.
    let _ = child
        .stdin
        .take()
        .map(|mut stdin| stdin.write_all(source.as_bytes()));
    child.wait_with_output().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_that_does_not_parse_is_refused_with_the_parsers_words() {
        let broken = "def shout(text)  # upper case\n    return text.upper()\n";
        let refused = refusal(
            "textkit.py",
            Some("def shout(text):\n    return 1\n"),
            broken,
        )
        .expect("refused");
        assert!(refused.contains("'textkit.py'"), "{refused}");
        assert!(refused.contains("line 1: expected ':'"), "{refused}");
        assert!(refusal("new.py", None, broken).is_some());
    }

    #[test]
    fn good_python_other_files_and_files_already_broken_are_written() {
        let broken = "def f(:\n";
        assert_eq!(refusal("a.py", None, "def f():\n    return 1\n"), None);
        assert_eq!(refusal("notes.md", None, broken), None);
        assert_eq!(refusal("a.py", Some("class A(:\n"), broken), None);
    }

    #[test]
    fn code_under_its_path_line_and_an_indent_is_unwrapped() {
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-28, textkit `median`), shortened.
        let written = "test_median.py\n  def test_median_empty():\n    from stats import median\n    assert median([]) == 0.0\n\n  def test_median_odd():\n    from stats import median\n    assert median([3, 1, 2]) == 2\n";
        let plain = unwrapped("test_median.py", written).unwrap();
        assert_eq!(
            plain,
            "def test_median_empty():\n  from stats import median\n  assert median([]) == 0.0\n\ndef test_median_odd():\n  from stats import median\n  assert median([3, 1, 2]) == 2\n"
        );
        if syntax_error("t.py", "x = 1\n").is_none() && syntax_error("t.py", "def f(\n").is_some() {
            assert_eq!(syntax_error("test_median.py", &plain), None);
        }
        assert!(unwrapped(
            "tests/test_median.py",
            "# File: tests/test_median.py\nx = 1\n"
        )
        .is_some_and(|text| text == "x = 1\n"));
        assert_eq!(unwrapped("a.py", "x = 1\n"), None, "nothing to take off");
    }

    #[test]
    fn a_call_said_to_raise_becomes_a_raising_block() {
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-07).
        let written = "assert reading_minutes(30) == 60\nassert reading_minutes(-1) raises ValueError\n\ndef test_negative():\n    reading_minutes(-2) raises errors.TooFew\n";
        assert_eq!(
            raises_as_blocks(written).unwrap(),
            "assert reading_minutes(30) == 60\nwith pytest.raises(ValueError):\n    reading_minutes(-1)\n\ndef test_negative():\n    with pytest.raises(errors.TooFew):\n        reading_minutes(-2)\n"
        );
        assert_eq!(raises_as_blocks("x = 'it raises an error'\n"), None);
        assert_eq!(raises_as_blocks("# f(x) raises ValueError\n"), None);
        assert_eq!(raises_as_blocks("    Returns x; raises ValueError\n"), None);
        assert_eq!(raises_as_blocks("assert f(1) == 2\n"), None);
    }

    #[test]
    fn a_def_name_written_as_words_is_joined() {
        // Recorded (Qwen2.5-Coder-1.5B, tollbooth `unknown-vehicle-class`, 2026-12-07).
        let written = "import pytest\n\ndef test_toll Raises_unknown_vehicle_class_error():\n    with pytest.raises(ValueError):\n        toll(\"tractor\", 600)\n";
        let joined = def_names_joined(written).unwrap();
        assert!(joined.contains("def test_toll_Raises_unknown_vehicle_class_error():\n"));
        assert!(joined.ends_with("600)\n"));
        assert_eq!(def_names_joined("def f(a, b):\n    pass\n"), None);
    }
}
