#!/usr/bin/env python3
"""The same benchmark for a peer scaffold: mini-swe-agent, with the same model and stories.

    bench/real/peer_mini.py --base-url http://127.0.0.1:8090/v1 [--suite inventory] [--mode text|tools] [--json out.json]

mini-swe-agent is installed with pip into a venv of its own in the benchmark cache (once). It
reaches the server through litellm as `openai/<model>` with the server as `api_base`. Each
story, dependencies first, is one mini-swe-agent task in the same repository, told the test
command; its changes are then committed on `main` (mini-swe-agent works in place, so that is
its "merge"). The hidden acceptance tests then judge `main`, exactly as for agentic-sdlc.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

MINI_VERSION = "mini-swe-agent==2.4.6"


def mini_python():
    venv = common.CACHE / "mini-venv"
    python = venv / "bin" / "python"
    if not python.exists() or common.run([str(python), "-c", "import minisweagent"], check=False).returncode != 0:
        venv.parent.mkdir(parents=True, exist_ok=True)
        common.run([sys.executable, "-m", "venv", str(venv)])
        common.run([str(python), "-m", "pip", "install", "-q", MINI_VERSION])
    return str(python)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="local")
    parser.add_argument("--mode", default="text", choices=["text", "tools"])
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    parser.add_argument("--step-limit", type=int, default=30)
    parser.add_argument("--story-minutes", type=float, default=10)
    parser.add_argument("--stories", default="")
    parser.add_argument("--suite", default="textkit", choices=sorted(common.SUITES), help="the project and stories")
    parser.add_argument("--work")
    parser.add_argument("--json")
    args = parser.parse_args()
    common.select_suite(args.suite)

    chosen = common.stories([k.strip() for k in args.stories.split(",") if k.strip()])
    work = Path(args.work or tempfile.mkdtemp(prefix="mini-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    python = common.python_with_pytest()
    mini = mini_python()
    recorder = common.Recorder()
    proxy_url, proxy = common.start_proxy(args.base_url, recorder)
    repo = common.fresh_repo(work)
    driver = Path(__file__).resolve().parent / "mini_driver.py"
    label = f"mini-swe-agent 2.4.6 suite={args.suite} mode={args.mode}" + (f" temperature={args.temperature}" if args.temperature is not None else "")
    print(f"{label}: {len(chosen)} stories in {repo}; model {args.model} at {args.base_url}", flush=True)

    results = []
    started = time.time()
    for story in chosen:
        mark = recorder.mark()
        task = (f"{common.story_task(story)}\nThe project's tests run with `{python} -m pytest -q`; "
                f"they must pass when you are done.")
        job = {"task": task, "repo": str(repo), "base_url": proxy_url, "model": args.model, "mode": args.mode,
               "max_tokens": args.max_tokens, "temperature": args.temperature, "step_limit": args.step_limit,
               "seconds": int(args.story_minutes * 60), "trajectory": str(work / f"{story['key']}.traj.json")}
        story_started = time.time()
        try:
            out = common.run([mini, str(driver), json.dumps(job)], cwd=repo, check=False,
                             timeout=args.story_minutes * 60 + 120)
            outcome = json.loads((out.stdout or "{}").strip().splitlines()[-1] or "{}") if out.stdout.strip() else \
                {"exit_status": f"driver failed: {(out.stderr or '').strip().splitlines()[-1:]}"}
        except Exception as err:  # a timeout of the whole driver
            outcome = {"exit_status": f"{type(err).__name__}"}
        seconds = time.time() - story_started
        common.git(repo, "add", "--all")
        committed = common.git(repo, "commit", "--quiet", "-m", f"mini-swe-agent: {story['title']}", check=False)
        merged = committed.returncode == 0
        accepted, tail = common.acceptance(repo, story, python)
        spent = recorder.totals(mark)
        results.append({"key": story["key"], "merged": merged, "accepted": accepted,
                        "delivered": merged and accepted, "seconds": round(seconds, 1),
                        "steps": outcome.get("steps"), "requests": spent["requests"],
                        "prompt_tokens": spent["prompt_tokens"], "completion_tokens": spent["completion_tokens"],
                        "note": f"{outcome.get('exit_status', '')} after {outcome.get('steps')} steps; {tail[0]}"})
        print(f"  {story['key']}: {results[-1]['note']}", flush=True)
    wall = time.time() - started
    proxy.shutdown()
    common.report(label, results, wall, recorder.totals(), args.json,
                  {"config": {"mode": args.mode, "stepLimit": args.step_limit, "maxTokens": args.max_tokens,
                              "temperature": args.temperature, "model": args.model}, "work": str(work)})


if __name__ == "__main__":
    main()
