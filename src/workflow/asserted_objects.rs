//! Assertions a Python test makes of the wrong object (docs/design.md §21): pytest's record
//! of a caught exception read as the exception, and a module read as a collection of its
//! names. No code passes such an assertion. The 1.5B model wrote both in its tests of
//! cyclehire's `unknown-bike-error` (2026-12-07): `assert str(e) == "X9"` after
//! `with pytest.raises(UnknownBikeError) as e:`, which compares `<ExceptionInfo …>`, and
//! `assert "UnknownBikeError" in pytest.importorskip("cyclehire.fleet")`, a `TypeError`
//! whatever the module holds. Implement spent its 10 minutes on them.

use std::path::Path;

use super::python_lines::{after_raises_opening, indent};

/// `text` with each record of a caught exception read as the exception it holds: after
/// `with pytest.raises(E) as caught:`, `str(caught)` and `caught.message` (no Python 3
/// exception has one) become `str(caught.value)`, and `caught.args` `caught.value.args`. An
/// assertion that such a message equals a string the story says the message *contains*
/// becomes `assert "X9" in str(caught.value)`: the story leaves the rest of the message to the
/// code. `None` when nothing changes.
pub fn caught_records_mended(text: &str, story_text: &str) -> Option<String> {
    let mut records: Vec<String> = Vec::new();
    let mut changed = false;
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        // A record's name holds within its test: a new test starts with none.
        if trimmed.starts_with("def ") && indent(line) <= 4 {
            records.clear();
        }
        let mut mended = line.to_string();
        for record in &records {
            mended = record_read_as_exception(&mended, record);
            mended = contained_message(&mended, record, story_text).unwrap_or(mended);
        }
        changed |= mended != line;
        if let Some(record) = record_named(trimmed) {
            records.push(record.to_string());
        }
        out.push(mended);
    }
    changed.then(|| format!("{}\n", out.join("\n")))
}

/// The name a `with pytest.raises(…) as caught:` line binds, `caught`.
fn record_named(line: &str) -> Option<&str> {
    let rest = after_raises_opening(line)?;
    let (_, name) = rest.trim_end().strip_suffix(':')?.rsplit_once(" as ")?;
    let name = name.trim();
    is_identifier(name).then_some(name)
}

/// `line` with `str(record)`, `record.message`, `record.value.message` and `record.args` read
/// on the exception `record` holds.
fn record_read_as_exception(line: &str, record: &str) -> String {
    let exception = format!("str({record}.value)");
    let line = replace_names(line, &format!("{record}.value.message"), &exception);
    let line = replace_names(&line, &format!("{record}.message"), &exception);
    let line = replace_names(&line, &format!("str({record})"), &exception);
    replace_names(
        &line,
        &format!("{record}.args"),
        &format!("{record}.value.args"),
    )
}

/// `assert str(record.value) == "X9"` (either way round) as `assert "X9" in str(record.value)`,
/// when a line of `story_text` says a message contains `"X9"`.
fn contained_message(line: &str, record: &str, story_text: &str) -> Option<String> {
    let message = format!("str({record}.value)");
    let at = indent(line);
    let assertion = line[at..].strip_prefix("assert ")?.trim_end();
    let (left, right) = assertion.split_once(" == ")?;
    let literal = match (left.trim(), right.trim()) {
        (left, right) if left == message => right,
        (left, right) if right == message => left,
        _ => return None,
    };
    if !is_string_literal(literal) {
        return None;
    }
    let inner = &literal[1..literal.len() - 1];
    let said_contained = story_text.lines().any(|criterion| {
        criterion.contains("contain")
            && (criterion.contains(&format!("\"{inner}\""))
                || criterion.contains(&format!("'{inner}'"))
                || criterion.contains(&format!("`{inner}`")))
    });
    said_contained.then(|| format!("{}assert {literal} in {message}", &line[..at]))
}

