//! The import lines a small model gets wrong while the code is right, mended by the tool
//! (docs/design.md §21): a name Python code uses without importing it, which the test run names
//! in a `NameError`, gets its standard import; a module's import of itself is dropped. A 1.5B
//! model writes `pytest.raises` or `Decimal("1.50")` and forgets the import line; the import is
//! not a matter of judgement, so the tool adds it rather than refuse the tests or spend a round
//! of the implementer on it. A module of the tree a test calls through gets its import too.
//!
//! What no import can mend is named instead: a name imported from a module of the tree that
//! does not define it, and a test file whose collection fails for another reason than the
//! absence of what the story adds.

use std::path::Path;

use super::named_functions::mentions_word;
use super::python_lines::lines_replaced;
use super::unloaded_tests::unloaded_files;

/// The name the first `NameError: name 'X' is not defined` of a test run's `output` names.
pub fn undefined_name(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line.split("NameError: name '").nth(1)?;
        let name = rest.split('\'').next()?;
        is_identifier(name).then(|| name.to_string())
    })
}

/// The import line that defines `name` from the test framework or Python's standard library:
/// a module (`pytest`, `math`, `re`) or a name commonly imported from one (`Decimal`,
/// `defaultdict`). `None` for any other name: that one is the story's, or a mistake.
pub fn import_of(name: &str) -> Option<String> {
    if STANDARD_MODULES.contains(&name) {
        return Some(format!("import {name}"));
    }
    STANDARD_NAMES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, module)| format!("from {module} import {name}"))
}

/// The test framework and the modules of Python's standard library tests use most.
const STANDARD_MODULES: &[&str] = &[
    "pytest",
    "math",
    "re",
    "json",
    "decimal",
    "fractions",
    "datetime",
    "collections",
    "itertools",
    "functools",
    "string",
    "random",
    "statistics",
    "os",
    "sys",
    "io",
    "csv",
    "time",
    "typing",
    "dataclasses",
    "enum",
    "operator",
    "unittest",
];

/// Names commonly imported from a standard module, each with its module.
const STANDARD_NAMES: &[(&str, &str)] = &[
    ("Decimal", "decimal"),
    ("InvalidOperation", "decimal"),
    ("ROUND_HALF_UP", "decimal"),
    ("ROUND_HALF_EVEN", "decimal"),
    ("Fraction", "fractions"),
    ("date", "datetime"),
    ("timedelta", "datetime"),
    ("defaultdict", "collections"),
    ("Counter", "collections"),
    ("OrderedDict", "collections"),
    ("namedtuple", "collections"),
    ("dataclass", "dataclasses"),
    ("StringIO", "io"),
    ("reduce", "functools"),
    // The 1.5B model's `@patch(…)` on a test, never imported (a drive, 2026-12-07).
    ("patch", "unittest.mock"),
    ("Mock", "unittest.mock"),
    ("MagicMock", "unittest.mock"),
    ("mock", "unittest"),
    // Annotations: the 1.5B model's fixed test of `total_with_discount` took `prices:
    // List[int]` without importing `List`, and no test of the file was ever collected
    // (the inventory benchmark, 2026-11-30).
    ("List", "typing"),
    ("Dict", "typing"),
    ("Tuple", "typing"),
    ("Set", "typing"),
    ("Optional", "typing"),
    ("Union", "typing"),
    ("Any", "typing"),
    ("Callable", "typing"),
    ("Iterable", "typing"),
    ("Sequence", "typing"),
];

/// Whether a `def` line takes `name` as a parameter.
fn is_parameter(line: &str, name: &str) -> bool {
    let Some(signature) = line
        .strip_prefix("def ")
        .or_else(|| line.strip_prefix("async def "))
    else {
        return false;
    };
    signature
        .split_once('(')
        .and_then(|(_, rest)| rest.rsplit_once(')'))
        .is_some_and(|(parameters, _)| {
            parameters.split(',').any(|parameter| {
                let parameter = parameter.trim().trim_start_matches('*');
                parameter.split([':', '=']).next().unwrap_or("").trim() == name
            })
        })
}

