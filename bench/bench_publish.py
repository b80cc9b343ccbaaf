#!/usr/bin/env python3
"""Publish benchmark: ``pi-session publish`` of COUNT sessions to the loopback fake Hub.

The corpus (COUNT sessions written by Pi's own SessionManager via gen_corpus.sh, four project
folders) is cached in ``bench/out/publish-corpus-<COUNT>/`` and copied to a temp folder per
run. The fake Hub (``tests/fakes/hub.py``) runs in this process; the CLI runs as a child
process with the real huggingface_hub client and ``--endpoint`` pointing at the fake, so
each wall time includes start-up, redaction, hashing, HTTP and the fake's own work.

Runs: a cold publish to an empty repo, no-op re-runs (target: < 5 s), and a re-run after one
session changed. Reported: wall time, commits, request bodies uploaded, requests.

    .venv/bin/python bench/bench_publish.py                 # 500 sessions, ~1-2 min
    .venv/bin/python bench/bench_publish.py --count 100 --jobs 4
    .venv/bin/python bench/bench_publish.py --write-results # replaces its RESULTS.md section
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO))
import bench_export as common  # noqa: E402
import bench_site  # noqa: E402

from tests.fakes.hub import TOKEN, FakeHub  # noqa: E402

OUT = BENCH_DIR / "out"
PROJECTS = 4
REPO_ID = "alice/bench-sessions"
NOOP_TARGET = 5.0
CHILD = (
    "from exporter.cli import LAZY_COMMANDS, main\n"
    "LAZY_COMMANDS.setdefault('publish', ('exporter.publish_cli', 'publish_command'))\n"
    "main()\n"
)


@dataclass
class Run:
    label: str
    seconds: float
    commits: int
    uploaded: int
    requests: int
    summary: str


def run_cli(fake: FakeHub, sessions: Path, jobs: int, home: Path, label: str) -> Run:
    """One ``pi-session publish`` child process; counts what the fake saw during it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        HF_HOME=str(home / "hf"),
        XDG_CACHE_HOME=str(home / "cache"),
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_PROXY="127.0.0.1,localhost",
        HTTPS_PROXY="http://127.0.0.1:9",
        PYTHONPATH=str(REPO),
    )
    commits, requests = len(fake.commits), len(fake.requests)
    argv = [sys.executable, "-c", CHILD, "publish", REPO_ID, "--all", "--sessions-dir"]
    argv += [str(sessions), "--endpoint", fake.url, "--token", TOKEN, "-j", str(jobs)]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"publish failed ({done.returncode}): {done.stderr[-2000:]}")
    sent = fake.requests[requests:]
    uploaded = sum(len(r.body) for r in sent if r.route.endswith("/commit/main"))
    summary = done.stdout.strip().splitlines()[0]
    new = len(fake.commits) - commits
    print(f"{label}: {seconds:.2f} s, {new} commits; {summary}", file=sys.stderr)
    return Run(label, seconds, new, uploaded, len(sent), summary)


def report(runs: list[Run], count: int, size: int, jobs: int) -> str:
    noop = [r for r in runs if r.label.startswith("no-op")]
    best = min(r.seconds for r in noop)
    mark = "✅" if best < NOOP_TARGET else "❌"
    lines = [
        common.facts_markdown(common.machine_facts(), common.command_line()),
        "",
        f"{count} sessions ({size / 1e6:.1f} MB, {PROJECTS} projects, written by Pi's "
        "SessionManager via `gen_corpus.sh`) published with `pi-session publish --all "
        f"-j {jobs}` in a child process (real huggingface_hub client, `--endpoint` = the "
        "loopback fake Hub of `tests/fakes/hub.py`, which answers `regular` so every byte "
        "travels base64 in the NDJSON commits). Wall time of the whole CLI process.",
        "",
        "| run | wall s | commits | commit bodies | requests | CLI summary |",
        "|---|--:|--:|--:|--:|---|",
    ]
    lines += [
        f"| {r.label} | {r.seconds:.2f} | {r.commits} | {r.uploaded / 1e6:.1f} MB | "
        f"{r.requests} | {r.summary} |"
        for r in runs
    ]
    lines += [
        "",
        f"- No-op re-run: best {best:.2f} s of {len(noop)} (target < {NOOP_TARGET:.0f} s: "
        f"{mark}); it reads the tree, manifest and index, hashes the local files and makes "
        "no commit.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500, help="sessions (default 500)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="-j for the CLI")
    parser.add_argument("--noop-runs", type=int, default=3, help="no-op re-runs (default 3)")
    parser.add_argument("--write-results", action="store_true", help="update RESULTS.md")
    args = parser.parse_args(argv)
    source = bench_site.corpus(args.count, "publish")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp, FakeHub() as fake:
        work = Path(tmp)
        sessions = work / "sessions"
        shutil.copytree(source, sessions, ignore=shutil.ignore_patterns(".complete"))
        files = sorted(sessions.glob("*/*.jsonl"))
        size = sum(f.stat().st_size for f in files)
        runs = [run_cli(fake, sessions, args.jobs, work, f"cold: {len(files)} new sessions")]
        runs += [
            run_cli(fake, sessions, args.jobs, work, f"no-op re-run {i + 1}")
            for i in range(args.noop_runs)
        ]
        last = json.loads(files[0].read_bytes().splitlines()[-1])
        entry = {
            "type": "message",
            "id": "bench0001",
            "parentId": last.get("id"),
            "timestamp": "2027-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "one more", "timestamp": 1798761600000},
        }
        with files[0].open("ab") as handle:
            handle.write(json.dumps(entry).encode() + b"\n")
        runs.append(run_cli(fake, sessions, args.jobs, work, "one session changed"))
    text = report(runs, len(files), size, args.jobs)
    print(text)
    print(f"\nbench time {time.perf_counter() - started:.0f} s", file=sys.stderr)
    if args.write_results:
        common.write_section("bench_publish", "Publish to a (fake) Hugging Face dataset", text)
        print(f"wrote {common.RESULTS_MD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
