//! A definition the model wrote alone merged into its file (docs/design.md §21): in place of its
//! namesake, or at the end of its class or file, with what the answer needs beside it.

use crate::agents::tools::defined_name;

/// `source` with the definition merged in: in place of the definition of that name it already
/// has (a rewrite of a definition that fails its tests), else a method at the end of its
/// class's block, re-indented to the class's method indentation, and a function at the end of
/// the file. A class the model wrapped around the method is taken off; the answer's imports
/// that the file lacks join its imports. `None` when the code defines nothing named `name`, or
/// the class is not in `source`.
pub fn merge_definition(
    source: &str,
    class: Option<&str>,
    name: &str,
    code: &str,
) -> Option<String> {
    let definition = match class {
        Some(class) => as_method(&definition_named(code, name)?, class),
        None => definition_named(code, name)?,
    };
    let source = add_imports_of(source, code);
    let lines: Vec<&str> = source.lines().collect();
    // Where the definition belongs: the file, or the body of its class.
    let (scope, indent) = match class {
        None => (0..lines.len(), String::new()),
        Some(class) => {
            let start = lines.iter().position(|line| {
                line.starts_with("class ") && defined_name(line).as_deref() == Some(class)
            })?;
            let end = block_end(&lines, start, 0);
            let indent = lines[start + 1..end]
                .iter()
                .find(|line| !line.trim().is_empty())
                .map_or("    ".to_string(), |line| {
                    line[..line.len() - line.trim_start().len()].to_string()
                });
            (start + 1..end, indent)
        }
    };
    let indented: Vec<String> = definition
        .lines()
        .map(|line| match line.trim().is_empty() {
            true => String::new(),
            false => format!("{indent}{line}"),
        })
        .collect();
    let own = |line: &str| line.len() - line.trim_start().len() == indent.len();
    let existing = lines[scope.clone()]
        .iter()
        .position(|line| own(line) && defined_name(line).as_deref() == Some(name))
        .map(|at| scope.start + at);
    let owned = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let mut out: Vec<String> = Vec::new();
    match existing {
        Some(start) => {
            let first = crate::agents::tools::decorators_start(&lines, start).max(scope.start);
            let end = block_end(&lines, start, indent.len());
            out.extend(owned(&lines[..first]));
            out.extend(indented);
            out.extend(owned(&lines[end..]));
        }
        None if class.is_none() => {
            out.extend(owned(&lines));
            while out.last().is_some_and(|line| line.trim().is_empty()) {
                out.pop();
            }
            if !out.is_empty() {
                out.extend([String::new(), String::new()]);
            }
            out.extend(indented);
        }
        None => {
            out.extend(owned(&lines[..scope.end]));
            out.push(String::new());
            out.extend(indented);
            // What followed the class, with the blank lines before it, stays as it was.
            out.extend(owned(&lines[scope.end..]));
        }
    }
    let mut text = out.join("\n");
    text.push('\n');
    Some(with_companions(
        &text,
        code,
        &definition,
        class.unwrap_or(name),
    ))
}

/// `merged` with the classes `code` defines beside the definition, that the definition uses and
/// `merged` neither defines nor imports, above the top-level definition `holder` (the function
/// itself, or the class of a method). The 1.5B model asked for `to_minutes` alone answered five
/// times with the `InvalidTimeError` it raises defined above it, and the merge kept only
/// `to_minutes`: every run failed on the missing class (transit, 2026-12-06).
fn with_companions(merged: &str, code: &str, definition: &str, holder: &str) -> String {
    let defined = crate::agents::tools::defined_names(merged);
    let imported: Vec<&str> = merged
        .lines()
        .flat_map(super::python_imports::bound_by_import)
        .collect();
    let companions: Vec<String> = code
        .lines()
        .filter(|line| line.starts_with("class "))
        .filter_map(|line| {
            let class = defined_name(line)?;
            let wanted = super::named_functions::mentions_word(definition, &class)
                && !defined.contains(&class)
                && !imported.contains(&class.as_str());
            wanted.then(|| definition_named(code, &class))?
        })
        .collect();
    if companions.is_empty() {
        return merged.to_string();
    }
    let lines: Vec<&str> = merged.lines().collect();
    let Some(start) = lines
        .iter()
        .position(|line| !line.starts_with(' ') && defined_name(line).as_deref() == Some(holder))
    else {
        return merged.to_string();
    };
    let at = crate::agents::tools::decorators_start(&lines, start);
    let mut out: Vec<String> = lines[..at].iter().map(|line| line.to_string()).collect();
    for companion in companions {
        out.push(companion);
        out.extend([String::new(), String::new()]);
    }
    out.extend(lines[at..].iter().map(|line| line.to_string()));
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// `definition`, a function asked for as a method of `class`, with the `self` it lacks: first
/// among its parameters, and in place of the object the tests call it on (`timetable.` where
/// nothing binds `timetable`). The 1.5B model's `next_departure(stop, after)` read
/// `self._departures` once and `timetable._departures` once, and either failed on "takes 2
/// positional arguments but 3 were given" (transit, 2026-12-06). A static or class method, a
/// body that reads no object, or a signature over several lines, stays as it is.
fn as_method(definition: &str, class: &str) -> String {
    let lines: Vec<&str> = definition.lines().collect();
    let Some(at) = lines.iter().position(|line| {
        let line = line.trim_start();
        line.starts_with("def ") || line.starts_with("async def ")
    }) else {
        return definition.to_string();
    };
    let decorated = lines[..at]
        .iter()
        .any(|line| line.contains("staticmethod") || line.contains("classmethod"));
    let signature = lines[at];
    let (Some(open), Some(close)) = (signature.find('('), signature.rfind(')')) else {
        return definition.to_string();
    };
    let parameters = &signature[open + 1..close];
    let names = parameter_names(signature);
    if decorated || names.first().is_some_and(|first| first == "self") {
        return definition.to_string();
    }
    let with_self = match parameters.trim().is_empty() {
        true => "self".to_string(),
        false => format!("self, {}", parameters.trim_start()),
    };
    let object = super::story_classes::snake_case(class);
    let bound = names.contains(&object)
        || lines[at + 1..]
            .iter()
            .any(|line| line.trim_start().starts_with(&format!("{object} =")));
    let receiver = format!("{object}.");
    let body: Vec<String> = lines[at + 1..]
        .iter()
        .map(|line| match bound {
            true => line.to_string(),
            false => on_self(line, &receiver),
        })
        .collect();
    // Only a body that reads an object is a method's: a function of its arguments alone may
    // be called on the class (`Cart.from_dict(d)`), where a `self` would take the argument.
    let reads_self = body.iter().any(|line| {
        line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == "self")
    });
    if !reads_self {
        return definition.to_string();
    }
    let mut out: Vec<String> = lines[..at].iter().map(|line| line.to_string()).collect();
    out.push(format!(
        "{}{with_self}{}",
        &signature[..open + 1],
        &signature[close..]
    ));
    out.extend(body);
    out.join("\n")
}

