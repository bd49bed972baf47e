"""What the benchmark's runners share: the project and its stories, a Python with pytest, a
recording proxy in front of the model server, the hidden acceptance tests, and the report.

Standard library only, so the runners work on any machine with Python 3.8+ and git.
"""

import http.client
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The suites: a project, its stories, and their hidden acceptance tests. `textkit` is two
# modules of functions; `inventory` a package with a class, new modules, exceptions and a
# dependent story, written before the scaffold changes it measured (and read since); `ledger` a
# package with a class, a bug, an exception class, a new module and a dependent story, written on
# 2026-11-28 before that day's scaffold changes and kept unread while they were made; `workshop` is
# held out: written 2026-12-06 by someone other than the tuner, never to be read while tuning;
# `transit` (a timetable package) was written the same way later that day, measured once unread
# on 9a54980, then read to find what the tool lacks; `cyclehire` (a bike-hire desk) was
# written 2026-12-06 by a helper and committed unread, and `tollbooth` (a toll road) the same way
# later, both read since; `sawmill` (a timber-yard order package) is held out: written 2026-12-07
# by a helper and committed unread.
SUITES = {"textkit": HERE, "inventory": HERE / "inventory", "ledger": HERE / "ledger",
          "workshop": HERE / "workshop", "transit": HERE / "transit",
          "gradebook": HERE / "gradebook", "orchard": HERE / "orchard",
          "cyclehire": HERE / "cyclehire", "tollbooth": HERE / "tollbooth",
          "sawmill": HERE / "sawmill", "foundry": HERE / "foundry"}
SUITE_NAME = "textkit"
SUITE = HERE
PROJECT = HERE / "project"
ACCEPTANCE = HERE / "acceptance"


def select_suite(name):
    """Makes `name` the suite the other functions use."""
    global SUITE_NAME, SUITE, PROJECT, ACCEPTANCE
    if name not in SUITES:
        sys.exit(f"unknown suite {name} (known: {', '.join(SUITES)})")
    SUITE_NAME = name
    SUITE = SUITES[name]
    PROJECT = SUITE / "project"
    ACCEPTANCE = SUITE / "acceptance"
CACHE = Path(os.environ.get("AGENTIC_SDLC_BENCH_CACHE", Path.home() / ".cache" / "agentic-sdlc-bench"))


def stories(keys=None):
    """The stories in the order they are added; `keys` keeps only those (and says which are unknown)."""
    all_stories = json.loads((SUITE / "stories.json").read_text())
    if not keys:
        return all_stories
    known = {story["key"] for story in all_stories}
    unknown = [key for key in keys if key not in known]
    if unknown:
        sys.exit(f"unknown stories: {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    return [story for story in all_stories if story["key"] in keys]


def story_body(story):
    criteria = "\n".join(f"- [ ] {criterion}" for criterion in story["criteria"])
    return f"## Summary\n{story['summary']}\n\n## Acceptance Criteria\n{criteria}\n"


def story_task(story):
    """The story as one task text, for a scaffold without a board."""
    return f"{story['title']}\n\n{story_body(story)}"


def binary_path(binary):
    """The binary as an absolute path when it names a file by a relative path: commands run
    in the benchmark's repository, not where the script was started."""
    return str(Path(binary).resolve()) if os.sep in binary else binary


def run(cmd, cwd=None, env=None, check=True, capture=True, timeout=None):
    result = subprocess.run(cmd, cwd=cwd, env=env, text=True, timeout=timeout,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.PIPE if capture else None)
    if check and result.returncode != 0:
        raise SystemExit(f"`{' '.join(map(str, cmd))}` failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def git(repo, *args, check=True):
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
    return run(["git", *args], cwd=repo, env=env, check=check)


def fresh_repo(work):
    """A git repository on `main` holding the benchmark project, in `work/repo`."""
    repo = Path(work) / "repo"
    shutil.copytree(PROJECT, repo)
    git(repo, "init", "--quiet", "-b", "main")
    git(repo, "config", "user.name", "Benchmark")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "commit.gpgsign", "false")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", f"The {SUITE_NAME} project")
    # The board and the config stay this clone's own: an agent's `git add .` must not put them
    # on a story branch (the tool's sandbox keeps .git out of reach where the kernel allows).
    with open(repo / ".git" / "info" / "exclude", "a") as exclude:
        exclude.write("/.agentic-sdlc/\n/.agentic-sdlc.json\n")
    return repo


def python_with_pytest():
    """A Python that has pytest: this one if it does, else a venv in the cache (made once)."""
    if run([sys.executable, "-c", "import pytest"], check=False).returncode == 0:
        return sys.executable
    venv = CACHE / "pytest-venv"
    python = venv / "bin" / "python"
    if not python.exists() or run([str(python), "-c", "import pytest"], check=False).returncode != 0:
        venv.parent.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "venv", str(venv)])
        run([str(python), "-m", "pip", "install", "-q", "pytest"])
    return str(python)


