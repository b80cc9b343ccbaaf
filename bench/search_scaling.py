#!/usr/bin/env python3
"""How the outline search of our page grows with the session: 10k, 24k and 40k entries.

Each size is a deep linear session from `gen_corpus.sh --big` (Pi's own SessionManager),
exported once with our CLI and opened in headless Chromium (the browser of `bench_browser.py`).
On a freshly loaded page the search box gets one term that matches nothing (every row is read
and hidden: the worst case) and then a common one; each is timed from the last `input` event to
the end of the filter pass (`#tree-status` rewritten), as `bench_browser.py` times it. Search
should grow linearly with the entries: it was quadratic until 0.2.8 (a scoped
`querySelectorAll` per outline row), 4.1 s at 20,000 entries and ~27 s at 40,000.

    .venv/bin/python bench/search_scaling.py                    # ~2 min
    .venv/bin/python bench/search_scaling.py --write-results    # replaces its RESULTS.md section

Pi is not compared here: its page is blank above ~6,000 entries (see `bench_browser.py`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_browser as browser_bench  # the same browser, page probe and search timing
import bench_export as common

#: gen_corpus.sh --big REPEAT values (seed 1): about 10k, 24k and 40k entries.
REPEATS = (57, 136, 228)
TERMS = ["zzzq-no-match", "bash"]


def export(source: Path, out: Path) -> None:
    subprocess.run(
        [str(common.ours_binary()), "export", str(source), "-o", str(out)],
        check=True,
        capture_output=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="page loads per size (median)")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    facts = common.machine_facts()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=browser_bench.CHROMIUM, args=browser_bench.CHROMIUM_FLAGS
        )
        for repeat in REPEATS:
            source = common.big_session(repeat)
            entries = common.count_entries(source)
            page_path = Path(tmp) / f"r{repeat}.html"
            export(source, page_path)
            results: dict[str, browser_bench.SearchRuns] = {}
            loads = []
            for _ in range(args.runs):
                ctx, page, metrics, _errors = browser_bench.open_page(browser, page_path)
                loads.append(metrics["load"])
                browser_bench.measure_search(page, TERMS, results)
                ctx.close()
            cells = [f"{common.median(results[t].filtered):,.0f}" for t in [*TERMS, "Esc (clear)"]]
            load = common.median(loads)
            rows.append(f"| {entries:,} | {load:,.0f} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
        browser.close()
    facts["load average (end)"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    facts["bench time"] = f"{time.monotonic() - started:.0f} s"
    body = "\n".join(
        [
            common.facts_markdown(facts, common.command_line()),
            "",
            "Deep linear sessions from `gen_corpus.sh --big REPEAT` (seed 1), our page only, "
            f"median of {args.runs} fresh page loads; search ms = last `input` event to the "
            "end of the filter pass (120 ms debounce included); the first term reads every "
            "row's text.",
            "",
            f"| entries | load ms | `{TERMS[0]}` ms | `{TERMS[1]}` ms | Esc (clear) ms |",
            "|--:|--:|--:|--:|--:|",
            *rows,
        ]
    )
    print(body)
    if args.write_results:
        common.write_section("search_scaling", "Search on big pages", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