/// The parameter names of the `def` that `definition` begins with.
pub(crate) fn parameter_names(definition: &str) -> Vec<String> {
    let Some((_, after)) = definition.split_once('(') else {
        return Vec::new();
    };
    let inside = after.split_once(')').map_or(after, |(inside, _)| inside);
    inside
        .split(',')
        .filter_map(|parameter| {
            let name = parameter.trim().trim_start_matches('*');
            let name = name.split([':', '=']).next()?.trim();
            (!name.is_empty()).then(|| name.to_string())
        })
        .collect()
}

/// `line` with each `receiver` (`timetable.`) that starts a name made `self.`.
fn on_self(line: &str, receiver: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(receiver) {
        let starts_name = rest[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'));
        out.push_str(&rest[..at]);
        out.push_str(if starts_name { "self." } else { receiver });
        rest = &rest[at + receiver.len()..];
    }
    out.push_str(rest);
    out
}

/// The end of the block that starts at `start` (indented `level`): the first line after it at
/// that indentation or less, with the blank lines before that line left out.
fn block_end(lines: &[&str], start: usize, level: usize) -> usize {
    let mut end = lines.len();
    for (at, line) in lines.iter().enumerate().skip(start + 1) {
        if !line.trim().is_empty() && line.len() - line.trim_start().len() <= level {
            end = at;
            break;
        }
    }
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    end
}

/// `source` with the top-level imports of `code` that it lacks, after its own imports (or its
/// opening docstring): `import re` above a rewritten `slugify`.
fn add_imports_of(source: &str, code: &str) -> String {
    let is_import = |line: &str| line.starts_with("import ") || line.starts_with("from ");
    let lines: Vec<&str> = source.lines().collect();
    let new: Vec<&str> = code
        .lines()
        .filter(|line| is_import(line) && !lines.iter().any(|old| old.trim() == line.trim()))
        .filter(|line| !imports_only_exceptions_of_python(line))
        .collect();
    if new.is_empty() {
        return source.to_string();
    }
    let at = match lines.iter().rposition(|line| is_import(line)) {
        Some(last) => last + 1,
        None => docstring_end(&lines),
    };
    let mut out: Vec<&str> = lines[..at].to_vec();
    if at > 0 && lines.iter().rposition(|line| is_import(line)).is_none() {
        out.push("");
    }
    out.extend(&new);
    if lines.get(at).is_some_and(|line| !line.trim().is_empty()) {
        out.push("");
    }
    out.extend(&lines[at..]);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Whether the import `line` binds only Python's own exceptions: the 1.5B model's `from
/// exceptions import ValueError` (Python 2's module) stopped every test module from loading
/// (transit, 2026-12-06).
fn imports_only_exceptions_of_python(line: &str) -> bool {
    let bound = super::python_imports::bound_by_import(line);
    !bound.is_empty()
        && bound
            .iter()
            .all(|name| crate::python_builtins::PYTHON_EXCEPTIONS.contains(name))
}

/// The line after a module's opening docstring (0 when it has none).
fn docstring_end(lines: &[&str]) -> usize {
    let Some(first) = lines.first().map(|line| line.trim_start()) else {
        return 0;
    };
    let Some(quote) = ["\"\"\"", "'''"].into_iter().find(|q| first.starts_with(q)) else {
        return 0;
    };
    if first.len() > 3 && first[3..].contains(quote) {
        return 1;
    }
    lines
        .iter()
        .skip(1)
        .position(|line| line.contains(quote))
        .map_or(0, |at| at + 2)
}

/// The definition of `name` in `code`, dedented to column 0 (a wrapping class dropped).
pub(super) fn definition_named(code: &str, name: &str) -> Option<String> {
    let lines: Vec<&str> = code.lines().collect();
    let start = lines
        .iter()
        .position(|line| defined_name(line).as_deref() == Some(name))?;
    let depth = |line: &str| line.len() - line.trim_start().len();
    let own = depth(lines[start]);
    let first = crate::agents::tools::decorators_start(&lines, start);
    let mut end = start + 1;
    while end < lines.len() && (lines[end].trim().is_empty() || depth(lines[end]) > own) {
        end += 1;
    }
    while end > start + 1 && lines[end - 1].trim().is_empty() {
        end -= 1;
    }
    let body: Vec<String> = lines[first..end]
        .iter()
        .map(|line| {
            if line.trim().is_empty() {
                String::new()
            } else {
                line.get(own..).unwrap_or(line.trim_start()).to_string()
            }
        })
        .collect();
    Some(body.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_written_without_self_gets_it_and_the_tests_object_becomes_self() {
        let source = "class Timetable:\n    def __init__(self):\n        self._departures = {}\n";
        // Recorded (Qwen2.5-Coder-1.5B, transit, 2026-12-06), two of the samples.
        let no_self = "def next_departure(stop: str, after: str) -> str:\n    times = self._departures.get(stop, [])\n    return times[0] if times else None\n";
        let on_object = "def next_departure(stop, after) -> str:\n    if stop not in timetable._departures:\n        return None\n    return timetable._departures[stop][0]\n";
        let merged = |code: &str| {
            merge_definition(source, Some("Timetable"), "next_departure", code).unwrap()
        };

        assert!(
            merged(no_self).contains("    def next_departure(self, stop: str, after: str) -> str:\n        times = self._departures.get(stop, [])\n"),
            "{}",
            merged(no_self)
        );
        assert!(
            merged(on_object).contains("    def next_departure(self, stop, after) -> str:\n        if stop not in self._departures:\n            return None\n        return self._departures[stop][0]\n"),
            "{}",
            merged(on_object)
        );
        let static_one = "@staticmethod\ndef parse(text):\n    return text\n";
        assert!(
            merge_definition(source, Some("Timetable"), "parse", static_one)
                .unwrap()
                .contains("    def parse(text):")
        );
        let of_arguments = "def from_text(text):\n    return text.split()\n";
        assert!(
            merge_definition(source, Some("Timetable"), "from_text", of_arguments)
                .unwrap()
                .contains("    def from_text(text):"),
            "a body that reads no object may be called on the class"
        );
        let function = "def next_departure(stop, after):\n    return None\n";
        assert!(
            merge_definition(source, None, "next_departure", function)
                .unwrap()
                .contains("def next_departure(stop, after):"),
            "a function stays one"
        );
    }

    #[test]
    fn the_exception_the_answer_defines_beside_the_function_comes_with_it() {
        let times = "\"\"\"Clock times.\"\"\"\n\nMINUTES_PER_HOUR = 60\n\n\ndef to_minutes(text):\n    hours, minutes = text.split(':')\n    return int(hours) * 60 + int(minutes)\n\n\ndef from_minutes(total):\n    return total\n";
        // Recorded (Qwen2.5-Coder-1.5B, transit, 2026-12-06): its seventh sample.
        let answer = "from exceptions import ValueError\n\nclass InvalidTimeError(ValueError):\n    pass\n\ndef to_minutes(text: str) -> int:\n    try:\n        hours, minutes = map(int, text.split(':'))\n        if hours < 0 or hours > 23 or minutes < 0 or minutes > 59:\n            raise InvalidTimeError(\"Text is not a valid 'HH:MM' time\")\n        return hours * 60 + minutes\n    except ValueError:\n        raise InvalidTimeError(\"Text is not a number\")\n";

        let merged = merge_definition(times, None, "to_minutes", answer).unwrap();

        assert!(!merged.contains("import"), "{merged}");
        assert!(
            merged.contains("MINUTES_PER_HOUR = 60\n\n\nclass InvalidTimeError(ValueError):\n    pass\n\n\ndef to_minutes(text: str) -> int:\n    try:"),
            "{merged}"
        );
        assert!(
            merged.ends_with("def from_minutes(total):\n    return total\n"),
            "{merged}"
        );
        // Once the file has the class, a second answer's copy does not come again.
        let again = merge_definition(&merged, None, "to_minutes", answer).unwrap();
        assert_eq!(
            again.matches("class InvalidTimeError").count(),
            1,
            "{again}"
        );
        // A class the definition does not use stays out.
        let unused = "class Helper:\n    pass\n\ndef to_minutes(text):\n    return 0\n";
        assert!(!merge_definition(times, None, "to_minutes", unused)
            .unwrap()
            .contains("Helper"));
    }
}
