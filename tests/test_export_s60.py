"""Stop 60 (helper hunt: the Pi package): ``--open`` let the browser print on our stdout,
after the written page's path, which the Pi package's /export-html reads as the result
(a running Chromium says "Opening in existing browser session." there)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.browser_util import fixture_path


def test_the_browsers_own_output_stays_off_stdout(tmp_path: Path) -> None:
    browser = tmp_path / "browser.sh"
    browser.write_text(
        '#!/bin/sh\necho "Opening in existing browser session."\necho "$1" > opened.txt\n',
        encoding="utf-8",
    )
    browser.chmod(0o755)
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "BROWSER": str(browser), "PYTHONPATH": str(repo)}
    args = ["export", str(fixture_path("pi-branched-1.jsonl")), "-o", "page.html", "--open"]
    done = subprocess.run(
        [sys.executable, "-m", "exporter", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["page.html"]
    assert "Opening in existing browser session." in done.stderr
    opened = (tmp_path / "opened.txt").read_text(encoding="utf-8").strip()
    assert opened == (tmp_path / "page.html").resolve().as_uri()
