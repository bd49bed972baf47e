//! The named definitions of a source file (functions, classes, types), read line by line in
//! any common language, so that a whole-file write that silently drops most of them can be
//! caught: a small model asked to add a function often writes a file holding only that one.

/// Keywords that introduce a named definition in Python, Rust, JavaScript/TypeScript, Go,
/// Ruby, Kotlin, Swift, PHP and shell-like languages.
const DEFINING: &[&str] = &[
    "def",
    "class",
    "fn",
    "function",
    "func",
    "fun",
    "struct",
    "enum",
    "trait",
    "interface",
    "type",
    "module",
    "mod",
    "union",
    "protocol",
    "object",
];

/// Words that may stand before a defining keyword.
const MODIFIERS: &[&str] = &[
    "pub",
    "pub(crate)",
    "pub(super)",
    "export",
    "default",
    "async",
    "unsafe",
    "const",
    "static",
    "public",
    "private",
    "protected",
    "internal",
    "abstract",
    "final",
    "open",
    "data",
    "sealed",
    "declare",
    "extern",
];

/// The names defined in `text`, in order, each once.
pub(crate) fn names(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(name) = defined_name(line) {
            if !found.contains(&name) {
                found.push(name);
            }
        }
    }
    found
}

/// The definitions of `before` that `after` no longer has, when they are most of them (more
/// than half); empty otherwise.
pub(super) fn mostly_dropped(before: &str, after: &str) -> Vec<String> {
    let old = names(before);
    let new = names(after);
    let dropped: Vec<String> = old
        .iter()
        .filter(|name| !new.contains(name))
        .cloned()
        .collect();
    if dropped.len() * 2 > old.len() {
        dropped
    } else {
        Vec::new()
    }
}

/// The source of the definition named `name`: its line and the lines below it that are
/// indented deeper (or blank), plus a closing bracket at its own indentation.
pub(crate) fn source_of(text: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|line| defined_name(line).as_deref() == Some(name))?;
    let depth = |line: &str| line.len() - line.trim_start().len();
    let own = depth(lines[start]);
    let mut end = start + 1;
    while end < lines.len() {
        let line = lines[end];
        if line.trim().is_empty() || depth(line) > own {
            end += 1;
            continue;
        }
        if line.trim_start().starts_with(['}', ')', ']']) {
            end += 1;
        }
        break;
    }
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    Some(lines[start..end].join("\n"))
}

/// The first line of the decorators above the definition at `lines[start]` (`start` when it
/// has none), a decorator whose arguments run over several lines included: a 1.5B model wrote
/// `@pytest.mark.parametrize("celsius, expected", [` over three lines, and a test taken out
/// without them left the decorator on the next test, which then failed to collect in every
/// round (a drive, 2026-12-05).
pub(crate) fn decorators_start(lines: &[&str], start: usize) -> usize {
    let depth = |line: &str| line.len() - line.trim_start().len();
    let level = depth(lines[start]);
    let mut first = start;
    loop {
        // The nearest line above at the definition's own depth, past the arguments'
        // deeper lines and their closing brackets.
        let mut at = first;
        while at > 0 {
            let line = lines[at - 1];
            let inside = !line.trim().is_empty()
                && (depth(line) > level || line.trim_start().starts_with([')', ']', '}']));
            if !inside {
                break;
            }
            at -= 1;
        }
        let Some(above) = at.checked_sub(1) else {
            return first;
        };
        let decorator = &lines[above..first];
        let is_decorator = depth(lines[above]) == level
            && lines[above].trim_start().starts_with('@')
            && bracket_balance(decorator) == 0;
        if !is_decorator {
            return first;
        }
        first = above;
    }
}

/// How many more brackets `lines` open than they close.
fn bracket_balance(lines: &[&str]) -> i64 {
    lines
        .iter()
        .map(|line| {
            line.matches(['(', '[', '{']).count() as i64
                - line.matches([')', ']', '}']).count() as i64
        })
        .sum()
}

pub(crate) fn defined_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(word) = words.peek() {
        if MODIFIERS.contains(word) || word.starts_with("pub(") {
            words.next();
        } else {
            break;
        }
    }
    let keyword = words.next()?;
    if !DEFINING.contains(&keyword) {
        // `const add = (a, b) => …` and `let f = function (…)`: a function by assignment.
        return assigned_function(line);
    }
    let mut rest: String = words.collect::<Vec<_>>().join(" ");
    if keyword == "func" && rest.starts_with('(') {
        // A Go method: `func (r *Reader) Read(…)`.
        let close = rest.find(')')?;
        rest = rest[close + 1..].trim_start().to_string();
    }
    let name: String = rest
        .trim_start_matches('*')
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '$')
        .collect();
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