/// The standard imports ([`import_of`]) Python `code` lacks for what it uses and never binds:
/// a standard module it reads an attribute of (`math.isclose(…)`) and a capitalised standard
/// name (`Decimal('0.30')`). Found before any test runs, unlike a `NameError`, which a test
/// whose first failure is another hides: a 1.5B model's acceptance test
/// `assert total(['0.10', '0.20']) == Decimal('0.30')` failed on the base with a `TypeError`,
/// and after the code on the `NameError` of a file implement may not change. Lower-case names
/// (`date`, `reduce`) are left to the `NameError`: they are often a test's own variables.
pub fn standard_imports(code: &str) -> Vec<String> {
    let bound = |name: &str| {
        code.lines().any(|line| {
            let line = line.trim_start();
            bound_by_import(line).contains(&name)
                || crate::agents::tools::defined_name(line).as_deref() == Some(name)
                || line
                    .split_once('=')
                    .is_some_and(|(target, _)| target.trim() == name)
                || is_parameter(line, name)
        })
    };
    // An import line names modules; it does not use them.
    let words: Vec<(&str, bool)> = code
        .lines()
        .filter(|line| bound_by_import(line.trim_start()).is_empty())
        .flat_map(|line| {
            let mut found = Vec::new();
            let mut rest = line;
            while let Some(start) = rest.find(|c: char| c.is_alphabetic() || c == '_') {
                let before = rest[..start].chars().next_back();
                let tail = &rest[start..];
                let end = tail
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(tail.len());
                let after_dot = before == Some('.');
                if !after_dot && !before.is_some_and(|c| c.is_alphanumeric()) {
                    found.push((&tail[..end], tail[end..].starts_with('.')));
                }
                rest = &tail[end..];
            }
            found
        })
        .collect();
    let mut imports: Vec<String> = Vec::new();
    for (word, read_through) in words {
        let standard = (read_through && STANDARD_MODULES.contains(&word))
            || STANDARD_NAMES.iter().any(|(name, _)| {
                *name == word && name.starts_with(|c: char| c.is_ascii_uppercase())
            });
        if !standard || bound(word) {
            continue;
        }
        if let Some(import) = import_of(word).filter(|import| !imports.contains(import)) {
            imports.push(import);
        }
    }
    imports
}

/// Adds the import of `name` ([`import_of`]) to the top of each Python file of `paths` (relative
/// to `dir`) that uses it as a word. Returns the import line and the files it went into; `None`
/// when the name has no standard import or no file uses it.
pub fn import_where_used(
    dir: &Path,
    paths: &[String],
    name: &str,
) -> Option<(String, Vec<String>)> {
    let import = import_of(name)?;
    let mut changed = Vec::new();
    for path in paths.iter().filter(|path| path.ends_with(".py")) {
        let full = dir.join(path);
        let Ok(text) = std::fs::read_to_string(&full) else {
            continue;
        };
        if !mentions_word(&text, name) || text.lines().any(|line| line == import) {
            continue;
        }
        let updated = with_imports_on_top(&text, std::slice::from_ref(&import), false);
        if crate::atomic_file::write(&full, updated.as_bytes()).is_ok() {
            changed.push(path.clone());
        }
    }
    (!changed.is_empty()).then_some((import, changed))
}

/// The undefined name of a test run's `output` and the file of the tree it is used in, read
/// from the frame pytest names for the `NameError` (`ledger.py:7: NameError`), or, where the
/// error came while a test file was collected, from the last frame before it
/// (`lending/fines.py:27: in <module>`: a sample's `def fine_between(due: datetime.date, …)`
/// without `import datetime`, which no test could load; workshop, 2026-12-08). `None` when no
/// frame is named, or the file lies outside the tree (an absolute path or one with `..`).
pub fn undefined_in_file(output: &str) -> Option<(String, String)> {
    let name = undefined_name(output)?;
    let lines: Vec<&str> = output.lines().collect();
    let raised = lines
        .iter()
        .find_map(|line| frame_file(line, |kind| kind == "NameError"));
    let collected = || {
        let at = lines
            .iter()
            .position(|line| line.trim_start().starts_with("E   NameError:"))?;
        lines[..at]
            .iter()
            .rev()
            .find_map(|line| frame_file(line, |kind| kind.starts_with("in ")))
    };
    Some((name, raised.or_else(collected)?))
}

/// The file of the tree a traceback frame `line` (`path.py:7: <kind>`) names, when `kind`
/// is as asked and the file lies inside the tree.
fn frame_file(line: &str, kind_is: impl Fn(&str) -> bool) -> Option<String> {
    let (place, kind) = line.trim().split_once(": ")?;
    let (path, number) = place.rsplit_once(':')?;
    let inside = Path::new(path).is_relative()
        && !Path::new(path)
            .components()
            .any(|part| part == std::path::Component::ParentDir);
    (kind_is(kind)
        && path.ends_with(".py")
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
        && inside)
        .then(|| path.to_string())
}

