#!/usr/bin/env python3
"""Checks, after a benchmark run, what must hold whatever a small model answered: the contract
for real models (the reference's "Working with real models") seen from the board, the
transcripts, the recording proxy and git.

    bench/real/invariants.py [--binary target/debug/agentic-sdlc] bench.json

Exits 1 naming every invariant that does not hold.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

SECTIONS = ["Summary", "Acceptance Criteria", "Research", "Implementation Plan",
            "Implementation Notes", "Review Notes"]
REVIEWERS = ("code-review", "security-review", "po-review")


def transcript_entries(board, story_id):
    entries = []
    for path in sorted((board / "logs" / story_id).glob("*.jsonl")):
        entries.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return entries


def body_of(path):
    text = Path(path).read_text()
    return text.split("\n---", 2)[-1] if text.startswith("---") else text


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="agentic-sdlc")
    parser.add_argument("figures", help="the --json file of bench/real/run.py")
    args = parser.parse_args()
    args.binary = common.binary_path(args.binary)
    figures = json.loads(Path(args.figures).read_text())
    repo = Path(figures["work"]) / "repo"
    board = repo / ".agentic-sdlc"
    failures = []

    def check(ok, what):
        print(f"{'✓' if ok else '✗'} {what}")
        if not ok:
            failures.append(what)

    validate = common.run([args.binary, "validate"], cwd=repo, check=False)
    check(validate.returncode == 0, f"every story file parses and the board validates ({validate.stdout.strip()[-120:]})")

    # A run stopped at the benchmark's time limit abandons the action in flight: the requests
    # it sent are in the transcript and the server's count, but not in its story's usage.
    stopped = figures.get("stopped_at_limit", False)
    if stopped:
        print("– the run was stopped at its time limit: the usage counts are reported, not checked")

    def check_usage(ok, what):
        if stopped:
            print(f"– {what}")
        else:
            check(ok, what)

    requests_in_stories = 0
    for result in figures["results"]:
        story = json.loads(common.run([args.binary, "details", result["id"], "--json"], cwd=repo).stdout)["story"]
        key = result["key"]
        body = body_of(story["path"])
        for section in SECTIONS:
            count = sum(1 for line in body.splitlines() if line.rstrip() == f"## {section}")
            check(count <= 1, f"{key}: `## {section}` appears at most once ({count})")
        entries = transcript_entries(board, result["id"])
        attempts = sum(1 for e in entries if e.get("event") == "attempt")
        requests = (story.get("usage") or {}).get("requests", 0)
        requests_in_stories += requests
        check_usage(attempts == requests,
              f"{key}: usage.requests ({requests}) counts every attempt in the transcripts ({attempts})")
        for index, entry in enumerate(entries):
            if entry.get("event") == "response" and entry.get("finish_reason") == "length" \
                    and entry.get("agent") in REVIEWERS + ("phase-review",):
                later = [e for e in entries[index + 1:] if e.get("agent") == entry["agent"]]
                check(any(e.get("event") in ("reask", "no_verdict") for e in later),
                      f"{key}: a {entry['agent']} reply cut off by the cap was not taken as its verdict")
        if story.get("implementation_complete") and story.get("type") in ("feature", "bug"):
            base = story.get("base_branch") or "main"
            branch = story.get("branch")
            if branch:
                changed = common.git(repo, "diff", "--name-only", f"{base}...{branch}", check=False).stdout.strip()
                merged_change = story.get("merged_commit")
                check(bool(changed) or bool(merged_change),
                      f"{key}: a completed implement of a {story['type']} changed a file")
            notes = story.get("sections", {}).get("Implementation Notes", "")
            check("### Tests" in notes and "passed" in notes.split("### Tests")[-1],
                  f"{key}: a completed implement says its tests passed in its notes")
        if story.get("merged_commit"):
            ancestor = common.git(repo, "merge-base", "--is-ancestor", story["merged_commit"], "main", check=False)
            check(ancestor.returncode == 0, f"{key}: its merged commit is on main")
        if story.get("last_error"):
            check(story.get("status") != "done", f"{key}: a story with last_error is not done")

    sent = figures["totals"].get("sent", figures["totals"]["requests"])
    # The run's tool-call probe is the run's own request, in no story's usage.
    probes = figures["totals"].get("probes", 0)
    check_usage(requests_in_stories == sent - probes,
          f"usage.requests of all stories ({requests_in_stories}) equals the chat requests the server got ({sent}, {probes} of them the run's tool-call probe)")
    print(figures["line"])
    if failures:
        print(f"{len(failures)} invariant(s) broken")
        sys.exit(1)


if __name__ == "__main__":
    main()
