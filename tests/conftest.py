"""Shared test fixtures: the real session fixtures, the real Pi (node) and Pi-written sessions.

* ``SHARED`` is the repository's sibling ``shared/`` folder (override with ``PI_SHARED_DIR``).
* A test that takes a ``pi_fixture`` argument runs once per file in ``shared/fixtures``.
* ``pi_home`` installs the pinned Pi with ``shared/tools/install-pi.sh``. Without node or Pi the
  tests that need it are skipped, or fail when ``CI`` is set (CI must run them).
* ``generated_sessions`` writes fresh sessions with Pi's own ``SessionManager``
  (``shared/tools/gen-sessions.mjs``) once per test session. The seeds are random, printed in
  the report header, and can be pinned with ``PI_GEN_SEEDS=1,2,3`` to reproduce a failure.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PI_SHARED_DIR") or Path(__file__).resolve().parents[2] / "shared")
FIXTURES_DIR = SHARED / "fixtures"
FIXTURE_FILES = sorted(FIXTURES_DIR.glob("*.jsonl"))
PI_REFERENCE_SCRIPT = REPO / "tests" / "node" / "pi_reference.mjs"
PI_PACKAGE = Path("node_modules/@mariozechner/pi-coding-agent/dist/index.js")
# The nine entry types of the format reference (§1.4), spelled out independently of the code.
PI_ENTRY_TYPES = frozenset(
    {
        "message",
        "thinking_level_change",
        "model_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)


def gen_seeds() -> list[int]:
    """The run's gen-sessions seeds: ``PI_GEN_SEEDS``, or three drawn by the first process
    that imports this file and left in ``PI_GEN_SEEDS``. The xdist workers it starts inherit
    them: each drew its own before, so ``gen05`` was another session on each worker and the
    seeds in the header reproduced none of them."""
    seeds = [int(s) for s in os.environ.get("PI_GEN_SEEDS", "").split(",") if s.strip()]
    if not seeds:
        seeds = random.SystemRandom().sample(range(1, 1_000_000), 3)
        os.environ["PI_GEN_SEEDS"] = ",".join(map(str, seeds))
    return seeds


# Sessions written by gen-sessions.mjs: GEN_PER_SEED sessions for each seed (>= 21 in all).
GEN_SEEDS: list[int] = gen_seeds()
GEN_PER_SEED = -(-21 // len(GEN_SEEDS))
GEN_COUNT = GEN_PER_SEED * len(GEN_SEEDS)
NODE_TIMEOUT = 180  # seconds; Pi hangs on some inputs and must never hang the suite


@pytest.fixture(autouse=True)
def no_claude_code_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tester's own Claude Code and Codex sessions (~/.claude/projects, ~/.codex) stay
    out of every test: "no Pi sessions" messages say where theirs are when there are some."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", NO_CLAUDE)
    monkeypatch.setenv("CODEX_HOME", NO_CODEX)
    # and no listing reads another test's remembered summaries (tests/test_summary_cache.py
    # turns the cache on in a folder of its own)
    monkeypatch.setenv("PI_SESSION_NO_LIST_CACHE", "1")


#: A Claude Code configuration folder that does not exist.
NO_CLAUDE = "/nonexistent/pi-session-export-tests/claude"
#: A Codex home folder that does not exist.
NO_CODEX = "/nonexistent/pi-session-export-tests/codex"


def pytest_report_header(config: pytest.Config) -> list[str]:
    seeds = ",".join(map(str, GEN_SEEDS))
    return [
        f"pi-session-export: shared fixtures from {SHARED}",
        f"pi-session-export: gen-sessions seeds {seeds} ({GEN_PER_SEED} sessions each; "
        f"reproduce with PI_GEN_SEEDS={seeds})",
    ]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts Chromium (its fixtures reach ``pw_browser``) is a ``browser``
    test, marked or not: ``-m "not browser"`` started Chromium for 24 files' tests."""
    for item in items:
        if "pw_browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "pi_fixture" in metafunc.fixturenames:
        metafunc.parametrize("pi_fixture", FIXTURE_FILES, ids=[p.name for p in FIXTURE_FILES])
    if "generated_index" in metafunc.fixturenames:
        metafunc.parametrize("generated_index", range(GEN_COUNT), ids=lambda i: f"gen{i:02d}")