/// `text` with each module of a test that an assertion asks for a name with `in` asked with
/// `hasattr`: `assert "Name" in pytest.importorskip("pkg.mod")` becomes
/// `assert hasattr(pytest.importorskip("pkg.mod"), "Name")`. A module is
/// `pytest.importorskip(…)`, `importlib.import_module(…)`, or a name the file imports as a
/// module of the tree at `dir` (`import pkg.mod`, `from pkg import mod`). `None` when nothing
/// changes.
pub fn module_memberships_mended(dir: &Path, text: &str) -> Option<String> {
    let modules = imported_modules(dir, text);
    let is_module = |expression: &str| {
        let call = ["pytest.importorskip(", "importlib.import_module("]
            .iter()
            .any(|call| expression.starts_with(call) && expression.ends_with(')'));
        call || modules.iter().any(|module| module == expression)
    };
    let mut changed = false;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let at = indent(line);
            let Some(assertion) = line[at..].strip_prefix("assert ") else {
                return line.to_string();
            };
            let assertion = assertion.trim_end();
            let (negated, name, module) = match assertion.split_once(" not in ") {
                Some((name, module)) => (true, name, module),
                None => match assertion.split_once(" in ") {
                    Some((name, module)) => (false, name, module),
                    None => return line.to_string(),
                },
            };
            let (name, module) = (name.trim(), module.trim());
            if !is_string_literal(name) || !is_module(module) {
                return line.to_string();
            }
            changed = true;
            let not = if negated { "not " } else { "" };
            format!("{}assert {not}hasattr({module}, {name})", &line[..at])
        })
        .collect();
    changed.then(|| format!("{}\n", lines.join("\n")))
}

/// The names `text` binds to modules of the tree at `dir`: `pkg.mod` of `import pkg.mod`, `m`
/// of `import pkg.mod as m`, and `mod` of `from pkg import mod` when `pkg/mod.py` or
/// `pkg/mod/` is in the tree. A name the file assigns too (`fleet = Fleet()`) may hold
/// anything, and is none.
fn imported_modules(dir: &Path, text: &str) -> Vec<String> {
    let assigned = |name: &str| {
        text.lines().any(|line| {
            line.trim_start().strip_prefix(name).is_some_and(|rest| {
                rest.trim_start().starts_with('=') && !rest.trim_start().starts_with("==")
            })
        })
    };
    let mut modules = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(imported) = line.strip_prefix("import ") {
            for part in imported.split(',') {
                let part = part.trim();
                let name = part.rsplit_once(" as ").map_or(part, |(_, alias)| alias);
                modules.push(name.trim().to_string());
            }
        } else if let Some(rest) = line.strip_prefix("from ") {
            let Some((package, names)) = rest.split_once(" import ") else {
                continue;
            };
            let folder = dir.join(package.trim().replace('.', "/"));
            for part in names.trim_matches(|c| c == '(' || c == ')').split(',') {
                let (name, alias) = part
                    .trim()
                    .split_once(" as ")
                    .unwrap_or((part.trim(), part.trim()));
                let module = folder.join(format!("{}.py", name.trim()));
                if module.is_file() || folder.join(name.trim()).is_dir() {
                    modules.push(alias.trim().to_string());
                }
            }
        }
    }
    modules.retain(|module| !assigned(module));
    modules
}

/// `line` with each `from` that stands as a whole (no name character before or after it)
/// replaced by `to`.
fn replace_names(line: &str, from: &str, to: &str) -> String {
    let is_name_char = |c: char| c.is_alphanumeric() || c == '_' || c == '.';
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(from) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + from.len()..].chars().next();
        let whole = !before.is_some_and(is_name_char)
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_');
        out.push_str(&rest[..at]);
        out.push_str(if whole { to } else { from });
        rest = &rest[at + from.len()..];
    }
    out.push_str(rest);
    out
}

/// A string in one kind of quotes: `"X9"`, `'X9'`.
fn is_string_literal(text: &str) -> bool {
    text.len() >= 2
        && (text.starts_with('"') && text.ends_with('"')
            || text.starts_with('\'') && text.ends_with('\''))
}

