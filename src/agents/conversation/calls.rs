//! The calls of one reply, however they came, and how they and their results go into the
//! history the model sees next.

use serde_json::Value;

use crate::agents::llm::{generated_call_id, ChatMessage, ChatReply, ToolCall};
use crate::agents::prompts;
use crate::agents::text_calls::{extract, without_calls, CallForm, Expect, TextCall};
use crate::config::ToolProtocol;

/// The tool that runs a shell command, which a ```bash fence stands for under `text`.
const SHELL_TOOL: &str = "run_command";
/// The tools file edits written in text stand for; an agent without them writes none.
const EDIT_TOOLS: [&str; 2] = ["write_file", "edit_file"];

/// How replies are read for calls.
pub(super) struct Reading {
    protocol: ToolProtocol,
    names: Vec<String>,
    default_file: Option<String>,
    /// A ```bash fence is a command only for a model told of the command tool: one that was
    /// told only to write files whole uses shell fences to tell a person what to run (`git add
    /// .`, `pip install pytest`, measured with a 1.5B model for 25 turns on end).
    shell_fences: bool,
    /// Under the same telling, a fenced call naming no tool beside files written whole is the
    /// model copying the repository map's file names into call syntax (`{"name":
    /// "test_textkit.py"}`): answering it "unknown tool" every turn kept a 1.5B model from ever
    /// reaching the test run that would have said what was missing.
    unknown_beside_edits: bool,
}

impl Reading {
    pub(super) fn new(
        protocol: ToolProtocol,
        definitions: &[Value],
        default_file: Option<&str>,
        tools_untold: bool,
    ) -> Reading {
        Reading {
            protocol,
            shell_fences: !tools_untold,
            unknown_beside_edits: tools_untold,
            default_file: default_file.map(str::to_string),
            names: definitions
                .iter()
                .filter_map(tool_name)
                .map(str::to_string)
                .collect(),
        }
    }

    /// How many of `calls` write files with a tool this agent is not given: a read-only agent
    /// that tries to make the change it was to find or plan.
    pub(super) fn writes_not_offered(&self, calls: &[(ToolCall, CallForm)]) -> usize {
        calls
            .iter()
            .filter(|(call, _)| {
                EDIT_TOOLS.contains(&call.name.as_str()) && !self.names.contains(&call.name)
            })
            .count()
    }

    /// Whether the calls `turn` read from `content` are the steps of a written answer rather
    /// than actions: an agent that only reads, under `text`, writing two calls or more amid at
    /// least [`STEPS_PROSE`] characters of its own. Asked for a plan, the 1.5B model wrote it
    /// whole in its first reply, each step with the call it would make (in a fence, or quoted
    /// in a sentence); run as actions, the first ran, and it went on reading for nine turns and
    /// wrote its plan again, 80 s more in five of six plans (textkit, 2026-11-29).
    pub(super) fn steps_of_an_answer(&self, turn: &TurnCalls, content: &str) -> bool {
        let reads_only = !EDIT_TOOLS
            .iter()
            .any(|tool| self.names.iter().any(|n| n == tool));
        reads_only
            && self.text_only()
            && turn.calls.len() + turn.left_out >= 2
            && self.text_without_calls(content, true).chars().count() >= STEPS_PROSE
    }

    /// The tools are described in the prompt instead of sent, and one action per reply runs.
    pub(super) fn text_only(&self) -> bool {
        self.protocol == ToolProtocol::Text && !self.names.is_empty()
    }

