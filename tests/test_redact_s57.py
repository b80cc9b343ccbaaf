"""Stop 57: secrets that left the machine in clear for where they sat, not for their shape:
split by a terminal's colour codes (``grep --color``), or in an object shaped like an image
(a tool's argument, an SVG, a "PNG" whose bytes are text)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.jsonl_out import session_to_jsonl
from exporter.loader import load_session
from exporter.redact import RedactionPolicy, apply_policy
from exporter.render import RenderOptions, render_session
from exporter.session import Session

GHP = "ghp_H9muZ11Kl3rvZ0PfZNwLiAsHY2rDwOAsAKAc"
AKIA, AWS_SECRET = "AKIA6EYGSNO0FRNZRVCM", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm2ZxV7"
# a 1×1 PNG as a screenshot tool returns it
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E"
    "rkJggg=="
)


def _records(*messages: dict[str, Any], name: str | None = None) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00Z",
         "cwd": "/work/proj"},
    ]  # fmt: skip
    parent = None
    for index, message in enumerate(messages):
        entry_id = f"e{index}"
        records.append({"type": "message", "id": entry_id, "parentId": parent,
                        "timestamp": "2026-01-01T00:00:01Z", "message": message})  # fmt: skip
        parent = entry_id
    if name is not None:
        records.append({"type": "session_info", "id": "n1", "parentId": parent,
                        "timestamp": "2026-01-01T00:00:02Z", "name": name})  # fmt: skip
    return records


def _session(tmp_path: Path, records: list[dict[str, Any]]) -> tuple[Path, Session]:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path, load_session(path)


def _redacted(session: Session) -> Session:
    out, _ = apply_policy(session, RedactionPolicy(env_secrets=False), environ={})
    return out


def _call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "toolCall", "id": "c1", "name": "upload",
            "arguments": arguments}], "timestamp": 1, "stopReason": "toolUse"}  # fmt: skip


def _result(content: list[dict[str, Any]], details: Any = None) -> dict[str, Any]:
    return {"role": "toolResult", "toolCallId": "c1", "toolName": "upload", "content": content,
            "details": details, "isError": False, "timestamp": 2}  # fmt: skip


GREP_COLOR = (
    "\x1b[35m\x1b[K.env\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[KAWS_ACCESS_KEY_ID="
    f"\x1b[01;31m\x1b[K{AKIA[:4]}\x1b[m\x1b[K{AKIA[4:]}\n"
    f"notes.md:token \x1b[1m{GHP[:15]}\x1b[32m{GHP[15:30]}\x1b[m{GHP[30:]}\n"
)


def test_a_token_split_by_colour_codes_goes_from_the_copy_and_the_page(tmp_path: Path) -> None:
    """The page and the Markdown drop a terminal's codes, so a token they split (`grep
    --color` colours the match) showed whole while no detector matched it as written."""
    records = _records(
        {"role": "user", "content": "find the keys", "timestamp": 0},
        _call({"command": "grep --color=always -rE 'AKIA|ghp_' ."}),
        _result([{"type": "text", "text": GREP_COLOR}]),
        name=f"deploy \x1b[1m{GHP[:12]}\x1b[m{GHP[12:]}",
    )
    _, session = _session(tmp_path, records)
    out = _redacted(session)
    copy = session_to_jsonl(out)
    page = render_session(out, RenderOptions())
    for whole in (AKIA, GHP):
        assert whole not in page  # as the reader sees it
    for piece in (AKIA[4:], GHP[30:]):
        assert piece not in copy and piece not in page
    assert out.name is not None and GHP[12:] not in out.name
    assert "[REDACTED:" in out.name and out.name.startswith("deploy ")
    # the colours outside the token stay
    assert "\x1b[35m\x1b[K.env" in out.by_id["e2"].raw["message"]["content"][0]["text"]


def test_an_osc_hyperlink_inside_a_token_is_read_through() -> None:
    from exporter.detectors import scan

    text = f"see {GHP[:4]}\x1b]8;;https://x.example\x07{GHP[4:]}\x1b]8;;\x07 now"
    spans = [(f.start, f.end) for f in scan(text)]
    assert spans and text[spans[0][0] : spans[0][1]].endswith(GHP[4:])


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def test_an_object_shaped_like_an_image_is_scanned_unless_it_holds_an_image(
    tmp_path: Path,
) -> None:
    """Any object with an image's mimeType or type kept its data unscanned, at any depth:
    a tool's arguments carried a key id and its secret out in clear."""
    svg = f'<svg xmlns="http://www.w3.org/2000/svg"><!-- {GHP} --></svg>'
    records = _records(
        {"role": "user", "content": "upload it", "timestamp": 0},
        _call({"file": {"mimeType": "image/png", "data": f"{AKIA}\n{AWS_SECRET}"}}),
        _result(
            [
                {"type": "image", "mimeType": "image/png", "data": PNG},
                {"type": "image", "mimeType": "image/svg+xml", "data": _b64(svg.encode())},
                {"type": "image", "mimeType": "image/png", "data": _b64(f"TOKEN={GHP}".encode())},
            ],
            details={"attachment": {"type": "image", "content": f"{AKIA} {AWS_SECRET}"}},
        ),
    )
    path, session = _session(tmp_path, records)
    out = _redacted(session)
    copy = session_to_jsonl(out)
    for secret in (AKIA, AWS_SECRET, GHP):
        assert secret not in copy
    content = out.by_id["e2"].raw["message"]["content"]
    assert content[0]["data"] == PNG  # a picture's bytes stay as they were
    shown = base64.b64decode(content[1]["data"]).decode("utf-8")
    assert shown.startswith("<svg ") and "[REDACTED:github-token" in shown  # still an SVG
    assert "[REDACTED:" in base64.b64decode(content[2]["data"]).decode("utf-8")
    # and what reaches a reader: the redacted page embeds the copy
    result = CliRunner().invoke(
        cli, ["export", str(path), "--redact", "--no-embed", "-o", str(tmp_path / "p.html")]
    )
    assert result.exit_code == 0, result.output
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert AKIA not in page and AWS_SECRET not in page and PNG in page


@pytest.mark.parametrize(
    "data",
    [
        PNG,
        "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwg",
        "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7",
        "UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=",
    ],
    ids=["png", "jpeg", "gif", "webp"],
)
def test_pictures_stay_byte_for_byte(tmp_path: Path, data: str) -> None:
    records = _records(
        {"role": "user", "content": [{"type": "image", "mimeType": "image/png", "data": data}],
         "timestamp": 0},
    )  # fmt: skip
    _, session = _session(tmp_path, records)
    out = _redacted(session)
    assert out.by_id["e0"].raw["message"]["content"][0]["data"] == data


@pytest.mark.parametrize(
    "text",
    [
        "ghp_H9muZ1&#8203;1Kl3rvZ0PfZNwLiAsHY2rDwOAsAKAc",  # the page shows U+200B: nothing
        '{"value": "\\u0067hp_H9muZ11Kl3rvZ0PfZNwLiAsHY2rDwOAsAKAc"}',  # printed JSON
        '{"value": "gh\\u0070_H9muZ11Kl3rvZ0PfZNwLiAsHY2rDwOAsAKAc"}',
    ],
)
def test_a_token_written_with_an_invisible_reference_or_a_json_escape_is_found(
    text: str,
) -> None:
    from exporter.detectors import scan

    assert [text[f.start : f.end][-20:] for f in scan(text)] == [GHP[-20:]]
