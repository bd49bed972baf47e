//! The tools LLM agents call through OpenAI function calling (SPEC §10).
//!
//! Every tool is confined to the repository root: paths outside it, inside `.git` or inside the
//! board folder are refused, because an agent must neither touch the user's machine nor the
//! board the workflow itself owns. `ToolBox::call` never fails: every tool call yields exactly one
//! tool result, and every problem becomes an error result (`Error: …`) the model can act on.

use std::collections::VecDeque;
use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Component, Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Lines `read_file` returns when the model gives no `limit`.
const READ_LINE_LIMIT: usize = 2000;
/// Bytes `read_file` returns at most, so one call cannot flood the context window.
const READ_BYTE_CAP: usize = 100 * 1024;
/// Entries `list_files` shows at most.
const LIST_CAP: usize = 1000;
/// Matches `search` reports at most.
const SEARCH_MATCH_CAP: usize = 200;
/// Bytes of one matching line `search` shows; minified files have enormous lines.
const SEARCH_LINE_CAP: usize = 300;
/// Files larger than this are skipped by `search`; they are almost never source code.
const SEARCH_FILE_SIZE_CAP: u64 = 8 * 1024 * 1024;
/// Folders `search` does not descend into: VCS data and build or dependency output.
const SEARCH_SKIP_DIRS: &[&str] = &[".git", "target", "node_modules"];
/// Bytes of command output that reach the model (head and tail halves).
pub const OUTPUT_BUDGET: usize = 16 * 1024;
/// How long output pipes may stay open after the command ended or was killed. A process that
/// left the process group (`setsid`) can hold them forever; the call must still return.
const PIPE_GRACE: Duration = Duration::from_millis(500);

/// What an agent may do: every agent reads, only implement writes and runs commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolAccess {
    ReadOnly,
    ReadWrite,
}

/// The result of one tool call, sent back to the model as the tool message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    pub content: String,
    pub is_error: bool,
}

impl ToolOutcome {
    fn from_result(result: Result<String, String>) -> Self {
        match result {
            Ok(content) => Self {
                content,
                is_error: false,
            },
            Err(message) => Self {
                content: format!("Error: {message}"),
                is_error: true,
            },
        }
    }
}

/// The tools by name; the names and argument names are fixed by SPEC §10.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    ReadFile,
    ListFiles,
    Search,
    WriteFile,
    EditFile,
    RunCommand,
}

impl Tool {
    const ALL: [Tool; 6] = [
        Tool::ReadFile,
        Tool::ListFiles,
        Tool::Search,
        Tool::WriteFile,
        Tool::EditFile,
        Tool::RunCommand,
    ];

    fn name(self) -> &'static str {
        match self {
            Tool::ReadFile => "read_file",
            Tool::ListFiles => "list_files",
            Tool::Search => "search",
            Tool::WriteFile => "write_file",
            Tool::EditFile => "edit_file",
            Tool::RunCommand => "run_command",
        }
    }

    fn from_name(name: &str) -> Option<Tool> {
        Tool::ALL.into_iter().find(|tool| tool.name() == name)
    }

    fn needs_write(self) -> bool {
        matches!(self, Tool::WriteFile | Tool::EditFile | Tool::RunCommand)
    }

    fn allowed(self, access: ToolAccess) -> bool {
        access == ToolAccess::ReadWrite || !self.needs_write()
    }
}

/// The tools of one agent, confined to one repository.
#[derive(Debug, Clone)]
pub struct ToolBox {
    /// Absolute and lexically normalised, as given.
    root: PathBuf,
    /// With symbolic links resolved; what confinement is checked against.
    canon_root: PathBuf,
    board_dir: PathBuf,
    canon_board: PathBuf,
    access: ToolAccess,
    command_timeout: Duration,
    env: CommandEnv,
}

/// Environment changes for commands: variables to set, and variables (such as the API key)
/// that a command must never see, since its output goes back to the model and the transcript.
#[derive(Debug, Clone, Default)]
pub struct CommandEnv {
    pub set: Vec<(String, String)>,
    pub hidden: Vec<String>,
}

/// How a shell command ended, for callers outside the tool loop (test command, gates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    /// `None` when it timed out or was killed by a signal.
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// stdout and stderr together, cut to head and tail.
    pub output: String,
}

/// Runs `sh -c command` in `dir` with the same process-group handling as `run_command`.
pub async fn run_shell_command(
    command: &str,
    dir: &Path,
    limit: Duration,
    env: &CommandEnv,
) -> Result<ShellOutput, String> {
    let result = run_shell(command, dir, limit, env).await?;
    Ok(ShellOutput {
        exit_code: result.status.and_then(|s| s.code()),
        timed_out: result.status.is_none(),
        output: result.output.render(),
    })
}

impl ToolBox {
    pub fn new(
        root: PathBuf,
        board_dir: PathBuf,
        access: ToolAccess,
        command_timeout: Duration,
    ) -> Self {
        let root = absolute_normalized(&root);
        let board_dir = absolute_normalized(&board_dir);
        // A root that cannot be canonicalised makes every later resolve fail with a clear
        // I/O error, so falling back to the lexical path here loses nothing.
        let canon_root = fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
        let canon_board = canonicalize_lenient(&board_dir).unwrap_or_else(|_| board_dir.clone());
        Self {
            root,
            canon_root,
            board_dir,
            canon_board,
            access,
            command_timeout,
            env: CommandEnv::default(),
        }
    }

