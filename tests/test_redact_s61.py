"""Session 61: the `redact --report` counts are what the copy holds, a `--secret` is named
as given, and a whole Anthropic key does not take the next line as its wrapped rest."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.detectors import Scanner

#: Not a real key's length (104, not 108): a shorter key may go on at the next line's start
SHORT_KEY = (
    "sk-ant-api03-abcdEFGHijklMNOPqrstUVWXyz0123456789abcdEFGHijklMNOPqrstUVWXyz0123456789"
    "abcdEFGHij-AAAAAAAA"
)
#: An Anthropic API key's whole shape: the prefix, 93 characters and ``AA`` (108)
WHOLE_KEY = "sk-ant-api03-" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ" * 3 + "aB3dE5gH7jK9mN1" + "AA"
GHP = "ghp_Zq9Xw8Ve7Ut6Sr5Qp4On3Ml2Kj1Ih0GfEdCb"
LITERAL = "MYSECRETVALUE123"
PLACEHOLDER = re.compile(r"\[REDACTED:([a-z0-9-]+):[0-9]+\]")


def _message(entry_id: str, parent: str | None, content: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {"role": "user", "content": content, "timestamp": 0},
    }


def _write_session(path: Path, texts: list[str]) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "s61",
        "timestamp": "2026-12-01T10:00:00.000Z",
        "cwd": "/tmp/p",
    }
    records: list[dict[str, Any]] = [header]
    for number, text in enumerate(texts, 1):
        parent = f"u{number - 1}" if number > 1 else None
        records.append(_message(f"u{number}", parent, text))
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _redact(tmp_path: Path, texts: list[str], *extra: str) -> tuple[str, dict[str, Any], list]:
    """The copy's text, the report's summary and its hits, from the real CLI on real files."""
    source, copy, report = tmp_path / "s.jsonl", tmp_path / "out.jsonl", tmp_path / "rep.jsonl"
    _write_session(source, texts)
    args = ["redact", str(source), "-o", str(copy), "--report", str(report), "--no-env-secrets"]
    result = CliRunner().invoke(cli, [*args, *extra])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    return copy.read_text(encoding="utf-8"), lines[0], lines[1:]


def test_a_given_secret_after_a_key_is_named_literal_secret_and_counted_as_the_copy_shows(
    tmp_path: Path,
) -> None:
    """A `--secret` on the line after a printed key was taken by the wrapped-token join: the
    copy said `[REDACTED:wrapped-token:1]` twice and never literal-secret, while the summary
    said `literal-secret 1, wrapped-token 1` (hunt 61). The user's word wins, and the counts
    are what the copy holds."""
    texts = [f"token {GHP} again", f"{SHORT_KEY}\n{LITERAL} here", f"plain {LITERAL} and {GHP}"]
    written, summary, hits = _redact(tmp_path, texts, "--secret", LITERAL)
    assert LITERAL not in written and GHP not in written
    assert "[REDACTED:wrapped-token:" not in written
    assert written.count("[REDACTED:literal-secret:1]") == 2
    assert summary["counts"] == dict(Counter(PLACEHOLDER.findall(written)))
    literal_hits = [h for h in hits if h["placeholder"] == "[REDACTED:literal-secret:1]"]
    assert [h["detector"] for h in literal_hits] == ["literal-secret", "literal-secret"]


def test_a_placeholder_met_again_by_another_detector_is_counted_under_its_own_kind(
    tmp_path: Path,
) -> None:
    """A value keeps its first placeholder wherever it comes back; found the second time by
    another detector (`DB_PASSWORD=…`), it was counted under that one, a kind the copy never
    shows. The hit still says both: which detector found it there, and the placeholder."""
    value = "Qx7Lm2Vb9Rt4Yp8Kw3"
    texts = [f"{SHORT_KEY}\n{value} here", f"export DB_PASSWORD={value}"]
    written, summary, hits = _redact(tmp_path, texts)
    assert value not in written
    shown = Counter(PLACEHOLDER.findall(written))
    assert shown == {"anthropic-key": 1, "wrapped-token": 2}
    assert summary["counts"] == dict(shown) and summary["total"] == len(hits) == 3
    again = hits[-1]
    assert again["placeholder"] == "[REDACTED:wrapped-token:1]"
    assert again["detector"] != "wrapped-token"  # what found it there


def test_a_whole_anthropic_key_does_not_take_the_next_line_as_its_rest() -> None:
    """A key of its full shape (93 characters and `AA` after `sk-ant-api03-`) ends where it
    ends: the random-looking word that opens the next line was redacted as its wrapped rest.
    A key broken over two lines still loses both parts."""
    assert len(WHOLE_KEY) == 108
    scanner = Scanner()
    found = scanner.find(f"{WHOLE_KEY}\n{LITERAL} here")
    assert [(f.start, f.end, f.detector) for f in found] == [(0, 108, "anthropic-key")]
    broken = f"{WHOLE_KEY[:-8]}\n{WHOLE_KEY[-8:]} done"
    spans = [broken[f.start : f.end] for f in scanner.find(broken)]
    assert spans == [WHOLE_KEY[:-8], WHOLE_KEY[-8:]]
    boxed = f"│ {WHOLE_KEY[:60]} │\n│ {WHOLE_KEY[60:]}{' ' * 12} │"
    assert {boxed[f.start : f.end] for f in scanner.find(boxed)} == {
        WHOLE_KEY[:60],
        WHOLE_KEY[60:],
    }
