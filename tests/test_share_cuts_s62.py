"""What a share policy keeps (session 62): an excluded entry never comes back with
--active-branch-only, a dropped entry's bookmark (label, branch summary's fromId) moves to
what the copy kept, and --no-thinking leaves out every signature. Real files through the
CLI; what Pi itself makes of each copy is read with Pi (node)."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from tests.conftest import FIXTURES_DIR
from tests.fakes.github import FakeGitHub
from tests.share_env import isolated_share_env

SAMPLER = FIXTURES_DIR / "every-entry-type.jsonl"
BRANCHED_2 = FIXTURES_DIR / "pi-branched-2.jsonl"
# the session Pi's own HTML export carries (base64 JSON)
PI_DATA = re.compile(r'<script id="session-data" type="application/json">([^<]*)</script>')
PiReference = Callable[[Sequence[Path]], list[dict[str, Any]]]

_COST = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
_USAGE = {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2, "cost": _COST}


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _redact(source: Path, out: Path, *options: str) -> str:
    """``pi-session redact`` to ``out``; its stderr (the summary)."""
    done = CliRunner().invoke(cli, ["redact", str(source), "-o", str(out), *options])
    assert done.exit_code == 0, done.output
    return done.stderr


def _assistant(content: str | list[dict[str, Any]], stop: str = "stop") -> dict[str, Any]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    return {"role": "assistant", "content": blocks, "stopReason": stop, "api": "x",
            "provider": "p", "model": "m", "usage": _USAGE, "timestamp": 1}  # fmt: skip


def _bookmarked_session(path: Path) -> Path:
    """A session whose labels sit on a tool result and on a hidden (``display:false``)
    message, with a branch summary that branched away from the tool result."""
    records: list[dict[str, Any]] = [
        {"type": "session", "version": 3, "id": "bookmarks-1",
         "timestamp": "2025-06-01T10:00:00.000Z", "cwd": "/work/p"},
    ]  # fmt: skip

    def add(entry_id: str, parent: str | None, **fields: Any) -> None:
        minute = len(records)
        records.append({"type": fields.pop("type", "message"), "id": entry_id,
                        "parentId": parent, "timestamp": f"2025-06-01T10:{minute:02d}:00.000Z",
                        **fields})  # fmt: skip

    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    add("u1", None, message={"role": "user", "content": "first", "timestamp": 1})
    add("a1", "u1", message=_assistant([call], stop="toolUse"))
    add("r1", "a1", message={"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                             "content": [{"type": "text", "text": "out"}], "isError": False,
                             "timestamp": 1})  # fmt: skip
    add("a2", "r1", message=_assistant("done"))
    add("h1", "a2", type="custom_message", customType="x", content="hidden ctx", display=False)
    add("u2", "h1", message={"role": "user", "content": "second", "timestamp": 1})
    add("a3", "u2", message=_assistant("ok"))
    add("l1", "a3", type="label", targetId="h1", label="hidden-bookmark")
    add("l2", "l1", type="label", targetId="r1", label="result-bookmark")
    add("bs", "a1", type="branch_summary", fromId="r1", summary="abandoned branch")
    add("u3", "bs", message={"role": "user", "content": "third", "timestamp": 1})
    add("a4", "u3", message=_assistant("fine"))
    return _write_jsonl(path, records)


def _dangling_label_targets(path: Path) -> list[str]:
    records = _records(path)
    ids = {r.get("id") for r in records}
    return [r["targetId"] for r in records if r.get("type") == "label" and r["targetId"] not in ids]


# --- 1: --exclude holds with --active-branch-only ----------------------------------------


def test_active_branch_only_does_not_bring_back_an_excluded_label_or_name(
    tmp_path: Path, pi_reference: PiReference
) -> None:
    """e22 (a label) and e23 (the session's name) sit on the branch the user left; excluded,
    they stayed excluded only without --active-branch-only."""
    out = tmp_path / "copy.jsonl"
    said = _redact(SAMPLER, out, "--active-branch-only", "--exclude", "e23", "--exclude", "e22")
    ids = {r.get("id") for r in _records(out)}
    assert "e22" not in ids and "e23" not in ids
    assert "Sampler session" not in out.read_text(encoding="utf-8")
    assert "entries excluded (--exclude): 2" in said
    [pi] = pi_reference([out])
    assert "error" not in pi and pi["name"] is None and pi["labels"] == {}
    # without --exclude the same branch keeps both, as before
    kept = tmp_path / "kept.jsonl"
    _redact(SAMPLER, kept, "--active-branch-only")
    [pi_kept] = pi_reference([kept])
    assert pi_kept["name"] == "Sampler session" and pi_kept["labels"] == {"e01": "important"}


def test_an_excluded_later_name_leaves_the_earlier_one_as_a_full_copy_does(
    tmp_path: Path, pi_reference: PiReference
) -> None:
    """The copy reads as if the excluded entry had never been written, on one branch or all."""
    records = _records(SAMPLER)
    renamed = next(r for r in records if r.get("id") == "e23")
    earlier = {**renamed, "id": "e23a", "name": "Earlier name",
               "timestamp": "2025-06-01T10:22:30.000Z"}  # fmt: skip
    records.insert(records.index(renamed), earlier)
    renamed["parentId"] = "e23a"
    source = _write_jsonl(tmp_path / "named.jsonl", records)
    one_branch, whole = tmp_path / "one.jsonl", tmp_path / "whole.jsonl"
    _redact(source, one_branch, "--active-branch-only", "--exclude", "e23")
    _redact(source, whole, "--exclude", "e23")
    names = [r["name"] for r in pi_reference([one_branch, whole])]
    assert names == ["Earlier name", "Earlier name"]


def test_share_dry_run_of_one_branch_leaves_an_excluded_subtree_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeGitHub() as fake:
        isolated_share_env(tmp_path, fake.token, monkeypatch)
        args = ["share", str(SAMPLER), "--dry-run", "--with-jsonl", "--active-branch-only",
                "--exclude", "e20/", "--api-url", fake.base_url]  # fmt: skip
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 0, done.output
        assert fake.requests == []
    copy = tmp_path / "pi-session-share-every-entry-type.jsonl"
    page = tmp_path / "pi-session-share-every-entry-type.html"
    ids = {r.get("id") for r in _records(copy)}
    assert not ids & {"e20", "e21", "e22", "e23"}
    assert "Sampler session" not in copy.read_text(encoding="utf-8")
    assert "Sampler session" not in page.read_text(encoding="utf-8")


# --- 2: a dropped entry's bookmark moves to what the copy kept -----------------------------


def test_a_hidden_entrys_label_moves_to_its_nearest_kept_ancestor(
    tmp_path: Path, pi_reference: PiReference
) -> None:
    """The default drop of display:false messages took h1's label with it, pointing at
    nothing; it now marks a2, the answer just before it."""
    source = _bookmarked_session(tmp_path / "s.jsonl")
    out = tmp_path / "copy.jsonl"
    said = _redact(source, out)
    assert _dangling_label_targets(out) == []
    [pi] = pi_reference([out])
    assert pi["labels"] == {"a2": "hidden-bookmark", "r1": "result-bookmark"}
    assert "entries dropped: 1" in said  # h1 only: no label was lost


def test_no_tool_calls_moves_labels_and_from_id_and_pi_still_opens_the_copy(
    tmp_path: Path, pi_reference: PiReference, pi_home: Path, node: str
) -> None:
    """The tool result's label marks the call that made it, and the summary branched away
    from that call (its parent); Pi's own export of the copy reads it."""
    source = _bookmarked_session(tmp_path / "s.jsonl")
    out = tmp_path / "copy.jsonl"
    _redact(source, out, "--no-tool-calls")
    records = {r.get("id"): r for r in _records(out)}
    assert "r1" not in records and _dangling_label_targets(out) == []
    assert records["bs"]["fromId"] == "a1" == records["bs"]["parentId"]
    [pi] = pi_reference([out])
    assert "error" not in pi
    assert pi["labels"] == {"a1": "result-bookmark", "a2": "hidden-bookmark"}
    (tmp_path / "pi-home").mkdir()
    exported = subprocess.run(
        [str(pi_home / "node_modules" / ".bin" / "pi"), "--export", str(out), "pi.html"],
        cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path / "pi-home"),
                           "PATH": str(Path(node).parent)},
        capture_output=True, text=True, encoding="utf-8", timeout=120, check=False,
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr[-2000:]
    (block,) = PI_DATA.findall((tmp_path / "pi.html").read_text(encoding="utf-8"))
    shown = json.loads(base64.b64decode(block, validate=True).decode("utf-8"))
    summary = next(e for e in shown["entries"] if e["id"] == "bs")
    assert summary["fromId"] == "a1" and summary["summary"] == "abandoned branch"