    /// Sets the environment changes `run_command` applies.
    pub fn with_command_env(mut self, env: CommandEnv) -> Self {
        self.env = env;
        self
    }

    /// The OpenAI `tools` array for this agent's access.
    pub fn definitions(&self) -> Vec<Value> {
        Tool::ALL
            .into_iter()
            .filter(|tool| tool.allowed(self.access))
            .map(|tool| self.definition(tool))
            .collect()
    }

    fn definition(&self, tool: Tool) -> Value {
        let (description, parameters) = match tool {
            Tool::ReadFile => read_file_schema(),
            Tool::ListFiles => list_files_schema(),
            Tool::Search => search_schema(),
            Tool::WriteFile => write_file_schema(),
            Tool::EditFile => edit_file_schema(),
            Tool::RunCommand => run_command_schema(self.command_timeout),
        };
        json!({
            "type": "function",
            "function": { "name": tool.name(), "description": description, "parameters": parameters }
        })
    }

    /// Runs one tool call. Always returns an outcome, so the conversation keeps exactly one
    /// tool result per tool call whatever the model sent.
    pub async fn call(&self, name: &str, arguments: &str) -> ToolOutcome {
        let outcome = ToolOutcome::from_result(self.dispatch(name, arguments).await);
        tracing::debug!(tool = name, is_error = outcome.is_error, "tool call");
        outcome
    }