fn assigned_function(line: &str) -> Option<String> {
    let trimmed = line.trim_start();
    let rest = ["export const ", "const ", "let ", "var "]
        .iter()
        .find_map(|prefix| trimmed.strip_prefix(prefix))?;
    let (name, value) = rest.split_once('=')?;
    let value = value.trim_start();
    let is_function =
        value.starts_with("function") || value.starts_with("async") || value.contains("=>");
    let name = name
        .trim()
        .trim_end_matches(|c: char| c == ':' || c.is_whitespace());
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    (is_function && plain).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_are_found_in_common_languages() {
        let cases: [(&str, &[&str]); 6] = [
            (
                "import os\n\ndef mean(v):\n    pass\n\nasync def fetch():\n    pass\n\nclass Stats:\n    def add(self):\n        pass\n",
                &["mean", "fetch", "Stats", "add"],
            ),
            (
                "pub fn run() {}\npub(crate) async fn go() {}\nstruct Point { x: i32 }\nimpl Point {}\nenum Kind { A }\n",
                &["run", "go", "Point", "Kind"],
            ),
            (
                "export function add(a, b) {}\nexport default class App {}\nconst mul = (a, b) => a * b;\nconst limit = 3;\n",
                &["add", "App", "mul"],
            ),
            (
                "func Read() {}\nfunc (r *Reader) Close() error {}\ntype Reader struct {}\n",
                &["Read", "Close", "Reader"],
            ),
            ("# def commented\nx = 'def y'\n", &[]),
            ("def same():\n    pass\ndef same():\n    pass\n", &["same"]),
        ];
        for (text, expected) in cases {
            assert_eq!(names(text), expected, "{text}");
        }
    }

    #[test]
    fn decorators_over_several_lines_belong_to_the_definition_under_them() {
        let recorded = "import pytest\n\n@pytest.mark.parametrize(\"celsius, expected\", [\n    (0, 491.67),\n    (100, 212.00),\n])\n@pytest.mark.slow\ndef test_to_rankine(celsius, expected):\n    assert True\n";
        let lines: Vec<&str> = recorded.lines().collect();
        assert_eq!(decorators_start(&lines, 7), 2);
        let plain = ["x = f(", ")", "@wraps", "def g():", "    pass"];
        assert_eq!(
            decorators_start(&plain, 3),
            2,
            "a call above is not a decorator"
        );
        let nested = ["class A:", "    @property", "    def b(self):"];
        assert_eq!(decorators_start(&nested, 2), 1);
        assert_eq!(decorators_start(&nested, 0), 0);
        let earlier = ["@dec", "def a(): pass", "def b(): pass"];
        assert_eq!(
            decorators_start(&earlier, 2),
            2,
            "an earlier definition's decorator"
        );
    }

    #[test]
    fn the_source_of_a_definition_is_its_block() {
        let python = "import os\n\n\ndef shout(text):\n    \"\"\"Loud.\"\"\"\n\n    return text.upper()\n\n\ndef other():\n    pass\n";
        assert_eq!(
            source_of(python, "shout").as_deref(),
            Some("def shout(text):\n    \"\"\"Loud.\"\"\"\n\n    return text.upper()")
        );
        let rust = "fn a() {\n    1;\n}\n\nfn b() {}\n";
        assert_eq!(source_of(rust, "a").as_deref(), Some("fn a() {\n    1;\n}"));
        assert_eq!(source_of(rust, "zzz"), None);
    }

    #[test]
    fn only_dropping_most_of_the_definitions_counts() {
        let before = "def a():\n    pass\n\ndef b():\n    pass\n\ndef c():\n    pass\n";
        assert_eq!(
            mostly_dropped(before, "def d():\n    pass\n"),
            ["a", "b", "c"]
        );
        assert_eq!(
            mostly_dropped(before, "def a():\n    pass\n\ndef d():\n    pass\n"),
            ["b", "c"]
        );
        assert!(mostly_dropped(before, &format!("{before}def d():\n    pass\n")).is_empty());
        assert!(
            mostly_dropped(before, "def a():\n    return 1\n\ndef b():\n    return 2\n").is_empty(),
            "one of three dropped is not most"
        );
        assert!(mostly_dropped("just text\n", "other text\n").is_empty());
        assert_eq!(
            mostly_dropped("def only():\n    pass\n", "print(1)\n"),
            ["only"]
        );
    }
}
