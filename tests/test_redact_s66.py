"""Session 66: a PDF in a Claude Code transcript (the Anthropic API's document block,
``{"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data":
"JVBER…"}}``, attached to a prompt or come back from a Read) went out of every redacted copy
as it was, the secrets in it too: `redact`, `export --redact` (the page and its download),
`share` and `publish`, with `--no-images` as well. A PDF is neither text nor a picture, so it
cannot be scanned: it is left out, counted, and a note says what was there. A text document's
bytes are decoded, redacted and encoded again, as a v1 attachment's are (they were replaced
whole by one placeholder); the other sources (text, an address, a file id) are scanned as the
text they are."""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.loader import load_session
from exporter.policy import RedactionPolicy
from exporter.redact import apply_policy
from tests.browser_util import PageServer, Viewer, embedded_jsonl
from tests.fakes.github import FakeGitHub
from tests.fakes.hub import TOKEN as HUB_TOKEN
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.share_env import isolated_share_env
from tests.test_publish import hub_env

pytest_plugins = ["tests.browser_util"]
__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, by name

#: Secrets written into the PDFs' pages and into a text file attached beside them
PDF_TOKEN = "ghp_" + "PdF0aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV"
PDF_KEY = "sk-ant-api03-" + "PdfBody" + "Q" * 80 + "AA"
READ_TOKEN = "ghp_" + "ToolPdF4eF5gH6iJ7kL8mN9oP0qR1sT2uV3w"
TEXT_TOKEN = "ghp_" + "D0cTxT7aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT"
SECRETS = (PDF_TOKEN, PDF_KEY, READ_TOKEN, TEXT_TOKEN)
#: The machine's own identity in every run here, so the test machine's account plays no part
IDENTITY = {"HOME": "/home/tester", "USER": "tester", "LOGNAME": "tester"}
SESSION_ID = "7b7b7b7b-4444-4000-8000-00000000abcd"
LEFT_OUT = "left out: not text, so not scanned for secrets]"


def _pdf(text: str) -> bytes:
    """A one-page PDF that says ``text`` (uncompressed, with the binary comment line PDF
    writers put second, as Claude Code would read one)."""
    stream = f"BT /F1 12 Tf 72 712 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 5\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer << /Size 5 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref


PROMPT_PDF = _pdf(f"token {PDF_TOKEN} key {PDF_KEY}")
READ_PDF = _pdf(f"deploy token {READ_TOKEN}")
NOTES = f"notes\nGITHUB_TOKEN={TEXT_TOKEN}\n"


def document_block(media_type: str, data: bytes, title: str | None = None) -> dict[str, Any]:
    """The Anthropic API's document block of inline bytes, as Claude Code writes one."""
    source = {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode()}
    block: dict[str, Any] = {"type": "document", "source": source}
    return block | ({"title": title} if title is not None else {})