    async fn dispatch(&self, name: &str, arguments: &str) -> Result<String, String> {
        let tool = self.tool_for(name)?;
        let args = Args::parse(arguments)?;
        if tool == Tool::RunCommand {
            return self.run_command(&args).await;
        }
        // File tools do blocking I/O (a search may walk a large tree); keep it off the
        // runtime's worker threads so parallel stories stay responsive.
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.file_tool(tool, &args))
            .await
            .unwrap_or_else(|err| Err(format!("the tool stopped unexpectedly: {err}")))
    }

    fn tool_for(&self, name: &str) -> Result<Tool, String> {
        let Some(tool) = Tool::from_name(name) else {
            let known: Vec<&str> = Tool::ALL
                .into_iter()
                .filter(|tool| tool.allowed(self.access))
                .map(Tool::name)
                .collect();
            return Err(format!(
                "unknown tool '{name}'; available tools: {}",
                known.join(", ")
            ));
        };
        if !tool.allowed(self.access) {
            return Err(format!(
                "tool '{name}' is not available to this agent: it has read-only access"
            ));
        }
        Ok(tool)
    }

    fn file_tool(&self, tool: Tool, args: &Args) -> Result<String, String> {
        match tool {
            Tool::ReadFile => self.read_file(args),
            Tool::ListFiles => self.list_files(args),
            Tool::Search => self.search(args),
            Tool::WriteFile => self.write_file(args),
            Tool::EditFile => self.edit_file(args),
            Tool::RunCommand => unreachable!("run_command is async and dispatched separately"),
        }
    }

    /// Resolves a path the model gave to a real path inside the repository, or says why not.
    ///
    /// Relative paths resolve against the root; an empty path means the root. The path is
    /// checked twice: lexically (so `..` and absolute paths cannot leave the root) and after
    /// resolving symbolic links in its deepest existing ancestor (so a link cannot lead out of
    /// it). With `for_write` false the path must exist; with `for_write` it may be new, and
    /// its missing parent folders are then created inside the checked ancestor.
    ///
    /// The error message has no `Error: ` prefix; `call` adds it.
    pub fn resolve(&self, path: &str, for_write: bool) -> Result<PathBuf, String> {
        let requested = Path::new(if path.trim().is_empty() { "." } else { path });
        let joined = self.root.join(requested);
        let outside = || format!("path '{path}' is outside the repository");
        let lexical = normalize(&joined).ok_or_else(outside)?;
        let relative = self.relative_to_root(&lexical).ok_or_else(outside)?;
        self.check_allowed(path, relative, &lexical)?;

        let real = canonicalize_lenient(&lexical).map_err(|err| match err.kind() {
            io::ErrorKind::NotFound => format!("path '{path}' is a broken symbolic link"),
            _ => format!("cannot resolve path '{path}': {err}"),
        })?;
        let real_relative = real.strip_prefix(&self.canon_root).map_err(|_| {
            format!("path '{path}' leads outside the repository through a symbolic link")
        })?;
        self.check_allowed(path, real_relative, &real)?;

        if !for_write && fs::symlink_metadata(&real).is_err() {
            return Err(format!("path '{path}' does not exist"));
        }
        Ok(real)
    }

    fn relative_to_root<'a>(&self, lexical: &'a Path) -> Option<&'a Path> {
        // The model may quote the root as given or as it appears with links resolved.
        lexical
            .strip_prefix(&self.root)
            .or_else(|_| lexical.strip_prefix(&self.canon_root))
            .ok()
    }

    fn check_allowed(&self, shown: &str, relative: &Path, full: &Path) -> Result<(), String> {
        if relative
            .components()
            .any(|part| is_git_dir(part.as_os_str()))
        {
            return Err(format!(
                "path '{shown}' is inside .git, which agents may not touch; use run_command with git instead"
            ));
        }
        if self.in_board(full) {
            return Err(format!(
                "path '{shown}' is inside the board folder, which only agentic-sdlc itself may change"
            ));
        }
        Ok(())
    }

    fn in_board(&self, path: &Path) -> bool {
        path.starts_with(&self.board_dir) || path.starts_with(&self.canon_board)
    }

    /// The path as the model should quote it: relative to the root, `/`-separated.
    fn display(&self, real: &Path) -> String {
        let relative = real.strip_prefix(&self.canon_root).unwrap_or(real);
        let text = relative.to_string_lossy();
        if text.is_empty() {
            ".".to_string()
        } else {
            text.into_owned()
        }
    }

    fn read_file(&self, args: &Args) -> Result<String, String> {
        let path = args.string("path")?;
        let offset = args.opt_count("offset")?.unwrap_or(0);
        let limit = args.opt_count("limit")?.unwrap_or(READ_LINE_LIMIT);
        if limit == 0 {
            return Err("limit must be at least 1".to_string());
        }
        let real = self.resolve(path, false)?;
        let bytes = read_text(&real, path)?;
        slice_lines(&String::from_utf8_lossy(&bytes), offset, limit, path)
    }

    fn list_files(&self, args: &Args) -> Result<String, String> {
        let path = args.opt_string("path")?.unwrap_or(".");
        let real = self.resolve(path, false)?;
        if !real.is_dir() {
            return Err(format!(
                "'{path}' is a file, not a folder; use read_file to read it"
            ));
        }
        let mut entries: Vec<String> = sorted_entries(&real)
            .map_err(|err| format!("cannot list '{path}': {err}"))?
            .into_iter()
            .filter(|entry| {
                !is_git_dir(entry.file_name().unwrap_or_default()) && !self.in_board(entry)
            })
            .map(|entry| self.entry_line(&entry))
            .collect();
        Ok(cap_listing(&mut entries))
    }

    fn entry_line(&self, entry: &Path) -> String {
        let shown = self.display(entry);
        // Follows links on purpose: a link to a folder is listed (and usable) as a folder.
        if entry.is_dir() {
            format!("{shown}/")
        } else {
            shown
        }
    }

    fn search(&self, args: &Args) -> Result<String, String> {
        let pattern = args.string("pattern")?;
        if pattern.is_empty() {
            return Err("pattern must not be empty".to_string());
        }
        if pattern.contains('\n') {
            return Err("pattern must be a single line; search matches line by line".to_string());
        }
        let path = args.opt_string("path")?.unwrap_or(".");
        let real = self.resolve(path, false)?;
        let mut files = Vec::new();
        self.collect_files(&real, &mut files);
        let mut matches = Vec::new();
        for file in &files {
            if search_file(file, pattern, &self.display(file), &mut matches) {
                break;
            }
        }
        Ok(search_report(pattern, path, &matches))
    }

    /// Collects the files under `path` in sorted order, skipping VCS data, build output, the
    /// board and symbolic links (which could lead outside the root or loop).
    fn collect_files(&self, path: &Path, out: &mut Vec<PathBuf>) {
        if path.is_file() {
            out.push(path.to_path_buf());
            return;
        }
        let Ok(entries) = sorted_entries(path) else {
            return;
        };
        for entry in entries {
            let Ok(meta) = fs::symlink_metadata(&entry) else {
                continue;
            };
            let name = entry.file_name().unwrap_or_default();
            if meta.is_symlink() || self.in_board(&entry) || is_git_dir(name) {
                continue;
            }
            if meta.is_dir() {
                if !SEARCH_SKIP_DIRS.iter().any(|skip| name == *skip) {
                    self.collect_files(&entry, out);
                }
            } else if meta.is_file() && meta.len() <= SEARCH_FILE_SIZE_CAP {
                out.push(entry);
            }
        }
    }

    fn write_file(&self, args: &Args) -> Result<String, String> {
        let path = args.string("path")?;
        let content = args.string("content")?;
        let real = self.resolve(path, true)?;
        if real.is_dir() {
            return Err(format!("'{path}' is a folder; give a file path"));
        }
        write_atomic(&real, content.as_bytes())
            .map_err(|err| format!("cannot write '{path}': {err}"))?;
        Ok(format!("Wrote {} bytes to {path}", content.len()))
    }

    fn edit_file(&self, args: &Args) -> Result<String, String> {
        let path = args.string("path")?;
        let old = args.string("old_string")?;
        let new = args.string("new_string")?;
        let real = self.resolve(path, true)?;
        let Some(text) = read_for_edit(&real, path)? else {
            return create_by_edit(&real, path, old, new);
        };
        let updated = replace_once(&text, old, new, path)?;
        write_atomic(&real, updated.as_bytes())
            .map_err(|err| format!("cannot write '{path}': {err}"))?;
        Ok(format!("Edited {path}: replaced 1 occurrence"))
    }

    async fn run_command(&self, args: &Args) -> Result<String, String> {
        let command = args.string("command")?;
        if command.trim().is_empty() {
            return Err("command must not be empty".to_string());
        }
        let limit = self.effective_timeout(args.opt_seconds("timeout_seconds")?);
        let result = run_shell(command, &self.canon_root, limit, &self.env).await?;
        let output = result.output.render();
        match result.status {
            Some(status) => Ok(format!("{}\n{output}", describe_status(status))),
            None => Err(format!(
                "command timed out after {}\nIts process group was killed. Output so far:\n{output}",
                format_seconds(limit)
            )),
        }
    }

    /// The model may ask for less time than configured, never more.
    fn effective_timeout(&self, requested: Option<f64>) -> Duration {
        requested
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok())
            .map_or(self.command_timeout, |asked| {
                asked.min(self.command_timeout)
            })
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas

