"""Session 69: Python 3.10, which the project supports, could not import redaction.

Three patterns in ``placement_detectors`` used possessive quantifiers (``\\s*+``), which
Python's ``re`` reads only from 3.11: on 3.10 ``import exporter.redact`` raised "multiple
repeat", so ``redact``, ``share``, ``publish`` and every ``--redact`` crashed. CI runs
3.11, so these tests read every pattern the package compiles (at import, and while it
exports and redacts a real session) and refuse the syntax 3.10 lacks: possessive
quantifiers and atomic groups ``(?>…)``.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import exporter
from tests.conftest import FIXTURES_DIR

#: Only 3.11 and later parse the syntax these tests look for (3.10 refuses it when it compiles)
needs_311 = pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10 refuses such patterns")


def _newer_syntax(pattern: str | bytes, flags: int) -> list[str]:
    """The 3.11-only constructs in one pattern (empty when 3.10 reads it)."""
    from re import _constants, _parser  # type: ignore[attr-defined]

    newer = {_constants.POSSESSIVE_REPEAT: "possessive quantifier"}
    newer[_constants.ATOMIC_GROUP] = "atomic group"
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, _parser.SubPattern):
            for op, argument in node.data:
                if op in newer:
                    found.append(newer[op])
                walk(argument)
        elif isinstance(node, (tuple, list)):
            for item in node:
                walk(item)

    walk(_parser.parse(pattern, flags & ~re.DEBUG))
    return found


def _module_patterns() -> dict[str, re.Pattern[Any]]:
    found: dict[str, re.Pattern[Any]] = {}
    for info in pkgutil.walk_packages(exporter.__path__, "exporter."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value if isinstance(value, (tuple, list)) else (value,)
            for index, item in enumerate(values):
                if isinstance(item, re.Pattern):
                    found[f"{info.name}.{name}[{index}]"] = item
    return found


@needs_311
def test_the_finder_sees_possessive_quantifiers_and_atomic_groups() -> None:
    assert _newer_syntax(r"\s*+,", 0) == ["possessive quantifier"]
    assert _newer_syntax(r"(?>a|ab)c", 0) == ["atomic group"]
    assert _newer_syntax(r"(?=(?P<x>\s*))(?P=x),", 0) == []  # the 3.10 way to say it


@needs_311
def test_no_pattern_of_the_package_needs_python_3_11() -> None:
    patterns = _module_patterns()
    assert len(patterns) > 300  # the scan reached the package
    newer = {
        where: said
        for where, pattern in patterns.items()
        if (said := _newer_syntax(pattern.pattern, pattern.flags))
    }
    assert newer == {}


#: Run in a fresh process (every cache cold, whatever ran before in this one): records each
#: pattern compiled from the first import on, while the CLI exports and redacts.
RECORD_PATTERNS = """
import json, re, sys
compile_pattern = re._compile
seen = {}
def recording(pattern, flags):
    if isinstance(pattern, str):
        seen[pattern] = int(flags)
    return compile_pattern(pattern, flags)
re._compile = recording
from exporter.cli import main
for args in json.loads(sys.argv[1]):
    try:
        main(args)
    except SystemExit as done:
        if done.code not in (0, None):
            raise
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump(seen, out)
"""


@needs_311
def test_no_pattern_compiled_while_exporting_and_redacting_needs_python_3_11(
    tmp_path: Path,
) -> None:
    source = str(FIXTURES_DIR / "pi-branched-1.jsonl")
    runs = [
        ["export", source, "--redact", "-o", str(tmp_path / "page.html")],
        ["export", source, "-o", str(tmp_path / "page.md")],
        ["redact", source, "-o", str(tmp_path / "redacted.jsonl")],
    ]
    record = tmp_path / "patterns.json"
    root = str(Path(exporter.__file__).resolve().parent.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
    }
    done = subprocess.run(
        [sys.executable, "-c", RECORD_PATTERNS, json.dumps(runs), str(record)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert len(seen) > 300  # the hook saw the package's patterns (import and run)
    newer = {
        pattern: said for pattern, flags in seen.items() if (said := _newer_syntax(pattern, flags))
    }
    assert newer == {}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2024-05-01T10:00:00.12Z", "2024-05-01T10:00:00.120000+00:00"),
        ("2024-05-01T10:00:00.123456789Z", "2024-05-01T10:00:00.123456+00:00"),
        ("20240501T100000Z", "2024-05-01T10:00:00+00:00"),
    ],
)
def test_since_reads_what_python_3_11_reads(given: str, expected: str) -> None:
    """``--since`` took these only on 3.11 and later (3.10's ``fromisoformat`` refused them;
    CI's oldest-Python step reads them on 3.10 too)."""
    from exporter.site import parse_since

    assert parse_since(given).isoformat() == expected


def test_since_reads_a_basic_date_as_local_midnight() -> None:
    from exporter.site import parse_since

    moment = parse_since("20240501")
    assert (moment.year, moment.month, moment.day, moment.hour) == (2024, 5, 1, 0)
    assert moment.tzinfo is not None
