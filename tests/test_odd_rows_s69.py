"""Session 69: a message whose words are a value of another type was called empty.

A prompt whose ``content`` was an object (or whose text block held a list) is shown on
the page "as written", under the words "Not of the type Pi writes"; yet the same page's
outline called it "user: (empty message)", and its card said "(empty message)" just above
the value. An assistant's text of 42 was "assistant: (no text)" in the outline. The row
and the card now say what the Markdown already said: a value not of the type Pi writes,
shown as written. A truly empty prompt is still "(empty message)".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from exporter.cli import cli
from exporter.loader import load_session
from exporter.render.entry_lines import entry_row_text
from exporter.render.odd_values import OTHER_TYPE_SAID
from tests.browser_util import parse_html

HEADER = {"type": "session", "version": 3, "id": "s69", "timestamp": "2026-01-01T00:00:00.000Z"}
HEADER["cwd"] = "/tmp/p"
USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2}


def _message(entry_id: str, parent: str | None, **message: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-01-01T00:00:01.000Z",
        "message": message,
    }


def _session(tmp_path: Path) -> Path:
    answer = {"provider": "p", "model": "m", "usage": USAGE, "stopReason": "stop"}
    records = [
        HEADER,
        _message("u-obj", None, role="user", content={"text": "hello odd"}),
        _message(
            "a-num", "u-obj", role="assistant", content=[{"type": "text", "text": 42}], **answer
        ),
        _message("u-list", "a-num", role="user", content=[{"type": "text", "text": ["x"]}]),
        _message(
            "a-ok", "u-list", role="assistant", content=[{"type": "text", "text": "ok"}], **answer
        ),
        _message("u-empty", "a-ok", role="user", content=""),
        _message("a-none", "u-empty", role="assistant", content=[], **answer),
    ]
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_outline_rows_say_a_value_of_another_type_not_empty(tmp_path: Path) -> None:
    session = load_session(_session(tmp_path))
    rows = {entry_id: entry_row_text(session, entry_id)[0] for entry_id in session.by_id}
    assert rows["u-obj"] == f"user: {OTHER_TYPE_SAID}"
    assert rows["u-list"] == f"user: {OTHER_TYPE_SAID}"
    assert rows["a-num"] == f"assistant: {OTHER_TYPE_SAID}"
    assert rows["u-empty"] == "user: (empty message)"  # truly empty: said so still
    assert rows["a-none"] == "assistant: (no text)"


def test_the_page_neither_outlines_nor_cards_an_odd_prompt_as_empty(tmp_path: Path) -> None:
    out = tmp_path / "odd.html"
    result = CliRunner().invoke(cli, ["export", str(_session(tmp_path)), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = parse_html(out.read_text(encoding="utf-8"))
    outline = {
        a.attrs["href"]: a.text
        for a in page.all(lambda e: e.tag == "a" and e.attrs.get("href", "").startswith("#"))
        if a.parent is not None and a.parent.tag == "li"
    }
    said = [text for text in outline.values() if OTHER_TYPE_SAID in text]
    assert len(said) == 3, outline
    assert sum("(empty message)" in text for text in outline.values()) == 1
    for entry_id in ("u-obj", "u-list"):
        card = page.entry(entry_id).text
        assert "Not of the type Pi writes" in card  # the value, as written
        assert "(empty message)" not in card
    assert "(empty message)" in page.entry("u-empty").text


def test_the_markdown_still_shows_the_values_and_one_empty_prompt(tmp_path: Path) -> None:
    out = tmp_path / "odd.md"
    args = ["export", str(_session(tmp_path)), "--format", "md", "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert text.count("Not of the type Pi writes, so shown as written") == 3
    assert '"text": "hello odd"' in text
    assert text.count("(empty message)") == 1  # u-empty's, not the odd prompts'
