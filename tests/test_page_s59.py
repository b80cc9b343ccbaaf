"""Stop 59 (helper hunt: the page against Pi's, entry by entry): an image labelled
``image/jpg``, or with no ``mimeType`` at all, was "not shown: unsupported or invalid data"
where Pi shows it; the bytes now say what an image is."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.entries import LabelEntry
from exporter.loader import parse_session_bytes
from exporter.render import RenderOptions, render_session
from exporter.render.entry_views import default_hides
from tests.browser_util import PageServer, Viewer, parse_html
from tests.conftest import FIXTURES_DIR
from tests.xss_corpus import PNG

pytest_plugins = ["tests.browser_util"]

#: A 1x1 JPEG.
JPEG = (
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////"
    "////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgB"
    "AQABPxA="
)
SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').decode()


def _session() -> bytes:
    header = {"type": "session", "version": 3, "id": "img-1",
              "timestamp": "2026-03-03T10:00:00.000Z", "cwd": "/home/dev/x"}  # fmt: skip
    prompt = {"type": "message", "id": "u1", "parentId": None,
              "timestamp": "2026-03-03T10:00:01.000Z",
              "message": {"role": "user", "timestamp": 1, "content": [
                  {"type": "text", "text": "jpg label and no label"},
                  {"type": "image", "data": JPEG, "mimeType": "image/jpg"},
                  {"type": "image", "data": PNG},
                  {"type": "image", "data": SVG, "mimeType": "image/png"},
              ]}}  # fmt: skip
    call = {"type": "message", "id": "a1", "parentId": "u1",
            "timestamp": "2026-03-03T10:00:02.000Z",
            "message": {"role": "assistant", "timestamp": 2, "stopReason": "toolUse",
                        "content": [{"type": "toolCall", "id": "c1", "name": "read",
                                     "arguments": {"path": "photo.jpg"}}]}}  # fmt: skip
    result = {"type": "message", "id": "r1", "parentId": "a1",
              "timestamp": "2026-03-03T10:00:03.000Z",
              "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "read",
                          "timestamp": 3, "isError": False,
                          "content": [{"type": "image", "data": JPEG}]}}  # fmt: skip
    return "".join(json.dumps(v) + "\n" for v in (header, prompt, call, result)).encode()


def test_images_show_by_what_their_bytes_are(viewer: Viewer, page_server: PageServer) -> None:
    html = render_session(parse_session_bytes(_session()), RenderOptions())
    assert html.count(f'src="data:image/jpeg;base64,{JPEG}"') == 2  # the prompt's and the read's
    assert html.count(f'src="data:image/png;base64,{PNG}"') == 1
    assert SVG not in html.split("application/json")[0]  # (only in the embedded download)
    assert html.count("not shown: unsupported or invalid data") == 1  # the SVG
    page = viewer.open(page_server.publish("s59-images.html", html))
    # lazy images load after the page's load event: read them once each has loaded (or
    # broken); CI read a JPEG's width as 0 while it was still loading
    page.wait_for_function(
        "[...document.querySelectorAll('[data-entry-id] img')].every(i => i.complete)"
    )
    sizes = page.evaluate(
        """[...document.querySelectorAll('[data-entry-id] img')].map(i => [
             i.src.slice(5, 15), i.naturalWidth])"""
    )
    assert sorted(sizes) == [["image/jpeg", 1], ["image/jpeg", 1], ["image/png;", 8]]


def test_the_markdown_writes_them_too(tmp_path: Path) -> None:
    source = tmp_path / "img.jsonl"
    source.write_bytes(_session())
    out = tmp_path / "img.md"
    args = ["export", str(source), "--format", "md", "--images", "files", "-o", str(out)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assets = sorted(p.name for p in (tmp_path / "img.assets").iterdir())
    assert assets == ["image-001.jpg", "image-002.png"]
    assert (tmp_path / "img.assets" / "image-001.jpg").read_bytes() == base64.b64decode(JPEG)
    assert out.read_text(encoding="utf-8").count("not shown: unsupported or invalid data") == 1


def _hidden_session() -> bytes:
    """A prompt, a hidden extension message, an extension's state, a reply; a damaged line."""
    header = {"type": "session", "version": 3, "id": "hid-1",
              "timestamp": "2026-03-03T10:00:00.000Z", "cwd": "/home/dev/x"}  # fmt: skip
    lines = [
        header,
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2026-03-03T10:00:01Z",
         "message": {"role": "user", "content": "VISIBLE-PROMPT", "timestamp": 1}},
        {"type": "custom_message", "id": "c1", "parentId": "u1",
         "timestamp": "2026-03-03T10:00:02Z", "customType": "ext", "content": "HIDDEN-PAYLOAD",
         "display": False},
        {"type": "custom", "id": "s1", "parentId": "c1", "timestamp": "2026-03-03T10:00:03Z",
         "customType": "ext-state", "data": {"k": 1}},
        {"type": "label", "id": "l1", "parentId": "s1", "timestamp": "2026-03-03T10:00:04Z",
         "targetId": "u1", "label": "start"},
    ]  # fmt: skip
    return ("".join(json.dumps(v) + "\n" for v in lines) + "{not json\n").encode()