/// Adds the standard import of the name a test run found undefined ([`undefined_in_file`]) to
/// the file of the tree that uses it, unless `may_not_change` says the file is not to be
/// changed (the fixed acceptance tests). Returns the import and the file, as
/// [`import_where_used`].
pub fn import_into_frame(
    dir: &Path,
    output: &str,
    may_not_change: impl Fn(&str) -> bool,
) -> Option<(String, Vec<String>)> {
    let (name, path) = undefined_in_file(output)?;
    if may_not_change(&path) {
        return None;
    }
    import_where_used(dir, &[path], &name)
}

/// `code` without the lines that import from `file`'s own module: asked for `receipt_line` in
/// `inventory/money.py`, the 1.5B model began its answer with `from inventory.money import
/// format_price`, which merged in made the module import itself, and no test could load it.
pub fn without_imports_of_itself(code: &str, file: &str) -> String {
    let Some(stem) = file.strip_suffix(".py") else {
        return code.to_string();
    };
    let module = stem.replace('/', ".");
    let last = module.rsplit('.').next().unwrap_or(&module).to_string();
    let mut own = vec![module.clone(), format!(".{last}")];
    if let Some(inside_src) = module.strip_prefix("src.") {
        own.push(inside_src.to_string());
    }
    let imports_itself = |line: &str| {
        let from = line
            .strip_prefix("from ")
            .and_then(|rest| rest.split_once(" import "))
            .map(|(source, _)| source.trim());
        let plain = line.strip_prefix("import ").map(str::trim);
        from.or(plain)
            .is_some_and(|source| own.iter().any(|m| m == source))
    };
    let kept: Vec<&str> = code.lines().filter(|line| !imports_itself(line)).collect();
    if kept.len() == code.lines().count() {
        return code.to_string();
    }
    let mut out = kept.join("\n");
    if code.ends_with('\n') {
        out.push('\n');
    }
    out.trim_start_matches('\n').to_string()
}

/// A test file pytest could not even collect: the error its module's own code raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CollectionError {
    /// The test file, as pytest names it.
    pub file: String,
    /// `TypeError: f() takes 0 positional arguments but 1 was given`.
    pub error: String,
}

impl CollectionError {
    /// Whether the error is the absence of what the story adds: an import or an attribute that
    /// names a word of `story_text` (`cannot import name 'to_celsius'`, `No module named
    /// 'ledger.accounts'`, `module 'ledger' has no attribute 'Account'`). Such a file fails
    /// before the code and passes after it; any other error at import stays whatever the code.
    ///
    /// A module imported as a package (`import cart.Cart`: "No module named 'cart.Cart'; 'cart'
    /// is not a package") is never that: the story names `Cart` and `cart.py`, and a drive's
    /// acceptance file so failed every implement round with a right `Cart.add` (2026-12-05).
    pub fn is_what_the_story_adds(&self, story_text: &str) -> bool {
        if self.error.contains("is not a package") {
            return false;
        }
        let mut quoted = self.error.split('\'').skip(1).step_by(2);
        // The name that is absent: the import's or the module's first, the attribute's last
        // (`module 'ledger' has no attribute 'Account'`).
        let absent = if self.error.starts_with("ImportError:")
            || self.error.starts_with("ModuleNotFoundError:")
        {
            quoted.next()
        } else if self.error.starts_with("AttributeError:") {
            quoted.last()
        } else {
            None
        };
        absent.is_some_and(|name| name.split('.').any(|part| mentions_word(story_text, part)))
    }
}

/// The first test file of pytest's `output` that failed to collect, with its error: the `E   `
/// line of its `ERROR collecting` section, or else a summary line `ERROR <file>.py - <error>`
/// (pytest's short summary, which leaves an import's error out). `None` when every file was
/// collected.
pub fn collection_error(output: &str) -> Option<CollectionError> {
    unloaded_files(output).into_iter().find_map(|unloaded| {
        Some(CollectionError {
            error: unloaded.errors.first()?.clone(),
            file: unloaded.file,
        })
    })
}