fn is_identifier(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORY: &str = "Refuse bikes that are not in the fleet\n\
        - [ ] `UnknownBikeError` can be imported from `cyclehire.fleet` and is a subclass of `ValueError`\n\
        - [ ] `fleet.rent(\"X9\", \"ann\")` raises `UnknownBikeError` when `X9` was never added, and `str()` of the error contains `\"X9\"`\n";

    // The 1.5B model's tests of `unknown-bike-error` (s51c, 2026-12-07), shortened.
    const TESTS: &str = "import pytest\n\
        from cyclehire.fleet import Fleet, UnknownBikeError\n\
        \n\
        def test_unknown_bike_error_importable():\n    \
            assert \"UnknownBikeError\" in pytest.importorskip(\"cyclehire.fleet\")\n\
        \n\
        def test_rent_unknown_bike():\n    \
            fleet = Fleet(\"Riverside\")\n    \
            with pytest.raises(UnknownBikeError) as e:\n        \
                fleet.rent(\"X9\", \"ann\")\n    \
            assert str(e) == \"X9\"\n\
        \n\
        def test_other():\n    \
            e = [1]\n    \
            assert str(e) == \"[1]\"\n";

    #[test]
    fn a_caught_record_is_read_as_its_exception_and_a_contained_message_with_in() {
        let mended = caught_records_mended(TESTS, STORY).expect("mended");
        assert!(
            mended.contains("    assert \"X9\" in str(e.value)\n"),
            "{mended}"
        );
        // The next test's `e` is a list of its own, and stays as it was.
        assert!(
            mended.contains("    assert str(e) == \"[1]\"\n"),
            "{mended}"
        );
        assert_eq!(caught_records_mended(&mended, STORY), None);
    }

    #[test]
    fn a_message_the_story_does_not_say_is_contained_keeps_its_equality() {
        let story = "Refuse bikes\n- [ ] the error's message is `\"X9\"`\n";
        let mended = caught_records_mended(TESTS, story).expect("mended");
        assert!(
            mended.contains("    assert str(e.value) == \"X9\"\n"),
            "{mended}"
        );
    }

    #[test]
    fn messages_and_arguments_of_a_record_are_read_on_its_exception() {
        let text = "def test_x():\n    with pytest.raises(ValueError) as caught:\n        f()\n    assert caught.message == 'bad'\n    assert caught.args[0] == 'bad'\n    assert caught.value.args == ('bad',)\n";
        let mended = caught_records_mended(text, "").expect("mended");
        assert!(
            mended.contains("    assert str(caught.value) == 'bad'\n"),
            "{mended}"
        );
        assert!(
            mended.contains("    assert caught.value.args[0] == 'bad'\n"),
            "{mended}"
        );
        assert!(
            mended.contains("    assert caught.value.args == ('bad',)\n"),
            "{mended}"
        );
    }

    #[test]
    fn a_name_asked_of_a_module_with_in_is_asked_with_hasattr() {
        let mended = module_memberships_mended(Path::new("/nonexistent"), TESTS).expect("mended");
        assert!(
            mended.contains(
                "    assert hasattr(pytest.importorskip(\"cyclehire.fleet\"), \"UnknownBikeError\")\n"
            ),
            "{mended}"
        );
        assert_eq!(
            module_memberships_mended(Path::new("/nonexistent"), &mended),
            None
        );
    }

    #[test]
    fn modules_the_file_imports_are_known_and_other_collections_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("cyclehire")).unwrap();
        std::fs::write(dir.path().join("cyclehire/fleet.py"), "").unwrap();
        let text = "import cyclehire.fleet as f\nfrom cyclehire import fleet\n\ndef test_x():\n    assert 'Fleet' in fleet\n    assert 'Fleet' not in f\n    assert 'B1' in rented\n";
        // A module's name the file binds to an object of its own is that object's.
        let rebound = "from cyclehire import fleet\n\ndef test_x():\n    fleet = Fleet()\n    assert 'B1' in fleet\n";
        assert_eq!(module_memberships_mended(dir.path(), rebound), None);
        let mended = module_memberships_mended(dir.path(), text).expect("mended");
        assert!(
            mended.contains("    assert hasattr(fleet, 'Fleet')\n"),
            "{mended}"
        );
        assert!(
            mended.contains("    assert not hasattr(f, 'Fleet')\n"),
            "{mended}"
        );
        assert!(mended.contains("    assert 'B1' in rented\n"), "{mended}");
    }
}