fn read_file_schema() -> (String, Value) {
    (
        format!(
            "Read a text file of the repository. Returns the raw text of lines \
             [offset, offset+limit); at most {READ_LINE_LIMIT} lines and about 100 KB per call, \
             with a note saying how to read on when the file is longer."
        ),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "offset": { "type": "integer", "minimum": 0, "description": "First line to return, 0-based. Default 0." },
                "limit": { "type": "integer", "minimum": 1, "description": format!("Number of lines to return. Default {READ_LINE_LIMIT}.") }
            },
            "required": ["path"]
        }),
    )
}

fn list_files_schema() -> (String, Value) {
    (
        "List the entries of a folder of the repository (not recursive). Folders end with '/'."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "Folder relative to the repository root. Default: the root." }
            }
        }),
    )
}

fn search_schema() -> (String, Value) {
    (
        format!(
            "Search text files for a literal, case-sensitive substring (not a regex), recursively. \
             Skips .git, target/, node_modules/ and binary files. Returns 'path:line: text' lines, \
             at most {SEARCH_MATCH_CAP}."
        ),
        json!({
            "type": "object",
            "properties": {
                "pattern": { "type": "string", "description": "Literal text to find within a line." },
                "path": { "type": "string", "description": "File or folder to search, relative to the repository root. Default: the root." }
            },
            "required": ["pattern"]
        }),
    )
}

fn write_file_schema() -> (String, Value) {
    (
        "Create or overwrite a file with the given content. Parent folders are created."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "content": { "type": "string", "description": "The complete new content of the file." }
            },
            "required": ["path", "content"]
        }),
    )
}

fn edit_file_schema() -> (String, Value) {
    (
        "Replace one exact occurrence of old_string in a file with new_string. old_string must \
         match exactly once, whitespace included; add surrounding lines to make it unique. An \
         empty old_string creates a file that does not exist yet."
            .to_string(),
        json!({
            "type": "object",
            "properties": {
                "path": { "type": "string", "description": "File path relative to the repository root." },
                "old_string": { "type": "string", "description": "Exact text to replace." },
                "new_string": { "type": "string", "description": "Replacement text." }
            },
            "required": ["path", "old_string", "new_string"]
        }),
    )
}

fn run_command_schema(timeout: Duration) -> (String, Value) {
    (
        format!(
            "Run a shell command (sh -c) in the repository root, without input. Returns the exit \
             code and the combined stdout and stderr, cut to its head and tail when long. The \
             command and everything it started are killed after the timeout (at most {}).",
            format_seconds(timeout)
        ),
        json!({
            "type": "object",
            "properties": {
                "command": { "type": "string", "description": "The shell command line." },
                "timeout_seconds": { "type": "number", "exclusiveMinimum": 0, "description": "Shorter timeout for this command, in seconds." }
            },
            "required": ["command"]
        }),
    )
}

// ---------------------------------------------------------------------------------------------
// Arguments

/// The JSON object of one call's arguments, read tolerantly: models send numbers as strings
/// and `null` for absent optional arguments.
struct Args(Map<String, Value>);

impl Args {
    fn parse(raw: &str) -> Result<Args, String> {
        // Some models send "" for a call without arguments.
        if raw.trim().is_empty() {
            return Ok(Args(Map::new()));
        }
        match serde_json::from_str::<Value>(raw) {
            Ok(Value::Object(map)) => Ok(Args(map)),
            Ok(Value::Null) => Ok(Args(Map::new())),
            Ok(_) => Err("arguments must be a JSON object".to_string()),
            Err(err) => Err(format!(
                "arguments are not valid JSON ({err}); send one JSON object, e.g. {{\"path\": \"src/main.rs\"}}"
            )),
        }
    }

    fn present(&self, key: &str) -> Option<&Value> {
        self.0.get(key).filter(|value| !value.is_null())
    }

    fn string(&self, key: &str) -> Result<&str, String> {
        self.opt_string(key)?
            .ok_or_else(|| format!("missing required argument '{key}'"))
    }

    fn opt_string(&self, key: &str) -> Result<Option<&str>, String> {
        match self.present(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(format!("argument '{key}' must be a string")),
        }
    }

