"""Stop 72: "Copy file" on a write gave the text as the page shows it, not the file written:
without its last line break (a ``<pre>`` draws none after its last line, so a file ending
in one and a file without it look the same) and with LF for CRLF (the page shows a CRLF
line without its ``\\r``). Pasted into an editor it made another file: git said "No newline
at end of file", a Windows .bat lost its CRLF. The renderer now says, on the few writes
that need it, what the shown text cannot (``data-eol``: no line break at the end, all
line breaks CRLF, each ␍ a lone CR, a byte-order mark the highlighter drops), and the copy
is the file byte for byte. A file with mixed line ends is still copied with LF (which
lines had CRLF is not in the page), and control characters as the page shows them (␀, ␌:
the page's defence against hidden text)."""

from __future__ import annotations

import re
from typing import Any

from tests.browser_util import PageServer, Viewer, parse_html
from tests.test_copy_s71 import _call
from tests.test_page_s65 import _copied, _open, _prompt, _session

pytest_plugins = ["tests.browser_util"]

LINES = [f"export const v{k} = {k};" for k in range(100)]
ONE_LINE = " ".join(f"word{k:04d}" for k in range(555))  # 5,000 characters: cut inside it
HOSTILE = '</pre><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">\n'

#: name -> (content written, what "Copy file" must give; the content itself but for a
#: mixed-ends file and a ␍ of the file's own beside a lone CR, copied as the page shows them)
WRITES: dict[str, tuple[str, str]] = {
    "final newline": ("a = 1\nif a:\n\tb = 2\n", "a = 1\nif a:\n\tb = 2\n"),
    "no final newline": ("a = 1\nb = 2", "a = 1\nb = 2"),
    "one line no newline": ("x", "x"),
    "only a newline": ("\n", "\n"),
    "blank last line": ("a = 1\n\n", "a = 1\n\n"),
    "blank first line": ("\n\nfirst\n", "\n\nfirst\n"),
    "CRLF final": ("@echo off\r\necho hi\r\n", "@echo off\r\necho hi\r\n"),
    "CRLF no final": ("@echo off\r\necho hi", "@echo off\r\necho hi"),
    "CRLF blank last": ("rem\r\n\r\n", "rem\r\n\r\n"),
    "lone CR": ("10%\r100%\ndone\n", "10%\r100%\ndone\n"),
    "lone CR and CRLF": ("10%\r100%\r\n", "10%\r100%\r\n"),
    "lone CR at end": ("a\r", "a\r"),
    "own CR sign": ("sign \u240d\r!\n", "sign \u240d\u240d!\n"),  # which ␍ was a CR: unknown
    "mixed ends": ("a\r\nb\nc\r\n", "a\nb\nc\n"),  # which lines had CRLF: unknown
    "folded by lines": ("\n".join(LINES) + "\n", "\n".join(LINES) + "\n"),
    "folded, no final": ("\n".join(LINES), "\n".join(LINES)),
    "folded, blank last": ("\n".join(LINES) + "\n\n\n", "\n".join(LINES) + "\n\n\n"),
    "folded CRLF": ("\r\n".join(LINES) + "\r\n", "\r\n".join(LINES) + "\r\n"),
    "folded in a line": (ONE_LINE + "\n", ONE_LINE + "\n"),
    "folded in a line, no final": (ONE_LINE, ONE_LINE),
    "hostile": (HOSTILE, HOSTILE),
    "byte-order mark, CRLF": ("\ufeffparam($x)\r\necho $x\r\n", "\ufeffparam($x)\r\necho $x\r\n"),
    "byte-order mark": ("\ufeffimport os\n", "\ufeffimport os\n"),
}

#: What the renderer marks: only what the shown text cannot tell.
EOL = {
    "no final newline": "n",
    "one line no newline": "n",
    "CRLF final": "r",
    "CRLF no final": "nr",
    "CRLF blank last": "r",
    "lone CR": "c",
    "lone CR and CRLF": "rc",
    "lone CR at end": "nc",
    "folded, no final": "n",
    "folded CRLF": "r",
    "folded in a line, no final": "n",
    "byte-order mark, CRLF": "rb",
    "byte-order mark": "b",
}


def _page_of_writes() -> str:
    calls: list[dict[str, Any]] = []
    for k, (name, (content, _)) in enumerate(WRITES.items()):
        path = f"/p/{re.sub(r'[^a-z]+', '_', name)}.py"  # highlighted: spans in the text
        calls += _call(f"w{k}", "write", {"path": path, "content": content}, "Successfully wrote")
    return _session(_prompt("write them"), *calls)


def test_the_attribute_is_written_only_where_the_shown_text_cannot_tell() -> None:
    page = parse_html(_page_of_writes())
    writes = page.all(lambda e: e.has_class("tool-write"))
    assert len(writes) == len(WRITES)
    marks = {}
    for name, write in zip(WRITES, writes, strict=True):
        pres = write.find_all(lambda e: e.tag == "pre" and e.has_class("code"))
        assert [p.get("data-eol") for p in pres[1:]] == [None] * (len(pres) - 1)  # head only
        marks[name] = pres[0].get("data-eol")
    assert {name: mark for name, mark in marks.items() if mark is not None} == EOL


def test_copy_file_gives_the_file_as_written(viewer: Viewer, page_server: PageServer) -> None:
    html = _page_of_writes()
    page = _open(viewer, page_server, "s72-writes.html", html)
    writes = page.locator(".tool-write")
    page.wait_for_function(
        f"() => document.querySelectorAll('.tool-write .copy-btn').length === {len(WRITES)}"
    )
    folds = {name: writes.nth(k).locator("details.fold").count() for k, name in enumerate(WRITES)}
    assert all(folds[name] == 1 for name in WRITES if name.startswith("folded")), folds
    wrong = {}
    for k, (name, (_, expected)) in enumerate(WRITES.items()):
        copied = _copied(page, writes.nth(k), "Copy the text written")
        if copied != expected:
            wrong[name] = (copied[-40:], expected[-40:])
    assert not wrong, wrong
    assert page.evaluate("window.pwned") is None  # the hostile file stayed text
    assert page.locator(".tool script, .tool img").count() == 0
    # what shows is as before, with the script and without it: CRLF lines without the CR,
    # a lone CR as ␍, no line after the last line break (the copy is not what shows)
    no_js = viewer.open(page_server.publish("s72-writes-nojs.html", html), js=False)
    for shown_page in (page, no_js):
        for name in ("final newline", "CRLF final", "lone CR", "no final newline", "hostile"):
            content = WRITES[name][0]
            shown = content.replace("\r\n", "\n").removesuffix("\n").replace("\r", "\u240d")
            pre = shown_page.locator(".tool-write").nth(list(WRITES).index(name))
            assert pre.locator("pre.code").text_content() == shown, name
    viewer.assert_clean()