    /// The calls of `reply`: its native calls, else (unless the protocol is `native`) the calls
    /// written in its text. `tools_sent` says whether the request carried the tools natively,
    /// which decides how the calls go into the history.
    pub(super) fn read(&self, reply: &ChatReply, tools_sent: bool) -> TurnCalls {
        let as_text = self.text_only() || !tools_sent;
        if !reply.tool_calls.is_empty() {
            return TurnCalls {
                calls: reply
                    .tool_calls
                    .iter()
                    .map(|call| (call.clone(), CallForm::Native))
                    .collect(),
                edits: Vec::new(),
                unreadable: None,
                as_text: false,
                left_out: 0,
                stutters: false,
            };
        }
        let none = TurnCalls {
            calls: Vec::new(),
            edits: Vec::new(),
            unreadable: None,
            as_text,
            left_out: 0,
            stutters: false,
        };
        if self.protocol == ToolProtocol::Native || self.names.is_empty() {
            return none;
        }
        let Some(content) = reply.content.as_deref() else {
            return none;
        };
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        let found = extract(
            content,
            Expect {
                tools: &names,
                any_name: self.text_only(),
                bash: self.text_only() && self.shell_fences && names.contains(&SHELL_TOOL),
                edits: EDIT_TOOLS.iter().all(|tool| names.contains(tool)),
                default_file: self.default_file.as_deref(),
            },
        );
        let mut calls = with_ids(found.calls);
        if self.unknown_beside_edits && !found.edits.is_empty() {
            calls.retain(|(call, _)| self.names.contains(&call.name));
        }
        let stutters = stutters(&calls);
        let mut left_out = 0;
        if self.text_only() && calls.len() > 1 {
            left_out = calls.len() - 1;
            calls.truncate(1);
        }
        TurnCalls {
            calls,
            edits: with_ids(found.edits),
            unreadable: found.unreadable,
            as_text,
            left_out,
            stutters,
        }
    }

    /// An answer without the calls written into it, which were not run (see
    /// `text_calls::without_calls`): calls to this agent's tools, and calls to any other tool
    /// name too. A plan's steps of `write_file` calls, a tool the plan agent does not have,
    /// taught the implement agent that read them to answer in JSON calls (the inventory
    /// benchmark, 2026-11-29).
    pub(super) fn answer_without_calls(&self, answer: &str) -> String {
        self.text_without_calls(answer, true)
    }

    /// `text` without the calls to this agent's tools written into it, and with `any_name`
    /// without calls to any tool name too: the prose of a reply (a fence of `add_file` and
    /// `run_tests` calls is no plan).
    fn text_without_calls(&self, text: &str, any_name: bool) -> String {
        let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
        without_calls(
            text,
            Expect {
                tools: &names,
                any_name,
                bash: false,
                edits: false,
                default_file: None,
            },
        )
    }
}

/// The prose, calls left out, of a reply whose calls are the steps of its answer: the 1.5B
/// model's plans with calls as steps had 300 to 2,700 characters of their own; its replies that
/// act are a call and a line.
const STEPS_PROSE: usize = 250;

/// Times one call may appear in a reply before the reply is a model repeating itself.
const STUTTER_CALLS: usize = 3;

/// Whether one call (name and arguments) appears [`STUTTER_CALLS`] times or more among `calls`.
fn stutters(calls: &[(ToolCall, CallForm)]) -> bool {
    calls.iter().any(|(call, _)| {
        calls
            .iter()
            .filter(|(other, _)| other.name == call.name && other.arguments == call.arguments)
            .count()
            >= STUTTER_CALLS
    })
}

fn with_ids(found: Vec<TextCall>) -> Vec<(ToolCall, CallForm)> {
    found
        .into_iter()
        .map(|call| {
            (
                ToolCall {
                    id: generated_call_id(),
                    name: call.name,
                    arguments: call.arguments,
                },
                call.form,
            )
        })
        .collect()
}

/// The calls of one reply.
pub(super) struct TurnCalls {
    pub(super) calls: Vec<(ToolCall, CallForm)>,
    /// Files the reply writes out (whole files in fences, SEARCH/REPLACE blocks). Alone in a
    /// reply they are the model's change and end its turn, as in aider's edit formats; with
    /// calls they run first, as calls.
    pub(super) edits: Vec<(ToolCall, CallForm)>,
    /// A call the model wrote that could not be read, and why.
    pub(super) unreadable: Option<String>,
    /// The calls and their results go into the history as text (an assistant message and a
    /// user message), not as native tool messages.
    as_text: bool,
    /// Further actions of a reply under `text`, which runs only the first.
    left_out: usize,
    /// The reply writes one call over and over (a 1.5B model's plan wrote `read_file
    /// textkit.py` until its 1,536-token cap, four replies in a row: six minutes).
    pub(super) stutters: bool,
}

