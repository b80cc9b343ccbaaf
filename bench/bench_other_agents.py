"""Claude Code and Codex transcripts: what reading one as a Pi session costs, against a Pi
session of about the same size.

    .venv/bin/python bench/bench_other_agents.py [--repeat 1200] [--runs 3] [--write-results]

Each transcript is its test fixture repeated, cached in bench/out: Claude Code's
(tests/data/claude-code/, 36 lines of every shape: an answer's one-line-per-block lines,
parallel calls, a rewind, a compaction, bookkeeping lines) ``--repeat`` times with fresh
uuids, each copy continuing the last one; Codex's (tests/data/codex/, 52 lines: requests,
shell outputs in three forms, a patch, token counts, a rollback, a compaction) as many times
as makes the same size, after one ``session_meta`` line. The Pi session is gen_corpus.sh's
25 MB one (as bench_export.py uses). Each file is loaded and exported (``pi-session export
-o``) in fresh processes, alternating, median of ``--runs``; the comparison is per megabyte
of input. Pi reads neither agent's files, so there is no Pi column.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_export as common

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
FIXTURE = REPO / "tests" / "data" / "claude-code" / "7f3c9a12-4b6e-4d1a-9c3e-2a5b8d0e1f47.jsonl"
LEAF = "00000000-0000-4000-8000-000000000032"  # the fixture's last main-line answer
CODEX = next((REPO / "tests" / "data" / "codex").glob("rollout-*.jsonl"))

LOAD = r"""
import json, sys, time
start, cpu = time.perf_counter(), time.process_time()
from exporter.loader import load_session
session = load_session(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu,
                  "entries": len(session.entries), "branches": len(session.leaf_ids)}))
"""


def transcript(repeat: int) -> Path:
    """The fixture ``repeat`` times over, each copy's root after the last copy's leaf."""
    path = BENCH_DIR / "out" / f"claude-code-x{repeat}.jsonl"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()[:-1]  # not the torn last line
    with open(path.with_suffix(".tmp"), "w", encoding="utf-8") as out:
        previous = None
        for copy in range(repeat):
            prefix = f"{copy:06d}-"
            for line in lines:
                value = json.loads(line)
                _renumber(value, prefix, previous)
                out.write(json.dumps(value, ensure_ascii=False) + "\n")
            previous = prefix + LEAF
    path.with_suffix(".tmp").replace(path)
    return path


def rollout(size: int) -> Path:
    """The Codex fixture's lines (but its header and its torn last line) repeated until the
    file is ``size`` bytes, after the one header: a long session of many turns."""
    path = BENCH_DIR / "out" / f"codex-{size // 1_000_000}mb.jsonl"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    header, *lines = CODEX.read_text(encoding="utf-8").splitlines()[:-1]
    body = "".join(line + "\n" for line in lines)
    with open(path.with_suffix(".tmp"), "w", encoding="utf-8") as out:
        out.write(header + "\n")
        for _ in range(max(1, size // len(body.encode()))):
            out.write(body)
    path.with_suffix(".tmp").replace(path)
    return path


def _renumber(value: dict, prefix: str, previous: str | None) -> None:
    for key in ("uuid", "logicalParentUuid", "leafUuid"):
        if isinstance(value.get(key), str):
            value[key] = prefix + value[key]
    if "parentUuid" in value:
        value["parentUuid"] = prefix + value["parentUuid"] if value["parentUuid"] else previous
    message = value.get("message")
    if not isinstance(message, dict):
        return
    if isinstance(message.get("id"), str):
        message["id"] = prefix + message["id"]
    for block in message.get("content") if isinstance(message.get("content"), list) else ():
        for key in ("id", "tool_use_id"):
            if isinstance(block.get(key), str):
                block[key] = prefix + block[key]


def load_once(path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(path)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def export_once(path: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [str(Path(sys.executable).parent / "pi-session"), "export", str(path), "-o", str(out)],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1200, help="copies of the fixture")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    began = time.perf_counter()
    facts = common.machine_facts()
    claude = transcript(args.repeat)
    files = {
        "Claude Code": claude,
        "Codex": rollout(claude.stat().st_size),
        "Pi": common.big_session(136),
    }
    loads: dict[str, list[dict]] = {name: [] for name in files}
    exports: dict[str, list[float]] = {name: [] for name in files}
    with tempfile.TemporaryDirectory() as work:
        for run in range(args.runs + 1):  # the first round warms the caches, untimed
            order = list(files) if run % 2 else list(reversed(files))
            for name in order:
                loaded = load_once(files[name])
                seconds = export_once(files[name], Path(work) / "page.html")
                if run:
                    loads[name].append(loaded)
                    exports[name].append(seconds)
    rows = []
    per_mb = {}
    for name, path in files.items():
        size = path.stat().st_size / 1e6
        load = statistics.median(r["seconds"] for r in loads[name])
        export = statistics.median(exports[name])
        per_mb[name] = (load / size, export / size)
        first = loads[name][0]
        rows.append(
            f"| {name} | {size:,.1f} | {first['entries']:,} | {first['branches']:,} "
            f"| {load:.2f} | {load / size * 1000:.0f} | {export:.2f} | {export / size * 1000:.0f} |"
        )
    ratios = {
        name: (per_mb[name][0] / per_mb["Pi"][0], per_mb[name][1] / per_mb["Pi"][1])
        for name in ("Claude Code", "Codex")
    }
    body = "\n".join(
        [
            common.facts_markdown(
                {**facts, "bench time": f"{time.perf_counter() - began:.0f} s"},
                common.command_line(),
            ),
            "",
            f"Claude Code's test fixture repeated {args.repeat:,} times (fresh uuids, each copy "
            "after the last), Codex's repeated to the same size, against gen_corpus.sh's 25 MB "
            f"Pi session; fresh processes, alternating, median of {args.runs}. **load** = "
            "`load_session` in a child (imports included); **export** = `pi-session export -o` "
            "wall time.",
            "",
            "| file | MB | entries | branches | load s | load ms/MB | export s | export ms/MB |",
            "|---|--:|--:|--:|--:|--:|--:|--:|",
            *rows,
            "",
            *(
                f"Per megabyte, a {name} transcript loads in **{load:.2f}x** and exports in "
                f"**{export:.2f}x** the time of a Pi session (its lines are parsed, then "
                "converted into Pi entries)."
                for name, (load, export) in ratios.items()
            ),
        ]
    )
    print(body)
    if args.write_results:
        common.write_section("bench_other_agents", "Claude Code and Codex transcripts", body)


if __name__ == "__main__":
    main()