    fn opt_count(&self, key: &str) -> Result<Option<usize>, String> {
        let Some(number) = self.opt_number(key)? else {
            return Ok(None);
        };
        if number < 0.0 || number.fract() != 0.0 {
            return Err(format!("argument '{key}' must be a non-negative integer"));
        }
        // Saturates for absurd values, which then simply read past the end.
        Ok(Some(number as usize))
    }

    fn opt_seconds(&self, key: &str) -> Result<Option<f64>, String> {
        match self.opt_number(key)? {
            Some(secs) if secs <= 0.0 => Err(format!("argument '{key}' must be positive")),
            other => Ok(other),
        }
    }

    fn opt_number(&self, key: &str) -> Result<Option<f64>, String> {
        let number = match self.present(key) {
            None => return Ok(None),
            Some(Value::Number(number)) => number.as_f64(),
            Some(Value::String(text)) => text.trim().parse::<f64>().ok(),
            Some(_) => None,
        };
        match number {
            Some(number) if number.is_finite() => Ok(Some(number)),
            _ => Err(format!("argument '{key}' must be a number")),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Paths

/// Makes a path absolute against the current folder and removes `.` and `..` lexically.
fn absolute_normalized(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    normalize(&absolute).unwrap_or(absolute)
}

/// Removes `.` and `..` without touching the file system; `None` when `..` climbs above `/`.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// Resolves symbolic links in the deepest existing ancestor of `path` and appends the rest:
/// the real location a new file would get. Fails on a broken link.
fn canonicalize_lenient(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path;
    let mut missing = Vec::new();
    while let Err(err) = fs::symlink_metadata(existing) {
        let (Some(name), Some(parent)) = (existing.file_name(), existing.parent()) else {
            return Err(err);
        };
        if err.kind() != io::ErrorKind::NotFound {
            return Err(err);
        }
        missing.push(name);
        existing = parent;
    }
    let mut real = fs::canonicalize(existing)?;
    real.extend(missing.iter().rev());
    Ok(real)
}

fn is_git_dir(name: &std::ffi::OsStr) -> bool {
    // Case-insensitive file systems treat `.GIT` as `.git`.
    name.to_str()
        .is_some_and(|name| name.eq_ignore_ascii_case(".git"))
}

fn sorted_entries(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut entries = fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.path()))
        .collect::<io::Result<Vec<_>>>()?;
    entries.sort();
    Ok(entries)
}

// ---------------------------------------------------------------------------------------------
// File tools

/// Reads a file the model wants as text; folders and binary files are refused.
fn read_text(real: &Path, shown: &str) -> Result<Vec<u8>, String> {
    if real.is_dir() {
        return Err(format!(
            "'{shown}' is a folder; use list_files to see its entries"
        ));
    }
    let bytes = fs::read(real).map_err(|err| format!("cannot read '{shown}': {err}"))?;
    if bytes.contains(&0) {
        return Err(format!(
            "'{shown}' is a binary file; only text files can be read"
        ));
    }
    Ok(bytes)
}

/// Lines `[offset, offset + limit)` of `text`, raw, cut at about `READ_BYTE_CAP` bytes, with a
/// note on how to read on when anything was left out.
fn slice_lines(text: &str, offset: usize, limit: usize, shown: &str) -> Result<String, String> {
    let total = text.split_inclusive('\n').count();
    if total == 0 {
        // Some OpenAI-compatible servers reject an empty tool message.
        return Ok("(empty file)".to_string());
    }
    if offset > 0 && offset >= total {
        return Err(format!(
            "offset {offset} is past the end of '{shown}', which has {total} lines"
        ));
    }
    let mut out = String::new();
    let mut end = offset;
    for line in text.split_inclusive('\n').skip(offset).take(limit) {
        if out.len() + line.len() > READ_BYTE_CAP {
            if out.is_empty() {
                // A single enormous line (minified code): show its start rather than nothing.
                out.push_str(&line[..floor_char_boundary(line, READ_BYTE_CAP)]);
                end += 1;
            }
            break;
        }
        out.push_str(line);
        end += 1;
    }
    if end < total {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[cut: showed lines {}-{end} of {total}; read on with offset={end}]",
            offset + 1
        ));
    }
    Ok(out)
}

fn cap_listing(entries: &mut Vec<String>) -> String {
    if entries.is_empty() {
        return "(empty folder)".to_string();
    }
    let left_out = entries.len().saturating_sub(LIST_CAP);
    entries.truncate(LIST_CAP);
    let mut out = entries.join("\n");
    if left_out > 0 {
        out.push_str(&format!("\n... and {left_out} more entries not shown"));
    }
    out
}

/// Appends the matches of one file; returns true once the match cap is reached. Unreadable and
/// binary files are skipped silently: a search is a best-effort overview.
fn search_file(file: &Path, pattern: &str, shown: &str, matches: &mut Vec<String>) -> bool {
    let Ok(bytes) = fs::read(file) else {
        return false;
    };
    if bytes.contains(&0) {
        return false;
    }
    let text = String::from_utf8_lossy(&bytes);
    for (index, line) in text.lines().enumerate() {
        if !line.contains(pattern) {
            continue;
        }
        if matches.len() == SEARCH_MATCH_CAP {
            return true;
        }
        matches.push(format!("{shown}:{}: {}", index + 1, clip_line(line)));
    }
    false
}