def _line(n: int, kind: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    """Line ``n`` of a Claude Code transcript, as Claude Code writes it."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message |= {
            "id": f"msg_{n}",
            "model": "claude-opus-4-6",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    return {
        "parentUuid": f"00000000-0000-4000-8000-{n - 1:012d}" if n > 1 else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/work/app",
        "sessionId": SESSION_ID,
        "version": "2.0.60",
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{n:012d}",
        "timestamp": f"2026-11-21T09:00:{n:02d}.000Z",
        "message": message,
    }


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """A Claude Code transcript: a prompt with a text file and a PDF attached, and a Read of
    another PDF, each PDF holding secrets in its page."""
    read = {"type": "tool_use", "id": "toolu_pdf", "name": "Read"}
    read["input"] = {"file_path": "/work/app/spec.pdf"}
    result = {"type": "tool_result", "tool_use_id": "toolu_pdf"}
    result["content"] = [document_block("application/pdf", READ_PDF)]
    lines = [
        _line(
            1,
            "user",
            [
                {"type": "text", "text": "See the attachments"},
                document_block("text/plain", NOTES.encode()),
                document_block("application/pdf", PROMPT_PDF),
            ],
        ),
        _line(2, "assistant", [read]),
        _line(3, "user", [result]),
        _line(4, "assistant", [{"type": "text", "text": "Read them."}]),
    ]
    path = write_transcript(tmp_path, lines)
    return path


def write_transcript(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    """``lines`` as a Claude Code transcript in its project folder (``-work-app``)."""
    folder = tmp_path / "claude" / "-work-app"
    folder.mkdir(parents=True)
    path = folder / f"{SESSION_ID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _note(size: int) -> str:
    return f"[PDF document, {size:,} bytes, {LEFT_OUT}"


_BASE64_RUN = re.compile(rb"[A-Za-z0-9+/]{24,}={0,2}")


def _views(data: bytes, depth: int = 0) -> list[bytes]:
    """``data`` and what it carries: gzip (a page's download) and base64 runs, decoded."""
    views = [data]
    if depth > 2:
        return views
    if data[:2] == b"\x1f\x8b":
        views += _views(gzip.decompress(data), depth + 1)
    for run in _BASE64_RUN.findall(data):
        try:
            decoded = base64.b64decode(run + b"=" * (-len(run) % 4))
        except (binascii.Error, ValueError):
            continue
        views += _views(decoded, depth + 1)
    return views


def _leaked(data: bytes | str) -> list[str]:
    """The planted secrets ``data`` holds, as written or inside what it encodes."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    views = _views(raw)
    return [secret for secret in SECRETS if any(secret.encode() in view for view in views)]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=IDENTITY)


# --- redact ---------------------------------------------------------------------------------


@pytest.mark.parametrize("cuts", [(), ("--no-images",)])
def test_redact_leaves_a_pdf_out_with_a_note_and_scans_a_text_document(
    transcript: Path, tmp_path: Path, cuts: tuple[str, ...]
) -> None:
    out = tmp_path / "copy.jsonl"
    result = _run("redact", str(transcript), *cuts, "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert _leaked(text) == []
    assert "JVBER" not in text  # no PDF at all: not one of its bytes is scanned
    assert "binary attachments omitted (not scannable): 2" in result.stderr
    messages = [r["message"] for r in _records(out) if r.get("type") == "message"]
    prompt, read = messages[0], messages[2]
    attached = prompt["content"][1]
    assert attached["type"] == "document"  # the text file: decoded, redacted, encoded again
    notes = base64.b64decode(attached["source"]["data"]).decode("utf-8")
    assert notes == "notes\nGITHUB_TOKEN=[REDACTED:github-token:1]\n"
    assert prompt["content"][2] == {"type": "text", "text": _note(len(PROMPT_PDF))}
    assert read["role"] == "toolResult"
    assert read["content"] == [{"type": "text", "text": _note(len(READ_PDF))}]


def test_without_redaction_the_pdf_stays_as_it_was(transcript: Path) -> None:
    """Nothing is scanned, so nothing is left out for not being scannable: a local page
    keeps the user's PDF."""
    session = load_session(transcript)
    copy, report = apply_policy(
        session, RedactionPolicy(redact=False, keep_paths=True), environ=IDENTITY
    )
    assert "attachments_omitted" not in report.actions
    prompt = copy.by_id["00000000-0000-4000-8000-000000000001"].raw["message"]
    assert prompt["content"][2] == document_block("application/pdf", PROMPT_PDF)


# --- the page, its download and the Markdown -------------------------------------------------


def test_the_redacted_page_and_markdown_say_what_was_left_out(
    transcript: Path, tmp_path: Path, viewer: Viewer, page_server: PageServer
) -> None:
    page_file, markdown_file = tmp_path / "page.html", tmp_path / "page.md"
    for target in (page_file, markdown_file):
        result = _run("export", str(transcript), "--redact", "-o", str(target))
        assert result.exit_code == 0, result.output
    html = page_file.read_text(encoding="utf-8")
    [download] = embedded_jsonl(html)
    assert _leaked(html) == [] and _leaked(download) == []
    assert b"JVBER" not in download and "JVBER" not in html

    page = viewer.open(page_server.publish("s66-pdf.html", html))
    shown = page.inner_text("body")
    assert _note(len(PROMPT_PDF)) in page.inner_text("article.entry.is-user")
    assert _note(len(READ_PDF)) in page.inner_text("article.entry.is-tool")
    assert "binary attachments omitted (not scannable): 2" in shown
    assert _leaked(shown) == []
    viewer.assert_clean()

    markdown = markdown_file.read_text(encoding="utf-8")
    assert _leaked(markdown) == []
    assert _note(len(PROMPT_PDF)) in markdown and _note(len(READ_PDF)) in markdown


# --- share and publish: what reaches the server ----------------------------------------------


def test_share_uploads_no_pdf(
    transcript: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeGitHub() as fake:
        isolated_share_env(tmp_path, fake.token, monkeypatch)
        for name, value in IDENTITY.items():
            monkeypatch.setenv(name, value)
        result = CliRunner().invoke(
            cli, ["share", str(transcript), "--with-jsonl", "--api-url", fake.base_url]
        )
        assert result.exit_code == 0, result.output
        files = {
            name: str(content)
            for gist in fake.gists.values()
            for name, content in gist["files"].items()
        }
        sent = b"".join(request.body for request in fake.requests)
    assert any(name.endswith(".jsonl") for name in files)
    for name, content in files.items():
        assert _leaked(content) == [], name
        assert "JVBER" not in content, name
        assert _note(len(READ_PDF)) in content, name
    assert _leaked(sent) == []


def test_publish_sends_no_pdf(transcript: Path, fake_hub: FakeHub, hub_env: None) -> None:
    args = ["publish", "alice/sessions", str(transcript), "--endpoint", fake_hub.url]
    result = CliRunner().invoke(cli, [*args, "--token", HUB_TOKEN, "-j", "1"], env=IDENTITY)
    assert result.exit_code == 0, result.output
    assert _leaked(fake_hub.received_bytes()) == []
    files = fake_hub.files("alice/sessions")
    [session] = [data for path, data in files.items() if path.startswith("sessions/")]
    assert b"JVBER" not in session
    assert _note(len(PROMPT_PDF)).encode() in session
    assert "binary attachments omitted (not scannable): 2" in result.stderr


# --- the other shapes ------------------------------------------------------------------------


def _session_with(tmp_path: Path, content: list[Any], **message: Any) -> Path:
    """A Pi session with one user message of ``content`` (and other message fields)."""
    header = {
        "type": "session",
        "version": 3,
        "id": "s66-documents",
        "timestamp": "2026-12-06T10:00:00.000Z",
        "cwd": "/tmp/project",
    }
    entry = {
        "type": "message",
        "id": "m1",
        "parentId": None,
        "timestamp": "2026-12-06T10:00:00.000Z",
        "message": {"role": "user", "content": content, "timestamp": 1765015200000, **message},
    }
    path = tmp_path / "s66-documents.jsonl"
    path.write_text(f"{json.dumps(header)}\n{json.dumps(entry)}\n", encoding="utf-8")
    return path


def _redacted(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    copy, report = apply_policy(load_session(path), RedactionPolicy(), environ=IDENTITY)
    return copy.by_id["m1"].raw["message"], report.actions


def test_documents_by_text_address_or_file_id_are_scanned_as_text(tmp_path: Path) -> None:
    content = [
        {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                        "data": f"GITHUB_TOKEN={TEXT_TOKEN}"}},
        {"type": "document", "source": {"type": "url",
                                        "url": f"https://files.example/a.pdf?token={PDF_TOKEN}"}},
        {"type": "document", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q"}},
        {"type": "document", "source": {"type": "content", "content": [
            {"type": "text", "text": f"the key is {READ_TOKEN}"}]}},
    ]  # fmt: skip
    message, actions = _redacted(_session_with(tmp_path, content))
    assert _leaked(json.dumps(message)) == []
    assert "attachments_omitted" not in actions  # each is text: scanned, none left out
    by_text, by_address, by_file, by_content = message["content"]
    assert by_text["source"]["data"].startswith("GITHUB_TOKEN=[REDACTED:github-token:")
    assert by_address["source"]["url"].startswith("https://files.example/a.pdf?token=[REDACTED:")
    assert by_file == content[2]
    assert by_content["source"]["content"][0]["text"].startswith("the key is [REDACTED:")


def test_bytes_that_are_neither_text_nor_a_picture_are_left_out_wherever_they_are(
    tmp_path: Path,
) -> None:
    """A text document that is not UTF-8, a PDF whose base64 is broken, a PDF whose bytes are
    all ASCII (its page's text hex-encoded, which no detector reads), one nested in a tool's
    details, and a PDF dressed as an image: none can be scanned."""
    latin1 = f"Passwort für GITHUB_TOKEN={TEXT_TOKEN}".encode("latin-1")
    hex_page = PDF_TOKEN.encode().hex().encode()
    ascii_pdf = b"%PDF-1.4\nstream\nBT <" + hex_page + b"> Tj ET\nendstream\n%%EOF\n"
    broken = {"type": "base64", "media_type": "application/pdf", "data": f"JVBER {READ_TOKEN} !"}
    content = [
        document_block("text/plain", latin1),
        {"type": "document", "source": broken},
        {"type": "image", "mimeType": "image/png", "data": base64.b64encode(PROMPT_PDF).decode()},
    ]
    v1_attachment = {"type": "document", "fileName": "spec.pdf", "mimeType": "application/pdf",
                     "content": base64.b64encode(ascii_pdf).decode()}  # fmt: skip
    details = {"attached": document_block("application/pdf", READ_PDF)}
    path = _session_with(tmp_path, content, attachments=[v1_attachment], details=details)
    message, actions = _redacted(path)
    assert _leaked(json.dumps(message)) == []
    assert PDF_TOKEN.encode().hex() not in json.dumps(message)
    assert message["content"][0] == {
        "type": "text",
        "text": f"[document, {len(latin1)} bytes, {LEFT_OUT}",
    }
    assert message["content"][1]["text"].startswith("[PDF document, ")
    assert message["content"][2]["data"] == ""  # no picture: not kept unscanned
    assert message["attachments"][0]["content"] == ""
    assert message["details"]["attached"]["source"]["data"] == ""
    assert actions["attachments_omitted"] == 5


# --- review of 52196f9 --------------------------------------------------------------------


def test_a_given_secret_in_a_media_type_is_not_carried_into_the_note(tmp_path: Path) -> None:
    """The note said the media type lower-cased, so a --secret in it (matched as written)
    went out past the note's scan: "no secrets found"."""
    secret = "QzXyWvUtSrQpOnMlKjIhGfEdCbA98765"
    block = document_block(f"application/x-{secret}", b"\xff\xfe\x00binary")
    lines = [_line(1, "user", [{"type": "text", "text": "see"}, block])]
    path = tmp_path / f"{SESSION_ID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "copy.jsonl"
    result = _run("redact", str(path), "--secret", secret, "-o", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert secret.lower() not in text.lower(), text
    assert "[document, " in text and LEFT_OUT in text


def test_an_argument_shaped_like_an_api_source_without_a_media_type_stays_text(
    tmp_path: Path,
) -> None:
    """Any ``{"type": "base64", "data": …}`` was emptied as bytes ("hello" fails to decode)
    and counted as an attachment left out; an API source always says its media type."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "mcp__x__store"}
    call["input"] = {"blob": {"type": "base64", "data": "hello"}}
    lines = [
        _line(1, "user", [{"type": "text", "text": "store it"}]),
        _line(2, "assistant", [call]),
    ]
    path = tmp_path / f"{SESSION_ID}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out = tmp_path / "copy.jsonl"
    result = _run("redact", str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert '"data":"hello"' in out.read_text(encoding="utf-8").replace(": ", ":")
    assert "omitted" not in result.output
