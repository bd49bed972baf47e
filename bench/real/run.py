#!/usr/bin/env python3
"""The repository's own benchmark: agentic-sdlc delivers the stories of a small Python project
against any OpenAI-compatible server, and hidden acceptance tests judge the result.

    bench/real/run.py --base-url http://127.0.0.1:8090/v1 [--protocol auto] [--test-rounds 3]
                      [--attempts 1] [--stories mean-empty,slugify] [--json out.json]

It makes a git repository of bench/real/project, runs `agentic-sdlc init`, sets the config,
`add`s the stories of bench/real/stories.json (with their dependencies), runs `run --auto`, and
then runs each story's acceptance test from bench/real/acceptance on `main`, in a checkout of
its own: the model never sees those tests. A story is delivered when it was merged and its
acceptance test passes. It prints delivered/N, the wall time, the tokens, and, with a llama.cpp
server, how much of the server's time went into reading prompts and how much into generating.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REPO_ROOT = common.HERE.parent.parent


def default_binary():
    for profile in ("release", "debug"):
        candidate = REPO_ROOT / "target" / profile / "agentic-sdlc"
        if candidate.exists():
            return str(candidate)
    return "agentic-sdlc"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="the OpenAI-compatible base URL, e.g. http://127.0.0.1:8090/v1")
    parser.add_argument("--model", default="local")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the key (not needed on localhost)")
    parser.add_argument("--binary", default=default_binary())
    parser.add_argument("--protocol", default="auto", choices=["auto", "native", "text"])
    parser.add_argument("--test-rounds", type=int, default=3)
    parser.add_argument("--attempts", type=int, default=1)
    parser.add_argument("--edit-format", default="tools", choices=["tools", "whole"])
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--temperature", type=float, help="llm.temperature (default: the server's)")
    parser.add_argument("--max-turns", type=int, default=16)
    parser.add_argument("--llm-timeout", type=int, default=600, help="llm.timeoutSeconds")
    parser.add_argument("--skip-phases", default="research,plan", help="phases switched off (phases.<phase>.enabled false); '' for none")
    parser.add_argument("--stories", default="", help="comma-separated story keys (default: all)")
    parser.add_argument("--suite", default="textkit", choices=sorted(common.SUITES), help="the project and stories")
    parser.add_argument("--defaults", action="store_true",
                        help="set only llm.baseUrl, llm.model and review.testCommand: the tool's own defaults for everything else, the whole life cycle on")
    parser.add_argument("--story-minutes", type=float, default=15, help="the run is stopped after this many minutes per story")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="one more config key on top of the rest (with --defaults: the one setting tried against the defaults)")
    parser.add_argument("--work", help="keep the work here instead of a temporary folder")
    parser.add_argument("--label", help="the name printed with the figures")
    parser.add_argument("--json", help="write the figures to this file")
    return parser.parse_args()


def agentic(args, repo, *command, check=True):
    return common.run([args.binary, *command], cwd=repo, check=check)


def configure(args, repo, python):
    if args.defaults:
        settings = {
            "llm.baseUrl": args.proxy_url,
            "llm.model": args.model,
            "review.testCommand": f"{python} -m pytest -q",
        }
        for key, value in settings.items():
            agentic(args, repo, "config", key, value)
        set_extra(args, repo)
        return
    settings = {
        "llm.baseUrl": args.proxy_url,
        "llm.model": args.model,
        "llm.apiKeyEnv": args.api_key_env,
        "llm.maxTokens": str(args.max_tokens),
        "llm.maxTurns": str(args.max_turns),
        "llm.timeoutSeconds": str(args.llm_timeout),
        "llm.toolProtocol": args.protocol,
        "implement.testRounds": str(args.test_rounds),
        "implement.attempts": str(args.attempts),
        "implement.editFormat": args.edit_format,
        "review.testCommand": f"{python} -m pytest -q",
    }
    if args.temperature is not None:
        settings["llm.temperature"] = str(args.temperature)
    for phase in filter(None, args.skip_phases.split(",")):
        settings[f"phases.{phase.strip()}.enabled"] = "false"
    for key, value in settings.items():
        agentic(args, repo, "config", key, value)
    set_extra(args, repo)


def set_extra(args, repo):
    for setting in args.set:
        key, _, value = setting.partition("=")
        agentic(args, repo, "config", key, value)


def add_stories(args, repo, chosen):
    ids = {}
    for story in chosen:
        body = Path(args.work_dir) / f"{story['key']}.md"
        body.write_text(common.story_body(story))
        command = ["add", story["title"], "--type", story["type"], "--body-file", str(body), "--json"]
        for dependency in story.get("depends_on", []):
            if dependency in ids:
                command += ["--depends-on", ids[dependency]]
        added = json.loads(agentic(args, repo, *command).stdout.strip().splitlines()[-1])
        ids[story["key"]] = added.get("id") or added["story"]["id"]
    return ids


def run_auto(args, repo, count):
    """`run --auto --json`, timing each story's actions from its events as they arrive."""
    limit = args.story_minutes * 60 * count
    log = open(Path(args.work_dir) / "run.stderr.log", "w")
    child = subprocess.Popen([args.binary, "run", "--auto", "--json"], cwd=repo, text=True,
                             stdout=subprocess.PIPE, stderr=log)
    seconds, started_at, events = {}, {}, []
    stopped = threading.Event()

    def stop():
        # SIGTERM first, as a person's Ctrl-C: the run puts interrupted work back and says so.
        # A run that does not stop within a minute is killed.
        stopped.set()
        child.terminate()
        threading.Timer(60, child.kill).start()

    timer = threading.Timer(limit, stop)
    timer.start()
    for line in child.stdout:
        now = time.time()
        try:
            event = json.loads(line)
        except ValueError:
            continue
        events.append(event)
        story = event.get("storyId")
        if event.get("event") == "action_started":
            started_at[story] = now
        elif event.get("event") in ("action_completed", "action_failed", "action_stopped") and story in started_at:
            seconds[story] = seconds.get(story, 0) + now - started_at.pop(story)
    code = child.wait()
    timer.cancel()
    log.close()
    with open(Path(args.work_dir) / "run.events.jsonl", "w") as out:
        out.writelines(json.dumps(event) + "\n" for event in events)
    return code, seconds, events, stopped.is_set()


