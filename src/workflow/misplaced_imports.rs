//! Imports that name the wrong module of the tree, where the name they want is defined in
//! another (docs/design.md §21): what a small model writes when it guesses a module's layout,
//! and what no code of the story's could make load.

use std::path::Path;

use super::python_imports::{bound_by_import, defines, module_defines, module_source};
use super::python_lines::lines_replaced;
use crate::python_builtins::{PYTHON_EXCEPTIONS, PYTHON_FUNCTIONS};

/// `text` (Python tests) with each `import <module>.<name>` whose `<module>` is a module of
/// the tree at `root` that defines `<name>` (a function or a class, not a module) imported as
/// Python can: `import <module>` for the dotted calls and `from <module> import <name>` for the
/// bare ones. A drive's 1.5B acceptance tests began `import pantry.prices.format_pence`, which
/// fails at collection ("'pantry.prices' is not a package"), and were refused whole
/// (2026-12-07). `None` when there is no such line.
pub fn definitions_imported_as_modules(root: &Path, text: &str) -> Option<String> {
    lines_replaced(text, |line| {
        let indent = &line[..line.len() - line.trim_start().len()];
        let imported = line
            .trim_start()
            .strip_prefix("import ")
            .map(|rest| rest.split('#').next().unwrap_or(rest).trim())
            .filter(|rest| !rest.contains(','))?;
        let (dotted, alias) = match imported.split_once(" as ") {
            Some((dotted, alias)) => (dotted.trim(), Some(alias.trim())),
            None => (imported, None),
        };
        let (module, name) = dotted.rsplit_once('.').filter(|(module, name)| {
            module_source(root, dotted).is_none()
                && module_source(root, module).is_some_and(|(_, source)| defines(&source, name))
        })?;
        Some(match alias {
            Some(alias) => vec![format!("{indent}from {module} import {name} as {alias}")],
            None => vec![
                format!("{indent}import {module}"),
                format!("{indent}from {module} import {name}"),
            ],
        })
    })
}

/// `text` (Python tests) without Python's own names in its `from <module> import …` lines
/// where `<module>` is a module of the tree at `root` that does not bind them: sawmill's
/// accepted tests began `from sawmill.timber import piece_price, ValueError` (its summary line,
/// 2026-12-07), an import no code of the story's makes work, for `ValueError` needs none. A
/// line left with no name goes. `None` when there is no such name.
pub fn python_names_unimported(root: &Path, text: &str) -> Option<String> {
    lines_replaced(text, |line| {
        let indent = &line[..line.len() - line.trim_start().len()];
        let (module, names) = line
            .trim_start()
            .strip_prefix("from ")
            .and_then(|rest| rest.split_once(" import "))
            .filter(|(module, names)| {
                !names.contains(['(', '\\', '#']) && is_tree_module(root, module.trim())
            })?;
        let module = module.trim();
        let (own, kept): (Vec<&str>, Vec<&str>) = names
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .partition(|item| {
                let name = item.split_whitespace().next().unwrap_or(item);
                let python_own =
                    PYTHON_EXCEPTIONS.contains(&name) || PYTHON_FUNCTIONS.contains(&name);
                python_own && !module_defines(root, module, name)
            });
        if own.is_empty() {
            return None;
        }
        Some(match kept.is_empty() {
            true => Vec::new(),
            false => vec![format!("{indent}from {module} import {}", kept.join(", "))],
        })
    })
}

/// The names Python `code` imports by `from <module> import …` from a module of the tree at
/// `root` (one whose first part is a file or folder of the tree) that does not bind them: the
/// 1.5B model's new `tollbooth/statement.py` began `from tollbooth.account import Account`,
/// a module no one wrote, where `Account` lives in `tollbooth/trips.py` (tollbooth, 2026-12-07).
pub fn names_the_tree_lacks(root: &Path, code: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in code.lines().map(str::trim_start) {
        let Some(module) = line
            .strip_prefix("from ")
            .and_then(|rest| rest.split_once(" import "))
            .map(|(module, _)| module.trim())
            .filter(|module| !module.starts_with('.') && is_tree_module(root, module))
        else {
            continue;
        };
        for name in bound_by_import(line) {
            // `from tollbooth import trips` takes a module, which no file defines.
            let submodule = module_source(root, &format!("{module}.{name}")).is_some();
            if name != "*"
                && !submodule
                && !module_defines(root, module, name)
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Whether `module`'s first part is a Python file or a folder of the tree at `root`, at its
/// top or under `src/`: what makes an import one of the project's own.
fn is_tree_module(root: &Path, module: &str) -> bool {
    let first = module.split('.').next().unwrap_or(module);
    ["", "src/"].iter().any(|prefix| {
        root.join(format!("{prefix}{first}.py")).is_file()
            || root.join(format!("{prefix}{first}")).is_dir()
    })
}

/// Whether the Python file `file` of the tree at `root` imports the module `module` at its
/// top level (`from module import …` or `import module`): an import of `file`'s names into
/// `module` would then be circular.
pub fn file_imports_module(root: &Path, file: &str, module: &str) -> bool {
    std::fs::read_to_string(root.join(file)).is_ok_and(|text| {
        text.lines().any(|line| {
            line.strip_prefix("from ")
                .and_then(|rest| rest.split_once(" import "))
                .map(|(source, _)| source.trim())
                .or_else(|| line.strip_prefix("import ").map(str::trim))
                .is_some_and(|source| {
                    source
                        .split(',')
                        .any(|one| one.split_whitespace().next() == Some(module))
                })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pythons_own_names_imported_from_the_project_are_taken_out_of_the_import() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("sawmill")).unwrap();
        std::fs::write(
            root.path().join("sawmill/timber.py"),
            "def piece_price(length):\n    return 0\n",
        )
        .unwrap();
        let tests = "import pytest\nfrom sawmill.timber import piece_price, ValueError\nfrom sawmill.timber import KeyError\nfrom collections import Counter\n\n\ndef test_price():\n    assert piece_price(1) == 0\n";
        assert_eq!(
            python_names_unimported(root.path(), tests).unwrap(),
            "import pytest\nfrom sawmill.timber import piece_price\nfrom collections import Counter\n\n\ndef test_price():\n    assert piece_price(1) == 0\n"
        );
        assert_eq!(
            python_names_unimported(root.path(), "from sawmill.timber import piece_price\n"),
            None
        );
    }

    #[test]
    fn a_function_imported_as_a_module_is_imported_from_its_module() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("pantry")).unwrap();
        std::fs::write(root.path().join("pantry/__init__.py"), "").unwrap();
        std::fs::write(
            root.path().join("pantry/prices.py"),
            "PRICES = {}\n\n\ndef format_pence(pence):\n    return ''\n",
        )
        .unwrap();
        // Recorded (Qwen2.5-Coder-1.5B, a drive, 2026-12-07): the first line.
        let tests = "import pantry.prices.format_pence\nimport pantry.prices.PRICES as table\nimport pantry.prices\nimport pantry.prices.missing\n\ndef test_f():\n    import pantry.prices.format_pence\n    assert format_pence(150) == '£1.50'\n";
        assert_eq!(
            definitions_imported_as_modules(root.path(), tests).unwrap(),
            "import pantry.prices\nfrom pantry.prices import format_pence\nfrom pantry.prices import PRICES as table\nimport pantry.prices\nimport pantry.prices.missing\n\ndef test_f():\n    import pantry.prices\n    from pantry.prices import format_pence\n    assert format_pence(150) == '£1.50'\n"
        );
        assert_eq!(
            definitions_imported_as_modules(root.path(), "import pantry.prices\n"),
            None
        );
    }
}
