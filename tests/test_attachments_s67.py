"""A file attached to a v1 prompt whose bytes ``redact`` left out (a PDF: not text, so not
scanned) read as whole on the page and in the Markdown: "Attached document: spec.pdf
(application/pdf, 606 bytes)", its old size and nothing more."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from click.testing import CliRunner

from exporter.cli import cli

NOTE = "its bytes are not in this file: a redacted copy leaves out what is not text"


def _v1_session(folder: Path) -> Path:
    pdf = b"%PDF-1.4\n\xff\xfe\x00binary" + bytes(range(256)) * 2
    attachments = [
        {"id": "a1", "type": "document", "fileName": "spec.pdf", "mimeType": "application/pdf",
         "size": len(pdf), "content": base64.b64encode(pdf).decode()},
        {"id": "a2", "type": "document", "fileName": "empty.txt", "mimeType": "text/plain",
         "size": 0, "content": ""},
    ]  # fmt: skip
    lines = [
        {"type": "session", "id": "v1pdf", "timestamp": "2025-01-01T00:00:00Z", "cwd": "/w"},
        {"type": "message", "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "read the spec", "attachments": attachments}},
    ]  # fmt: skip
    path = folder / "v1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def _export(source: Path, out: Path) -> str:
    result = CliRunner().invoke(cli, ["export", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_a_left_out_attachment_is_said_to_be_left_out(tmp_path: Path) -> None:
    source = _v1_session(tmp_path)
    redacted = tmp_path / "redacted.jsonl"
    result = CliRunner().invoke(cli, ["redact", str(source), "-o", str(redacted)])
    assert result.exit_code == 0, result.output
    markdown = _export(redacted, tmp_path / "r.md")
    assert f"*Attached document:* `spec.pdf` (application/pdf, 530 bytes; {NOTE})" in markdown
    assert "`empty.txt` (text/plain, 0 bytes)\n" in markdown  # an empty file: nothing dropped
    page = _export(redacted, tmp_path / "r.html")
    assert f"Attached document: spec.pdf (application/pdf, 530 bytes; {NOTE})" in page
    assert "Attached document: empty.txt (text/plain, 0 bytes)<" in page
    # the file as written: its bytes are there, and nothing says otherwise
    whole = _export(source, tmp_path / "w.md") + _export(source, tmp_path / "w.html")
    assert NOTE not in whole and "(application/pdf, 530 bytes)" in whole
