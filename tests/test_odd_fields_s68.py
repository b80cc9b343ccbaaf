"""Session 68: bad costs, and odd-typed fields that left the page without a word.

1. A turn's ``usage.cost.total`` of 1e400 (JavaScript's Infinity) counted as $0 without a
   warning, 1e300 read "$1e+300" in every table, and -5 took $5 off every total; a bad
   token count in the same usage object was already counted as 0 with a ``[bad-usage]``
   warning. A cost is now an amount from $0 to $1e9 (``usage.MAX_TURN_COST``), else $0
   with the same kind of warning naming the entry, so a sum of costs is never infinite.
2. An ``errorMessage`` object showed only "Error: the model call failed"; a tool call's
   ``name`` or a result's ``toolName`` that is an object, a ``session_info`` name, a
   model change's ``modelId``, a ``thinkingLevel``, a ``stopReason`` or a ``customType``
   of another type than text were shown nowhere. They are shown as written (escaped), as
   other odd values are: "Not of the type Pi writes, so shown as written".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.usage import usage_from_raw
from tests.browser_util import EMBEDDED, PageServer, Viewer, parse_html

pytest_plugins = ["tests.browser_util"]

HEADER = {"type": "session", "version": 3, "id": "s68", "timestamp": "2025-06-01T10:00:00.000Z"}
HEADER["cwd"] = "/home/alice/p"
#: Where a test writes a number JSON can hold but Python's json cannot write (1e400).
COST = "__COST__"
#: The most a turn may cost (``exporter.usage.MAX_TURN_COST``), as the warnings say it.
MAX_TURN_COST = 1e9


def _line(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent,
            "timestamp": "2025-06-01T10:01:00.000Z", **fields}  # fmt: skip


def _user(entry_id: str, parent: str | None, text: str = "go") -> dict[str, Any]:
    return _line("message", entry_id, parent, message={"role": "user", "content": text})


def _assistant(entry_id: str, parent: str, content: Any, **fields: Any) -> dict[str, Any]:
    message = {"role": "assistant", "content": content, "provider": "p", "model": "m"}
    message |= {"stopReason": "stop", **fields}
    return _line("message", entry_id, parent, message=message)


def _answer(entry_id: str, parent: str, cost: dict[str, Any]) -> dict[str, Any]:
    """An answer of 1 input and 2 output tokens whose usage gives ``cost``."""
    usage = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3}
    return _assistant(entry_id, parent, [{"type": "text", "text": "ok"}], usage={**usage,
                      "cost": cost})  # fmt: skip


def _write(path: Path, records: list[dict[str, Any]], cost_text: str = "") -> Path:
    """The session file: ``COST`` (quoted) written as ``cost_text``, a number as is."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [HEADER, *records])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace(json.dumps(COST), cost_text), encoding="utf-8")
    return path


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# --- 1. a cost outside $0 to $1e9 counts as $0, with a warning ------------------------------


@pytest.mark.parametrize("written", ["1e400", "1e300", "-5", "1000000001", "-1e400"])
def test_a_bad_cost_counts_as_none_and_is_said(tmp_path: Path, written: str) -> None:
    """Each of these was used as written (or, 1e400, zeroed without a word); the token
    counts of the same usage were always checked so."""
    records = [_user("u1", None), _answer("bad-one", "u1", {"input": 0, "total": COST})]
    records += [_user("u2", "bad-one"), _answer("a2", "u2", {"total": 0.25})]
    path = _write(tmp_path / "sessions" / "--p--" / "cost.jsonl", records, written)
    done = _run("stats", str(path))
    assert done.exit_code == 0, done.output
    said = {"1e400": "a number past the float range", "1e300": "1e+300"}
    said["-1e400"] = "a negative number past the float range"
    warning = (
        f"line 3: cost.total in the usage of entry 'bad-one' is {said.get(written, written)}, "
        "not an amount from $0 to $1,000,000,000; counted as $0 [bad-usage]"
    )
    assert warning in done.stderr, done.stderr
    assert done.stderr.count("[bad-usage]") == 1  # the good turn's cost says nothing
    totals = [line.split()[-1] for line in done.stdout.splitlines() if line.startswith("total")]
    assert totals == ["$0.250", "$0.250"], done.stdout
    stats = json.loads(_run("stats", "--json", str(path)).stdout)
    assert stats["usage"]["all"]["cost"] == 0.25
    assert [m["cost"] for m in stats["usage"]["by_model"]] == [0.25]
    listed = _run("list", "--all", "--json", "--sessions-dir", str(tmp_path / "sessions"))
    assert [json.loads(row)["cost"] for row in listed.stdout.splitlines()] == [0.25]
    page = _run("export", str(path), "--no-embed", "-o", str(tmp_path / "page.html"))
    assert page.exit_code == 0, page.output
    html = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert "not an amount from $0 to $1,000,000,000; counted as $0" in html
    assert "$1e+300" not in html and "-$5.00" not in html and "$1,000,000,001" not in html


