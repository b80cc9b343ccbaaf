#!/usr/bin/env python3
"""CLI export benchmark: `pi-session export` against `pi --export`, side by side in one run.

For every fixture in shared/fixtures (and one big generated session) both exporters are run
N times, alternating which goes first, each as a fresh child process. Reported per file:
median wall time, median peak RSS of the child (``os.wait4`` rusage, so per child and exact),
HTML bytes, and the ratios of the medians (ours / Pi). Pi always gets a fresh copy of the input
(it migrates and rewrites legacy files in place) and a fresh empty HOME.

    .venv/bin/python bench/bench_export.py                  # ~3 min with the defaults
    .venv/bin/python bench/bench_export.py --runs 3 --skip-big
    .venv/bin/python bench/bench_export.py --write-results  # also updates bench/RESULTS.md

The helpers at the top (paths, machine facts, RESULTS.md sections) are shared with
bench_browser.py, which imports this module.
"""

from __future__ import annotations

import argparse
import compileall
import datetime as _dt
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
RESULTS_MD = BENCH_DIR / "RESULTS.md"

# Targets from the issue (ours / Pi, ratio of medians).
TARGET_TIME_FIXTURE = 0.5
TARGET_TIME_BIG = 1.0
TARGET_RSS_BIG = 0.5
TARGET_BYTES = 0.8
FIXTURE_MAX_BYTES = 3_000_000  # "each fixture up to 3 MB" (the largest is 2,982,449 B)


# --------------------------------------------------------------------------- shared helpers


def shared_dir() -> Path:
    """shared/ beside the repo (like gen_corpus.sh); SHARED= overrides."""
    env = os.environ.get("SHARED")
    path = Path(env) if env else REPO.parent / "shared"
    if not (path / "fixtures").is_dir():
        sys.exit(f"bench: shared/ not found at {path} (set SHARED=)")
    return path.resolve()