fn is_identifier(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `import <module>` lines a Python test needs for the modules of the tree at `root` that it
/// uses by their dotted name without importing them (`inventory.pricing.apply_discount(…)` →
/// `import inventory.pricing`): the longest dotted prefix that is a module of the tree.
pub fn module_imports(root: &Path, tests: &str) -> Vec<String> {
    let bound = |name: &str| {
        tests.lines().any(|line| {
            let line = line.trim_start();
            bound_by_import(line).contains(&name)
                || line.starts_with(&format!("{name} ="))
                || line.starts_with(&format!("{name}="))
        })
    };
    let mut imports: Vec<String> = Vec::new();
    // An import line names modules; it does not use them.
    let chains = tests
        .lines()
        .filter(|line| bound_by_import(line.trim_start()).is_empty())
        .flat_map(|line| line.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')));
    for chain in chains.filter(|chain| chain.contains('.')) {
        let parts: Vec<&str> = chain.split('.').collect();
        let first = parts[0];
        let starts_well = first
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_');
        if !starts_well || bound(first) || module_source(root, first).is_none() {
            continue;
        }
        let module = (1..=parts.len())
            .rev()
            .map(|count| parts[..count].join("."))
            .find(|module| module_source(root, module).is_some())
            .unwrap_or_else(|| first.to_string());
        let import = format!("import {module}");
        if !imports.contains(&import) {
            imports.push(import);
        }
    }
    imports
}

/// The names a Python import `line` binds: `import a.b, c as d` binds `a` and `d`; `from m
/// import (x, y as z)` binds `x` and `z`, and not `m`, which a test that calls `m.f()` after
/// it still needs to import (a 1.5B model's `from temperature import to_celsius`, then
/// `temperature.to_fahrenheit(…)`, 2026-11-29).
pub(crate) fn bound_by_import(line: &str) -> Vec<&str> {
    let (names, from) = if let Some(modules) = line.strip_prefix("import ") {
        (modules, false)
    } else if let Some((_, names)) = line
        .strip_prefix("from ")
        .and_then(|rest| rest.split_once(" import "))
    {
        (names, true)
    } else {
        return Vec::new();
    };
    names
        .split('#')
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '\\')
        .split(',')
        .filter_map(|item| {
            let mut words = item.split_whitespace();
            let name = words.next()?;
            match (words.next(), words.next()) {
                (Some("as"), Some(alias)) => Some(alias),
                _ if from => Some(name),
                _ => name.split('.').next(),
            }
        })
        .collect()
}

/// The module a Python file is imported as: `inventory/cart.py` → `inventory.cart` (a `src/`
/// folder is a source root, not a package).
pub(crate) fn python_module(file: &str) -> Option<String> {
    let stem = file.strip_suffix(".py")?;
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let module = stem.trim_end_matches("/__init__").replace('/', ".");
    module
        .split('.')
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .then_some(module)
}

/// `text` (a Python test file) with each function the story names imported from its home (its
/// file, by `homes`) where a `from <module> import …` line takes it from a module of `root`
/// that does not define it: the 1.5B model's acceptance test for `total_with_discount` in
/// inventory/pricing.py began `from tests.test_pricing import total_with_discount`, and the
/// right function, in its file, failed every round on the import (inventory, 2026-11-29). The
/// line keeps any other names. Returns the new text and the lines replaced; `None` when none is.
pub fn imports_from_homes(
    root: &Path,
    text: &str,
    homes: &[(String, String)],
) -> Option<(String, Vec<String>)> {
    let mut replaced = Vec::new();
    let mended = lines_replaced(text, |line| {
        // An import inside a test function is mended in place, at its indentation.
        let indent = &line[..line.len() - line.trim_start().len()];
        let (module, names) = line
            .trim_start()
            .strip_prefix("from ")
            .and_then(|rest| rest.split_once(" import "))
            .filter(|(_, names)| !names.contains(['(', '\\', '#']))?;
        let module = module.trim();
        let (mut kept, mut moved): (Vec<&str>, Vec<(String, &str)>) = (Vec::new(), Vec::new());
        for item in names
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
        {
            let name = item.split_whitespace().next().unwrap_or(item);
            let home = homes
                .iter()
                .find(|(named, _)| named == name)
                .and_then(|(_, file)| python_module(file))
                .filter(|home| home != module && !module_defines(root, module, name));
            match home {
                Some(home) => moved.push((home, item)),
                None => kept.push(item),
            }
        }
        if moved.is_empty() {
            return None;
        }
        replaced.push(line.trim().to_string());
        let kept =
            (!kept.is_empty()).then(|| format!("{indent}from {module} import {}", kept.join(", ")));
        Some(
            kept.into_iter()
                .chain(
                    moved
                        .into_iter()
                        .map(|(home, item)| format!("{indent}from {home} import {item}")),
                )
                .collect(),
        )
    })?;
    Some((mended, replaced))
}

/// Whether the module `module` of the tree at `root` binds `name` at its top level: defines it,
/// assigns it, or imports it.
pub(crate) fn module_defines(root: &Path, module: &str, name: &str) -> bool {
    let base = module.replace('.', "/");
    [format!("{base}.py"), format!("{base}/__init__.py")]
        .iter()
        .filter_map(|file| std::fs::read_to_string(root.join(file)).ok())
        .any(|text| {
            text.lines().any(|line| {
                !line.starts_with(char::is_whitespace)
                    && (crate::agents::tools::defined_name(line).as_deref() == Some(name)
                        || bound_by_import(line).contains(&name)
                        || line.starts_with(&format!("{name} ="))
                        || line.starts_with(&format!("{name}=")))
            })
        })
}

/// A name a test imports from a module of the repository that neither defines it nor is asked
/// by the story to get it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    pub name: String,
    pub module_file: String,
}

