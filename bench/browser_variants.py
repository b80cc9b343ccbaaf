#!/usr/bin/env python3
"""Where a mid-size page's load time goes: our page with one part cut out or changed, and Pi's.

`bench_browser.py` says how long our page takes to its load event; this script says why, by
loading variants of the same exported page side by side (alternating, a fresh context per load,
median of N) and reporting each variant's load event as a ratio to Pi's page:

* ours (no CSP)        the exported page with its Content-Security-Policy meta tag removed.
                       Every variant below edits the inline stylesheet, which the CSP pins by
                       hash: with the CSP in place Chromium would silently drop the edited
                       stylesheet and measure an unstyled page. Removing it from the baseline
                       too keeps the comparison fair.
* no transcript        the transcript section removed: header, tables, chart and outline only.
* transcript unrendered  the transcript kept in the DOM but `content-visibility: hidden`: it is
                       parsed, never styled or laid out (what the transcript's DOM alone costs).
* no outline           the sidebar's outline rows removed.
* generic fonts        `sans-serif` / `monospace` instead of the font stacks (fewer font lookups).
* no stylesheet        the inline stylesheet removed.
* minimal page         a one-paragraph page: Chromium's own floor in this setup.

    .venv/bin/python bench/browser_variants.py                      # pi-branched-1, 9 loads each
    .venv/bin/python bench/browser_variants.py --fixture pi-branched-3.jsonl --runs 15
    .venv/bin/python bench/browser_variants.py --write-results      # its section of RESULTS.md
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_browser as browser  # open_page, record, Chromium flags
import bench_export as common  # paths, exporters, facts, RESULTS.md

MINIMAL_PAGE = "<!DOCTYPE html><html lang=en><meta charset=utf-8><title>x</title><p>x</p></html>"
_CSP = re.compile(r'<meta http-equiv="Content-Security-Policy"[^>]*>')
_TRANSCRIPT = re.compile(r'<section id="transcript".*?(?=</main>)', re.S)
_OUTLINE_ROWS = re.compile(r'(<ul[^>]*id="tree"[^>]*>).*?(</ul>\s*</nav>)', re.S)
_STYLE = re.compile(r"<style>.*?</style>", re.S)
_SANS = re.compile(r"--sans: ?[^;]*;")  # (the page's CSS is minified)
_MONO = re.compile(r"--mono: ?[^;]*;")


def _with_css(html: str, rule: str) -> str:
    return html.replace("</style>", rule + "</style>", 1)


def _checked(html: str, changed: str, what: str) -> str:
    """A variant that changed nothing would silently measure the baseline twice."""
    if changed == html:
        raise SystemExit(f"browser_variants: could not apply {what!r} (page layout changed?)")
    return changed


VARIANTS: list[tuple[str, Callable[[str], str]]] = [
    ("ours (no CSP)", lambda h: h),
    ("no transcript", lambda h: _checked(h, _TRANSCRIPT.sub("", h, 1), "no transcript")),
    (
        "transcript unrendered",
        lambda h: _checked(h, _with_css(h, "#transcript{content-visibility:hidden}"), "cv"),
    ),
    ("no outline", lambda h: _checked(h, _OUTLINE_ROWS.sub(r"\1\2", h, 1), "no outline")),
    (
        "generic fonts",
        lambda h: _checked(
            h, _MONO.sub("--mono: monospace;", _SANS.sub("--sans: sans-serif;", h, 1), 1), "fonts"
        ),
    ),
    ("no stylesheet", lambda h: _checked(h, _STYLE.sub("", h, 1), "no stylesheet")),
    ("minimal page", lambda h: MINIMAL_PAGE),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixture", default="pi-branched-1.jsonl", help="a file in shared/fixtures")
    ap.add_argument("--runs", type=int, default=9, help="loads per page (default 9)")
    ap.add_argument("--pi-home", help="Pi install folder (default: PI_HOME or install-pi.sh)")
    ap.add_argument("--write-results", action="store_true", help="replace its RESULTS.md section")
    args = ap.parse_args(argv)
    cmd = common.command_line()
    facts = common.machine_facts()
    from playwright.sync_api import sync_playwright

    source = common.shared_dir() / "fixtures" / args.fixture
    if not source.is_file():
        sys.exit(f"browser_variants: no fixture {source}")
    home = common.pi_home(args.pi_home)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-variants-") as tmp:
        exporters = common.Exporters(home, Path(tmp) / "export")
        exporters.new_homes()  # each tool runs with a home of its own, as in bench_export
        _, ours_html = exporters.run_ours(source)
        _, pi_html = exporters.run_pi(source)
        pages: list[tuple[str, Path]] = []
        html = _CSP.sub("", ours_html.read_text(encoding="utf-8"), 1)
        for n, (name, make) in enumerate(VARIANTS):
            page = Path(tmp) / f"variant-{n}.html"
            page.write_text(make(html), encoding="utf-8")
            pages.append((name, page))
        pi_page = Path(tmp) / "pi.html"
        pi_html.rename(pi_page)
        pages.append(("Pi's page", pi_page))
        runs = {name: browser.PageRuns(html_bytes=path.stat().st_size) for name, path in pages}
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(
                executable_path=browser.CHROMIUM, args=browser.CHROMIUM_FLAGS, headless=True
            )
            version = chromium.version
            for _, path in pages:  # one untimed warm-up each
                ctx, *_ = browser.open_page(chromium, path)
                ctx.close()
            for i in range(args.runs):
                for name, path in pages if i % 2 == 0 else pages[::-1]:
                    ctx, _page, metrics, errors = browser.open_page(chromium, path)
                    browser.record(runs[name], metrics, errors)
                    ctx.close()
                print(f"  run {i + 1}/{args.runs}", file=sys.stderr)
            chromium.close()
    elapsed = time.perf_counter() - started

    med = common.median
    pi_load = med(runs["Pi's page"].loads)
    out = [
        common.facts_markdown(
            {**facts, **common.finish_facts(home, elapsed, chromium=version)}, cmd
        ),
        "",
        f"`{args.fixture}` exported by each tool; our page then edited (see the script's "
        f"docstring for each variant). Headless Chromium as in `bench_browser.py`, a fresh "
        f"context per load, the pages alternating, median of {args.runs} loads. **load** = "
        f"`loadEventStart`; ratio = that page's load / Pi's page's load; the 0.3 budget is "
        f"{0.3 * pi_load:.0f} ms.",
        "",
        "| page | HTML B | DOM elements | load ms | load min–max | ratio to Pi | frame ms |",
        "|---|--:|--:|--:|--:|--:|--:|",
    ]
    for name, _ in pages:
        r = runs[name]
        out.append(
            f"| {name} | {r.html_bytes:,} | {r.dom:,} | {med(r.loads):.0f} "
            f"| {min(r.loads):.0f}–{max(r.loads):.0f} | {med(r.loads) / pi_load:.2f} "
            f"| {med(r.frames):.0f} |"
        )
    text = "\n".join(out)
    print(text)
    if args.write_results:
        common.write_section("browser_variants", "Browser: where a mid-size page's load goes", text)
        print(f"\nwrote {common.RESULTS_MD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
