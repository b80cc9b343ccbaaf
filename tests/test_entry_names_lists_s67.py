"""--exclude takes the names search prints, and the page and the Markdown list every label
they count (one on an entry the file does not have too)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli
from tests.test_entry_names_s67 import _labelled, _twice_written


def test_exclude_takes_the_names_search_prints(tmp_path: Path) -> None:
    path = _twice_written(tmp_path)
    runner = CliRunner()
    for name, gone, kept in (("a2~1", "first", "second"), ("a2", "second", "first")):
        out = tmp_path / f"{name}.jsonl"
        done = runner.invoke(cli, ["redact", str(path), "--exclude", name, "-o", str(out)])
        assert done.exit_code == 0, done.output
        text = out.read_text(encoding="utf-8")
        assert f"{gone} copy words" not in text and f"{kept} copy words" in text, name


def test_the_page_and_the_document_list_every_label_they_count(tmp_path: Path) -> None:
    path = _labelled(tmp_path)
    runner = CliRunner()
    page = tmp_path / "labels.html"
    assert runner.invoke(cli, ["export", str(path), "-o", str(page)]).exit_code == 0
    html = page.read_text(encoding="utf-8")
    nav = html[html.index('<nav class="bookmarks"') :].split("</nav>", 1)[0]
    items = re.findall(r"<li>(.*?)</li>", nav)
    assert len(items) == 2 and "on-nothing" in items[1] and "<a " not in items[1]
    assert "gone, an entry not in the file" in items[1]
    doc = tmp_path / "labels.md"
    assert runner.invoke(cli, ["export", str(path), "-o", str(doc)]).exit_code == 0
    assert "- `on-nothing` on `gone`, an entry not in the file" in doc.read_text(encoding="utf-8")
    assert len(json.loads(runner.invoke(cli, ["stats", "--json", str(path)]).stdout)["labels"]) == 2


def test_exclude_takes_the_label_of_the_copy_it_names(tmp_path: Path) -> None:
    """A label written after the latest copy of an id written twice is about that copy:
    `--exclude a` left it in (moved onto the first copy, which it does not describe), and
    `--exclude a~1` took it out with the other copy (review 2026-12-07)."""
    lines = [
        {"type": "session", "version": 3, "id": "dup2", "cwd": "/srv/app",
         "timestamp": "2025-06-01T10:00:00.000Z"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-06-01T10:00:01.000Z",
         "message": {"role": "user", "content": "question one", "timestamp": 0}},
        {"type": "message", "id": "a", "parentId": "u1", "timestamp": "2025-06-01T10:00:02.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "first copy"}],
                     "timestamp": 0}},
        {"type": "message", "id": "a", "parentId": "u1", "timestamp": "2025-06-01T10:00:03.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "second copy"}],
                     "timestamp": 0}},
        {"type": "label", "id": "lb1", "parentId": "a", "timestamp": "2025-06-01T10:00:05.000Z",
         "targetId": "a", "label": "about the second copy"},
    ]  # fmt: skip
    path = tmp_path / "dup2.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    for name, label_kept in (("a", False), ("a~1", True)):
        out = tmp_path / f"cut-{name}.jsonl"
        done = CliRunner().invoke(cli, ["redact", str(path), "--exclude", name, "-o", str(out)])
        assert done.exit_code == 0, done.output
        assert ("about the second copy" in out.read_text(encoding="utf-8")) is label_kept, name