def ctrl_c_as_at_a_terminal() -> None:
    """A child's ``preexec_fn``: SIGINT (and SIGHUP, SIGTERM) back to their defaults. A test
    run started in the background (``cmd &`` in a script) has Ctrl-C ignored, every child
    keeps that, and Python then installs no KeyboardInterrupt handler: a test that stops a
    child with SIGINT waited for its timeout (the watch test, 2026-12-02); under ``nohup``
    SIGHUP is ignored, and the command then rightly leaves it so (the hang-up tests failed).
    Plain signal() calls: safe beside threads."""
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def wait_until_reading_the_terminal(pid: int) -> None:
    """Until the child waits in its read of the terminal (Linux: the tty read's wait), at
    most 20 s. A Ctrl-C between the prompt's write and that read sets Python's flag and
    no one looks at it: the read then waits for a line, as it would for a user."""
    deadline = time.monotonic() + 20
    wchan = Path(f"/proc/{pid}/wchan")
    while time.monotonic() < deadline:
        try:
            if wchan.read_text(encoding="utf-8").strip() == "wait_woken":
                return
        except OSError:  # not Linux, or gone
            return
        time.sleep(0.01)


def unavailable(reason: str) -> None:
    """Skip locally, but fail under CI: the Pi-backed tests are required there."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this is an error)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (FIXTURES_DIR / "README.md").is_file() or not FIXTURE_FILES:
        pytest.fail(f"shared fixtures not found in {FIXTURES_DIR} (set PI_SHARED_DIR)")
    return SHARED


@pytest.fixture(scope="session")
def fixtures_dir(shared: Path) -> Path:
    return shared / "fixtures"


@pytest.fixture(scope="session")
def node() -> str:
    path = shutil.which("node")
    if path is None:
        unavailable("node is not installed")
    return str(path)


@pytest.fixture(scope="session")
def pi_home(shared: Path, node: str) -> Path:
    """The folder of the pinned Pi install (installed on first use, then cached)."""
    script = shared / "tools" / "install-pi.sh"
    try:
        done = subprocess.run(
            ["bash", str(script)], capture_output=True, text=True, timeout=900, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        unavailable(f"install-pi.sh did not run: {error}")
        raise AssertionError("unreachable") from error
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        unavailable(f"install-pi.sh failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    home = Path(lines[-1])
    if not (home / PI_PACKAGE).is_file():
        unavailable(f"Pi package missing under {home}")
    return home


@pytest.fixture(scope="session")
def pi_pkg(pi_home: Path) -> Path:
    """Pi's ``dist/index.js`` (exports ``SessionManager``)."""
    return pi_home / PI_PACKAGE


def run_node(args: Sequence[str], timeout: float = NODE_TIMEOUT) -> str:
    """Run node and return stdout; a timeout kills it (SIGKILL: Pi may spin in sync code)."""
    done = subprocess.run(
        ["node", *args], capture_output=True, text=True, encoding="utf-8", timeout=timeout
    )
    if done.returncode != 0:
        raise AssertionError(f"node {' '.join(args[:2])} failed: {done.stderr[-2000:]}")
    return done.stdout


@pytest.fixture(scope="session")
def node_runner(node: str) -> Callable[..., str]:
    """``run_node(args, timeout)``: stdout of a node script, killed (SIGKILL) on timeout."""
    return run_node


@pytest.fixture(scope="session")
def pi_reference(pi_pkg: Path) -> Callable[[Sequence[Path]], list[dict[str, Any]]]:
    """Run tests/node/pi_reference.mjs once over many files; one record per file, in order."""

    def run(files: Sequence[Path]) -> list[dict[str, Any]]:
        out = run_node([str(PI_REFERENCE_SCRIPT), "--pkg", str(pi_pkg), *map(str, files)])
        records = [json.loads(line) for line in out.splitlines() if line.strip()]
        assert [r["file"] for r in records] == [str(f) for f in files]
        return records

    return run


