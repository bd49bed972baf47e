//! A fake OpenAI-compatible chat-completions server on 127.0.0.1, so tests drive the real client
//! (async-openai over HTTP) without a network or a paid API.
//!
//! Replies are scripted per agent role, read from the first line of the system message
//! (`You are the agentic-sdlc <role> agent.`; a review perspective names itself at the end of
//! the first user message): replies queued for one story first (matched by a
//! text in the user message, such as its title), then replies queued for the role, then the
//! first standing rule whose text appears in the user message, then the role's default. Every
//! request is recorded so tests can assert what the agents sent.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{method, path_regex};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// An assistant message with this content.
    Text(String),
    /// An assistant message asking for tool calls: (name, arguments).
    ToolCalls(Vec<(String, Value)>),
    /// An HTTP error, optionally with a `Retry-After` header.
    Status {
        code: u16,
        body: String,
        retry_after: Option<String>,
    },
    /// A raw body with status 200, for malformed or unusual server answers.
    Raw(String),
    /// An assistant message cut off by the reply cap (finish_reason `length`).
    Truncated(String),
    /// Another reply, sent after a delay (to run into llm.timeoutSeconds).
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    pub fn text(content: impl Into<String>) -> Reply {
        Reply::Text(content.into())
    }

    pub fn tool(name: &str, arguments: Value) -> Reply {
        Reply::ToolCalls(vec![(name.to_string(), arguments)])
    }

    pub fn status(code: u16) -> Reply {
        Reply::Status {
            code,
            body:
                json!({"error": {"message": format!("fake error {code}"), "type": "server_error"}})
                    .to_string(),
            retry_after: None,
        }
    }

    pub fn truncated(content: impl Into<String>) -> Reply {
        Reply::Truncated(content.into())
    }

    pub fn delayed(delay: Duration, reply: Reply) -> Reply {
        Reply::Delayed(delay, Box::new(reply))
    }

    /// A 400 with this error message, as OpenAI-compatible servers word their refusals.
    pub fn bad_request(message: &str) -> Reply {
        Reply::Status {
            code: 400,
            body: json!({"error": {"message": message, "type": "invalid_request_error"}})
                .to_string(),
            retry_after: None,
        }
    }

    /// A review perspective's verdict.
    pub fn verdict(passed: bool, issues: Value) -> Reply {
        Reply::Text(json!({"passed": passed, "issues": issues}).to_string())
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub role: String,
    pub body: Value,
    pub authorization: Option<String>,
    /// When it arrived: which requests waited for an answer before them.
    pub received: std::time::Instant,
}

