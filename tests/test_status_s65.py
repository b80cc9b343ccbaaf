"""Stop 65: under the Default filter the status line counted the fork rows it keeps only
for the tree's shape ("197 of 212 entries shown") while every other filter and the search
say them apart ("· 3 fork points kept"). The three rows (a thinking-level change, a model
change and an extension's data, each with branches from it) were counted by hand."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli


def test_the_default_status_line_says_kept_fork_rows_apart(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    page = tmp_path / "page.html"
    done = CliRunner().invoke(
        cli, ["export", str(fixtures_dir / "pi-branched-1.jsonl"), "-o", str(page)]
    )
    assert done.exit_code == 0, done.output
    text = page.read_text(encoding="utf-8")
    status = re.search(r'<span class="st st-default">([^<]*)</span>', text)
    assert status is not None
    assert status.group(1) == "194 of 212 entries shown · 3 fork points kept · 7 branches"
    kept = re.findall(r'<li class="[^"]*\bhide-default\b[^"]*\bbr-default\b', text)
    assert len(kept) == 3  # the rows the line says are kept, as the page's classes have them
