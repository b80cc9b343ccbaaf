"""Where one export's time goes: a timeline of its phases, in this process.

    .venv/bin/python bench/export_timeline.py SESSION.jsonl [--jobs N]

Prints the moment each phase ends (seconds since start): imports, load, plan, fork, header
statistics, outline, this process's share of the entries, waiting for the children, the
page template, and writing. Not a comparison with Pi (bench_export.py does that); a map
of what to work on next.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

START = time.perf_counter()
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def mark(label: str) -> None:
    print(f"{time.perf_counter() - START:7.3f} s  {label}", flush=True)


def wrap(owner: object, name: str, label: str) -> None:
    original = getattr(owner, name)

    def timed(*args: object, **kwargs: object) -> object:
        result = original(*args, **kwargs)
        mark(label)
        return result

    setattr(owner, name, timed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("session")
    ap.add_argument("--jobs", type=int, default=0, help="as export -j (default 0: all CPUs)")
    args = ap.parse_args()

    import exporter.render as render
    from exporter.fsutil import atomic_write_text
    from exporter.loader import load_session
    from exporter.render import parallel

    mark("imports")
    session = load_session(args.session)
    mark(f"load ({len(session.entries):,} entries)")
    wrap(render.PageBuilder, "plan", "plan (page order, results, repeated outputs)")
    wrap(parallel.ForkedMap, "start", "fork")
    wrap(render, "compute_stats", "header statistics (while the children render)")
    wrap(render.PageBuilder, "outline", "outline")
    wrap(parallel.ForkedMap, "results", "entries: own share + children collected")
    html = render.render_session(session, render.RenderOptions(jobs=args.jobs))
    mark("page template")
    with tempfile.TemporaryDirectory() as folder:
        atomic_write_text(Path(folder) / "page.html", html)
    mark(f"written ({len(html.encode('utf-8')):,} bytes)")


if __name__ == "__main__":
    main()
