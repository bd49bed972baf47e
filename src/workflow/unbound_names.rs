//! Names a Python test file uses and never binds, found before any test runs (docs/design.md
//! §21, "Names the tests never bind"). A test run names only the first `NameError`, and on the
//! base an acceptance file fails at its import of the story's own function before any other:
//! a 1.5B model decorated a test with `@patch('shelf.books.pages_per_hour', 30)` and never
//! imported `patch` (a drive, 2026-12-07). The base run said only that `reading_minutes` was
//! missing, the tests were accepted, and every round of implement after failed on
//! `NameError: name 'patch' is not defined` in a file it may not change.
//!
//! Python's own symbol tables judge (`symtable`, which runs nothing), so scopes are Python's:
//! a name a function binds, a comprehension's variable, a `global` assigned in a function. A
//! file with `from … import *` binds names no table shows, and is not judged.

use std::path::Path;

use super::python_imports::{import_of, with_imports_on_top};

/// Prints `<line> <name>` for each name `source` reads as a global and binds nowhere, Python's
/// built-in names aside; exits 3 when `source` does not parse.
const UNBOUND: &str = r#"import ast, builtins, symtable, sys
src = sys.stdin.read()
try:
    tree = ast.parse(src, sys.argv[1])
    top = symtable.symtable(src, sys.argv[1], 'exec')
except (SyntaxError, ValueError):
    sys.exit(3)
if any(isinstance(n, ast.ImportFrom) and any(a.name == '*' for a in n.names) for n in ast.walk(tree)):
    sys.exit(0)
known = set(dir(builtins)) | {'__file__', '__builtins__', 'exit', 'quit', 'help', 'copyright', 'credits', 'license'}
tables, used = [top], set()
while tables:
    table = tables.pop()
    tables.extend(table.get_children())
    for s in table.get_symbols():
        name = s.get_name()
        if (table is top or s.is_declared_global()) and (s.is_assigned() or s.is_imported() or s.is_namespace()):
            known.add(name)
        if s.is_referenced() and (table is top or s.is_global()):
            used.add(name)
lines = {}
for node in ast.walk(tree):
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        lines[node.id] = min(lines.get(node.id, node.lineno), node.lineno)
for name in sorted(used - known, key=lambda n: (lines.get(n, 0), n)):
    print(lines.get(name, 0), name)
"#;

/// A name Python code reads and never binds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unbound {
    pub name: String,
    /// The first line that reads it.
    pub line: usize,
}

/// The names Python `source` (the file `path`) reads and never binds, in the order of their
/// first use. Empty when no `python3` runs, the source does not parse, or it imports `*`.
pub fn unbound_names(path: &str, source: &str) -> Vec<Unbound> {
    let Some(output) = crate::agents::tools::isolated_python(UNBOUND, path, source) else {
        return Vec::new();
    };
    if !output.status.success() {
        return Vec::new();
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let (number, name) = line.split_once(' ')?;
            Some(Unbound {
                name: name.to_string(),
                line: number.parse().ok()?,
            })
        })
        .collect()
}

/// `source` with the standard import ([`import_of`]) of each name it uses unbound, and the
/// imports added; `None` when no unbound name has one.
pub fn standard_imports_added(path: &str, source: &str) -> Option<(String, Vec<String>)> {
    let mut imports: Vec<String> = Vec::new();
    for unbound in unbound_names(path, source) {
        if let Some(import) = import_of(&unbound.name).filter(|import| !imports.contains(import)) {
            imports.push(import);
        }
    }
    (!imports.is_empty()).then(|| (with_imports_on_top(source, &imports, false), imports))
}

/// Why the Python test files of `tests` (relative to `dir`) can never pass: the first name one
/// of them uses and binds nowhere, with its file and line. A name the story asks for is to be
/// imported from the file the story names, any other defined or imported.
pub fn refusal(dir: &Path, tests: &[String]) -> Option<String> {
    tests
        .iter()
        .filter(|path| path.ends_with(".py"))
        .find_map(|path| {
            let source = std::fs::read_to_string(dir.join(path)).ok()?;
            let first = unbound_names(path, &source).into_iter().next()?;
            Some(format!(
                "`{path}` uses `{}` (line {}) without importing or defining it, and Python stops \
                 there whatever the code is: import it at the top of the file (a name the story \
                 asks for comes from the file the story names), or leave it out",
                first.name, first.line
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this machine has a `python3` to judge with; the tests below say nothing without.
    fn python_runs() -> bool {
        !unbound_names("t.py", "print(undefined_here)\n").is_empty()
    }

    #[test]
    fn a_decorator_never_imported_is_found_where_the_base_run_hides_it() {
        if !python_runs() {
            return;
        }
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-07), shortened.
        let written = "import shelf.books\nimport unittest\nfrom shelf.books import reading_minutes\n\nclass TestReadingTime(unittest.TestCase):\n    @patch('shelf.books.pages_per_hour', 30)\n    def test_reading_minutes_30_pages(self):\n        self.assertEqual(reading_minutes(30), 60)\n";
        assert_eq!(
            unbound_names("tests/test_reading_time.py", written),
            vec![Unbound {
                name: "patch".into(),
                line: 6
            }]
        );
        let (mended, imports) =
            standard_imports_added("tests/test_reading_time.py", written).unwrap();
        assert_eq!(imports, vec!["from unittest.mock import patch".to_string()]);
        assert!(mended.starts_with("from unittest.mock import patch\nimport shelf.books\n"));
        assert!(unbound_names("t.py", &mended).is_empty());
    }

    #[test]
    fn python_scopes_decide_what_is_bound() {
        if !python_runs() {
            return;
        }
        let code = "import pytest\nfrom m import f\nX = 1\n\ndef g():\n    global Y\n    Y = 2\n\nclass C:\n    def m(self):\n        return C, Y, X, len, zz\n\ndef test_a(tmp_path):\n    v = [i for i in range(3)]\n    w = lambda q: q + k\n    with pytest.raises(KeyError) as e:\n        f(e, v, w, __file__, __name__, tmp_path)\n    try:\n        pass\n    except ValueError as err:\n        print(err)\n";
        let names: Vec<(String, usize)> = unbound_names("t.py", code)
            .into_iter()
            .map(|unbound| (unbound.name, unbound.line))
            .collect();
        assert_eq!(names, vec![("zz".into(), 11), ("k".into(), 15)]);
        assert!(unbound_names("t.py", "from m import *\nprint(anything)\n").is_empty());
        assert!(unbound_names("t.py", "def f(:\n").is_empty(), "not judged");
        assert_eq!(
            standard_imports_added("t.py", code),
            None,
            "no standard name"
        );
    }

    #[test]
    fn a_name_no_import_gives_is_refused_with_its_file_and_line() {
        if !python_runs() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(
            dir.path().join("tests/test_a.py"),
            "def test_a():\n    assert reading_minutes(30) == 60\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tests/test_b.py"),
            "def test_b():\n    pass\n",
        )
        .unwrap();
        let tests = ["tests/test_b.py".to_string(), "tests/test_a.py".to_string()];
        let why = refusal(dir.path(), &tests).unwrap();
        assert!(
            why.starts_with("`tests/test_a.py` uses `reading_minutes` (line 2) without importing"),
            "{why}"
        );
        assert_eq!(refusal(dir.path(), &tests[..1]), None);
    }
}