impl Recorded {
    /// Whether this request continues an agent call: it carries the results of the tool calls
    /// the model asked for in the previous answer.
    pub fn continues_a_call(&self) -> bool {
        self.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["role"] == "tool")
    }

    /// The content of the last message: what the tool said last (feedback, a tool result).
    pub fn last_message(&self) -> String {
        self.body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string()
    }

    /// The content of the user message (the first one).
    pub fn user_message(&self) -> String {
        user_message_of(&self.body)
    }

    pub fn system_message(&self) -> String {
        self.body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A standing answer for the requests of one role whose user message contains `needle`.
struct Rule {
    role: String,
    needle: String,
    reply: Reply,
}

fn user_message_of(body: &Value) -> String {
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// How the fake reports token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum UsageReport {
    /// 100 prompt and 20 completion tokens for every request.
    #[default]
    Fixed,
    /// Counted from the request and the reply at four characters a token, as a real server
    /// counts what it was sent.
    BySize,
    /// No `usage` field at all, as some local servers answer.
    Omitted,
}

#[derive(Default)]
struct Script {
    /// (role, text the user message must contain, reply), oldest first.
    targeted: Vec<(String, String, Reply)>,
    rules: Vec<Rule>,
    queued: HashMap<String, VecDeque<Reply>>,
    defaults: HashMap<String, Reply>,
    log: Vec<Recorded>,
    calls: u64,
    usage: UsageReport,
    /// Tool-call probes answered (docs/design.md §21); they are not in `log`.
    probes: u64,
    /// The answer to a probe; `None`: a native call, as a model with tool calling makes.
    probe_reply: Option<Reply>,
}

/// The one tool of the run's tool-call probe.
const PROBE_TOOL: &str = "agentic_sdlc_ready";

/// The file the default implement answer writes, so a feature's implementation changes a file
/// (docs/design.md §15) without any script.
pub const DEFAULT_CHANGE: &str = "agentic-change.txt";

/// Whether the conversation already asked for a write_file or edit_file.
fn changed_a_file(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .any(|call| {
            matches!(
                call["function"]["name"].as_str(),
                Some("write_file" | "edit_file")
            )
        })
}

/// The write a default implement answer makes first: new content every time, so a rework's
/// write is a change too. It replaces its own file on purpose, unread (`overwrite`).
fn default_write(call: u64) -> Reply {
    Reply::tool(
        "write_file",
        json!({"path": DEFAULT_CHANGE, "content": format!("implemented by request {call}\n"),
               "overwrite": true}),
    )
}

/// The default answer of each role: a story goes from backlog to done with no script at all.
/// The implement agent writes [`DEFAULT_CHANGE`] unless it already changed a file in this
/// conversation, then answers with its notes.
fn default_reply(role: &str, body: &Value, call: u64) -> Reply {
    match role {
        "implement" if !changed_a_file(body) => default_write(call),
        "refine" => {
            Reply::text("## Summary\nRefined summary.\n\n## Acceptance Criteria\n- [ ] It works")
        }
        "research" => Reply::text("Research findings: the code lives in src/."),
        "plan" => Reply::text("1. Change src/lib.rs\n2. Add a test"),
        "implement" => Reply::text("Implemented the story."),
        "code-review" | "security-review" | "po-review" => Reply::verdict(true, json!([])),
        "phase-review" => Reply::text("APPROVE"),
        _ => Reply::text("ok"),
    }
}

struct Responder {
    script: Arc<Mutex<Script>>,
    delay: Option<Duration>,
}

fn role_of(body: &Value) -> String {
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let role = system
        .split("You are the agentic-sdlc ")
        .nth(1)
        .and_then(|rest| rest.split(" agent.").next())
        .unwrap_or("unknown");
    if role != "review" {
        return role.to_string();
    }
    // The three review perspectives share their system message; each names itself at the end
    // of its first user message.
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    user.rsplit("## Your perspective (")
        .next()
        .filter(|_| user.contains("## Your perspective ("))
        .and_then(|rest| rest.split(')').next())
        .unwrap_or(role)
        .to_string()
}

impl Respond for Responder {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let probing = body["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["function"]["name"] == PROBE_TOOL));
        if probing {
            let mut script = self.script.lock().unwrap();
            script.probes += 1;
            let reply = script
                .probe_reply
                .clone()
                .unwrap_or_else(|| Reply::tool(PROBE_TOOL, json!({})));
            let usage = script.usage;
            drop(script);
            return render(reply, 0, &body, usage);
        }
        let role = role_of(&body);
        let mut script = self.script.lock().unwrap();
        script.calls += 1;
        let call = script.calls;
        script.log.push(Recorded {
            role: role.clone(),
            body: body.clone(),
            authorization: request
                .headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(String::from),
            received: std::time::Instant::now(),
        });
        let user = user_message_of(&body);
        let targeted = script
            .targeted
            .iter()
            .position(|(r, marker, _)| *r == role && user.contains(marker.as_str()))
            .map(|index| script.targeted.remove(index).2);
        let reply = targeted
            .or_else(|| script.queued.get_mut(&role).and_then(VecDeque::pop_front))
            .or_else(|| {
                script
                    .rules
                    .iter()
                    .find(|rule| rule.role == role && user.contains(&rule.needle))
                    .map(|rule| rule.reply.clone())
            })
            .or_else(|| {
                // A text set as implement's default is its notes, given after its write.
                script
                    .defaults
                    .get(&role)
                    .cloned()
                    .map(|reply| match reply {
                        Reply::Text(_) if role == "implement" && !changed_a_file(&body) => {
                            default_write(call)
                        }
                        other => other,
                    })
            })
            .unwrap_or_else(|| default_reply(&role, &body, call));
        let usage = script.usage;
        drop(script);
        let template = render(reply, call, &body, usage);
        match self.delay {
            Some(delay) => template.set_delay(delay),
            None => template,
        }
    }
}

/// Characters of what a request asks the model to read: its messages and tool definitions.
pub fn request_chars(body: &Value) -> usize {
    let messages: usize = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let content = m["content"].as_str().map_or(0, str::len);
            let calls: usize = m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    c["function"]["name"].as_str().map_or(0, str::len)
                        + c["function"]["arguments"].as_str().map_or(0, str::len)
                })
                .sum();
            content + calls
        })
        .sum();
    let tools: usize = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t.to_string().len())
        .sum();
    messages + tools
}