/// The names Python tests import (`from stats import mean, median`) from a module of the tree at
/// `root` that does not define them, leaving out the names the story's text mentions, in
/// backticks or not ("Add to_celsius(fahrenheit) to temperature.py").
pub fn unknown_imports(root: &Path, tests: &str, story_text: &str) -> Vec<UnknownName> {
    let mut unknown = Vec::new();
    for line in tests.lines() {
        let code = line.split_once('#').map_or(line, |(code, _)| code); // `A  # a comment`
        let Some(rest) = code.trim().strip_prefix("from ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once(" import ") else {
            continue;
        };
        let module = module.trim();
        if module.starts_with('.') {
            continue;
        }
        let Some((module_file, source)) = module_source(root, module) else {
            continue;
        };
        for name in names.trim_matches(|c| c == '(' || c == ')').split(',') {
            let name = name.split(" as ").next().unwrap_or("").trim();
            if name.is_empty() || name == "*" || mentions_word(story_text, name) {
                continue;
            }
            if !defines(&source, name) {
                unknown.push(UnknownName {
                    name: name.to_string(),
                    module_file: module_file.clone(),
                });
            }
        }
    }
    unknown
}

/// The file a dotted module name resolves to in the tree (at the root or under `src/`), and
/// its text.
pub(crate) fn module_source(root: &Path, module: &str) -> Option<(String, String)> {
    let relative = module.replace('.', "/");
    for prefix in ["", "src/"] {
        for candidate in [
            format!("{prefix}{relative}.py"),
            format!("{prefix}{relative}/__init__.py"),
        ] {
            if let Ok(text) = std::fs::read_to_string(root.join(&candidate)) {
                return Some((candidate, text));
            }
        }
    }
    None
}

/// Whether Python source defines (`def`, `class`), assigns or imports `name` at its top level.
pub(crate) fn defines(source: &str, name: &str) -> bool {
    if crate::agents::tools::defined_names(source)
        .iter()
        .any(|defined| defined == name)
    {
        return true;
    }
    source.lines().any(|line| {
        if line.starts_with(char::is_whitespace) {
            return false;
        }
        if line.starts_with("from ") || line.starts_with("import ") {
            return line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == name);
        }
        line.split_once('=')
            .is_some_and(|(target, _)| target.split([',', ':']).any(|part| part.trim() == name))
    })
}