def test_a_bad_part_of_a_cost_without_total_counts_as_none(tmp_path: Path) -> None:
    """Without a ``total`` the parts are summed: a negative part took money off it."""
    cost = {"input": 0.5, "output": -3, "cacheRead": 0.25}
    path = _write(tmp_path / "parts.jsonl", [_user("u1", None), _answer("a1", "u1", cost)])
    done = _run("stats", "--json", str(path))
    assert json.loads(done.stdout)["usage"]["all"]["cost"] == 0.75
    assert "cost.output in the usage of entry 'a1' is -3, not an amount" in done.stderr


def test_costs_never_sum_to_infinity(tmp_path: Path) -> None:
    """Two turns of $1.7e308 each summed to inf: "overflow" in every table. No turn costs
    that much: both count as $0, one warning says so for both."""
    records = [_user("u1", None), _answer("a1", "u1", {"total": 1.7e308})]
    records += [_answer("a2", "a1", {"total": 1.7e308})]
    path = _write(tmp_path / "inf.jsonl", records)
    done = _run("stats", str(path))
    assert "overflow" not in done.stdout and "e+308" not in done.stdout, done.stdout
    assert "(and 1 more turn); counted as $0 [bad-usage]" in done.stderr, done.stderr
    assert json.loads(_run("stats", "--json", str(path)).stdout)["usage"]["all"]["cost"] == 0


def test_the_bound_keeps_every_real_cost() -> None:
    """A cost up to the bound is kept as written, an int as a float: only past it, below 0,
    or not finite is a cost none."""
    assert usage_from_raw({"cost": {"total": MAX_TURN_COST}}).cost == MAX_TURN_COST
    assert usage_from_raw({"cost": {"total": 10**9}}).cost == 1e9
    assert usage_from_raw({"cost": {"total": 0.0937}}).cost == 0.0937
    assert usage_from_raw({"cost": {"total": 10**400}}).cost == 0.0  # (no float of it)
    assert usage_from_raw({"cost": {"total": MAX_TURN_COST * 1.01}}).cost == 0.0
    parts = {"input": 5e-06, "output": 0.00335, "cacheRead": 0.0783945, "cacheWrite": 0.0119}
    assert usage_from_raw({"cost": parts}).cost == sum(parts.values())


# --- 2. odd-typed fields are shown as written -----------------------------------------------

#: Each entry's odd value carries a mark of its own; one holds markup, which stays text.
ERROR = {"e": "<b>MARK-error</b>"}