@dataclass(frozen=True)
class GeneratedSessions:
    seeds: list[int]
    files: list[Path]
    folder: Path

    def describe(self, index: int | None = None) -> str:
        which = f"{self.files[index].name} " if index is not None else ""
        seeds = ",".join(map(str, self.seeds))
        return f"{which}(gen-sessions seeds {seeds}; reproduce with PI_GEN_SEEDS={seeds})"


@pytest.fixture(scope="session")
def generated_sessions(
    shared: Path, pi_pkg: Path, tmp_path_factory: pytest.TempPathFactory
) -> GeneratedSessions:
    """GEN_COUNT sessions written by Pi's SessionManager, laid out like ~/.pi/agent/sessions."""
    root = tmp_path_factory.mktemp("pi-sessions")
    folder = root / "--home-dev-projects-webapp--"  # gen-sessions' default cwd, encoded
    folder.mkdir()
    source = shared / "fixtures" / "pi-large-session.jsonl"
    print(f"generating sessions with seeds {GEN_SEEDS} into {folder}")
    procs = [
        subprocess.Popen(
            [
                "node",
                str(shared / "tools" / "gen-sessions.mjs"),
                *("--pkg", str(pi_pkg), "--source", str(source), "--out", str(folder)),
                *("--count", str(GEN_PER_SEED), "--seed", str(seed)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        for seed in GEN_SEEDS
    ]
    files: list[Path] = []
    for seed, proc in zip(GEN_SEEDS, procs, strict=True):
        try:
            out, err = proc.communicate(timeout=NODE_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        assert proc.returncode == 0, f"gen-sessions --seed {seed} failed: {err[-2000:]}"
        written = [Path(line) for line in out.splitlines() if line.strip()]
        assert len(written) == GEN_PER_SEED, out
        files += written
    assert len(files) == GEN_COUNT >= 20
    assert all(f.parent == folder and f.is_file() for f in files)
    return GeneratedSessions(list(GEN_SEEDS), files, root)


@pytest.fixture
def write_session(tmp_path: Path) -> Callable[..., Path]:
    """Write session lines (dicts become compact JSON, str/bytes are raw) to a temp file."""
    counter = iter(range(1_000_000))

    def write(
        lines: Sequence[dict[str, Any] | str | bytes],
        name: str | None = None,
        newline: bytes = b"\n",
        final_newline: bool = True,
    ) -> Path:
        data = dump_lines(lines, newline)
        if not final_newline and data.endswith(newline):
            data = data[: -len(newline)]
        path = tmp_path / (name or f"2025-01-01T00-00-00-000Z_session{next(counter)}.jsonl")
        path.write_bytes(data)
        return path

    return write


def iso(second: int) -> str:
    """A Pi-style ISO timestamp ``second`` seconds after 2025-01-01T00:00:00Z."""
    moment = datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=second)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")  # a day on is the next day, not hour 24


class Build:
    """Builders for session lines in Pi's key order (``type, id, parentId, timestamp, ...``)."""

    @staticmethod
    def header(session_id: str = "sess-0001", version: int | None = 3, **extra: Any) -> dict:
        head: dict[str, Any] = {"type": "session"}
        if version is not None:
            head["version"] = version
        head.update(id=session_id, timestamp=iso(0), cwd="/home/dev/proj")
        head.update(extra)
        return head

    @staticmethod
    def entry(kind: str, entry_id: str | None, parent: str | None, second: int, **fields: Any):
        line: dict[str, Any] = {"type": kind}
        if entry_id is not None:
            line["id"] = entry_id
            line["parentId"] = parent
        line["timestamp"] = iso(second)
        line.update(fields)
        return line

    @classmethod
    def user(cls, entry_id: str | None, parent: str | None, text: str = "hi", second: int = 1):
        message = {"role": "user", "content": text, "timestamp": 1735689600000 + second}
        return cls.entry("message", entry_id, parent, second, message=message)

    @staticmethod
    def usage(inp: int = 10, out: int = 5, cost: float | None = 0.01, **extra: Any) -> dict:
        usage: dict[str, Any] = {
            "input": inp,
            "output": out,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": inp + out,
        }
        if cost is not None:
            usage["cost"] = {
                "input": cost / 2,
                "output": cost / 2,
                "cacheRead": 0,
                "cacheWrite": 0,
                "total": cost,
            }
        usage.update(extra)
        return usage

    @classmethod
    def assistant(
        cls,
        entry_id: str | None,
        parent: str | None,
        text: str = "ok",
        second: int = 2,
        calls: Sequence[tuple[str, str]] = (),
        usage: dict | None = None,
        model: str = "claude-x",
        provider: str = "anthropic",
        **extra: Any,
    ) -> dict:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        content += [
            {"type": "toolCall", "id": call_id, "name": name, "arguments": {}}
            for call_id, name in calls
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": cls.usage() if usage is None else usage,
            "stopReason": "toolUse" if calls else "stop",
            "timestamp": 1735689600000 + second,
        }
        message.update(extra)
        return cls.entry("message", entry_id, parent, second, message=message)

    @classmethod
    def tool_result(
        cls,
        entry_id: str | None,
        parent: str | None,
        call_id: str,
        name: str = "bash",
        second: int = 3,
        is_error: bool = False,
    ) -> dict:
        message = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": name,
            "content": [{"type": "text", "text": "done"}],
            "isError": is_error,
            "timestamp": 1735689600000 + second,
        }
        return cls.entry("message", entry_id, parent, second, message=message)

    @classmethod
    def label(cls, entry_id: str, parent: str | None, target: str, label: Any, second: int = 9):
        fields = {"targetId": target} if label is None else {"targetId": target, "label": label}
        return cls.entry("label", entry_id, parent, second, **fields)

    @classmethod
    def name(cls, entry_id: str, parent: str | None, name: Any, second: int = 9):
        fields = {} if name is None else {"name": name}
        return cls.entry("session_info", entry_id, parent, second, **fields)


@pytest.fixture(scope="session")
def build() -> type[Build]:
    return Build


_SURROGATE = re.compile("[\ud800-\udfff]")


def pi_json(value: Any) -> str:
    """``JSON.stringify`` as Pi writes lines: compact, raw UTF-8, lone surrogates escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dump_lines(lines: Sequence[dict[str, Any] | str | bytes], newline: bytes = b"\n") -> bytes:
    """Encode session lines like Pi (one per line); str and bytes lines are written as given."""
    out = []
    for line in lines:
        if isinstance(line, bytes):
            out.append(line)
        elif isinstance(line, str):
            out.append(line.encode("utf-8"))
        else:
            out.append(pi_json(line).encode("utf-8"))
    return b"".join(chunk + newline for chunk in out)


@pytest.fixture(scope="session")
def dump() -> Callable[..., bytes]:
    return dump_lines


class Hang(BaseException):
    """A guarded body ran out of time. Not an ``OSError`` (``TimeoutError`` is one) nor an
    ``Exception``: the code under test catches those (``scan_summary`` turned the guard's
    ``TimeoutError`` into its own error message and went on)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail instead of hanging (Pi's own getBranch loops forever on a parent cycle)."""

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"took more than {seconds}s: a hang?")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: How many times a CPU limit's seconds a body may take on the wall clock (a hang that
#: sleeps instead of spinning still ends the test).
WALL_PER_CPU = 20


@contextmanager
def cpu_time_limit(seconds: float, wall: float | None = None) -> Iterator[None]:
    """Fail after ``seconds`` of this process's CPU time (a runaway regex or a loop), not of
    the wall clock: on a machine busy with other tests a linear-time body may wait minutes
    for a core (a run failed so, "took more than 60s: a hang?"), yet it spends its seconds.
    ``wall``: the wall-clock backstop for a body that hangs without spinning (by default
    ``WALL_PER_CPU`` times ``seconds``, at least a minute)."""

    def expire(signum: int, frame: Any) -> None:
        raise Hang(f"took more than {seconds}s of CPU time: a hang?")

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        with time_limit(wall if wall is not None else max(60, seconds * WALL_PER_CPU)):
            yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