def test_a_moved_label_never_replaces_the_kept_entrys_own(
    tmp_path: Path, pi_reference: PiReference
) -> None:
    """a1 has a label of its own; its tool result's label has nowhere to go, and is counted."""
    source = _bookmarked_session(tmp_path / "s.jsonl")
    records = _records(source)
    answer = next(i for i, r in enumerate(records) if r.get("id") == "a2")
    own = {"type": "label", "id": "l3", "parentId": "a2", "targetId": "a1",
           "label": "call-bookmark", "timestamp": records[answer]["timestamp"]}  # fmt: skip
    records.insert(answer + 1, own)  # before r1's label: in file order, r1's would win on a1
    next(r for r in records if r.get("id") == "h1")["parentId"] = "l3"
    source = _write_jsonl(tmp_path / "own.jsonl", records)
    out = tmp_path / "copy.jsonl"
    said = _redact(source, out, "--no-tool-calls")
    assert _dangling_label_targets(out) == []
    [pi] = pi_reference([out])
    assert pi["labels"] == {"a1": "call-bookmark", "a2": "hidden-bookmark"}
    assert "entries dropped: 3" in said  # r1, h1 and r1's label l2


def test_every_label_of_a_real_branched_session_survives_no_tool_calls(
    tmp_path: Path, pi_reference: PiReference
) -> None:
    """pi-branched-2 labels three tool results: Pi showed 4 of its 7 labels in the copy."""
    out = tmp_path / "copy.jsonl"
    _redact(BRANCHED_2, out, "--no-tool-calls")
    source, copy = pi_reference([BRANCHED_2, out])
    assert "error" not in copy and _dangling_label_targets(out) == []
    assert Counter(copy["labels"].values()) == Counter(source["labels"].values())
    kept = {r.get("id") for r in _records(out)}
    assert set(copy["labels"]) <= kept


