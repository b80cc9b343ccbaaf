"""Listing benchmark: ``scan_summary`` vs the full ``load_session`` over 1,000 sessions.

    .venv/bin/python bench/bench_list.py [--count 1000] [--out bench/out/bench_list] [--fresh]

The sessions are written by Pi's own SessionManager (``bench/gen_corpus.sh OUTDIR COUNT``) into
a folder laid out like ``~/.pi/agent/sessions/--home-dev-projects-webapp--/`` and cached under
``--out``. Prints, for the whole project folder:

* ``list`` as the CLI does it: ``session_files`` + ``scan_summary`` per file (best of 3);
* the same facts from a full ``load_session`` + ``compute_stats`` per file (one pass);
* how many lines ``scan_summary`` fully JSON-decodes vs the lines it reads, to show the listing
  does not parse every message (it reads each line's fixed-order prefix instead);
* one real ``pi-session list --json`` process (start-up included);
* one real ``pi-session stats --all --json`` process (every session loaded in full);
* three real ``pi-session search`` processes (a common word, a word in no session, a regex).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = Path(os.environ.get("PI_SHARED_DIR") or REPO.parent / "shared")
CWD = "/home/dev/projects/webapp"  # gen-sessions.mjs' default project


def corpus(out: Path, count: int, fresh: bool) -> Path:
    from exporter.discover import encode_cwd

    root = out / f"sessions-{count}"
    folder = root / encode_cwd(CWD)
    if fresh and root.exists():
        shutil.rmtree(root)
    have = len(list(folder.glob("*.jsonl"))) if folder.is_dir() else 0
    if have != count:
        if root.exists():
            shutil.rmtree(root)
        start = time.perf_counter()
        subprocess.run(
            ["bash", str(HERE / "gen_corpus.sh"), str(folder), str(count), "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**os.environ, "SHARED": str(SHARED)},
            timeout=900,
            check=True,
        )
        print(
            f"  generated {count} sessions in {time.perf_counter() - start:.0f}s", file=sys.stderr
        )
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "bench_list")
    parser.add_argument("--fresh", action="store_true", help="regenerate the sessions")
    args = parser.parse_args()

    from exporter import discover
    from exporter.loader import load_session
    from exporter.usage import compute_stats

    started = time.perf_counter()
    root = corpus(args.out, args.count, args.fresh)
    files = discover.session_files(root, CWD)
    size = sum(p.stat().st_size for p in files)
    lines = sum(p.read_bytes().count(b"\n") for p in files)  # also warms the page cache
    print(f"## listing {len(files):,} sessions ({size / 1e6:.0f} MB, {lines:,} lines) in {CWD}")

    scan_times = []
    for _ in range(3):
        start = time.perf_counter()
        summaries = [discover.scan_summary(p) for p in discover.session_files(root, CWD)]
        scan_times.append(time.perf_counter() - start)
    scan = min(scan_times)

    start = time.perf_counter()
    full = []
    for path in files:
        session = load_session(path)
        stats = compute_stats(session)
        full.append((sum(1 for _ in session.iter_messages()), len(session.branches()), stats))
    load = time.perf_counter() - start

    agree = all(
        s.messages == m and s.branches == b and abs(s.cost - st.all.cost) < 1e-6
        for s, (m, b, st) in zip(summaries, full, strict=True)
    )

    decoded = {"lines": 0, "usage": 0}
    real_loads, real_tail = discover._loads, discover._usage_from_tail

    def counting_loads(raw: bytes):
        decoded["lines"] += 1
        return real_loads(raw)

    def counting_tail(raw: bytes):
        decoded["usage"] += 1
        return real_tail(raw)

    discover._loads, discover._usage_from_tail = counting_loads, counting_tail
    try:
        for path in files:
            discover.scan_summary(path)
    finally:
        discover._loads, discover._usage_from_tail = real_loads, real_tail

    print("| method | total | per session |")
    print("|---|---|---|")
    print(f"| scan_summary (list) | {scan:.2f} s | {scan / len(files) * 1000:.2f} ms |")
    print(f"| load_session + compute_stats | {load:.2f} s | {load / len(files) * 1000:.2f} ms |")
    print(f"\nscan_summary is {load / scan:.1f}x faster; same messages/branches/cost: {agree}")
    print(
        f"scan_summary fully decoded {decoded['lines']:,} of {lines:,} lines "
        f"({decoded['lines'] / lines:.1%}: headers, first prompts, names, odd lines) and "
        f"{decoded['usage']:,} usage objects; the full loader decodes all {lines:,}."
    )

    command = [sys.executable, "-m", "exporter", "list", "--sessions-dir", str(root)]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, "--cwd", CWD, "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=True,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    print(
        f"`pi-session list --json` process: {time.perf_counter() - start:.2f} s "
        f"for {len(rows):,} sessions (exit {done.returncode})"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "exporter", "stats", "--all", "--sessions-dir", str(root), "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=600,
        check=True,
    )
    report = json.loads(done.stdout)
    same = abs(report["total"]["cost"] - sum(s.cost for s in summaries)) < 1e-4
    print(
        f"`pi-session stats --all --json` process (usage per model, project and day; every "
        f"session loaded, one process per CPU): {time.perf_counter() - start:.2f} s for "
        f"{report['sessions_read']:,} sessions; total cost the same as the listing's: {same}"
    )
    search = [sys.executable, "-m", "exporter", "search"]
    for words, what in (
        (["dimGray"], "a word in most sessions"),
        (["zzqq-nothing"], "a word in none: the raw-byte check, no session parsed"),
        (["zz.q", "--regex"], "a regular expression: every session parsed"),
    ):
        start = time.perf_counter()
        done = subprocess.run(
            [*search, *words, "--all", "--sessions-dir", str(root), "--json"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=600,
            check=True,
        )
        found = len(done.stdout.splitlines())
        print(
            f"`pi-session search {' '.join(words)} --all --json` process ({what}): "
            f"{time.perf_counter() - start:.2f} s, {found:,} entries"
        )
    print(f"\n(total {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