fn clip_line(line: &str) -> String {
    if line.len() <= SEARCH_LINE_CAP {
        return line.to_string();
    }
    format!("{} …", &line[..floor_char_boundary(line, SEARCH_LINE_CAP)])
}

fn search_report(pattern: &str, path: &str, matches: &[String]) -> String {
    if matches.is_empty() {
        return format!("No matches for '{pattern}' in '{path}'.");
    }
    let mut out = matches.join("\n");
    if matches.len() == SEARCH_MATCH_CAP {
        out.push_str(&format!(
            "\n[cut: stopped at {SEARCH_MATCH_CAP} matches; narrow the pattern or the path]"
        ));
    }
    out
}

/// Writes via a temporary file in the same folder and a rename, so a crash or a cancelled call
/// never leaves a half-written file behind.
fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::other("the path has no parent folder"))?;
    fs::create_dir_all(parent)?;
    // Temporary files are created 0600; keep an existing file's mode, else the usual 0644.
    let permissions = fs::metadata(path)
        .map(|meta| meta.permissions())
        .unwrap_or_else(|_| fs::Permissions::from_mode(0o644));
    let mut temp = tempfile::NamedTempFile::new_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().set_permissions(permissions)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|err| err.error)?;
    Ok(())
}

/// The text of a file to edit, or `None` when it does not exist yet.
fn read_for_edit(real: &Path, shown: &str) -> Result<Option<String>, String> {
    match fs::symlink_metadata(real) {
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        _ => {}
    }
    let bytes = read_text(real, shown)?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| format!("'{shown}' is not valid UTF-8; use write_file to replace it whole"))
}

fn create_by_edit(real: &Path, shown: &str, old: &str, new: &str) -> Result<String, String> {
    if !old.is_empty() {
        return Err(format!(
            "'{shown}' does not exist; to create it, call edit_file with an empty old_string or use write_file"
        ));
    }
    write_atomic(real, new.as_bytes()).map_err(|err| format!("cannot write '{shown}': {err}"))?;
    Ok(format!("Created {shown} ({} bytes)", new.len()))
}

fn replace_once(text: &str, old: &str, new: &str, shown: &str) -> Result<String, String> {
    if old.is_empty() {
        if text.is_empty() {
            return Ok(new.to_string());
        }
        return Err(format!(
            "old_string is empty but '{shown}' already exists; quote the exact text to replace"
        ));
    }
    if old == new {
        return Err("old_string and new_string are the same; nothing would change".to_string());
    }
    match count_occurrences(text, old) {
        0 => Err(format!(
            "old_string not found in '{shown}'; read the file and copy the text exactly, whitespace included"
        )),
        1 => Ok(text.replacen(old, new, 1)),
        n => Err(format!(
            "old_string matches {n} times in '{shown}'; give more context so it matches exactly once"
        )),
    }
}

/// Counts overlapping occurrences: `aa` in `aaa` is ambiguous (two places), so it counts twice.
fn count_occurrences(text: &str, needle: &str) -> usize {
    let mut count = 0;
    let mut start = 0;
    while let Some(found) = text[start..].find(needle) {
        count += 1;
        let at = start + found;
        start = at + text[at..].chars().next().map_or(1, char::len_utf8);
    }
    count
}

// ---------------------------------------------------------------------------------------------
// Commands

struct CommandResult {
    /// `None` when the command timed out.
    status: Option<ExitStatus>,
    output: Capture,
}

/// Runs `sh -c command` in `dir` in its own process group, killed as a whole at the timeout
/// and again when the shell ends, so background children never outlive the call.
async fn run_shell(
    command: &str,
    dir: &Path,
    limit: Duration,
    env: &CommandEnv,
) -> Result<CommandResult, String> {
    let mut builder = tokio::process::Command::new("sh");
    for name in &env.hidden {
        builder.env_remove(name);
    }
    builder.envs(env.set.iter().map(|(k, v)| (k, v)));
    // One stream, in the order it was written: with two pipes read side by side, a last
    // error line on stderr can be read before the stdout that preceded it and end up in the
    // cut middle instead of the tail that callers keep.
    let mut child = builder
        .arg("-c")
        .arg(format!("exec 2>&1; {command}"))
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Nothing may wait for a person: no pager, no credential prompt.
        .env("PAGER", "cat")
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|err| format!("cannot start sh: {err}"))?;
    let mut group = GroupKiller::new(child.id());
    let capture = Arc::new(Mutex::new(Capture::new(OUTPUT_BUDGET)));
    let readers = [
        child.stdout.take().map(|out| spawn_pump(out, &capture)),
        child.stderr.take().map(|err| spawn_pump(err, &capture)),
    ];

    let status = tokio::time::timeout(limit, child.wait()).await;
    group.kill();
    if status.is_err() {
        // Reap the killed shell; bounded in case it is stuck in the kernel.
        let _ = tokio::time::timeout(PIPE_GRACE, child.wait()).await;
    }
    drain(readers.into_iter().flatten()).await;

    let output = std::mem::replace(&mut *lock(&capture), Capture::new(OUTPUT_BUDGET));
    match status {
        Ok(Ok(status)) => Ok(CommandResult {
            status: Some(status),
            output,
        }),
        Ok(Err(err)) => Err(format!("waiting for the command failed: {err}")),
        Err(_) => Ok(CommandResult {
            status: None,
            output,
        }),
    }
}

