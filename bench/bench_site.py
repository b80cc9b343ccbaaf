#!/usr/bin/env python3
"""Site build benchmark (`pi-session export --all`): cold, warm and one-session rebuilds, memory.

A corpus of COUNT sessions written by Pi's own SessionManager (gen_corpus.sh, four batches with
different seeds, one project folder each) is cached in ``bench/out/site-corpus-<COUNT>/``.
Every build runs in a fresh child process (``build_site`` as the CLI would call it) on a
snapshot of the code taken at the start; its wall time includes Python start-up and imports.
Peak memory is sampled from /proc every 20 ms over the child and all its descendants (the
pool's workers): the peak of the summed RSS, the largest single process, and the build
process itself.

    .venv/bin/python bench/bench_site.py                   # 1,000 sessions: ~3 min on 2 idle cores
    .venv/bin/python bench/bench_site.py --count 200 --skip-serial
    .venv/bin/python bench/bench_site.py --write-results   # also replaces its RESULTS.md section
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_export as common

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
OUT = BENCH_DIR / "out"
PROJECTS = 4
CHILD_ENV = dict(os.environ)


# --- corpus ------------------------------------------------------------------------------------


def corpus(count: int, name: str = "site") -> Path:
    """COUNT sessions in PROJECTS project folders, generated once and cached (bench/out)."""
    root = OUT / f"{name}-corpus-{count}"
    if (root / ".complete").is_file():
        return root
    shutil.rmtree(root, ignore_errors=True)
    print(f"generating {count} sessions into {root} ...", file=sys.stderr)
    env = dict(os.environ, SHARED=str(common.shared_dir()))
    for k in range(PROJECTS):
        n = count // PROJECTS + (1 if k < count % PROJECTS else 0)
        cwd = f"/home/dev/projects/p{k}"
        folder = root / ("--" + cwd[1:].replace("/", "-") + "--")
        script = str(BENCH_DIR / "gen_corpus.sh")
        subprocess.run(
            ["bash", script, str(folder), str(n), str(k + 1)],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        for path in folder.glob("*.jsonl"):  # one project per folder (the generator has one cwd)
            head, rest = path.read_bytes().split(b"\n", 1)
            header = json.loads(head) | {"cwd": cwd}
            path.write_bytes(json.dumps(header).encode() + b"\n" + rest)
    (root / ".complete").write_text(str(count), encoding="utf-8")
    return root


def corpus_files(root: Path, limit: int | None = None) -> list[Path]:
    return sorted(root.glob("*/*.jsonl"))[:limit]


def snapshot_code() -> Path:
    """Copy exporter/, templates/ and static/: edits made while the bench runs stay out of it."""
    code = OUT / "site-bench-code"
    shutil.rmtree(code, ignore_errors=True)
    for name in ("exporter", "templates", "static"):
        shutil.copytree(REPO / name, code / name, ignore=shutil.ignore_patterns("__pycache__"))
    common.byte_compile(code / "exporter")  # as a real install has them
    CHILD_ENV["PYTHONPATH"] = str(code)  # ahead of the editable install's path entry
    return code


# --- one build in a child process --------------------------------------------------------------


def child_build(args: argparse.Namespace) -> None:
    """Runs inside the measured child: one build_site call, a JSON report on stdout."""
    from exporter.render import RenderOptions
    from exporter.site import build_site

    files = corpus_files(Path(args.sessions), args.limit)
    report = build_site(
        files,
        Path(args.site),
        jobs=args.jobs,
        force=args.force,
        render_options=RenderOptions(),
        progress=False,
    )
    import exporter

    failed = [(str(p), e) for p, e in report.failed]
    counts = {"rendered": report.rendered, "unchanged": report.unchanged}
    code = {"code": exporter.__file__}
    print(json.dumps({"seconds": report.seconds, "failed": failed, **counts, **code}))


def child_render(args: argparse.Namespace) -> None:
    """Load + render + write one session in-process: its share of a one-session rebuild."""
    from exporter.loader import load_session
    from exporter.render import render_session

    start = time.perf_counter()
    html = render_session(load_session(args.one))
    Path(args.site).write_text(html, encoding="utf-8")
    print(json.dumps({"seconds": time.perf_counter() - start}))


@dataclass
class Measure:
    wall: float
    inner: float
    rendered: int
    unchanged: int
    failed: int
    tree_mb: float  # peak of the summed RSS of the child and its descendants
    biggest_mb: float  # the largest single process (VmHWM)
    self_mb: float  # the build process itself (ru_maxrss)


def _tree(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    ppid = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, []))
    return found


def _status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_child(argv: list[str]) -> tuple[float, dict, float, float, float]:
    """Run a child; return wall s, its JSON, peak tree RSS, largest process, own ru_maxrss."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=CHILD_ENV)
    peak = {"tree": 0, "one": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids = _tree(proc.pid)
            rss = [_status_kb(p, "VmRSS:") for p in pids]
            peak["tree"] = max(peak["tree"], sum(rss))
            peak["one"] = max([peak["one"], *(_status_kb(p, "VmHWM:") for p in pids)])
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed: {err.decode()[-2000:]}")
    return wall, json.loads(out), peak["tree"] / 1024, peak["one"] / 1024, usage.ru_maxrss / 1024


def build(sessions: Path, site: Path, jobs: int, *, limit: int | None = None) -> Measure:
    argv = [sys.executable, __file__, "--child-build", "--sessions", str(sessions)]
    argv += ["--site", str(site), "--jobs", str(jobs)]
    argv += ["--limit", str(limit)] if limit else []
    wall, data, tree, one, own = run_child(argv)
    failed = len(data["failed"])
    if not data["code"].startswith(CHILD_ENV.get("PYTHONPATH", "")):
        raise RuntimeError(f"the child used {data['code']}, not the snapshot")
    for path, error in data["failed"][:3]:
        print(f"  failed: {Path(path).name}: {error}", file=sys.stderr)
    return Measure(
        wall, data["seconds"], data["rendered"], data["unchanged"], failed, tree, one, own
    )


def render_one(path: Path, scratch: Path) -> float:
    argv = [sys.executable, __file__, "--child-render", "--one", str(path), "--site", str(scratch)]
    return run_child(argv)[1]["seconds"]


# --- the benchmark -----------------------------------------------------------------------------


def row(label: str, m: Measure, note: str = "") -> str:
    return (
        f"| {label} | {m.wall:.2f} | {m.inner:.2f} | {m.rendered} / {m.unchanged} / {m.failed} "
        f"| {m.tree_mb:.0f} | {m.biggest_mb:.0f} | {m.self_mb:.0f} | {note} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="sessions (default 1000)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="all cores")
    parser.add_argument("--small", type=int, default=100, help="subset for the memory check")
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--skip-serial", action="store_true", help="no cold --jobs 1 build")
    parser.add_argument("--write-results", action="store_true")
    for hidden in ("--child-build", "--child-render", "--force"):
        parser.add_argument(hidden, action="store_true", help=argparse.SUPPRESS)
    for hidden in ("--sessions", "--site", "--one"):
        parser.add_argument(hidden, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_build:
        child_build(args)
        return 0
    if args.child_render:
        child_render(args)
        return 0

    facts = common.machine_facts()
    snapshot_code()
    sessions = corpus(args.count)
    files = corpus_files(sessions)
    sizes = sorted(p.stat().st_size for p in files)
    work = OUT / "site-bench"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    lines: list[str] = []

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    started = time.perf_counter()
    log(f"{len(files)} sessions, {sum(sizes) / 1e6:.0f} MB; jobs {args.jobs}")
    serial = None
    if not args.skip_serial:
        serial = build(sessions, work / "serial", 1)
        lines.append(row("cold, `--jobs 1`", serial))
        log(lines[-1])
    cold = build(sessions, work / "site", args.jobs)
    speedup = f"speed-up ×{serial.wall / cold.wall:.2f}" if serial else ""
    lines.append(row(f"cold, `--jobs {args.jobs}`", cold, speedup))
    log(lines[-1])
    warm = [build(sessions, work / "site", args.jobs) for _ in range(args.warm_runs)]
    warm_mid = sorted(warm, key=lambda m: m.wall)[len(warm) // 2]
    target = "target < 3 s: " + ("**met**" if warm_mid.wall < 3 else "**missed**")
    lines.append(row(f"warm, nothing changed (median of {len(warm)})", warm_mid, target))
    log(lines[-1])
    victim = files[len(files) // 2]
    os.utime(victim)  # mtime only: the hash says unchanged
    touched = build(sessions, work / "site", args.jobs)
    lines.append(row("`touch` one file (same bytes)", touched, "size+mtime differ → hashed"))
    log(lines[-1])
    original = victim.read_bytes()
    try:
        info = {"type": "session_info", "id": "bench0001", "parentId": None, "name": "bench"}
        stamp = {"timestamp": "2026-01-01T00:00:00.000Z"}
        victim.write_bytes(original + json.dumps(info | stamp).encode() + b"\n")
        changed = build(sessions, work / "site", args.jobs)
        own = render_one(victim, work / "one.html")
    finally:
        victim.write_bytes(original)
    over = changed.wall - own
    verdict = "**met**" if over < 2 else "**missed**"
    note = f"that session alone: {own:.2f} s; rest {over:.2f} s (target < 2 s: {verdict})"
    lines.append(row("one session changed", changed, note))
    log(lines[-1])
    small = build(sessions, work / "small", args.jobs, limit=args.small)
    lines.append(row(f"cold, first {args.small} sessions, `--jobs {args.jobs}`", small))
    log(lines[-1])
    manifest = (work / "site" / ".pi-session-site.json").stat().st_size
    index = (work / "site" / "index.html").stat().st_size
    elapsed = time.perf_counter() - started
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(OUT / "site-bench-code", ignore_errors=True)

    facts["bench time"] = f"{elapsed:.0f} s"
    median_kb = statistics.median(sizes) / 1024
    body = "\n".join(
        [
            common.facts_markdown(facts, common.command_line()),
            "",
            f"Corpus: {len(files):,} sessions from `gen_corpus.sh` ({PROJECTS} projects), "
            f"{sum(sizes) / 1e6:.0f} MB; file size min {sizes[0] / 1024:.0f} KB, median "
            f"{median_kb:.0f} KB, max {sizes[-1] / 1024:.0f} KB. Site: index.html "
            f"{index / 1e6:.2f} MB, manifest {manifest / 1e6:.2f} MB. Each build is a fresh "
            "child process; *wall* includes Python start-up and imports, *build* is "
            "`SiteReport.seconds`. Memory is sampled every 20 ms: *tree* = peak of the summed "
            "RSS of the build process and its workers, *largest* = biggest single process "
            "(VmHWM), *parent* = the build process (`ru_maxrss`).",
            "",
            "| run | wall s | build s | rendered / unchanged / failed | tree MB | largest MB "
            "| parent MB | note |",
            "|---|--:|--:|--:|--:|--:|--:|---|",
            *lines,
            "",
            f"Memory vs corpus size: parent {small.self_mb:.0f} MB with {args.small} sessions "
            f"→ {cold.self_mb:.0f} MB with {len(files):,}; largest single process "
            f"{small.biggest_mb:.0f} → {cold.biggest_mb:.0f} MB (forked workers share the "
            "parent's pages, so *tree* counts those twice). Generating the corpus (once, cached) "
            "is not included.",
        ]
    )
    print(body)
    if args.write_results:
        common.write_section("bench_site", "Site build (export --all)", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