/// Python source `text` with `imports` at its top, below any `from __future__` line, ending
/// with a newline; with `set_apart`, a blank line between them and code that follows at once.
pub fn with_imports_on_top(text: &str, imports: &[String], set_apart: bool) -> String {
    let future = text
        .lines()
        .take_while(|line| line.starts_with("from __future__"))
        .count();
    let mut lines: Vec<&str> = text.lines().collect();
    let code_follows = lines.get(future).is_some_and(|line| {
        !line.trim().is_empty() && !line.starts_with("import ") && !line.starts_with("from ")
    });
    if set_apart && code_follows && !imports.is_empty() {
        lines.insert(future, "");
    }
    for (offset, import) in imports.iter().enumerate() {
        lines.insert(future + offset, import);
    }
    let mut updated = lines.join("\n");
    updated.push('\n');
    updated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_function_imported_from_a_module_without_it_comes_from_its_home() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tests")).unwrap();
        std::fs::write(
            root.path().join("tests/test_pricing.py"),
            "from inventory.pricing import apply_discount\n",
        )
        .unwrap();
        let homes = [(
            "total_with_discount".to_string(),
            "inventory/pricing.py".to_string(),
        )];
        // Recorded (Qwen2.5-Coder-1.5B, 2026-11-29, inventory `total-with-discount`).
        let tests = "from tests.test_pricing import total_with_discount, apply_discount\n\ndef test_total():\n    assert total_with_discount([], 25) == 0\n";
        let (mended, replaced) = imports_from_homes(root.path(), tests, &homes).unwrap();
        assert_eq!(
            mended,
            "from tests.test_pricing import apply_discount\nfrom inventory.pricing import total_with_discount\n\ndef test_total():\n    assert total_with_discount([], 25) == 0\n"
        );
        assert_eq!(
            replaced,
            ["from tests.test_pricing import total_with_discount, apply_discount"]
        );
        // From its home, or from a module that has it, it stays.
        let right = "from inventory.pricing import total_with_discount\n";
        assert_eq!(imports_from_homes(root.path(), right, &homes), None);
        std::fs::write(
            root.path().join("tests/helpers.py"),
            "from inventory.pricing import total_with_discount\n",
        )
        .unwrap();
        let via = "from tests.helpers import total_with_discount\n";
        assert_eq!(imports_from_homes(root.path(), via, &homes), None);
        // Recorded (inventory `receipt-line`, 2026-12-05): inside the test, from a module that
        // does not exist, for a function the story puts in inventory/money.py.
        let homes = [("receipt_line".to_string(), "inventory/money.py".to_string())];
        let inside = "def test_receipt_line():\n    from inventory.receipt_line import receipt_line\n\n    assert receipt_line(\"Apple\", 250) == \"Apple: $2.50\"\n";
        let (mended, replaced) = imports_from_homes(root.path(), inside, &homes).unwrap();
        assert_eq!(
            mended,
            inside.replace("inventory.receipt_line import", "inventory.money import")
        );
        assert_eq!(
            replaced,
            ["from inventory.receipt_line import receipt_line"]
        );
    }

    #[test]
    fn a_module_of_the_tree_used_by_its_dotted_name_gets_its_import() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("inventory")).unwrap();
        std::fs::write(root.path().join("inventory/__init__.py"), "").unwrap();
        std::fs::write(
            root.path().join("inventory/pricing.py"),
            "def apply_discount(c, p):\n    pass\n",
        )
        .unwrap();
        // Recorded: Qwen2.5-Coder-1.5B's acceptance test for total_with_discount (2026-11-27).
        let tests = "def test_total_with_discount_one():\n    assert inventory.pricing.total_with_discount([1000, 500], 10) == 1350\n\ndef test_discount():\n    assert inventory.pricing.apply_discount(1000, 10) == 900\n    assert 'a.b'.upper() == os.sep\n";
        assert_eq!(
            module_imports(root.path(), tests),
            ["import inventory.pricing"]
        );
        let imported = format!("import inventory.pricing\n{tests}");
        assert!(module_imports(root.path(), &imported).is_empty());
    }

    #[test]
    fn importing_a_name_from_a_module_does_not_bind_the_module() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("temperature.py"),
            "def to_fahrenheit(c):\n    pass\n",
        )
        .unwrap();
        // Recorded: Qwen2.5-Coder-1.5B's acceptance test for to_celsius (a drive, 2026-11-29).
        let tests = "from temperature import to_celsius\n\ndef test_below_zero():\n    try:\n        temperature.to_fahrenheit(-459.68)\n    except ValueError as e:\n        pass\n";
        assert_eq!(module_imports(root.path(), tests), ["import temperature"]);
        for bound in [
            "import temperature",
            "import temperature as temperature",
            "from x import (a, temperature)",
        ] {
            assert!(
                module_imports(root.path(), &format!("{bound}\n{tests}")).is_empty(),
                "{bound}"
            );
        }
        assert_eq!(bound_by_import("import a.b, c as d  # both"), ["a", "d"]);
        assert_eq!(bound_by_import("from m import (x, y as z)"), ["x", "z"]);
        assert!(bound_by_import("x = 1").is_empty());
    }

    #[test]
    fn imports_of_names_a_module_lacks_are_named_unless_the_story_asks_for_them() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("stats.py"),
            "import math\nfrom typing import List\n\nPI = 3.14\n\ndef mean(values):\n    return sum(values) / len(values)\n\nclass Summary:\n    pass\n",
        )
        .unwrap();
        // The 1.5B model's comment after an import is not part of the name (cyclehire, s49c).
        let tests = "import pytest\nfrom stats import mean, median, Summary, PI\nfrom stats import variance as var  # the `Summary` class\nfrom collections import Counter\n";
        let unknown = unknown_imports(root.path(), tests, "Add median(values) to stats.py");
        assert_eq!(
            unknown,
            vec![UnknownName {
                name: "variance".into(),
                module_file: "stats.py".into()
            }]
        );
    }

    /// pytest 8's output for a file whose module-level code raised, and one whose import of the
    /// story's name failed.
    const COLLECTION_ERRORS: &str = "
==================================== ERRORS ====================================
__________________________ ERROR collecting test_a.py __________________________
test_a.py:2: in <module>
    X = m.f(2)
        ^^^^^^
E   TypeError: f() takes 0 positional arguments but 1 was given
__________________________ ERROR collecting test_b.py __________________________
ImportError while importing test module '/tmp/coll/test_b.py'.
Traceback:
test_b.py:1: in <module>
    from m import g