# --- 3: --no-thinking drops every signature ------------------------------------------------


def test_no_thinking_drops_gemini_signatures_on_text_and_tool_calls(tmp_path: Path) -> None:
    """Gemini signs text and tool calls too (``textSignature``, ``thoughtSignature``): they
    survived --no-thinking --keep-hidden, though --help says it drops signatures."""
    blocks = [
        {"type": "thinking", "thinking": "hmm", "thinkingSignature": "SIGTHINK"},
        {"type": "text", "text": "hello", "textSignature": "SIGTEXT"},
        {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {},
         "thoughtSignature": "SIGTHOUGHT"},
    ]  # fmt: skip
    source = _write_jsonl(tmp_path / "s.jsonl", [
        {"type": "session", "version": 3, "id": "sig-1", "timestamp": "2025-06-01T10:00:00.000Z",
         "cwd": "/work/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-06-01T10:01:00.000Z",
         "message": {"role": "user", "content": "hi", "timestamp": 1}},
        {"type": "message", "id": "a1", "parentId": "u1", "timestamp": "2025-06-01T10:02:00.000Z",
         "message": {**_assistant(blocks, stop="toolUse"), "api": "google-generative-ai"}},
    ])  # fmt: skip
    out = tmp_path / "copy.jsonl"
    said = _redact(source, out, "--no-thinking", "--keep-hidden")
    text = out.read_text(encoding="utf-8")
    assert "SIG" not in text and "Signature" not in text
    answer = next(r for r in _records(out) if r.get("id") == "a1")["message"]["content"]
    assert [b["type"] for b in answer] == ["text", "toolCall"]
    assert answer[0]["text"] == "hello" and answer[1]["name"] == "ls"
    assert "signatures dropped: 2" in said and "thinking blocks dropped: 1" in said