fn render(reply: Reply, call: u64, body: &Value, report: UsageReport) -> ResponseTemplate {
    let completion = |message: Value, finish: &str| {
        let mut answer = json!({
            "id": format!("chatcmpl-{call}"), "object": "chat.completion", "created": 0,
            "model": body["model"].clone(),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        });
        let usage = match report {
            UsageReport::Fixed => {
                json!({"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120})
            }
            UsageReport::BySize => {
                let prompt = request_chars(body).div_ceil(4);
                let reply_chars =
                    request_chars(&json!({"messages": [answer["choices"][0]["message"]]}));
                let completion = reply_chars.div_ceil(4);
                json!({"prompt_tokens": prompt, "completion_tokens": completion,
                       "total_tokens": prompt + completion})
            }
            UsageReport::Omitted => return answer,
        };
        answer["usage"] = usage;
        answer
    };
    // Whole, or as server-sent events when the request asks for a stream, as servers answer.
    let answered = |answer: Value| match body["stream"].as_bool() {
        Some(true) => streamed(&answer),
        _ => ResponseTemplate::new(200).set_body_json(answer),
    };
    match reply {
        // `{call}` becomes the request's number, for a model that says something new each time.
        Reply::Text(content) => answered(completion(
            json!({"role": "assistant", "content": content.replace("{call}", &call.to_string())}),
            "stop",
        )),
        Reply::ToolCalls(calls) => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(i, (name, args))| {
                    json!({"id": format!("call_{call}_{i}"), "type": "function",
                           "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            answered(completion(
                json!({"role": "assistant", "content": null, "tool_calls": tool_calls}),
                "tool_calls",
            ))
        }
        Reply::Status {
            code,
            body,
            retry_after,
        } => {
            let template = ResponseTemplate::new(code).set_body_raw(body, "application/json");
            match retry_after {
                Some(value) => template.insert_header("retry-after", value.as_str()),
                None => template,
            }
        }
        Reply::Raw(body) => ResponseTemplate::new(200).set_body_raw(body, "application/json"),
        Reply::Truncated(content) => answered(completion(
            json!({"role": "assistant", "content": content}),
            "length",
        )),
        Reply::Delayed(delay, reply) => render(*reply, call, body, report).set_delay(delay),
    }
}

/// A whole chat completion as the events of a stream: the message as one delta (its calls
/// numbered), the finish reason, the usage in an event of its own, then `[DONE]`.
fn streamed(answer: &Value) -> ResponseTemplate {
    let choice = &answer["choices"][0];
    let mut delta = choice["message"].clone();
    if let Some(calls) = delta["tool_calls"].as_array_mut() {
        for (index, call) in calls.iter_mut().enumerate() {
            call["index"] = json!(index);
        }
    }
    let event = |choices: Value| {
        json!({"id": answer["id"], "object": "chat.completion.chunk", "created": 0,
               "model": answer["model"], "choices": choices})
    };
    let mut events = vec![
        event(json!([{"index": 0, "delta": delta, "finish_reason": null}])),
        event(json!([{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}])),
    ];
    if answer.get("usage").is_some() {
        let mut usage = event(json!([]));
        usage["usage"] = answer["usage"].clone();
        events.push(usage);
    }
    let mut text: String = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    text.push_str("data: [DONE]\n\n");
    ResponseTemplate::new(200).set_body_raw(text, "text/event-stream")
}

pub struct FakeLlm {
    server: MockServer,
    script: Arc<Mutex<Script>>,
}

impl FakeLlm {
    pub async fn start() -> FakeLlm {
        FakeLlm::start_with_delay(None).await
    }

    /// Every answer comes after `delay`, like a real model thinking.
    pub async fn start_with_delay(delay: Option<Duration>) -> FakeLlm {
        let server = MockServer::start().await;
        let script = Arc::new(Mutex::new(Script::default()));
        Mock::given(method("POST"))
            .and(path_regex(r"/chat/completions$"))
            .respond_with(Responder {
                script: Arc::clone(&script),
                delay,
            })
            .mount(&server)
            .await;
        FakeLlm { server, script }
    }

    /// How token counts are reported from now on (100 + 20 per request until changed).
    pub fn report_usage(&self, report: UsageReport) -> &Self {
        self.script.lock().unwrap().usage = report;
        self
    }

    /// Answers `GET /models` with these ids, as a server that lists its models does; with
    /// `key`, only a request bearing it gets the list, any other a 401 (a refused key).
    /// Without this call the fake has no such endpoint (404), which the tool takes as "no list".
    pub async fn serve_models(&self, ids: &[&str], key: Option<&str>) {
        let data: Vec<Value> = ids
            .iter()
            .map(|id| json!({"id": id, "object": "model", "owned_by": "fake"}))
            .collect();
        let listed =
            ResponseTemplate::new(200).set_body_json(json!({"object": "list", "data": data}));
        let Some(key) = key else {
            Mock::given(method("GET"))
                .and(path_regex(r"/models$"))
                .respond_with(listed)
                .mount(&self.server)
                .await;
            return;
        };
        Mock::given(method("GET"))
            .and(path_regex(r"/models$"))
            .and(wiremock::matchers::header(
                "authorization",
                format!("Bearer {key}").as_str(),
            ))
            .respond_with(listed)
            .with_priority(1)
            .mount(&self.server)
            .await;
        Mock::given(method("GET"))
            .and(path_regex(r"/models$"))
            .respond_with(ResponseTemplate::new(401).set_body_json(json!({
                "error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                          "code": "invalid_api_key"}
            })))
            .with_priority(2)
            .mount(&self.server)
            .await;
    }

    /// Answers `GET /models` as llama.cpp does while it loads its model (503 "Loading model"),
    /// `times` times, before whatever else is mounted; `None`: for ever.
    pub async fn load_model_for(&self, times: Option<u64>) {
        let loading = Mock::given(method("GET"))
            .and(path_regex(r"/models$"))
            .respond_with(ResponseTemplate::new(503).set_body_json(json!({
                "error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}
            })))
            .with_priority(1);
        match times {
            Some(times) => loading.up_to_n_times(times),
            None => loading,
        }
        .mount(&self.server)
        .await;
    }

    /// The base URL to give the tool (`OPENAI_BASE_URL` or `llm.baseUrl`).
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.uri())
    }

    /// Queues a reply for the next request of `role` (e.g. "code-review", "implement").
    pub fn push(&self, role: &str, reply: Reply) -> &Self {
        self.script
            .lock()
            .unwrap()
            .queued
            .entry(role.to_string())
            .or_default()
            .push_back(reply);
        self
    }

    /// Queues a reply for the next request of `role` whose user message contains `marker`
    /// (a story's title, say), so concurrent stories can be scripted apart. It goes before the
    /// role's queue.
    pub fn push_for(&self, role: &str, marker: &str, reply: Reply) -> &Self {
        self.script
            .lock()
            .unwrap()
            .targeted
            .push((role.to_string(), marker.to_string(), reply));
        self
    }

    /// Answers every request of `role` whose user message contains `needle` (a story's title,
    /// say) with `reply`, once that role's queue is empty. The first matching rule wins.
    pub fn when(&self, role: &str, needle: &str, reply: Reply) -> &Self {
        self.script.lock().unwrap().rules.push(Rule {
            role: role.to_string(),
            needle: needle.to_string(),
            reply,
        });
        self
    }

    /// Replaces the answer `role` gets once its queue is empty. For implement, a text is the
    /// notes it gives after writing [`DEFAULT_CHANGE`], as a feature's implement must change a
    /// file (docs/design.md §15); queue a text with [`Self::push`] for an implement that changes
    /// nothing.
    pub fn set_default(&self, role: &str, reply: Reply) -> &Self {
        self.script
            .lock()
            .unwrap()
            .defaults
            .insert(role.to_string(), reply);
        self
    }

    /// Goes back to the built-in answer of `role` once its queue is empty.
    pub fn clear_default(&self, role: &str) -> &Self {
        self.script.lock().unwrap().defaults.remove(role);
        self
    }

    /// Answers the run's tool-call probe with `reply` instead of a native call.
    pub fn answer_probe_with(&self, reply: Reply) -> &Self {
        self.script.lock().unwrap().probe_reply = Some(reply);
        self
    }

    /// How many tool-call probes the fake answered (they are not among [`Self::requests`]).
    pub fn probes(&self) -> u64 {
        self.script.lock().unwrap().probes
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.script.lock().unwrap().log.clone()
    }

    pub fn requests_for(&self, role: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.role == role)
            .collect()
    }

    /// The requests that start an agent call (not the ones that answer its tool calls).
    pub fn calls(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| !r.continues_a_call())
            .collect()
    }

    /// The role of every agent call, in order: an implement that writes a file and then gives
    /// its notes is one call of two requests.
    pub fn roles(&self) -> Vec<String> {
        self.calls().into_iter().map(|r| r.role).collect()
    }
}
