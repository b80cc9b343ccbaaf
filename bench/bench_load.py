"""Loader benchmark: speed on a real 3 MB session, memory and scaling on 25/50/100 MB ones.

    .venv/bin/python bench/bench_load.py [--runs 15] [--out bench/out/bench_load] [--no-big]

1. ``pi-branched-4.jsonl`` (3 MB, 1,435 entries) loaded in-process ``--runs`` times:
   median / min / max (target: median < 0.15 s).
2. Linear sessions written by Pi's own SessionManager (``bench/gen_corpus.sh --big DIR REPEAT``,
   seed 1: REPEAT 136 / 272 / 543 -> about 25 / 50 / 100 MB), cached under ``--out``. Each is
   loaded in fresh child processes (so one load's garbage cannot help or hurt the next):
   wall time (median of ``--big-runs``), ru_maxrss growth across the load, and tracemalloc's
   peak in a separate child (tracemalloc slows the load, so it is never timed). Targets: peak
   memory <= 3x the file size; time roughly linear in size.

Results are printed (Markdown-friendly); nothing is written except the cached corpus.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared")
SIZES = [(136, "25 MB"), (272, "50 MB"), (543, "100 MB")]  # gen_corpus.sh --big REPEAT, seed 1

CHILD = r"""
import gc, json, os, resource, sys, time
mode, path = sys.argv[1], sys.argv[2]
from exporter.loader import load_session
gc.collect()
if mode == "tracemalloc":
    import tracemalloc
    tracemalloc.start()
    session = load_session(path)
    current, peak = tracemalloc.get_traced_memory()
    print(json.dumps({"peak": peak, "retained": current, "entries": len(session.entries)}))
else:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu = time.perf_counter(), time.process_time()
    session = load_session(path)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "cpu": cpu, "rss_delta": (after - before) * 1024,
                      "entries": len(session.entries), "damaged": len(session.damaged)}))
"""


def child(mode: str, path: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, mode, str(path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout)


def big_session(out: Path, repeat: int) -> Path:
    folder = out / f"big-{repeat}"
    existing = sorted(folder.glob("*.jsonl"))
    if existing:
        return existing[0]
    script = HERE / "gen_corpus.sh"
    env = {**os.environ, "SHARED": str(SHARED)}
    start = time.perf_counter()
    done = subprocess.run(
        ["bash", str(script), "--big", str(folder), str(repeat), "1"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=600,
        check=True,
    )
    path = Path(done.stdout.strip().splitlines()[-1])
    print(f"  generated {path.name} in {time.perf_counter() - start:.1f}s", file=sys.stderr)
    return path


def bench_fixture(runs: int) -> None:
    from exporter.loader import load_session

    path = SHARED / "fixtures" / "pi-branched-4.jsonl"
    load_session(path)  # warm the imports and the page cache
    times, cpus = [], []
    for _ in range(runs):
        start, cpu = time.perf_counter(), time.process_time()
        session = load_session(path)
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    median = statistics.median(times)
    verdict = "PASS" if median < 0.15 else "FAIL"
    print(f"## load_session({path.name}) in-process, {runs} runs")
    print(
        f"{path.stat().st_size / 1e6:.2f} MB, {len(session.entries):,} entries: "
        f"median {median * 1000:.1f} ms wall ({statistics.median(cpus) * 1000:.1f} ms CPU), "
        f"min {min(times) * 1000:.1f} ms, max {max(times) * 1000:.1f} ms "
        f"(target < 150 ms: {verdict})"
    )


def bench_big(out: Path, runs: int) -> None:
    print("\n## big linear sessions (gen_corpus.sh --big, seed 1), fresh child per load")
    print(
        "| size | entries | load median (wall) | CPU | CPU/MB | ru_maxrss growth "
        "| tracemalloc peak | retained |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for repeat, label in SIZES:
        path = big_session(out, repeat)
        size = path.stat().st_size
        timed = [child("time", path) for _ in range(runs)]
        seconds = statistics.median(t["seconds"] for t in timed)
        cpu = statistics.median(t["cpu"] for t in timed)
        rss = max(t["rss_delta"] for t in timed)
        traced = child("tracemalloc", path)
        rows.append((label, size, seconds, cpu, rss, traced["peak"]))
        print(
            f"| {label} ({size / 1e6:.1f} MB) | {timed[0]['entries']:,} | {seconds:.2f} s "
            f"| {cpu:.2f} s | {cpu / (size / 1e6) * 1000:.1f} ms | {rss / size:.2f}x "
            f"| {traced['peak'] / size:.2f}x | {traced['retained'] / size:.2f}x |"
        )
    small = rows[0]
    print()
    for label, size, seconds, cpu, _rss, _peak in rows[1:]:
        ratio = size / small[1]
        print(
            f"{label} vs {small[0]}: size x{ratio:.2f}, wall time x{seconds / small[2]:.2f}, "
            f"CPU time x{cpu / small[3]:.2f} (linear: x{ratio:.2f})"
        )
    worst = max(max(r[4], r[5]) / r[1] for r in rows)
    verdict = "PASS" if worst <= 3 else "FAIL"
    print(f"worst peak memory: {worst:.2f}x the file size (target <= 3x: {verdict})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="runs on pi-branched-4.jsonl")
    parser.add_argument("--big-runs", type=int, default=3, help="timed child runs per size")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "bench_load")
    parser.add_argument("--no-big", action="store_true", help="skip the 25-100 MB sessions")
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    bench_fixture(args.runs)
    if not args.no_big:
        bench_big(args.out, args.big_runs)
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