E   ImportError: cannot import name 'g' from 'm' (/tmp/coll/m.py)
=========================== short test summary info ============================
ERROR test_a.py - TypeError: f() takes 0 positional arguments but 1 was given
ERROR test_b.py
!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!
";

    #[test]
    fn a_collection_error_is_what_the_story_adds_only_when_it_names_it() {
        let first = collection_error(COLLECTION_ERRORS).expect("an error");
        assert_eq!(first.file, "test_a.py");
        assert_eq!(
            first.error,
            "TypeError: f() takes 0 positional arguments but 1 was given"
        );
        let story = "Add g() to m.py, beside f()";
        assert!(!first.is_what_the_story_adds(story));
        let second =
            collection_error(&COLLECTION_ERRORS[COLLECTION_ERRORS.find("test_b").unwrap() - 30..])
                .expect("the second");
        assert_eq!(second.file, "test_b.py");
        assert!(second.is_what_the_story_adds(story));
        assert!(!second.is_what_the_story_adds("Add h() to m.py"));
        let attribute = CollectionError {
            file: "test_d.py".into(),
            error: "AttributeError: module 'temperature' has no attribute 'kelvin'".into(),
        };
        assert!(!attribute.is_what_the_story_adds("Add to_celsius to temperature.py"));
        assert!(attribute.is_what_the_story_adds("Add kelvin to temperature.py"));
        let module = CollectionError {
            file: "test_c.py".into(),
            error: "ModuleNotFoundError: No module named 'ledger.accounts'".into(),
        };
        assert!(module.is_what_the_story_adds("A new module ledger/accounts.py"));
        let not_a_package = CollectionError {
            file: "tests/test_refuse.py".into(),
            error: "ModuleNotFoundError: No module named 'cart.Cart'; 'cart' is not a package"
                .into(),
        };
        assert!(!not_a_package.is_what_the_story_adds("`Cart.add` in cart.py must raise"));
        assert_eq!(collection_error("1 failed, 2 passed in 0.1s"), None);
        let summary = "ERROR tests/test_a.py - TypeError: f() takes 0 positional arguments\nERROR tests/test_b.py::test_x - ValueError: setup\n";
        assert_eq!(
            collection_error(summary).map(|error| error.error),
            Some("TypeError: f() takes 0 positional arguments".to_string())
        );
        assert_eq!(
            collection_error(&summary[summary.find("ERROR tests/test_b").unwrap()..]),
            None
        );
    }

    #[test]
    fn the_undefined_name_is_read_from_a_pytest_run() {
        let output = "F\n=== FAILURES ===\nE       NameError: name 'pytest' is not defined\n\
                      FAILED tests/test_ledger.py::test_unknown - NameError: name 'pytest' is not defined\n";
        assert_eq!(undefined_name(output).as_deref(), Some("pytest"));
        assert_eq!(undefined_name("1 failed\nAssertionError"), None);
    }

    #[test]
    fn the_file_a_name_is_undefined_in_is_read_from_pytests_frame() {
        let output = "____ test_withdraw ____\n\n    def withdraw(amount):\n>       return Decimal(amount)\nE       NameError: name 'Decimal' is not defined\n\nledger/accounts.py:7: NameError\n1 failed\n";
        assert_eq!(
            undefined_in_file(output),
            Some(("Decimal".to_string(), "ledger/accounts.py".to_string()))
        );
        for outside in [
            "/usr/lib/python3/x.py:3: NameError",
            "../other/x.py:3: NameError",
        ] {
            let output = format!("E       NameError: name 'Decimal' is not defined\n{outside}\n");
            assert_eq!(undefined_in_file(&output), None, "{outside}");
        }

        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ledger")).unwrap();
        let code = "def withdraw(amount):\n    return Decimal(amount)\n";
        std::fs::write(dir.path().join("ledger/accounts.py"), code).unwrap();
        assert_eq!(
            import_into_frame(dir.path(), output, |path| path == "ledger/accounts.py"),
            None
        );
        assert_eq!(
            import_into_frame(dir.path(), output, |_| false),
            Some((
                "from decimal import Decimal".to_string(),
                vec!["ledger/accounts.py".to_string()]
            ))
        );
        let text = std::fs::read_to_string(dir.path().join("ledger/accounts.py")).unwrap();
        assert_eq!(text, format!("from decimal import Decimal\n{code}"));
    }

    #[test]
    fn a_name_undefined_while_a_test_file_is_collected_is_read_from_the_last_frame() {
        // Recorded (workshop, 2026-12-08), names changed.
        let output = "==================================== ERRORS ====================================\n\
            ___ ERROR collecting tests/test_fines.py ____\n\
            tests/test_fines.py:3: in <module>\n    from lending.fines import fine_between\n\
            lending/fines.py:27: in <module>\n    def fine_between(due: datetime.date, returned: datetime.date) -> int:\n\
            \x20                         ^^^^^^^^\n\
            E   NameError: name 'datetime' is not defined\n\
            _____ ERROR collecting tests/test_more.py _____\n\
            tests/test_more.py:3: in <module>\n";
        assert_eq!(
            undefined_in_file(output),
            Some(("datetime".to_string(), "lending/fines.py".to_string()))
        );
    }

    #[test]
    fn standard_names_have_imports_and_the_storys_do_not() {
        assert_eq!(import_of("pytest").as_deref(), Some("import pytest"));
        assert_eq!(
            import_of("Decimal").as_deref(),
            Some("from decimal import Decimal")
        );
        assert_eq!(import_of("withdraw"), None);
    }

    #[test]
    fn standard_names_used_and_never_bound_get_their_imports() {
        let used = "from ledger import total\n\ndef test_exact(prices: List[int]):\n    assert total(['0.10']) == Decimal('0.10')\n    assert math.isclose(1.0, 1.0)\n    with pytest.raises(ValueError):\n        total(['x'])\n";
        assert_eq!(
            standard_imports(used),
            [
                "from typing import List",
                "from decimal import Decimal",
                "import math",
                "import pytest"
            ]
        );
        // Bound already, by an import, a definition or an assignment; a module's name not read
        // through; an attribute of something else; a lower-case name.
        let bound = "import math\nfrom decimal import Decimal as Decimal\nclass Fraction:\n    pass\nCounter = dict\n\ndef test_x(re, date):\n    assert math.pi > 3 and Decimal(1) and Fraction() and Counter()\n    assert json and x.Decimal and re.compile and date\n";
        assert_eq!(standard_imports(bound), Vec::<String>::new());
    }

    #[test]
    fn the_import_goes_into_the_files_that_use_the_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        let using = "from ledger import Ledger\n\ndef test_unknown():\n    with pytest.raises(KeyError):\n        Ledger().balance('x')\n";
        std::fs::write(dir.path().join("tests/test_a.py"), using).unwrap();
        std::fs::write(
            dir.path().join("tests/test_b.py"),
            "def test_b():\n    assert 1\n",
        )
        .unwrap();
        let paths = vec!["tests/test_a.py".to_string(), "tests/test_b.py".to_string()];

        let (import, changed) = import_where_used(dir.path(), &paths, "pytest").unwrap();

        assert_eq!(import, "import pytest");
        assert_eq!(changed, vec!["tests/test_a.py".to_string()]);
        let text = std::fs::read_to_string(dir.path().join("tests/test_a.py")).unwrap();
        assert!(
            text.starts_with("import pytest\nfrom ledger import Ledger\n"),
            "{text}"
        );
        let untouched = std::fs::read_to_string(dir.path().join("tests/test_b.py")).unwrap();
        assert!(!untouched.contains("import"));
        // A second pass finds the import there and adds nothing.
        assert_eq!(import_where_used(dir.path(), &paths, "pytest"), None);
        assert_eq!(import_where_used(dir.path(), &paths, "withdraw"), None);
    }

    #[test]
    fn an_answer_importing_its_own_module_loses_that_import() {
        // Recorded (Qwen2.5-Coder-1.5B, inventory `receipt-line`, 2026-11-28).
        let answer = "from inventory.money import format_price\n\ndef receipt_line(name, cents):\n    return f\"{name}: ${format_price(cents)}\"\n";
        assert_eq!(
            without_imports_of_itself(answer, "inventory/money.py"),
            "def receipt_line(name, cents):\n    return f\"{name}: ${format_price(cents)}\"\n"
        );
        let other =
            "import math\nfrom inventory.pricing import apply_discount\nfrom .money import x\n";
        assert_eq!(
            without_imports_of_itself(other, "inventory/money.py"),
            "import math\nfrom inventory.pricing import apply_discount\n"
        );
        assert_eq!(without_imports_of_itself(other, "pricing.rs"), other);
        // Recorded (driving a leap-year story, 2026-11-29): the model's whole file, with the
        // import of itself atop it; a file that imports nothing of itself is left as it is.
        let own = "\"\"\"Small helpers.\"\"\"\nfrom calendar_utils import days_in_month\n\n\ndef days_in_month(month):\n    return 30\n";
        assert_eq!(
            without_imports_of_itself(own, "calendar_utils.py"),
            "\"\"\"Small helpers.\"\"\"\n\n\ndef days_in_month(month):\n    return 30\n"
        );
        assert_eq!(
            without_imports_of_itself("\nx = 1\n", "calendar_utils.py"),
            "\nx = 1\n"
        );
    }
}
