"""Stop 73: an image in the result of an edit, write, ls, grep or find call was in no page
(their views had no place for it) and in no Markdown (nor an apply_patch's or a to-do
list's): it was lost without a word. Every tool's result images now show, on the page
inside the call's box, and in the Markdown as the document's images go."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from tests.conftest import Build
from tests.test_images_s67 import b64, png

#: One call per tool, with arguments of the shape each tool's view reads.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("edit", {"path": "src/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}),
    ("write", {"path": "src/b.py", "content": "print('b')\n"}),
    ("ls", {"path": "src"}),
    ("grep", {"pattern": "TODO", "path": "src"}),
    ("find", {"pattern": "*.py", "path": "src"}),
    ("apply_patch", {"input": "*** Begin Patch\n*** Add File: c.txt\n+c\n*** End Patch"}),
    ("TodoWrite", {"todos": [{"content": "ship it", "status": "pending"}]}),
    ("bash", {"command": "screenshot"}),
    ("read", {"path": "shot.png"}),
    ("take_screenshot", {"url": "http://localhost:3000"}),
]


def _image_of(index: int) -> str:
    """A real PNG of its own size per call, so each is told apart on the page."""
    return b64(png(width=index + 2, height=3, color=bytes([index * 20, 40, 200])))


def _session(tmp_path: Path) -> Path:
    build = Build
    lines: list[dict[str, Any]] = [build.header(), build.user("u1", None, "show me", 1)]
    call = build.assistant("a1", "u1", "calling every tool", 2, usage=build.usage())
    call["message"]["content"] += [
        {"type": "toolCall", "id": f"c{i}", "name": name, "arguments": args}
        for i, (name, args) in enumerate(CALLS)
    ]
    call["message"]["stopReason"] = "toolUse"
    lines.append(call)
    parent = "a1"
    for i, (name, _args) in enumerate(CALLS):
        result = build.tool_result(f"r{i}", parent, f"c{i}", name, 3 + i)
        result["message"]["content"] = [
            {"type": "text", "text": f"{name} done"},
            {"type": "image", "data": _image_of(i), "mimeType": "image/png"},
        ]
        lines.append(result)
        parent = f"r{i}"
    lines.append(build.assistant("a2", parent, "all done", 20))
    path = tmp_path / "2025-01-01T00-00-00-000Z_images.jsonl"
    path.write_text("".join(_json(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _export(source: Path, out: Path, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_every_tool_results_image_is_on_the_page_in_its_calls_box(tmp_path: Path) -> None:
    page = _export(_session(tmp_path), tmp_path / "page.html", "-j", "1")
    boxes = page.split('class="tool tool-')[1:]  # each call's box, in the message's order
    assert len(boxes) == len(CALLS)
    for i, (name, _args) in enumerate(CALLS):
        src = f'src="data:image/png;base64,{_image_of(i)}"'
        assert page.count(src) == 1, f"{name}'s result image is not on the page once"
        assert src in boxes[i] and f"{name} done" in boxes[i], f"{name}'s image is elsewhere"


def test_every_tool_results_image_is_in_the_markdown(tmp_path: Path) -> None:
    source = _session(tmp_path)
    noted = _export(source, tmp_path / "notes.md")
    assert noted.count("*[image/png, ") == len(CALLS), noted
    inline = _export(source, tmp_path / "inline.md", "--images", "inline")
    for i, (name, _args) in enumerate(CALLS):
        assert f"data:image/png;base64,{_image_of(i)}" in inline, f"{name}'s image is lost"
