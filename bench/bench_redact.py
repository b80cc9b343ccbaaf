#!/usr/bin/env python3
"""Redaction throughput: `apply_policy` MB/s on the 3 MB fixture and on a ~100 MB session.

The big session is pi-branched-4.jsonl copied over and over with fresh ids (each copy hangs
under the previous copy's leaf, so it is one valid tree), written to a temp folder. MB/s is
input file bytes / `apply_policy` seconds (load and JSONL writing are timed separately).
Every number is the median of --runs runs (the big session: 1 run unless --big-runs).

    .venv/bin/python bench/bench_redact.py                 # ~1 min
    .venv/bin/python bench/bench_redact.py --big-mb 20 --runs 3
    .venv/bin/python bench/bench_redact.py --write-results # also replaces its RESULTS.md section
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent))
sys.path.insert(0, str(BENCH_DIR))

from exporter.jsonl_out import dumps_line, session_to_jsonl  # noqa: E402
from exporter.loader import load_session  # noqa: E402
from exporter.redact import RedactionPolicy, apply_policy  # noqa: E402
from exporter.session import Session  # noqa: E402

POLICIES = {
    "scan (redact, keep all)": RedactionPolicy(),
    "publish (redact, drop hidden)": RedactionPolicy(drop_hidden=True),
    "share minimal (+active branch, no thinking/tool output/images)": RedactionPolicy(
        drop_hidden=True,
        active_branch_only=True,
        no_thinking=True,
        no_tool_output=True,
        no_images=True,
    ),
    "copy only (--no-redact)": RedactionPolicy(redact=False),
}
ID_FIELDS = ("id", "parentId", "targetId", "fromId", "firstKeptEntryId")


def shared_dir() -> Path:
    import bench_export  # the shared helpers (shared/ lookup, machine facts, RESULTS.md)

    return bench_export.shared_dir()


def timed(func: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    """Median wall and CPU seconds of ``runs`` calls (CPU: the box may be shared), last result."""
    wall, cpu, result = [], [], None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = func()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu), result


def build_big(source: Path, target: Path, megabytes: float) -> int:
    """Copies of ``source``'s entries with suffixed ids until the file reaches ``megabytes``."""
    lines = source.read_text("utf-8").splitlines()
    header, entries = json.loads(lines[0]), [json.loads(x) for x in lines[1:] if x.strip()]
    chunk = sum(len(x) + 1 for x in lines[1:])
    copies = max(1, round(megabytes * 1_000_000 / chunk))
    leaf: str | None = None
    with target.open("w", encoding="utf-8") as out:
        out.write(dumps_line(header) + "\n")
        for n in range(copies):
            for entry in entries:
                copy = dict(entry)
                for name in ID_FIELDS:
                    if isinstance(copy.get(name), str):
                        copy[name] = f"{copy[name]}-{n}"
                if copy.get("parentId") is None:
                    copy["parentId"] = leaf
                out.write(dumps_line(copy) + "\n")
            leaf = f"{entries[-1]['id']}-{n}"
    return copies


def bench_file(path: Path, label: str, runs: int) -> list[list[str]]:
    size = path.stat().st_size
    load_s, _, session = timed(lambda: load_session(path), 1)
    rows = []
    for name, policy in POLICIES.items():
        wall, cpu, (redacted, report) = timed(lambda p=policy: apply_policy(session, p), runs)
        write_s, _, _ = timed(lambda r=redacted: session_to_jsonl(r), 1)
        rows.append(row(label, size, session, name, (wall, cpu, load_s, write_s), report.total))
    return rows


def row(
    label: str, size: int, session: Session, policy: str, times: tuple[float, ...], hits: int
) -> list[str]:
    wall, cpu, load_s, write_s = times
    mb = size / 1e6
    return [
        label,
        f"{mb:,.1f}",
        f"{len(session.entries):,}",
        policy,
        f"{wall:.2f}",
        f"{cpu:.2f}",
        f"**{mb / wall:,.1f}**",
        f"{mb / cpu:,.1f}",
        f"{load_s:.2f}",
        f"{write_s:.2f}",
        str(hits),
    ]


def table(rows: list[list[str]]) -> str:
    head = ["file", "MB", "entries", "policy", "redact s", "CPU s", "MB/s", "MB/s (CPU)",
            "load s", "write s", "hits"]  # fmt: skip
    lines = ["| " + " | ".join(head) + " |", "|---|--:|--:|---|" + "--:|" * 7]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per policy (3 MB fixture)")
    parser.add_argument("--big-runs", type=int, default=1, help="runs per policy (big session)")
    parser.add_argument("--big-mb", type=float, default=100.0, help="size of the big session")
    parser.add_argument("--write-results", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    fixture = shared_dir() / "fixtures" / "pi-branched-4.jsonl"
    rows = bench_file(fixture, fixture.name, args.runs)
    with tempfile.TemporaryDirectory(prefix="bench-redact-") as folder:
        big = Path(folder) / "big.jsonl"
        copies = build_big(fixture, big, args.big_mb)
        rows += bench_file(big, f"big ({copies} copies of pi-branched-4)", args.big_runs)
    text = table(rows)
    notes = (
        f"Median of {args.runs} runs (big session: {args.big_runs}); MB/s = input file MB / "
        "`apply_policy` wall seconds, MB/s (CPU) the same over process CPU seconds (the box is "
        "shared); load and JSONL writing are separate columns; env secrets on."
    )
    print(text)
    print(f"\n{notes}\nbench time {time.perf_counter() - started:.0f} s")
    if args.write_results:
        import bench_export

        facts = bench_export.facts_markdown(
            bench_export.machine_facts(), bench_export.command_line()
        )
        body = f"{facts}\n\n{notes}\n\n{text}"
        bench_export.write_section("bench_redact", "Redaction throughput", body)
        print(f"wrote {bench_export.RESULTS_MD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