/// Sends SIGKILL to a process group once, explicitly or when dropped (a cancelled call).
struct GroupKiller(Option<libc::pid_t>);

impl GroupKiller {
    fn new(pid: Option<u32>) -> Self {
        Self(pid.and_then(|pid| libc::pid_t::try_from(pid).ok()))
    }

    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: killpg only takes integers and touches no memory of ours. The group id
            // is the shell's pid, which cannot be reused while the shell is unreaped or any
            // member of its group is alive; an empty group just yields ESRCH.
            unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupKiller {
    fn drop(&mut self) {
        self.kill();
    }
}

fn spawn_pump<R>(reader: R, capture: &Arc<Mutex<Capture>>) -> JoinHandle<()>
where
    R: AsyncRead + Unpin + Send + 'static,
{
    let capture = Arc::clone(capture);
    tokio::spawn(pump(reader, capture))
}

/// Copies a pipe into the shared capture until it closes; both pipes feed one capture so the
/// output keeps roughly the order it was written in.
async fn pump<R: AsyncRead + Unpin>(mut reader: R, capture: Arc<Mutex<Capture>>) {
    let mut buf = [0u8; 8192];
    while let Ok(read @ 1..) = reader.read(&mut buf).await {
        lock(&capture).push(&buf[..read]);
    }
}

/// Waits a short while for the pipes to close, then gives up on them: a process that escaped
/// the group must not keep the call hanging.
async fn drain(readers: impl Iterator<Item = JoinHandle<()>>) {
    let deadline = Instant::now() + PIPE_GRACE;
    for mut reader in readers {
        if tokio::time::timeout_at(deadline, &mut reader)
            .await
            .is_err()
        {
            reader.abort();
        }
    }
}

fn lock(capture: &Mutex<Capture>) -> std::sync::MutexGuard<'_, Capture> {
    // A panicking pump leaves plain bytes behind; they are still worth showing.
    capture.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Keeps the first and the last half of the output budget as it streams in, so a command that
/// prints gigabytes costs bounded memory.
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    omitted: usize,
    budget: usize,
}

impl Capture {
    fn new(budget: usize) -> Self {
        Self {
            head: Vec::new(),
            tail: VecDeque::new(),
            omitted: 0,
            budget,
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = (self.budget / 2).saturating_sub(self.head.len());
        let (to_head, to_tail) = bytes.split_at(room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        self.tail.extend(to_tail);
        let excess = self
            .tail
            .len()
            .saturating_sub(self.budget - self.budget / 2);
        self.tail.drain(..excess);
        self.omitted += excess;
    }

    fn render(&self) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        if self.omitted == 0 {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return non_empty(String::from_utf8_lossy(&all).into_owned());
        }
        // Cut on character boundaries so the ends do not show broken characters.
        let head_end = utf8_complete_prefix(&self.head);
        let tail_start = utf8_continuation_prefix(&tail);
        let omitted = self.omitted + (self.head.len() - head_end) + tail_start;
        join_cut(
            &String::from_utf8_lossy(&self.head[..head_end]),
            &String::from_utf8_lossy(&tail[tail_start..]),
            omitted,
        )
    }
}

fn non_empty(text: String) -> String {
    if text.is_empty() {
        "(no output)".to_string()
    } else {
        text
    }
}

/// Length of `bytes` without a trailing, incomplete UTF-8 sequence.
fn utf8_complete_prefix(bytes: &[u8]) -> usize {
    let start = bytes.len().saturating_sub(3);
    for at in (start..bytes.len()).rev() {
        let byte = bytes[at];
        if byte & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let width = match byte {
            0xF0..=0xFF => 4,
            0xE0..=0xEF => 3,
            0xC0..=0xDF => 2,
            _ => 1,
        };
        return if at + width > bytes.len() {
            at
        } else {
            bytes.len()
        };
    }
    bytes.len()
}

/// Number of leading continuation bytes (the end of a character cut off at the front).
fn utf8_continuation_prefix(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .take_while(|byte| *byte & 0xC0 == 0x80)
        .count()
}

fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code: {code}"),
        (None, Some(signal)) => format!("exit code: none (killed by signal {signal})"),
        (None, None) => "exit code: unknown".to_string(),
    }
}

fn format_seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0}s")
    } else {
        format!("{secs:.1}s")
    }
}

/// Keeps the first and last halves of `text` (about `max_bytes` in all, cut on character
/// boundaries) with a line saying how much was left out between them. Errors and summaries
/// usually sit at the start or the end of command output, rarely in the middle.
pub fn head_tail(text: &str, max_bytes: usize) -> String {
    if text.len() <= max_bytes {
        return text.to_string();
    }
    let head_end = floor_char_boundary(text, max_bytes / 2);
    let tail_start = ceil_char_boundary(text, text.len() - (max_bytes - max_bytes / 2));
    join_cut(
        &text[..head_end],
        &text[tail_start..],
        tail_start - head_end,
    )
}

