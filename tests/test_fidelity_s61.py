"""Session 61's fidelity fixes: what the page, the Markdown export, `stats` and `search` say
of odd but real files (a NUL in a message, an extension message's details, a Bedrock
turn's total, a token count past 2**53 (none, with a warning), a write cut off before its
content, a header after an entry, content blocks of other types)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.loader import load_session
from exporter.markdown_doc import session_markdown
from exporter.render import render_session
from exporter.search import Pattern, search_file
from exporter.usage import usage_from_raw
from tests.conftest import Build

pytest_plugins = ["tests.browser_util"]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _assistant(entry_id: str, parent: str, second: int, content: list[Any], **extra: Any) -> dict:
    line = Build.assistant(entry_id, parent, second=second, **extra)
    line["message"]["content"] = content
    return line


def _text(html: str) -> str:
    """A page's words, tags dropped (a rough ``textContent``)."""
    body = re.sub(r"<(script|style)\b.*?</\1>", "", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", "", body))


# --- 1. a NUL in a Markdown body is its sign, as every other control ------------------------


def _with_nuls() -> list[dict[str, Any]]:
    answer = "asst X\0Y\n\n```\ncode P\0Q\n```"
    thinking = {"type": "thinking", "thinking": "think T\0U"}
    compaction = {"summary": "comp C\0D", "firstKeptEntryId": "b3", "tokensBefore": 5}
    return [
        Build.header(),
        Build.user("u1", None, "user A\0B `c\0d` end"),
        _assistant("a2", "u1", 2, [thinking, {"type": "text", "text": answer}]),
        Build.entry("branch_summary", "b3", "a2", 3, fromId="u1", summary="sum S\0T"),
        Build.entry("compaction", "c4", "b3", 4, **compaction),
    ]


SAID_WITH_NULS = ("A␀B", "c␀d", "T␀U", "X␀Y", "P␀Q", "S␀T", "C␀D")


def test_a_nul_in_every_markdown_body_shows_as_its_sign(
    write_session: Any, viewer: Any, page_server: Any
) -> None:
    """markdown-it swaps a NUL for U+FFFD before the page's pass that shows controls as
    signs: the prompt, answer, thinking, code, branch and compaction summaries read "A�B"
    where the outline read "A␀B"."""
    session = load_session(write_session(_with_nuls()))
    page = viewer.open(page_server.publish("s61-nul.html", render_session(session)))
    shown = page.evaluate("document.querySelector('#transcript').textContent")
    assert "\ufffd" not in shown
    for said in SAID_WITH_NULS:
        assert said in shown, said
    markdown = session_markdown(session)  # the Markdown export says them alike
    assert "\ufffd" not in markdown and "\0" not in markdown
    assert all(said in markdown for said in SAID_WITH_NULS)
    viewer.assert_clean()


# --- 2. an extension message in Markdown: its name and its details --------------------------


def test_markdown_names_an_extension_message_and_keeps_its_details(write_session: Any) -> None:
    """A v2 ``hookMessage`` (a message of role "custom" now) was headed "custom" with its
    customType and details nowhere; a ``custom_message`` entry lost its details. The page
    says "Extension message git-status" and shows "Details:"."""
    hook = {
        "role": "hookMessage",
        "customType": "git-status",
        "display": True,
        "content": "Branch main, 3 files changed",
        "details": {"files": 3},
        "timestamp": 2,
    }
    path = write_session([
        Build.header(version=2),
        Build.user("u1", None),
        Build.entry("message", "h1", "u1", 2, message=hook),
        Build.entry("custom_message", "m1", "h1", 3, customType="todo-list", display=True,
                    content="Two items left", details={"openItems": 2}),
    ])  # fmt: skip
    session = load_session(path)
    markdown = session_markdown(session)
    assert "### custom" not in markdown
    assert "### Extension message `git-status`" in markdown
    assert "### Extension message `todo-list`" in markdown
    hook_part = markdown.split("`git-status`", 1)[1].split("`todo-list`", 1)[0]
    assert "*Details:*" in hook_part and '"files": 3' in hook_part
    custom_part = markdown.split("`todo-list`", 1)[1]
    assert "*Details:*" in custom_part and '"openItems": 2' in custom_part
    page = _text(render_session(session))
    assert "Extension message git-status" in page and "Details:" in page


# --- 3. and 4. tokens: the sum of the four parts, exact -------------------------------------


def test_a_branch_counts_the_tokens_its_caption_says(
    write_session: Any, viewer: Any, page_server: Any
) -> None:
    """pi-ai writes a Bedrock turn without a total as input + output: ``totalTokens`` 150
    for a turn that also read 5,000 cached tokens. The Branches table says its tokens count
    input, output and cache reads and writes, and showed 150."""
    usage = Build.usage(100, 50, cacheRead=5000, totalTokens=150)
    bedrock = {"usage": usage, "provider": "amazon-bedrock"}
    lines = [
        Build.header(),
        Build.user("u1", None),
        Build.assistant("a2", "u1", **bedrock),
        Build.user("u3", "u1", "other way", second=3),
        Build.assistant("a4", "u3", second=4, **bedrock),
    ]
    path = write_session(lines)
    stats = json.loads(run("stats", str(path), "--json").stdout)
    assert stats["usage"]["all"]["total_tokens"] == 2 * 5150
    table = run("stats", str(path)).stdout.split("Branches", 1)[1]
    assert len(re.findall(r"\s\d\s+5,150\s+\$", table)) == 2, table
    page = viewer.open(page_server.publish("s61-tokens.html", render_session(load_session(path))))
    caption = page.locator("table.branches caption").inner_text()
    assert "tokens count input, output and cache reads and writes" in caption
    for row in page.locator("table.branches tbody tr").all():
        cells = row.locator("td").all_inner_texts()
        assert "5,150" in cells and "150" not in cells, cells
    viewer.assert_clean()


def test_an_absurd_token_count_counts_as_none_with_a_warning(write_session: Any) -> None:
    """A count past 2**53 is no count a provider gives: it counts as none, with a warning,
    as another agent's are (session 65; 10**30 was printed as its 31 digits, and 1e308 as
    309 that widened every table). Through a float it was 1,...,019,884,624,838,656."""
    assert usage_from_raw({"input": 10**30, "output": 1}).input == 0
    assert usage_from_raw({"input": 2**53, "output": 1}).input == 2**53
    assert usage_from_raw({"input": 2**1023}).input == 0
    usage = Build.usage(10**30, 1)
    path = write_session([Build.header(), Build.user("u1", None),
                          Build.assistant("a2", "u1", usage=usage)])  # fmt: skip
    done = run("stats", str(path))
    assert "1,000,000,000,000,000,000,000,000,000,000" not in done.stdout, done.stdout
    assert "19,884,624,838,656" not in done.stdout
    assert "token count 1000000000000000000000000000000 in a turn's usage" in done.stderr
    stats = json.loads(run("stats", str(path), "--json").stdout)
    assert stats["usage"]["all"]["input"] == 0


# --- 5. a write cut off before its content --------------------------------------------------


def test_a_write_cut_off_before_its_content_says_so(write_session: Any) -> None:
    """A turn cut off at the output limit left ``write`` without ``content``: the page said
    "write x.py 0 lines" and the Markdown held an empty python block, an empty file."""
    call = {"type": "toolCall", "id": "c1", "name": "write", "arguments": {"path": "x.py"}}
    path = write_session([Build.header(), Build.user("u1", None),
                          _assistant("a2", "u1", 2, [call], stopReason="length")])  # fmt: skip
    session = load_session(path)
    page = _text(render_session(session))
    assert "it was cut off before the content to write" in page
    assert "0 lines" not in page
    markdown = session_markdown(session)
    assert "*The call is incomplete: it was cut off before the content to write.*" in markdown
    assert "```python" not in markdown
    whole = {**call, "arguments": {"path": "x.py", "content": ""}}  # an empty file: as before
    empty = write_session([Build.header(), Build.user("u1", None),
                           _assistant("a2", "u1", 2, [whole])])  # fmt: skip
    assert "0 lines" in _text(render_session(load_session(empty)))


# --- 6. a header after an entry -------------------------------------------------------------


def test_a_header_after_an_entry_is_the_sessions_header(write_session: Any) -> None:
    """Its id and cwd were unused (the id the file's name, the project "unknown") and two
    warnings contradicted each other: "no session header line" and "a session header after
    the first entry". Pi takes the first "session" line as the header wherever it is
    (getHeader); only its open refuses the file. Every entry stays."""
    path = write_session([
        Build.user("u0", None, "before header"),
        Build.header("sess-h2", cwd="/w"),
        Build.user("u1", "u0", "after header", second=2),
    ])  # fmt: skip
    session = load_session(path)
    assert (session.id, session.header.cwd, session.header.line) == ("sess-h2", "/w", 2)
    assert [e.id for e in session.entries] == ["u0", "u1"]
    assert session.active_path == ["u0", "u1"]
    assert [(d.line, d.kind) for d in session.diagnostics] == [(2, "missing-header")]
    assert not session.damaged
    done = CliRunner().invoke(cli, ["stats", str(path)], catch_exceptions=False)
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "after an entry" in warnings[0], done.stderr
    assert "sess-h2" in done.stdout and "/w" in done.stdout


# --- 7. search finds what the page shows, and not what it hides -----------------------------


def _search(path: Path, text: str) -> list[str]:
    found = search_file(path, Pattern(text), skip_by_bytes=False)
    return [m["entry_id"] for m in found["matches"]]


def test_search_finds_blocks_the_page_shows_as_written(write_session: Any) -> None:
    """An assistant's ``audio`` block and a user's ``file`` block are on the page as JSON;
    a message of an unknown role is shown whole as JSON, an extension message's details
    under "Details:"; no search found them."""
    audio = {"type": "audio", "data": "xx", "transcript": "AUDIOTRANSCRIPT DDD"}
    user_file = {"type": "file", "name": "x.pdf", "text": "FILEBLOCK GGG"}
    odd_user = {"role": "user", "content": [{"type": "text", "text": "U2"}, user_file]}
    system = {"role": "system", "content": "SYSTEMROLE", "origin": "HHH-ORIGIN"}
    path = write_session([
        Build.header(),
        Build.user("u1", None),
        _assistant("a2", "u1", 2, [{"type": "text", "text": "T1"}, audio]),
        Build.entry("message", "u3", "a2", 3, message=odd_user),
        Build.entry("message", "s4", "u3", 4, message=system),
        Build.entry("custom_message", "m5", "s4", 5, customType="ext", display=True,
                    content="note", details={"ticket": "JJJ-42"}),
    ])  # fmt: skip
    page = _text(render_session(load_session(path)))
    for said in ("AUDIOTRANSCRIPT DDD", "FILEBLOCK GGG", "HHH-ORIGIN", "JJJ-42"):
        assert said in page, said  # what the page shows...
    assert _search(path, "DDD") == ["a2"]  # ...the search finds
    assert _search(path, "GGG") == ["u3"]
    assert _search(path, "HHH-ORIGIN") == ["s4"]
    assert _search(path, "JJJ-42") == ["m5"]


def test_search_leaves_out_the_interrupt_the_page_does_not_say(write_session: Any) -> None:
    """An aborted turn's "Request was aborted" is Pi's own interrupt: the page says
    "Aborted" and no more, yet a search of the words found the turn. Any other message of
    an aborted turn is said, and found."""
    path = write_session([
        Build.header(),
        Build.user("u1", None),
        Build.assistant("a2", "u1", stopReason="aborted", errorMessage="Request was aborted."),
        Build.user("u3", "a2", second=3),
        Build.assistant("a4", "u3", second=4, stopReason="aborted",
                        errorMessage="Request was aborted by the watchdog"),
    ])  # fmt: skip
    page = _text(render_session(load_session(path)))
    assert page.count("Request was aborted") == 1  # a4's, not a2's
    assert _search(path, "Request was aborted") == ["a4"]


def test_searchs_rules_are_the_pages() -> None:
    """Search follows the page's rules (the render package is too slow to import for a
    search): one set of them, ``exporter.shown_rules``, serves both, so they cannot drift
    apart."""
    from exporter import search, shown_rules, site_search
    from exporter.render import entry_views, odd_values

    assert search.SHOWN_ROLES is entry_views.SHOWN_ROLES is shown_rules.SHOWN_ROLES
    assert search.interrupted is site_search.interrupted is shown_rules.interrupted
    assert entry_views.is_interrupt is shown_rules.is_interrupt
    for role, shown in odd_values._SHOWN.items():
        assert search.BLOCKS_SHOWN[role] == shown, role
