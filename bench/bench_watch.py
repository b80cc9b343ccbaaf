"""`pi-session watch`: how long after Pi appends a line the new page is ready to be served.

    .venv/bin/python bench/bench_watch.py [--runs 5] [--big] [--write-results]

For each fixture (and, with ``--big``, gen_corpus.sh's 25 MB session) the real command runs
on a copy of the file; each run appends one prompt to the leaf, as Pi writes it, and polls
``/version`` every 20 ms until the version changes. That time is what a reader waits for the
server (the command looks at the file every 0.5 s, so about 0.25 s of it is that wait on
average), before the open page's own poll (every second) picks it up. Median of ``--runs``;
also the page's size as served against the exported page's (the status line and its
script). Pi has no live view, so there is no Pi column.
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
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_export as common

REPO = Path(__file__).resolve().parent.parent


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.read()


def leaf_of(path: Path) -> str | None:
    """The last line's id: Pi's leaf in a file it writes (each entry appended to the last);
    None for a v1 file, whose entries have no ids (each follows the line before)."""
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - 2_000_000))
        lines = handle.read().splitlines()
    for line in reversed(lines):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("id"), str):
            return value["id"]
    return None


def measure(source: Path, runs: int) -> dict[str, float | int]:
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / source.name
        shutil.copyfile(source, copy)
        env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
        process = subprocess.Popen(
            [str(Path(sys.executable).parent / "pi-session"), "watch", str(copy)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        try:
            assert process.stdout is not None
            started = time.perf_counter()
            url = process.stdout.readline().strip()
            first_page = time.perf_counter() - started
            served = len(fetch(url))
            waits = []
            for run in range(runs):
                version = json.loads(fetch(url + "version"))["version"]
                leaf = leaf_of(copy)
                line: dict[str, object] = {"type": "message"}
                if leaf is not None:
                    line.update(id=f"bench-watch-{run}", parentId=leaf)
                line.update(
                    timestamp="2026-12-02T00:00:00.000Z",
                    message={"role": "user", "content": f"run {run}", "timestamp": 0},
                )
                time.sleep(0.6)  # not in step with the command's half-second look
                began = time.perf_counter()
                with open(copy, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(line) + "\n")
                while json.loads(fetch(url + "version"))["version"] == version:
                    time.sleep(0.02)
                waits.append(time.perf_counter() - began)
        finally:
            process.terminate()
            process.wait(timeout=30)
    return {
        "first": first_page,
        "update": common.median(waits),
        "worst": max(waits),
        "served": served,
        "exported": exported_size(source),
    }


def exported_size(source: Path) -> int:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "page.html"
        subprocess.run(
            [
                str(Path(sys.executable).parent / "pi-session"),
                "export",
                str(source),
                "-o",
                str(out),
            ],
            check=True,
            capture_output=True,
        )
        return out.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--big", action="store_true", help="also the 25 MB session")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args()
    began = time.perf_counter()
    facts = common.machine_facts()
    files = common.fixtures()
    if args.big:
        files.append(common.big_session(136))
    rows = []
    for path in files:
        result = measure(path, args.runs)
        name = path.name if path.parent.name == "fixtures" else "big (gen_corpus --big 136)"
        rows.append(
            f"| {name} | {path.stat().st_size:,} | {result['first']:.2f} | "
            f"{result['update']:.2f} | {result['worst']:.2f} | {result['exported']:,} | "
            f"{int(result['served']) - int(result['exported']):+,} |"
        )
        print(rows[-1], file=sys.stderr)
    facts["bench time"] = f"{time.perf_counter() - began:.0f} s"
    body = "\n".join(
        [
            common.facts_markdown(facts, common.command_line()),
            "",
            f"The real `pi-session watch` on a copy of each file; {args.runs} runs each append "
            "one prompt and poll `/version` every 20 ms until it changes. First page: from the "
            "start of the command to its address on stdout (the page made). Update: from the "
            "append to the new version being served (median, and the slowest run); the command "
            "looks every 0.5 s, so ~0.25 s of it is that wait. Size: the served page against "
            "`export`'s page of the same file.",
            "",
            "| file | input B | first page s | update s (median) | update s (slowest) | "
            "exported page B | served page, extra B |",
            "|---|--:|--:|--:|--:|--:|--:|",
            *rows,
        ]
    )
    print(body)
    if args.write_results:
        common.write_section("bench_watch", "Watching a session live (pi-session watch)", body)


if __name__ == "__main__":
    main()