fn join_cut(head: &str, tail: &str, omitted: usize) -> String {
    let newline = if head.ends_with('\n') { "" } else { "\n" };
    format!("{head}{newline}... [{omitted} bytes omitted] ...\n{tail}")
}

fn floor_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

fn ceil_char_boundary(text: &str, mut index: usize) -> usize {
    index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index += 1;
    }
    index
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use tempfile::TempDir;

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
            let tools = ToolBox::new(root.clone(), board, access, Duration::from_secs(30));
            Self { dir, root, tools }
        }

        fn outside(&self) -> PathBuf {
            self.dir.path().join("outside")
        }

        async fn call(&self, name: &str, args: Value) -> ToolOutcome {
            self.tools.call(name, &args.to_string()).await
        }
    }

    fn rw() -> Fixture {
        Fixture::new(ToolAccess::ReadWrite)
    }

    #[track_caller]
    fn assert_error(outcome: &ToolOutcome, needle: &str) {
        assert!(outcome.is_error, "expected an error, got {outcome:?}");
        assert!(outcome.content.starts_with("Error: "), "{outcome:?}");
        assert!(
            outcome.content.contains(needle),
            "{outcome:?} lacks {needle:?}"
        );
    }

    #[track_caller]
    fn assert_ok(outcome: &ToolOutcome) -> &str {
        assert!(!outcome.is_error, "expected success, got {outcome:?}");
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
    async fn edit_file_replaces_exactly_one_match() {
        let fx = rw();
        fs::write(fx.root.join("e.txt"), "one two two\n").unwrap();
        let edit = |old: &str| json!({"path": "e.txt", "old_string": old, "new_string": "three"});
        assert_error(&fx.call("edit_file", edit("four")).await, "not found");
        assert_error(
            &fx.call("edit_file", edit("two")).await,
            "matches 2 times in 'e.txt'; give more context",
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
        let out = fx
            .call("write_file", json!({"path": "../x", "content": ""}))
            .await;
        assert_error(&out, "outside the repository");
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
        for path in ["escape/secret.txt", "secret.txt", "escape"] {
            let out = fx.call("read_file", json!({ "path": path })).await;
            assert_error(&out, "outside the repository through a symbolic link");
        }
        let out = fx
            .call(
                "write_file",
                json!({"path": "escape/new.txt", "content": "x"}),
            )
            .await;
        assert_error(&out, "symbolic link");
        assert!(!fx.outside().join("new.txt").exists());
        let out = fx.call("search", json!({"pattern": "secret"})).await;
        assert_eq!(assert_ok(&out), "No matches for 'secret' in '.'.");
        let out = fx.call("read_file", json!({"path": "inside.md"})).await;
        assert_ok(&out);
    }

    #[tokio::test]
    async fn git_folder_is_refused() {
        let fx = rw();
        for path in [".git/config", ".git", "src/../.git/config"] {
            let out = fx.call("read_file", json!({ "path": path })).await;
            assert_error(&out, "inside .git");
        }
        let out = fx
            .call(
                "write_file",
                json!({"path": ".git/hooks/pre-commit", "content": "x"}),
            )
            .await;
        assert_error(&out, "inside .git");
        // A link to .git is no way around it.
        symlink(fx.root.join(".git"), fx.root.join("g")).unwrap();
        let out = fx.call("read_file", json!({"path": "g/config"})).await;
        assert_error(&out, "inside .git");
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
        let command = "sleep 30 & echo $! > bg.pid; echo begun; sleep 30";
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
        let pid = fs::read_to_string(fx.root.join("bg.pid")).unwrap();
        assert!(process_gone(pid.trim()), "background sleep {pid} survived");
    }

    /// True once the process is gone or a zombie waiting for init to reap it.
    fn process_gone(pid: &str) -> bool {
        for _ in 0..40 {
            match fs::read_to_string(format!("/proc/{pid}/stat")) {
                Err(_) => return true,
                Ok(stat) if stat.contains(") Z") => return true,
                Ok(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        false
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

    #[test]
    fn head_tail_keeps_both_ends_on_char_boundaries() {
        assert_eq!(head_tail("short", 16), "short");
        let text = format!("{}{}", "a".repeat(50), "b".repeat(50));
        assert_eq!(
            head_tail(&text, 20),
            format!(
                "{}\n... [80 bytes omitted] ...\n{}",
                "a".repeat(10),
                "b".repeat(10)
            )
        );
        // 100 bytes of two-byte characters: 7 head bytes round down to 6.
        let accents = "é".repeat(50);
        assert_eq!(
            head_tail(&accents, 15),
            format!("ééé\n... [86 bytes omitted] ...\n{}", "é".repeat(4))
        );
    }

    #[test]
    fn capture_cuts_raw_bytes_on_char_boundaries() {
        let mut capture = Capture::new(8);
        capture.push("aéé".as_bytes()); // 5 bytes: head keeps "aé" and half of the next é
        capture.push(&[b'x'; 10]); // the tail keeps the last 4 bytes: "xzé"
        capture.push("zé".as_bytes());
        let text = capture.render();
        assert_eq!(text, "aé\n... [11 bytes omitted] ...\nxzé");
    }
}
