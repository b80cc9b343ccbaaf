"""Stop 65: characters that draw nothing (a zero width space, a word joiner, direction
marks, a byte order mark) reached the terminal as they were, so a session named
"de\u200bploy prod" printed exactly as the real "deploy prod" and a search for "deploy"
did not find it. They are shown as signs now; the joiners emoji and scripts need stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.formatting import display_width, json_safe_for_terminal, terminal_text


@pytest.mark.parametrize(
    "char",
    ["\u200b", "\u200e", "\u200f", "\u061c", "\u2060", "\ufeff", "\u206a", "\u3164", "\u034f"],
)
def test_a_character_that_draws_nothing_is_shown_as_a_sign(char: str) -> None:
    shown = terminal_text(f"de{char}ploy")
    assert shown == f"de\u27e8U+{ord(char):04X}\u27e9ploy"
    as_json = json_safe_for_terminal(json.dumps(f"de{char}ploy", ensure_ascii=False))
    assert char not in as_json and json.loads(as_json) == f"de{char}ploy"  # escaped, lossless


def test_a_title_of_such_characters_keeps_to_its_columns(tmp_path: Path) -> None:
    """`list` cut a title by its measure before the signs were put in: a prompt of zero
    width spaces took 500 columns of a row meant to fit 126."""
    folder = tmp_path / "sessions" / "--srv-app--"
    folder.mkdir(parents=True)
    for n, prompt in enumerate(["a plain title", "de\u200bploy " * 12, "x\u200b" * 60]):
        lines = [
            {"type": "session", "version": 3, "id": f"s{n}", "cwd": "/srv/app",
             "timestamp": f"2025-06-01T10:0{n}:00.000Z"},
            {"type": "message", "id": "u1", "parentId": None,
             "timestamp": f"2025-06-01T10:0{n}:01.000Z",
             "message": {"role": "user", "content": prompt, "timestamp": 0}},
        ]  # fmt: skip
        text = "".join(json.dumps(line) + "\n" for line in lines)
        (folder / f"2025-06-01T10-0{n}-00-000Z_s{n}.jsonl").write_text(text, encoding="utf-8")
    listed = CliRunner().invoke(
        cli, ["list", "--all", "--sessions-dir", str(tmp_path / "sessions")]
    )
    assert listed.exit_code == 0, listed.output
    widths = {display_width(line) for line in listed.stdout.splitlines() if line.strip()}
    assert len(widths) == 1 and max(widths) < 140, widths  # one width: every row fits
    assert "\u27e8U+200B\u27e9" in listed.stdout


def test_joiners_that_emoji_and_scripts_need_stay() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert terminal_text(family) == family and terminal_text(persian) == persian


def test_a_look_alike_session_name_is_told_apart_in_search(tmp_path: Path) -> None:
    path = tmp_path / "look-alike.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "look-alike", "cwd": "/srv/app",
         "timestamp": "2025-06-01T10:00:00.000Z"},
        {"type": "session_info", "id": "e001", "parentId": None, "name": "de\u200bploy prod",
         "timestamp": "2025-06-01T10:01:00.000Z"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    found = CliRunner().invoke(cli, ["search", "-E", "de.?ploy", str(path)])
    assert found.exit_code == 0, found.output
    assert "de\u27e8U+200B\u27e9ploy" in found.stdout and "\u200b" not in found.stdout