def main():
    args = parse_args()
    args.binary = common.binary_path(args.binary)
    common.select_suite(args.suite)
    chosen = common.stories([k.strip() for k in args.stories.split(",") if k.strip()])
    work = args.work or tempfile.mkdtemp(prefix="agentic-sdlc-bench-")
    Path(work).mkdir(parents=True, exist_ok=True)
    args.work_dir = work
    label = args.label or ("agentic-sdlc defaults" + "".join(f" {s}" for s in args.set) if args.defaults else f"agentic-sdlc protocol={args.protocol} editFormat={args.edit_format} "
                           f"testRounds={args.test_rounds} attempts={args.attempts} skip={args.skip_phases or '-'}"
                           + (f" temperature={args.temperature}" if args.temperature is not None else ""))
    label = f"{label} [{args.suite}]"
    python = common.python_with_pytest()
    recorder = common.Recorder()
    args.proxy_url, proxy = common.start_proxy(args.base_url, recorder)
    repo = common.fresh_repo(work)
    agentic(args, repo, "init")
    configure(args, repo, python)
    ids = add_stories(args, repo, chosen)
    print(f"{label}: {len(chosen)} stories in {repo}; model {args.model} at {args.base_url}", flush=True)

    started = time.time()
    code, seconds, _events, stopped_at_limit = run_auto(args, repo, len(chosen))
    wall = time.time() - started

    results = []
    for story in chosen:
        details = json.loads(agentic(args, repo, "details", ids[story["key"]], "--json").stdout)["story"]
        merged = bool(details.get("merged_commit"))
        accepted, tail = common.acceptance(repo, story, python)
        usage = details.get("usage") or {}
        results.append({
            "key": story["key"], "id": ids[story["key"]], "merged": merged, "accepted": accepted,
            "delivered": merged and accepted, "status": details.get("status"),
            "seconds": round(seconds.get(ids[story["key"]], 0), 1),
            "prompt_tokens": usage.get("prompt_tokens", 0), "completion_tokens": usage.get("completion_tokens", 0),
            "requests": usage.get("requests", 0), "refinement_count": details.get("refinement_count", 0),
            "note": details.get("last_error") or details.get("blocked_reason") or tail[0],
        })
    proxy.shutdown()
    totals = recorder.totals()
    common.report(label, results, wall, totals, args.json,
                  {"exit_code": code, "stopped_at_limit": stopped_at_limit, "suite": args.suite,
                   "defaults": args.defaults, "config": "the tool's defaults" if args.defaults else {"protocol": args.protocol, "editFormat": args.edit_format,
                                                 "testRounds": args.test_rounds,
                                                 "attempts": args.attempts, "maxTokens": args.max_tokens,
                                                 "temperature": args.temperature,
                                                 "skipPhases": args.skip_phases, "model": args.model},
                   "set": args.set, "work": work})


if __name__ == "__main__":
    main()
