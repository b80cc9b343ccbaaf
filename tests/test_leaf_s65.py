"""Stop 65: the earlier copy of an id a file uses twice has a name `--leaf` takes
(``u2~1``); a redacted export chose it again by its plain id, which names the latest
copy (as in Pi), and the Markdown named the leaf ``u2``, a spelling that picks the other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli


def _twice_used_id(tmp_path: Path) -> Path:
    def message(entry_id: str, parent: str | None, role: str, text: str, second: int) -> dict:
        return {"type": "message", "id": entry_id, "parentId": parent,
                "timestamp": f"2025-06-01T10:00:0{second}.000Z",
                "message": {"role": role, "content": [{"type": "text", "text": text}],
                            "timestamp": 0}}  # fmt: skip

    lines = [
        {"type": "session", "version": 3, "id": "dup", "cwd": "/srv/app",
         "timestamp": "2025-06-01T10:00:00.000Z"},
        message("u1", None, "user", "first words", 1),
        message("u2", "u1", "assistant", "the first copy's answer", 2),
        message("u2", "u1", "user", "the second copy", 3),
        message("u3", "u2", "assistant", "after the second copy", 4),
    ]  # fmt: skip
    path = tmp_path / "dup.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("policy", [[]])
def test_the_first_copy_chosen_by_its_name_stays_chosen(tmp_path: Path, policy: list) -> None:
    path = _twice_used_id(tmp_path)
    out = tmp_path / "out.md"
    done = CliRunner().invoke(cli, ["export", str(path), "--leaf", "u2~1", *policy, "-o", str(out)])
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    transcript = text.split("## Transcript", 1)[1]
    assert "root → leaf (2 entries, leaf `u2~1`)" in transcript
    main_line = transcript.split("\n## ", 1)[0]
    assert "the first copy's answer" in main_line and "after the second copy" not in main_line