def acceptance(repo, story, python):
    """Whether the story's hidden acceptance test passes on `main` of `repo`, in a checkout of
    its own (the tests never enter the repository the agent works on)."""
    with tempfile.TemporaryDirectory(prefix="bench-accept-") as scratch:
        checkout = Path(scratch) / "main"
        git(repo, "worktree", "add", "--quiet", "--detach", str(checkout), "main")
        try:
            shutil.copy(ACCEPTANCE / story["acceptance"], checkout / ("accept_" + story["acceptance"]))
            result = run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "accept_" + story["acceptance"]], cwd=checkout, check=False, timeout=120)
            return result.returncode == 0, (result.stdout or "").strip().splitlines()[-1:] or [""]
        finally:
            git(repo, "worktree", "remove", "--force", str(checkout), check=False)


# The tool the run's tool-call probe offers (src/agents/llm/protocol_probe.rs).
PROBE_TOOL = "agentic_sdlc_ready"


class Recorder:
    """Every chat request the model server answered: tokens, and (from llama.cpp's `timings`)
    how long the prompt and the generation took."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = []
        # Chat requests sent to the server, answered or not.
        self.sent = 0
        # Of them, the run's tool-call probe (one tool named agentic_sdlc_ready): the run's own
        # request, in no story's usage.
        self.probes = 0

    def count_sent(self, body=None):
        with self.lock:
            self.sent += 1
            if body and PROBE_TOOL.encode() in body:
                self.probes += 1

    def add(self, entry):
        with self.lock:
            self.calls.append(entry)

    def totals(self, since=0):
        with self.lock:
            calls = self.calls[since:]
        sum_of = lambda key: sum(call.get(key) or 0 for call in calls)
        return {
            "sent": self.sent,
            "probes": self.probes,
            "requests": len(calls),
            "prompt_tokens": sum_of("prompt_tokens"),
            "completion_tokens": sum_of("completion_tokens"),
            "cached_tokens": sum_of("cached_tokens"),
            "prompt_seconds": round(sum_of("prompt_ms") / 1000, 1),
            "generation_seconds": round(sum_of("predicted_ms") / 1000, 1),
            "wait_seconds": round(sum_of("wall_ms") / 1000, 1),
        }

    def mark(self):
        with self.lock:
            return len(self.calls)


def start_proxy(upstream, recorder):
    """A local HTTP proxy to `upstream` (an OpenAI-compatible base URL) that records each
    answered request in `recorder`. Returns the proxy's base URL and the server to shut down."""
    target = urllib.parse.urlsplit(upstream.rstrip("/"))
    base_path = target.path

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def forward(self, method):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            path = self.path
            if path.startswith("/v1"):
                path = base_path + path[len("/v1"):]
            connection_type = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
            connection = connection_type(target.netloc, timeout=3600)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
            started = time.time()
            is_chat = method == "POST" and path.endswith("/chat/completions")
            try:
                connection.request(method, path, body=body, headers=headers)
                response = connection.getresponse()
                if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
                    if is_chat:
                        recorder.count_sent(body)
                    try:
                        self.stream(response, started)
                    finally:
                        connection.close()
                    return
                data = response.read()
            except OSError as err:
                if method == "POST" and path.endswith("/chat/completions"):
                    recorder.count_sent(body)
                self.send_error(502, f"upstream: {err}")
                return
            finally:
                connection.close()
            wall_ms = (time.time() - started) * 1000
            if is_chat:
                recorder.count_sent(body)
            if is_chat and response.status == 200:
                self.record(data, wall_ms)
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def stream(self, response, started):
            """Passes a streamed reply on as it comes, so that the tool sees it as the server
            sends it (and can stop it); a client that goes away closes the upstream connection,
            which stops the server's generation. The usage is read from the stream's events: the
            last event's, or for a reply cut short, one completion token per content event."""
            self.send_response(response.status)
            for key, value in response.getheaders():
                if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(key, value)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pending, last, events = b"", {}, 0
            try:
                while True:
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        line = line.strip()
                        if not line.startswith(b"data:") or line.endswith(b"[DONE]"):
                            continue
                        try:
                            event = json.loads(line[5:])
                        except ValueError:
                            continue
                        if event.get("usage") or event.get("timings"):
                            last = event
                        if any((choice.get("delta") or {}).get("content") or (choice.get("delta") or {}).get("tool_calls")
                               for choice in event.get("choices") or []):
                            events += 1
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:
                self.close_connection = True
            if not last:
                last = {"usage": {"completion_tokens": events}}
            self.record(json.dumps(last).encode(), (time.time() - started) * 1000)

        def record(self, data, wall_ms):
            try:
                reply = json.loads(data)
            except ValueError:
                return
            usage = reply.get("usage") or {}
            timings = reply.get("timings") or {}
            details = usage.get("prompt_tokens_details") or {}
            recorder.add({
                "prompt_tokens": usage.get("prompt_tokens"),
                "completion_tokens": usage.get("completion_tokens"),
                "cached_tokens": details.get("cached_tokens"),
                "prompt_ms": timings.get("prompt_ms"),
                "predicted_ms": timings.get("predicted_ms"),
                "wall_ms": wall_ms,
            })

        def do_POST(self):
            self.forward("POST")

        def do_GET(self):
            self.forward("GET")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1", server