def test_paper_says_what_the_default_filter_leaves_out(
    viewer: Viewer, page_server: PageServer
) -> None:
    """On screen the filters say what Default hides; printed, nothing did: "4 entries" over
    a printout of 2 (helper hunt: printing). A label is no loss: its entry shows it."""
    html = render_session(parse_session_bytes(_hidden_session()), RenderOptions())
    url = page_server.publish("s59-hidden.html", html)
    said = (
        "Printed with the filter “Default”: 1 hidden extension message, 1 extension state "
        "entry, 1 damaged line left out (“All” prints them)."
    )
    note = "document.querySelector('.print-default')"
    for js in (True, False):
        page = viewer.open(url, js=js)
        assert page.evaluate(f"{note}.checkVisibility()") is False  # on screen: the filters
        page.emulate_media(media="print")
        assert page.evaluate(f"{note}.checkVisibility()") is True
        assert page.evaluate(f"{note}.textContent") == said
        assert (
            page.evaluate("document.querySelector('[data-entry-id=c1]').checkVisibility()") is False
        )  # (what it speaks of)
        page.evaluate("document.getElementById('flt-all').checked = true")  # (its label: hidden)
        assert page.evaluate(f"{note}.checkVisibility()") is False  # All prints them all
        assert page.evaluate("document.querySelector('[data-entry-id=c1]').checkVisibility()")


@pytest.mark.parametrize("name", ["every-entry-type.jsonl", "pi-large-session.jsonl", None])
def test_the_print_note_counts_what_the_transcript_hides(name: str | None) -> None:
    """The note counted the outline's hidden rows: a model or thinking-level change hides
    there, not in the transcript, so pages said "104 entries of unknown types left out" of
    what paper printed (review). ``default_hides`` is held to the builders' classes here."""
    data = _hidden_session() if name is None else (FIXTURES_DIR / name).read_bytes()
    session = parse_session_bytes(data)
    page = parse_html(render_session(session, RenderOptions()))
    shown = page.all(lambda e: e.get("data-entry-id") is not None)  # (a result: in its call)
    assert len(shown) == len(session.entries)
    for element in shown:
        entry = session.by_id[element.get("data-entry-id")]
        hidden = default_hides(entry) is not None or isinstance(entry, LabelEntry)
        assert element.has_class("hide-default") == hidden, (entry.id, entry.type)
    note = page.all(lambda e: e.has_class("print-default"))
    kinds = [default_hides(e) for e in session.active_entries()]
    assert bool(note) == (any(kinds) or bool(session.damaged))
