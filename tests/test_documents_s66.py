"""Session 66: the Anthropic API's document blocks (a PDF attached to a Claude Code prompt or
returned by its Read tool, ``{"type": "document", "source": {"type": "base64", "media_type":
"application/pdf", "data": "JVBER…"}}``; a text file; a document by address or Files API id)
were shown as "Not of the type Pi writes, so shown as written" with their whole base64 (a
1 MB PDF put 1.3 MB of it into the page, on top of the download's copy), and the Markdown
as JSON. They are said in words now: "PDF document: report.pdf (application/pdf, 735
bytes)", a text document's text folded as a v1 attachment's, an address as text that is a
link only when it is a web address, a file id as itself. A Codex ``input_file`` (a PDF as a
data URL) was a text block of its JSON, its base64 on the page and past the redactor: it is
read as the same document block, so it is said the same way and a redacted copy leaves it
out."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from markdown_it import MarkdownIt

from exporter.cli import cli
from exporter.loader import load_session
from tests.browser_util import EMBEDDED, PageServer, Viewer
from tests.test_redact_s66 import (
    IDENTITY,
    SESSION_ID,
    _line,
    _pdf,
    _views,
    document_block,
    write_transcript,
)

pytest_plugins = ["tests.browser_util"]

PROMPT_PDF = _pdf("quarterly numbers")
READ_PDF = _pdf("the spec, page one")
NOTES = "notes\nline two <b>not bold</b>\n"
#: A secret in a Codex PDF's page: the redacted copy must not carry it, not even encoded
CODEX_TOKEN = "ghp_" + "CoDeX0aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV"
CODEX_PDF = _pdf(f"deploy token {CODEX_TOKEN}")
HOSTILE_TITLE = '<img src=x onerror="alert(1)">.pdf'


def _said(kind: str, data: bytes, media_type: str = "application/pdf", title: str = "") -> str:
    """The page's line for a document of ``data``: its real size, not its base64's."""
    name = f": {title}" if title else ""
    return f"{kind}{name} ({media_type}, {len(data):,} bytes)"


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=IDENTITY)


def _export(path: Path, target: Path) -> str:
    result = _run("export", str(path), "-o", str(target))
    assert result.exit_code == 0, result.output
    return target.read_text(encoding="utf-8")


def _without_download(html: str) -> str:
    """The page but its embedded download (the session as read, which keeps the PDFs)."""
    return EMBEDDED.sub("", html)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A Claude Code transcript: a prompt with a text file and a PDF attached (by title), a
    Read that returned another PDF (no title)."""
    read = {"type": "tool_use", "id": "toolu_pdf", "name": "Read"}
    read["input"] = {"file_path": "/work/app/spec.pdf"}
    result = {"type": "tool_result", "tool_use_id": "toolu_pdf"}
    result["content"] = [document_block("application/pdf", READ_PDF)]
    prompt = [
        {"type": "text", "text": "See the attachments"},
        document_block("text/plain", NOTES.encode(), "notes.txt"),
        document_block("application/pdf", PROMPT_PDF, "report.pdf"),
    ]
    lines = [
        _line(1, "user", prompt),
        _line(2, "assistant", [read]),
        _line(3, "user", [result]),
        _line(4, "assistant", [{"type": "text", "text": "Read them."}]),
    ]
    path = write_transcript(tmp_path, lines)
    return path


