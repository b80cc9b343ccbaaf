"""JSON nested deep but within what Python parses: every level indents each line inside it, so
indented it grew with the square of its depth (a 4 KB tool call nested 900 deep made a 3.3 MB
page and a 1.6 MB Markdown file; 100 MB at 5,000 levels on Python 3.13). It now stays on one
line when indenting would multiply its size; ordinary JSON is indented as before."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.render.tools import TOO_DEEP, json_text


def _deep_but_parsable() -> int:
    """A depth this Python's json parses inside a session line, with room to spare."""
    depth = 100
    while True:
        try:
            json.loads("[" * (depth + 60) + "]" * (depth + 60))
        except RecursionError:
            return depth - 40
        depth += 50


def _session(path: Path, depth: int) -> Path:
    nested = "[" * depth + "]" * depth
    lines = [
        '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z",'
        '"cwd":"/p"}',
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",'
        '"message":{"role":"user","content":"hi","timestamp":1}}',
        '{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"assistant","content":[{"type":"toolCall","id":"t1",'
        '"name":"mytool","arguments":{"deep":' + nested + "}}]}}",
        '{"type":"message","id":"u2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z",'
        '"message":{"role":"user","content":"after","timestamp":3}}',
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_deeply_nested_tool_call_keeps_the_page_and_markdown_small(tmp_path: Path) -> None:
    depth = _deep_but_parsable()
    source = _session(tmp_path / "s.jsonl", depth)
    runner = CliRunner()
    for out, extra in (("out.html", []), ("out.md", ["--format", "md"])):
        result = runner.invoke(cli, ["export", str(source), "-o", str(tmp_path / out), *extra])
        assert result.exit_code == 0, result.output
        text = (tmp_path / out).read_text(encoding="utf-8")
        # Indented, the arguments alone were depth² characters (~800 KB at depth 900).
        assert len(text) < 400_000 + source.stat().st_size * 4, (out, len(text))
        assert text.count("[") >= depth, out  # shown whole (a long line's rest is folded)
        assert "after" in text and TOO_DEEP not in text


def test_ordinary_json_is_indented_as_before() -> None:
    values: list[Any] = [
        {"path": "a.py", "edits": [{"old": "x", "new": "y"}], "n": 3},
        [[1, 2, [3, 4, {"k": ["v"]}]]],
        {"rows": [{"id": i, "tags": ["a", "b"], "when": None} for i in range(3000)]},
        {"text": "日本語 😀 \u05e9\u05dc\u05d5\u05dd"},
        "just a string",
    ]
    for value in values:
        assert json_text(value, 2) == json.dumps(value, ensure_ascii=False, indent=2)
        assert json_text(value) == json.dumps(value, ensure_ascii=False)
    assert len(json.dumps(values[2], indent=2)) > 64 * 1024  # past the size a check starts at


def test_deep_json_goes_on_one_line_and_too_deep_json_gets_the_note() -> None:
    deep: Any = []
    for _ in range(400):
        deep = [deep, 1]
    one_line = json.dumps(deep)
    assert json_text(deep, 2) == one_line
    too_deep: Any = []
    for _ in range(100_000):
        too_deep = [too_deep]
    assert json_text(too_deep, 2) == TOO_DEEP
    assert json_text(too_deep) == TOO_DEEP


def _under_frames(frames: int, call: Any) -> Any:
    return call() if frames == 0 else _under_frames(frames - 1, call)


def test_json_text_never_raises_near_the_recursion_limit() -> None:
    """The one-line JSON was encoded a second time, a frame deeper, when indenting gave up:
    a value the first encode just managed raised there (review of 0.2.52: an export died
    with a traceback at depth 972)."""
    limit = sys.getrecursionlimit()
    for depth in range(max(limit - 80, 10), limit + 40, 3):
        value: Any = []
        for _ in range(depth):
            value = [value]
        for frames in (0, 7, 20, 41):
            for indent in (None, 2):
                said = _under_frames(frames, lambda: json_text(value, indent))  # noqa: B023
                assert said == TOO_DEEP or said.count("[") == depth + 1, (depth, frames)