def pi_home(explicit: str | None = None) -> Path:
    """The pinned Pi install (install-pi.sh installs it once and prints its folder)."""
    if explicit:
        return Path(explicit)
    env = os.environ.get("PI_HOME")
    if env:
        return Path(env)
    script = shared_dir() / "tools" / "install-pi.sh"
    out = (
        subprocess.run(
            ["bash", str(script)],
            check=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        .stdout.strip()
        .splitlines()
    )
    return Path(out[-1])


def pi_binary(home: Path) -> Path:
    binary = home / "node_modules" / ".bin" / "pi"
    if not binary.exists():
        sys.exit(f"bench: Pi CLI not found at {binary}")
    return binary


def pi_version(home: Path) -> str:
    pkg = home / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
    try:
        import json

        return json.loads(pkg.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return "?"


def ours_binary() -> Path:
    venv = REPO / ".venv" / "bin" / "pi-session"
    if venv.exists():
        return venv
    found = shutil.which("pi-session")
    if not found:
        sys.exit("bench: pi-session not found (install the package: pip install -e .)")
    return Path(found)


SNAPSHOT_DIRS = ("exporter", "templates", "static")


def snapshot_product(dest: Path) -> list[str]:
    """Copy exporter/, templates/ and static/ (as they are now) into dest; return the command.

    Other people edit the working tree while a bench runs; a snapshot keeps every run of one
    bench on the same code. The command is what the console script does (``from
    exporter.launch import run``) with the snapshot first on sys.path, run by the venv's
    interpreter.
    """
    for name in SNAPSHOT_DIRS:
        shutil.copytree(
            REPO / name, dest / name, ignore=shutil.ignore_patterns("*.tmp", "__pycache__")
        )
    byte_compile(dest / "exporter")
    python = ours_binary().parent / "python"
    if not python.exists():
        python = Path(sys.executable)
    code = f"import sys; sys.path.insert(0, {str(dest)!r}); from exporter.launch import run; run()"
    return [str(python), "-c", code]


def byte_compile(package: Path) -> None:
    """Write the .pyc files a real install has (pip compiles a wheel when it installs it).

    Without them every run compiles the package from source (~40 ms), e.g. wherever
    PYTHONDONTWRITEBYTECODE is set, which is not what a user's `pi-session` pays.
    """
    if not compileall.compile_dir(str(package), quiet=1, force=True):
        sys.exit(f"bench: could not byte-compile {package}")


def fixtures(max_bytes: int = FIXTURE_MAX_BYTES) -> list[Path]:
    files = sorted((shared_dir() / "fixtures").glob("*.jsonl"))
    return [f for f in files if f.stat().st_size <= max_bytes]


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = base / "pi-session-export-bench"
    path.mkdir(parents=True, exist_ok=True)
    return path


def big_session(repeat: int, seed: int = 1) -> Path:
    """A deep linear session from gen_corpus.sh --big, cached by (repeat, seed)."""
    out = cache_dir() / f"big-r{repeat}-s{seed}"
    existing = sorted(out.glob("*.jsonl"))
    if len(existing) == 1:
        return existing[0]
    if out.exists():
        shutil.rmtree(out)
    print(f"generating --big {repeat} (seed {seed}) into {out} ...", file=sys.stderr)
    res = subprocess.run(
        ["bash", str(BENCH_DIR / "gen_corpus.sh"), "--big", str(out), str(repeat), str(seed)],
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    paths = [Path(p) for p in res.stdout.split() if p.endswith(".jsonl")]
    if len(paths) != 1:
        sys.exit(f"bench: gen_corpus.sh printed {paths!r}")
    return paths[0]


def count_entries(path: Path) -> int:
    """Non-blank lines minus the header line (good enough for generated v3 files)."""
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip()) - 1


def _cmd_version(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def machine_facts(extra: dict[str, str] | None = None) -> dict[str, str]:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError):
        pass
    head = _cmd_version(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"])
    dirty = _cmd_version(
        ["git", "-C", str(REPO), "status", "--porcelain", "--", "exporter", "templates", "static"]
    )
    facts = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "memory": mem,
        "load average (start)": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "node": _cmd_version(["node", "--version"]),
        "repo": f"{head}{' + uncommitted changes in exporter/templates/static' if dirty else ''}",
    }
    if extra:
        facts.update(extra)
    return facts


def finish_facts(home: Path, elapsed: float, **extra: str) -> dict[str, str]:
    return {
        "load average (end)": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "pi": pi_version(home),
        **extra,
        "bench time": f"{elapsed:.0f} s",
    }


def command_line() -> str:
    argv0 = os.path.relpath(sys.argv[0], Path.cwd()) if sys.argv else ""
    return " ".join(shlex.quote(a) for a in [Path(sys.executable).name, argv0, *sys.argv[1:]])


def facts_markdown(facts: dict[str, str], cmd: str) -> str:
    cwd = Path.cwd().resolve()
    where = "the repo root" if cwd == REPO else f"`{cwd}`"
    lines = [f"Command: `{cmd}` (run from {where})", ""]
    lines.append("Machine: " + "; ".join(f"{k} {v}" for k, v in facts.items()))
    return "\n".join(lines)


def write_section(name: str, heading: str, body: str, path: Path = RESULTS_MD) -> None:
    """Replace the text between <!-- NAME:start --> and <!-- NAME:end --> in RESULTS.md.

    Creates the file or appends `## heading` plus the markers when they are missing; every other
    section of the file is left byte for byte as it was.
    """
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.strip()}\n{end}"
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = (
            "# Benchmark results\n\n"
            "Each section is written by one script under `bench/` (see `bench/README.md`);\n"
            "rerun it with `--write-results` to replace its section. Ratios are ours / Pi's.\n"
        )
    if start in text and end in text and text.index(start) < text.index(end):
        before, rest = text.split(start, 1)
        _, after = rest.split(end, 1)
        text = before + block + after
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n{block}\n"
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def fmt_ratio(value: float, target: float | None) -> str:
    if value != value:  # nan
        return "n/a"
    text = f"{value:.2f}"
    if target is not None and text == f"{target:.2f}":
        text = f"{value:.4f}"  # too close to call at two decimals
    if target is None:
        return text
    return f"**{text}** ✅" if value <= target else f"**{text}** ❌"


def fmt_bytes(n: int) -> str:
    return f"{n:,}"


# --------------------------------------------------------------------------- measurement


@dataclass
class Run:
    wall: float
    maxrss_kb: int
    out_bytes: int
    cpu: float = 0.0  # user + system seconds of the child (less sensitive to a busy machine)


@dataclass
class FileResult:
    name: str
    in_bytes: int
    entries: int
    ours: list[Run] = field(default_factory=list)
    pi: list[Run] = field(default_factory=list)
    big: bool = False
    #: the untimed warm-up, each tool's first run in a new home (no caches of its own yet)
    first_ours: float = 0.0
    first_pi: float = 0.0

    def med(self, who: str, attr: str) -> float:
        return median([getattr(r, attr) for r in getattr(self, who)])


def timed_child(
    argv: list[str], cwd: Path, env: dict[str, str]
) -> tuple[float, int, int, bytes, float]:
    """Run argv; return (wall s, peak RSS KiB of that child, exit code, stderr, CPU s)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    # Drain stderr first (small), then reap with wait4 to get this child's own rusage.
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return wall, usage.ru_maxrss, proc.returncode, err, usage.ru_utime + usage.ru_stime


class Exporters:
    def __init__(self, pi_home_path: Path, workdir: Path, live: bool = False) -> None:
        self.pi = pi_binary(pi_home_path)
        self.workdir = workdir
        self._n = 0
        self.homes: dict[str, Path] = {}
        if live:
            self.ours_cmd = [str(ours_binary())]
            self.ours_desc = f"`{ours_binary()}` (the live working tree)"
        else:
            self.ours_cmd = snapshot_product(workdir / "snapshot")
            self.ours_desc = (
                "a snapshot of exporter/, templates/, static/ taken at the start "
                "(run as the console script does, with the venv's Python)"
            )

    def new_homes(self) -> None:
        """A new, empty home per tool, kept for the warm-up and every timed run of one file,
        as a user's home is kept between exports: what a tool caches there (our compiled
        templates) is paid for once, by the warm-up, whose time is reported apart."""
        self._n += 1
        self.homes = {}
        for who in ("ours", "pi"):
            home = self.workdir / f"home{self._n}-{who}"
            home.mkdir(parents=True)
            self.homes[who] = home

    def _fresh(self, who: str) -> tuple[Path, dict[str, str]]:
        self._n += 1
        run_dir = self.workdir / f"run{self._n}"
        run_dir.mkdir(parents=True)
        drop = ("PI_CODING_AGENT_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
        env = {k: v for k, v in os.environ.items() if k not in drop}
        env["HOME"] = str(self.homes[who])
        env.pop("COLORFGBG", None)
        return run_dir, env

    def run_ours(self, src: Path) -> tuple[Run, Path]:
        run_dir, env = self._fresh("ours")
        out = run_dir / "ours.html"
        wall, rss, rc, err, cpu = timed_child(
            [*self.ours_cmd, "export", str(src), "-o", str(out)], run_dir, env
        )
        if rc != 0 or not out.exists():
            raise RuntimeError(f"pi-session export {src} failed ({rc}): {err.decode()[-500:]}")
        return Run(wall, rss, out.stat().st_size, cpu), out

    def run_pi(self, src: Path) -> tuple[Run, Path]:
        run_dir, env = self._fresh("pi")
        copy = run_dir / "input.jsonl"
        shutil.copyfile(src, copy)  # Pi rewrites legacy files in place: never hand it the original
        os.chmod(copy, 0o644)
        out = run_dir / "pi.html"
        wall, rss, rc, err, cpu = timed_child(
            [str(self.pi), "--export", str(copy), str(out)], run_dir, env
        )
        if rc != 0 or not out.exists():
            raise RuntimeError(f"pi --export {src} failed ({rc}): {err.decode()[-500:]}")
        return Run(wall, rss, out.stat().st_size, cpu), out

    def cleanup_runs(self) -> None:
        for child in self.workdir.glob("run*"):
            shutil.rmtree(child, ignore_errors=True)


def bench_file(
    ex: Exporters, src: Path, runs: int, big: bool, name: str | None = None, log=print
) -> FileResult:
    res = FileResult(name or src.name, src.stat().st_size, count_entries(src), big=big)
    # Untimed warm-up of each (page cache, .pyc, node compile cache, each tool's own caches
    # in its new home) so run 1 is not an outlier; its time is reported as the first run.
    ex.new_homes()
    res.first_ours = ex.run_ours(src)[0].wall
    res.first_pi = ex.run_pi(src)[0].wall
    ex.cleanup_runs()
    for i in range(runs):
        order = ("ours", "pi") if i % 2 == 0 else ("pi", "ours")
        for who in order:
            run, _ = ex.run_ours(src) if who == "ours" else ex.run_pi(src)
            getattr(res, who).append(run)
        ex.cleanup_runs()
        o, p = res.ours[-1], res.pi[-1]
        log(
            f"  {res.name} run {i + 1}/{runs}: ours {o.wall:.2f}s {o.maxrss_kb // 1024} MB"
            f" | pi {p.wall:.2f}s {p.maxrss_kb // 1024} MB"
        )
    return res


# --------------------------------------------------------------------------- report


def table(results: list[FileResult], runs: int, big_runs: int) -> str:
    head = (
        "| file | input B | entries | ours s | Pi s | **time ratio** | ours MB | Pi MB "
        "| RSS ratio | ours HTML B | Pi HTML B | **bytes ratio** | CPU s ours / Pi (ratio) "
        "| first run s ours / Pi (ratio) |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    )
    rows = [head]
    for r in results:
        t_o, t_p = r.med("ours", "wall"), r.med("pi", "wall")
        m_o, m_p = r.med("ours", "maxrss_kb"), r.med("pi", "maxrss_kb")
        b_o, b_p = r.ours[-1].out_bytes, r.pi[-1].out_bytes
        c_o, c_p = r.med("ours", "cpu"), r.med("pi", "cpu")
        t_target = TARGET_TIME_BIG if r.big else TARGET_TIME_FIXTURE
        rows.append(
            f"| {r.name} | {fmt_bytes(r.in_bytes)} | {r.entries:,} | {t_o:.2f} | {t_p:.2f} "
            f"| {fmt_ratio(t_o / t_p, t_target)} (≤ {t_target}) "
            f"| {m_o / 1024:.0f} | {m_p / 1024:.0f} "
            f"| {fmt_ratio(m_o / m_p, TARGET_RSS_BIG if r.big else None)}"
            f"{f' (≤ {TARGET_RSS_BIG})' if r.big else ''} "
            f"| {fmt_bytes(b_o)} | {fmt_bytes(b_p)} "
            f"| {fmt_ratio(b_o / b_p, None if r.big else TARGET_BYTES)}"
            f"{'' if r.big else f' (≤ {TARGET_BYTES})'} "
            f"| {c_o:.2f} / {c_p:.2f} ({c_o / c_p:.2f}) "
            f"| {r.first_ours:.2f} / {r.first_pi:.2f} ({r.first_ours / r.first_pi:.2f}) |"
        )
    return "\n".join(rows)


def verdict(results: list[FileResult]) -> list[str]:
    lines = []
    fx = [r for r in results if not r.big]
    if fx:
        worst_t = max(fx, key=lambda r: r.med("ours", "wall") / r.med("pi", "wall"))
        wt = worst_t.med("ours", "wall") / worst_t.med("pi", "wall")
        bad_t = [
            r.name for r in fx if r.med("ours", "wall") / r.med("pi", "wall") > TARGET_TIME_FIXTURE
        ]
        lines.append(
            f"- CLI time ≤ {TARGET_TIME_FIXTURE} on every fixture: "
            + (
                "**met**"
                if not bad_t
                else f"**missed** on {len(bad_t)}/{len(fx)} ({', '.join(bad_t)})"
            )
            + f"; worst ratio {wt:.2f} ({worst_t.name})."
        )
        bad_b = [r.name for r in fx if r.ours[-1].out_bytes / r.pi[-1].out_bytes > TARGET_BYTES]
        worst_b = max(fx, key=lambda r: r.ours[-1].out_bytes / r.pi[-1].out_bytes)
        lines.append(
            f"- HTML bytes ≤ {TARGET_BYTES} on every fixture: "
            + ("**met**" if not bad_b else f"**missed** on {', '.join(bad_b)}")
            + f"; worst ratio {worst_b.ours[-1].out_bytes / worst_b.pi[-1].out_bytes:.4f}"
            f" ({worst_b.name})."
        )
    for r in (r for r in results if r.big):
        t = r.med("ours", "wall") / r.med("pi", "wall")
        m = r.med("ours", "maxrss_kb") / r.med("pi", "maxrss_kb")
        lines.append(
            f"- Big session ({r.in_bytes / 1e6:.1f} MB, {r.entries:,} entries): time ratio "
            f"{t:.2f} (≤ {TARGET_TIME_BIG}: {'**met**' if t <= TARGET_TIME_BIG else '**missed**'})"
            f", peak RSS ratio {m:.2f} (≤ {TARGET_RSS_BIG}: "
            f"{'**met**' if m <= TARGET_RSS_BIG else '**missed**'})."
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--runs", type=int, default=5, help="timed runs per exporter per fixture (default 5)"
    )
    ap.add_argument(
        "--big-runs",
        type=int,
        default=3,
        help="timed runs per exporter for the big session (default 3)",
    )
    ap.add_argument(
        "--big-repeat",
        type=int,
        default=136,
        help="gen_corpus.sh --big REPEAT (default 136, about 25 MB with seed 1)",
    )
    ap.add_argument("--big-seed", type=int, default=1)
    ap.add_argument("--skip-big", action="store_true", help="fixtures only")
    ap.add_argument(
        "--only",
        action="append",
        default=[],
        help="only fixtures whose name contains this (repeatable)",
    )
    ap.add_argument("--pi-home", help="Pi install folder (default: PI_HOME or install-pi.sh)")
    ap.add_argument(
        "--live",
        action="store_true",
        help="run the working tree's pi-session directly (default: a snapshot taken at start)",
    )
    ap.add_argument(
        "--write-results",
        action="store_true",
        help=f"replace the bench_export section of {RESULTS_MD.relative_to(REPO)}",
    )
    args = ap.parse_args(argv)
    cmd = command_line()
    facts = machine_facts()  # at the start: the commit and load average the run began with

    home = pi_home(args.pi_home)
    files = fixtures()
    if args.only:
        files = [f for f in files if any(s in f.name for s in args.only)]
    big = None if args.skip_big else big_session(args.big_repeat, args.big_seed)

    results: list[FileResult] = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        ex = Exporters(home, Path(tmp), live=args.live)
        for f in files:
            results.append(
                bench_file(ex, f, args.runs, big=False, log=lambda s: print(s, file=sys.stderr))
            )
        if big is not None:
            results.append(
                bench_file(
                    ex,
                    big,
                    args.big_runs,
                    big=True,
                    name=f"big (gen_corpus --big {args.big_repeat}, seed {args.big_seed})",
                    log=lambda s: print(s, file=sys.stderr),
                )
            )
    elapsed = time.perf_counter() - t_start

    facts.update(finish_facts(home, elapsed))
    md = [
        facts_markdown(facts, cmd),
        "",
        f"Median of {args.runs} runs per exporter per fixture"
        + (f" ({args.big_runs} for the big session)" if big is not None else "")
        + ", alternating which exporter goes first, after one untimed warm-up each. Each tool "
        "runs with a new home per file, kept from the warm-up through the timed runs as a "
        "user's home is: the warm-up pays for what a tool caches there (ours: the compiled "
        "templates, ~0.1 s), and its single time is the **first run** column. Wall time "
        "of the whole CLI process; peak RSS = `ru_maxrss` of that child (`os.wait4`). Pi gets a "
        "fresh copy of the input each run, so on the v1 fixtures its time includes the "
        "migration and rewrite it does on a user's first export. Ratios = ours / Pi (ratio of "
        "medians); ✅/❌ against the target in brackets. CPU = user + system time of the "
        f"child, less affected by a busy machine than wall time. Ours: {ex.ours_desc}.",
        "",
        table(results, args.runs, args.big_runs),
        "",
        *verdict(results),
    ]
    text = "\n".join(md)
    print(text)
    if args.write_results:
        write_section("bench_export", "Export vs pi --export", text)
        print(f"\nwrote {RESULTS_MD}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
