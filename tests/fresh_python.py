"""Scenarios that fork (the renderers, the early scan) run only in a process without other
threads, and the test process has threads (servers, browsers) left by other tests: each
such scenario runs in a fresh Python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def in_fresh_python(module: str, scenario: str, *args: str) -> None:
    """Run ``scenario(*args)`` of the test module ``module`` in a new interpreter."""
    code = (
        "import sys\n"
        f"import {module} as t\n"
        f"getattr(t, {scenario!r})(*sys.argv[1:])\n"
        "print('scenario passed')\n"
    )
    path = os.pathsep.join([str(REPO / "tests"), str(REPO)])
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("scenario passed"), result.stdout[-1000:]