def _odd_session(path: Path) -> Path:
    call = {"type": "toolCall", "id": "call1", "name": {"v": "MARK-call"}, "arguments": {}}
    result = {"role": "toolResult", "toolCallId": "call1", "toolName": {"n": "MARK-result"}}
    result |= {"content": [{"type": "text", "text": "out"}], "isError": False}
    lost = {"role": "toolResult", "toolCallId": "nowhere", "toolName": ["MARK-lost"]}
    lost |= {"content": "x"}
    records = [
        _user("u1", None),
        _assistant("a1", "u1", [{"type": "text", "text": "looking"}, call], stopReason="toolUse"),
        _line("message", "r1", "a1", message=result),
        _line("message", "r2", "r1", message=lost),
        _line("model_change", "m1", "r2", provider="p", modelId={"m": "MARK-model"}),
        _line("thinking_level_change", "t1", "m1", thinkingLevel=["MARK-level"]),
        _line("session_info", "n1", "t1", name=["MARK-name"]),
        _assistant("a2", "n1", [], stopReason="error", errorMessage=ERROR),
        _assistant("a3", "a2", [{"type": "text", "text": "hi"}], stopReason={"s": "MARK-stop"}),
        _line("custom_message", "c1", "a3", customType={"c": "MARK-custom"}, content="hi",
              display=True),
    ]  # fmt: skip
    return _write(path, records)


#: The entry whose view shows each mark (a result shown with its call: in the call's).
SHOWN_IN = {
    "MARK-call": "a1",
    "MARK-result": "a1",
    "MARK-lost": "r2",
    "MARK-model": "m1",
    "MARK-level": "t1",
    "MARK-name": "n1",
    "MARK-error": "a2",
    "MARK-stop": "a3",
    "MARK-custom": "c1",
}


def test_odd_typed_fields_are_shown_as_written(
    tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    path = _odd_session(tmp_path / "odd.jsonl")
    out = tmp_path / "odd.html"
    done = _run("export", str(path), "-o", str(out))
    assert done.exit_code == 0, done.output
    html = out.read_text(encoding="utf-8")
    assert "<b>MARK-error" not in EMBEDDED.sub("", html)  # the file's markup is text
    page = viewer.open(page_server.publish("s68-odd.html", html))
    missing = {}
    for mark, entry_id in SHOWN_IN.items():
        article = page.locator(f'article[data-entry-id="{entry_id}"]')
        article.scroll_into_view_if_needed()
        said = article.inner_text()
        if mark not in said or "of the type Pi writes, so shown as written" not in said:
            missing[mark] = said
    assert not missing, missing
    failed = page.locator('article[data-entry-id="a2"]')
    assert failed.locator("b").count() == 0
    assert '"e": "<b>MARK-error</b>"' in failed.inner_text()
    assert "errorMessage is not text" in failed.inner_text()
    # a name that is a list is no name cleared
    named = page.locator('article[data-entry-id="n1"]').inner_text()
    assert "Session name cleared" not in named, named
    viewer.assert_clean()


def test_odd_typed_fields_leave_a_real_page_as_it_was(tmp_path: Path) -> None:
    """Text where Pi writes text is no odd value: the same session written as Pi writes it
    shows no "not of the type Pi writes"."""
    call = {"type": "toolCall", "id": "call1", "name": "read", "arguments": {"path": "x"}}
    result = {"role": "toolResult", "toolCallId": "call1", "toolName": "read"}
    result |= {"content": [{"type": "text", "text": "out"}], "isError": False}
    records = [
        _user("u1", None),
        _assistant("a1", "u1", [call], stopReason="toolUse"),
        _line("message", "r1", "a1", message=result),
        _line("model_change", "m1", "r1", provider="p", modelId="m2"),
        _line("thinking_level_change", "t1", "m1", thinkingLevel="high"),
        _line("session_info", "n1", "t1", name="named"),
        _assistant("a2", "n1", [], stopReason="error", errorMessage="529 overloaded"),
    ]
    path = _write(tmp_path / "plain.jsonl", records)
    done = _run("export", str(path), "--no-embed", "-o", str(tmp_path / "plain.html"))
    assert done.exit_code == 0, done.output
    page = parse_html((tmp_path / "plain.html").read_text(encoding="utf-8"))
    text = page.root.text
    assert "not of the type Pi writes" not in text.lower()
    assert "Error: 529 overloaded" in text and "Session named “named”" in text