def test_the_page_says_each_document_and_shows_no_base64(
    transcript: Path, tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    html = _export(transcript, tmp_path / "page.html")
    outside = _without_download(html)
    assert "JVBER" not in outside  # (the PDFs' base64 begins so)
    assert base64.b64encode(NOTES.encode()).decode() not in outside
    page = viewer.open(page_server.publish("s66-documents.html", html))
    prompt = page.locator("article.entry.is-user")
    said = prompt.inner_text()
    assert _said("PDF document", PROMPT_PDF, title="report.pdf") in said
    assert _said("Text document", NOTES.encode(), "text/plain", "notes.txt") in said
    fold = prompt.locator("details.attachment")
    assert fold.locator("summary").inner_text() == "Text of the attached notes.txt"
    assert fold.get_attribute("open") is None  # folded, as a v1 attachment's text
    assert fold.locator("pre").text_content() == NOTES  # its markup as text
    assert fold.locator("b").count() == 0
    read = page.locator("article.entry:has(.tool-read)")
    assert _said("PDF document", READ_PDF) in read.inner_text()
    assert "not of the type Pi writes" not in page.inner_text("body").lower()
    viewer.assert_clean()


def test_the_markdown_says_each_document_and_shows_no_base64(
    transcript: Path, tmp_path: Path
) -> None:
    markdown = _export(transcript, tmp_path / "page.md")
    assert f"*PDF document:* `report.pdf` (application/pdf, {len(PROMPT_PDF):,} bytes)" in markdown
    assert "JVBER" not in markdown and "base64" not in markdown
    notes_size = len(NOTES.encode())
    assert f"*Text document:* `notes.txt` (text/plain, {notes_size} bytes)" in markdown
    assert f"```\n{NOTES}```" in markdown
    assert f"*PDF document* (application/pdf, {len(READ_PDF):,} bytes)" in markdown
    assert "**read** `/work/app/spec.pdf`\n\n*PDF document*" in markdown  # no empty output
    assert "shown as written" not in markdown


# --- other sources and places: an address, a file id, text; an extension's message --------


def _pi_session(tmp_path: Path) -> Path:
    """A Pi session: a prompt holding documents of every other source, a title that is
    markup, and an extension's message with a PDF."""
    documents = [
        {"type": "document", "source": {"type": "url", "url": "javascript:alert(1)"}},
        {"type": "document", "title": "paper", "source": {
            "type": "url", "url": "https://files.example/paper.pdf"}},
        {"type": "document", "title": "brief", "source": {
            "type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q"}},
        {"type": "document", "context": "from the wiki", "source": {
            "type": "text", "media_type": "text/plain", "data": "plain words"}},
        document_block("application/pdf", PROMPT_PDF, HOSTILE_TITLE),
    ]  # fmt: skip
    header = {"type": "session", "version": 3, "id": "s66-docs", "cwd": "/tmp/project",
              "timestamp": "2026-12-06T10:00:00.000Z"}  # fmt: skip
    prompt = {"role": "user", "content": [{"type": "text", "text": "Read these"}, *documents],
              "timestamp": 1765015200000}  # fmt: skip
    scan = document_block("application/pdf", READ_PDF, "scan.pdf")
    custom = [{"type": "text", "text": "scanned"}, scan]
    records = [
        header,
        {"type": "message", "id": "m1", "parentId": None, "message": prompt,
         "timestamp": "2026-12-06T10:00:00.000Z"},
        {"type": "custom_message", "id": "c1", "parentId": "m1", "customType": "scanner",
         "content": custom, "display": True, "timestamp": "2026-12-06T10:00:01.000Z"},
    ]  # fmt: skip
    path = tmp_path / "s66-docs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_addresses_file_ids_and_text_are_said_safely(
    tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    html = _export(_pi_session(tmp_path), tmp_path / "docs.html")
    assert "JVBER" not in _without_download(html)
    page = viewer.open(page_server.publish("s66-sources.html", html))
    prompt = page.locator('article[data-entry-id="m1"]')
    said = prompt.inner_text()
    assert "PDF document at javascript:alert(1)" in said  # as text, never a link
    hrefs = prompt.locator("a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert not [h for h in hrefs if h and not h.startswith(("#", "https://"))]
    link = prompt.locator('a[href="https://files.example/paper.pdf"]')
    assert link.inner_text() == "https://files.example/paper.pdf"
    assert link.get_attribute("rel") == "noreferrer noopener"
    assert "PDF document: paper at https://files.example/paper.pdf" in said
    assert "Document: brief (Files API file file_011CNha8iCJcU1wXNR6q)" in said
    assert "Text document (text/plain, 11 bytes)" in said
    assert "Context given with it: from the wiki" in said
    assert prompt.locator("details.attachment pre").text_content() == "plain words"
    assert _said("PDF document", PROMPT_PDF, title=HOSTILE_TITLE) in said  # markup as text
    assert prompt.locator("img").count() == 0
    extension = page.locator('article[data-entry-id="c1"]')
    assert _said("PDF document", READ_PDF, title="scan.pdf") in extension.inner_text()
    assert "not of the type Pi writes" not in page.inner_text("body").lower()
    viewer.assert_clean()  # no dialog: the title's onerror never ran

    markdown = _export(_pi_session(tmp_path), tmp_path / "docs.md")
    assert "JVBER" not in markdown
    assert "*Document:* `brief` (Files API file file\\_011CNha8iCJcU1wXNR6q)" in markdown
    assert f"*PDF document:* `{HOSTILE_TITLE}` (application/pdf" in markdown
    assert f"*PDF document:* `scan.pdf` (application/pdf, {len(READ_PDF):,} bytes)" in markdown
    rendered = MarkdownIt("commonmark").render(markdown)
    assert "javascript:alert(1)" in rendered and 'href="javascript' not in rendered
    assert "<img" not in rendered


def test_bytes_that_are_no_text_or_no_base64_are_said_by_their_size(tmp_path: Path) -> None:
    """A Word file (bytes that are no UTF-8) is a document of its media type and size; a
    PDF whose base64 is broken says so, by its length; neither shows its data."""
    docx = b"PK\x03\x04" + bytes(range(128, 256)) * 4
    word = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    broken = {"type": "base64", "media_type": "application/pdf", "data": "JVBER !!" + "A" * 60}
    content = [document_block(word, docx, "draft.docx"), {"type": "document", "source": broken}]
    lines = [_line(1, "user", [{"type": "text", "text": "two files"}, *content])]
    path = tmp_path / "claude" / "-work-app" / f"{SESSION_ID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    html = _without_download(_export(path, tmp_path / "page.html"))
    assert _said("Document", docx, word, "draft.docx") in html
    assert "PDF document (application/pdf, 68 characters of broken base64)" in html
    assert base64.b64encode(docx).decode()[:40] not in html and "JVBER" not in html


# --- Codex: a file attached to a prompt --------------------------------------------------------


@pytest.fixture
def rollout(tmp_path: Path) -> Path:
    """A Codex rollout whose prompt attaches a PDF (``input_file``, a data URL)."""
    data = "data:application/pdf;base64," + base64.b64encode(CODEX_PDF).decode()
    attached = {"type": "input_file", "filename": "spec.pdf", "file_data": data}
    prompt = [{"type": "input_text", "text": "Summarise it"}, attached]
    payloads = [
        ("session_meta", {"id": "s66cx", "timestamp": "2025-11-01T10:00:00Z", "cwd": "/p"}),
        ("response_item", {"type": "message", "role": "user", "content": prompt}),
        ("response_item", {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Done."}]}),
    ]  # fmt: skip
    path = tmp_path / "rollout-2025-11-01T10-00-00-s66cx.jsonl"
    path.write_text(
        "".join(
            json.dumps({"timestamp": f"2025-11-01T10:00:0{n}.000Z", "type": kind, "payload": p})
            + "\n"
            for n, (kind, p) in enumerate(payloads)
        ),
        encoding="utf-8",
    )
    return path


def test_a_codex_file_is_read_as_a_document(rollout: Path) -> None:
    [prompt] = [e for e in load_session(rollout).entries if getattr(e, "role", "") == "user"]
    attached = prompt.message["content"][1]  # type: ignore[attr-defined]
    assert attached == document_block("application/pdf", CODEX_PDF, "spec.pdf")


def test_a_codex_pdf_is_said_on_the_page_and_in_the_markdown(
    rollout: Path, tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    html = _export(rollout, tmp_path / "codex.html")
    assert "JVBER" not in _without_download(html)
    page = viewer.open(page_server.publish("s66-codex.html", html))
    said = page.locator("article.entry.is-user").inner_text()
    assert _said("PDF document", CODEX_PDF, title="spec.pdf") in said
    viewer.assert_clean()
    markdown = _export(rollout, tmp_path / "codex.md")
    assert "JVBER" not in markdown
    assert f"*PDF document:* `spec.pdf` (application/pdf, {len(CODEX_PDF):,} bytes)" in markdown


def test_redact_leaves_a_codex_pdf_out(rollout: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy.jsonl"
    result = _run("redact", str(rollout), "-o", str(out))
    assert result.exit_code == 0, result.output
    data = out.read_bytes()
    assert not any(CODEX_TOKEN.encode() in view for view in _views(data))
    assert b"JVBER" not in data
    note = f"[PDF document, {len(CODEX_PDF):,} bytes, left out: not text, so not scanned"
    assert note in data.decode("utf-8")
    assert "binary attachments omitted (not scannable): 1" in result.stderr


def test_search_finds_what_the_page_says_of_a_document_not_its_base64(transcript: Path) -> None:
    """Search read a document block as written: "JVBER" (a PDF's base64) and
    "media_type" were matches the page never shows; the text of a text document and the
    words the page says of it were not searched as such."""
    path = transcript
    said = CliRunner().invoke(cli, ["search", "JVBER", str(path)])
    assert "no matches" in said.output, said.output
    said = CliRunner().invoke(cli, ["search", "media_type", str(path)])
    assert "no matches" in said.output, said.output
    found = CliRunner().invoke(cli, ["search", "PDF document", str(path), "--json"])
    kinds = [json.loads(line)["kind"] for line in found.stdout.splitlines()]
    assert kinds == ["user", "toolResult"], found.output


def test_the_outline_says_a_prompt_of_a_pdf_alone_holds_a_document(tmp_path: Path) -> None:
    """A prompt of nothing but a PDF was "user: (empty message)" in the outline, though
    its entry shows the document."""
    lines = [
        _line(1, "user", [document_block("application/pdf", PROMPT_PDF, "report.pdf")]),
        _line(2, "assistant", [{"type": "text", "text": "Read it."}]),
    ]
    path = write_transcript(tmp_path, lines)
    html = _export(path, tmp_path / "page.html")
    assert ">user: (document)</a>" in html
    assert "(empty message)" not in html
