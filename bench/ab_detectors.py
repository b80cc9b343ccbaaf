#!/usr/bin/env python3
"""Are this checkout's detectors slower than another version's? An alternating A/B.

`bench_redact.py` reports MB/s, but this machine's speed drifts by a third from one hour to
the next, so a change of detectors is judged against the old ones in the same minutes: each
run is a fresh process that scans one file with `exporter.detectors.scan` and prints its CPU
seconds, old and new alternating.

    git worktree add /tmp/old <commit>
    .venv/bin/python bench/ab_detectors.py --old /tmp/old [--runs 5] [FILE]

FILE defaults to the shared fixtures' pi-branched-4.jsonl ($SHARED, else ../shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TIMED = (
    "import sys, time\n"
    "from exporter.detectors import DETECTOR_VERSION, scan\n"
    "text = open(sys.argv[1], encoding='utf-8').read()\n"
    "started = time.process_time()\n"
    "found = scan(text)\n"
    "print(DETECTOR_VERSION, time.process_time() - started, len(found))\n"
)


def one_run(checkout: Path, file: Path) -> tuple[str, float, int]:
    """(detector version, CPU seconds, findings) of one scan in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", TIMED, str(file)],
        env=env,
        cwd=checkout,  # (`-c` puts the working folder first on the path: this checkout's)
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=True,
    )
    version, seconds, found = done.stdout.split()
    return version, float(seconds), int(found)


def main() -> None:
    shared = Path(os.environ.get("SHARED", HERE.parent / "shared"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="the other checkout")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "file", nargs="?", type=Path, default=shared / "fixtures/pi-branched-4.jsonl"
    )
    args = parser.parse_args()
    times: dict[str, list[float]] = {}
    for _ in range(args.runs):
        # (named by checkout too: two with the same DETECTOR_VERSION were one row)
        for name, checkout in (("old", args.old.resolve()), ("this", HERE)):
            version, seconds, found = one_run(checkout, args.file)
            times.setdefault(f"{name} {version} ({found} found)", []).append(seconds)
    megabytes = args.file.stat().st_size / 1e6
    print(f"{args.file.name}, {megabytes:.1f} MB, {args.runs} alternating runs, CPU seconds:")
    for name, values in times.items():
        low, high, middle = min(values), max(values), statistics.median(values)
        rate = megabytes / middle
        print(f"  {name}: {low:.2f}-{high:.2f} s, median {middle:.2f} s ({rate:.1f} MB/s)")


if __name__ == "__main__":
    main()
