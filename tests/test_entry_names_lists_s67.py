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