def minutes(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s"


def report(label, results, wall, totals, out_json=None, extra=None):
    """Prints the benchmark line and one row per story; writes the JSON when asked."""
    delivered = sum(1 for r in results if r["delivered"])
    n = len(results)
    per_story = wall / n if n else 0
    print(f"\n{'story':<12} {'merged':<7} {'accepted':<9} {'minutes':>8}  note")
    for r in results:
        print(f"{r['key']:<12} {('yes' if r['merged'] else 'no'):<7} {('yes' if r['accepted'] else 'no'):<9} "
              f"{r.get('seconds', 0) / 60:>8.1f}  {r.get('note', '')[:90]}")
    line = (f"BENCH {label}: delivered {delivered}/{n} · wall {minutes(wall)} ({minutes(per_story)} a story) · "
            f"tokens {totals['prompt_tokens']} prompt ({totals['cached_tokens']} cached) + "
            f"{totals['completion_tokens']} completion in {totals['requests']} requests · "
            f"server time {totals['prompt_seconds']}s prompt + {totals['generation_seconds']}s generation")
    print(line)
    if out_json:
        document = {"label": label, "delivered": delivered, "stories": n, "wall_seconds": round(wall, 1),
                    "totals": totals, "results": results, "line": line}
        document.update(extra or {})
        Path(out_json).write_text(json.dumps(document, indent=1) + "\n")
    return delivered
