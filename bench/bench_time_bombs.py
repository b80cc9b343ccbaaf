"""Inputs of a few KB that made an export take seconds to minutes (stop 72), and shapes
whose time grew with the square of their size (stop 73), timed against another checkout of
the code in the same run (ratios: this machine is noisy).

    .venv/bin/python bench/bench_time_bombs.py [--old DIR] [--runs 2]

``--old DIR``: a checkout (e.g. ``git worktree add /tmp/old cf61d30~1``, or a ``git
archive`` of it) whose ``exporter`` is imported instead of this one's, alternated with it.
Each case is a small session written to a temp folder; each export is a fresh
``python -m exporter export`` process; its CPU time (user + system, from ``wait4``) is the
measure, as machine load moves wall time. A run over ``--limit`` seconds is stopped and
shown as ``>LIMIT``. Prints a Markdown table; writes nothing else.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _message(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-01-01T10:00:00.000Z",
            "message": {"timestamp": 0, **message}}  # fmt: skip


def _session(*content: dict[str, Any], result: str | None = None) -> str:
    """A prompt, an answer with ``content`` and, for a tool call, its result."""
    lines = [
        {"type": "session", "version": 3, "id": "bomb", "cwd": "/p",
         "timestamp": "2026-01-01T10:00:00.000Z"},
        _message("u", None, {"role": "user", "content": [{"type": "text", "text": "go"}]}),
        _message("a", "u", {"role": "assistant", "api": "x", "provider": "x", "model": "m",
                            "content": list(content), "stopReason": "stop"}),
    ]  # fmt: skip
    if result is not None:
        done = {"role": "toolResult", "toolCallId": "c", "toolName": "edit",
                "content": [{"type": "text", "text": result}], "isError": False}  # fmt: skip
        lines.append(_message("r", "a", done))
    return "".join(json.dumps(line) + "\n" for line in lines)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _repeating_lines(count: int, kinds: int, seed: int) -> str:
    pick = random.Random(seed)
    return "".join(f"x{pick.randrange(kinds)}\n" for _ in range(count))


def cases() -> dict[str, str]:
    """Case name -> session text."""
    csharp = "\n\n".join(f"```csharp\n{k}b\n" + "a\n" * 1499 + "```" for k in range(20))
    edit = {"path": "/p/a.txt", "oldText": _repeating_lines(32_000, 200, 1),
            "newText": _repeating_lines(32_000, 200, 2)}  # fmt: skip
    call = {"type": "toolCall", "id": "c", "name": "edit", "arguments": edit}
    return {
        "easytrieve fence, 2,000 tabs (4 KB)": _session(_fence("easytrieve", "\t" * 2000)),
        "autoit fence, 4,000 ' \\t' (8 KB)": _session(_fence("autoit", " \t" * 4000)),
        "hcl fence, 12,000 'a' (12 KB)": _session(_fence("hcl", "a" * 12_000)),
        "20 C# fences of 1,500 lines (60 KB)": _session(_text(csharp)),
        "edit, 32,000 lines a side of 200 kinds (250 KB)": _session(call, result="done"),
        "control: text fence of 30 KB": _session(_fence("text", "word " * 6000)),
        "1 MB of bare addresses 'http://a.b/<x '": _session(_text("http://a.b/<x " * 71_428)),
        f"{MARKDOWN}250 KB of ')' before '<'": _session(
            _text("see http://a.b/" + ")" * 250_000 + "<x")
        ),
        "6,000 compacted branches off a 12,000-entry line": _side_compactions(6_000, 12_000),
        "a fork of 24,000 answers": _fork(24_000),
    }


#: A case exported as Markdown (``--format md``), not as a page.
MARKDOWN = "Markdown: "


def _side_compactions(branches: int, depth: int) -> str:
    """A line of ``depth`` entries and, off its tip, ``branches`` branches of a prompt and
    a compaction keeping from the line's start; the active leaf the tip's newest answer."""

    def user(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
        return _message(entry_id, parent, {"role": "user", "content": [_text(text)]})

    lines: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "shape", "cwd": "/p",
         "timestamp": "2026-01-01T10:00:00.000Z"},
        user("m0", None, "start"),
    ]  # fmt: skip
    lines += [user(f"m{n}", f"m{n - 1}", "go on") for n in range(1, depth)]
    for n in range(branches):
        lines.append(user(f"b{n}", f"m{depth - 1}", f"try {n}"))
        lines.append({"type": "compaction", "id": f"c{n}", "parentId": f"b{n}",
                      "timestamp": "2026-01-01T10:00:00.000Z", "summary": "s",
                      "firstKeptEntryId": "m0", "tokensBefore": 1})  # fmt: skip
    lines.append(user("leaf", f"m{depth - 1}", "done"))
    return "".join(json.dumps(line) + "\n" for line in lines)


def _fork(answers: int) -> str:
    """One prompt and ``answers`` answers to it (the active leaf the newest)."""
    head = _session().splitlines(keepends=True)[:2]  # the header and the prompt
    answer = {"role": "assistant", "api": "x", "provider": "x", "model": "m",
              "stopReason": "stop"}  # fmt: skip
    lines = [
        _message(f"a{n}", "u", {**answer, "content": [_text(f"answer {n}")]})
        for n in range(answers)
    ]
    return "".join(head) + "".join(json.dumps(line) + "\n" for line in lines)


def _fence(language: str, code: str) -> dict[str, Any]:
    return _text(f"```{language}\n{code}\n```")


def export_cpu(code: Path, session: Path, limit: float, markdown: bool = False) -> float | None:
    """CPU seconds of one export with ``code``'s exporter; None past ``limit`` wall seconds."""
    out = session.with_suffix(".md" if markdown else ".html")
    env = {**os.environ, "PYTHONPATH": str(code)}
    process = subprocess.Popen(
        [sys.executable, "-m", "exporter", "export", str(session), "-o", str(out), "-j", "1"],
        cwd=code,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + limit
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            process.returncode = os.waitstatus_to_exitcode(status)
            return usage.ru_utime + usage.ru_stime
        if time.monotonic() > deadline:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return None
        time.sleep(0.05)


def _cell(runs: list[float | None], limit: float) -> str:
    """The best run, or ">LIMIT" when one was stopped."""
    if any(run is None for run in runs):
        return f">{limit:.0f}"
    return f"{min(run for run in runs if run is not None):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="another checkout to compare with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--limit", type=float, default=120.0)
    args = parser.parse_args()
    codes = [("this", REPO)] + ([("old", args.old.resolve())] if args.old else [])
    with tempfile.TemporaryDirectory() as folder:
        print("| case | " + " | ".join(f"{name} CPU s" for name, _ in codes) + " |")
        print("|---|" + "--:|" * len(codes))
        for number, (case, text) in enumerate(cases().items()):
            session = Path(folder) / f"case{number}.jsonl"
            session.write_text(text, encoding="utf-8")
            spent: dict[str, list[float | None]] = {name: [] for name, _ in codes}
            for _ in range(args.runs):  # alternated: this, old, this, old
                for name, code in codes:
                    markdown = case.startswith(MARKDOWN)
                    spent[name].append(export_cpu(code, session, args.limit, markdown))
            cells = [_cell(spent[name], args.limit) for name, _ in codes]
            print(f"| {case} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
