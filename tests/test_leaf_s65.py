"""Stop 65: the earlier copy of an id a file uses twice has a name `--leaf` takes
(``u2~1``); the Markdown named the leaf ``u2``, a spelling that picks the other, and an
export with a policy chose its leaf again by that id, with a warning the user had not
asked for."""

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


@pytest.mark.parametrize("policy", [[], ["--redact"], ["--no-thinking"]])
def test_the_first_copy_chosen_by_its_name_stays_chosen(tmp_path: Path, policy: list) -> None:
    path = _twice_used_id(tmp_path)
    out = tmp_path / "out.md"
    done = CliRunner().invoke(cli, ["export", str(path), "--leaf", "u2~1", *policy, "-o", str(out)])
    assert done.exit_code == 0, done.output
    text = out.read_text(encoding="utf-8")
    transcript = text.split("## Transcript", 1)[1]
    # a policy's copy is written leaf last, so the copies of u2 swap places (and names) in it
    leaf = "u2" if policy else "u2~1"
    assert f"root → leaf (2 entries, leaf `{leaf}`)" in transcript
    main_line = transcript.split("\n## ", 1)[0]
    assert "the first copy's answer" in main_line and "after the second copy" not in main_line
    assert "names 2 entries" not in done.output  # no warning about a choice not made