impl TurnCalls {
    /// Adds the reply and the results (one per call, in order) to the history.
    pub(super) fn into_history(
        self,
        reply: &ChatReply,
        results: Vec<String>,
        messages: &mut Vec<ChatMessage>,
    ) {
        if self.as_text || self.calls.iter().all(|(_, form)| is_edit(*form)) {
            messages.push(ChatMessage::Assistant {
                content: reply.content.clone(),
                tool_calls: Vec::new(),
            });
            let observations: Vec<String> = self
                .calls
                .iter()
                .zip(&results)
                .map(|((call, form), result)| prompts::text_result(&call.name, *form, result))
                .collect();
            messages.push(ChatMessage::User(prompts::text_results(
                &observations,
                self.left_out,
            )));
            return;
        }
        // Calls read from text stand in the history as the native calls they mean, so the
        // model sees its calls in the form its chat template expects.
        let native = self.calls.iter().all(|(_, form)| *form == CallForm::Native);
        messages.push(ChatMessage::Assistant {
            content: if native { reply.content.clone() } else { None },
            tool_calls: self.calls.iter().map(|(call, _)| call.clone()).collect(),
        });
        for ((call, _), content) in self.calls.into_iter().zip(results) {
            messages.push(ChatMessage::Tool {
                tool_call_id: call.id,
                content,
            });
        }
    }
}

/// Why a reply cut off (at the cap or by the loop watch) still holds its files whole, as the
/// transcript names it: it wrote one path twice (it was going round files it had written), or
/// it ended outside any fence (it was going round its prose after them). Either way nothing
/// was cut short, and the change is checked as a finished one; "write again what was cut
/// short" brought back the same reply. Recorded from the 1.5B model (textkit `mean-empty`,
/// 2026-12-05): the files, then "Expected Output", "Fix", "Verify" round and round, cut four
/// times in 4.5 minutes before the tests ran.
pub(super) fn whole_files_cut_off(
    edits: &[(ToolCall, CallForm)],
    text: &str,
) -> Option<&'static str> {
    if writes_a_path_twice(edits) {
        Some("went_round_files")
    } else if ends_inside_a_fence(text) == Some(false) {
        Some("cut_after_files")
    } else {
        None
    }
}

/// Whether `text` ends inside a code fence it opened (a file cut short); `None` when it has
/// no fence at all (its statements may be a file cut short all the same).
fn ends_inside_a_fence(text: &str) -> Option<bool> {
    let mut fenced = false;
    let mut open: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        let marker: String = line
            .chars()
            .take_while(|c| *c == '`' || *c == '~')
            .collect();
        let same_char = marker.chars().all(|c| marker.starts_with(c));
        if marker.len() < 3 || !same_char {
            continue;
        }
        fenced = true;
        open = match open {
            None => Some(marker),
            Some(opened) => {
                let closes = marker.starts_with(&opened[..1])
                    && marker.len() >= opened.len()
                    && line[marker.len()..].trim().is_empty();
                (!closes).then_some(opened)
            }
        };
    }
    fenced.then_some(open.is_some())
}

/// Whether a reply's whole files write one path twice.
fn writes_a_path_twice(edits: &[(ToolCall, CallForm)]) -> bool {
    let mut written: Vec<String> = Vec::new();
    for (call, form) in edits {
        if *form != CallForm::FileFence {
            continue;
        }
        let path = serde_json::from_str::<Value>(&call.arguments)
            .ok()
            .and_then(|arguments| arguments.get("path")?.as_str().map(str::to_string));
        if let Some(path) = path {
            if written.contains(&path) {
                return true;
            }
            written.push(path);
        }
    }
    false
}

/// The name of an OpenAI function definition.
pub(super) fn tool_name(definition: &Value) -> Option<&str> {
    definition
        .get("function")
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
}

/// A call that is a file edit written as text, not a call the model meant as one.
pub(super) fn is_edit(form: CallForm) -> bool {
    matches!(form, CallForm::FileFence | CallForm::SearchReplace)
}
