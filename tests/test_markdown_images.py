"""`export --format md --images note|inline|files`: an image in the Markdown export is a note
(the default), the image itself as a data: URI, or a file beside the document, linked."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from exporter.cli import cli


def png(color: tuple[int, int, int]) -> bytes:
    """A real 2x1 PNG of one colour."""
    raw = b"\x00" + bytes(color) * 2

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", 2, 1, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + body


RED, BLUE = png((255, 0, 0)), png((0, 0, 255))


def image(mime: str, raw: bytes | str) -> dict:
    data = raw if isinstance(raw, str) else base64.b64encode(raw).decode("ascii")
    return {"type": "image", "mimeType": mime, "data": data}


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """Red twice (once labelled JPEG), blue once, an SVG and data that is no image."""
    first = [{"type": "text", "text": "look"}, image("image/png", RED),
             image("image/svg+xml", b"<svg onload='alert(1)'></svg>")]  # fmt: skip
    second = [image("image/jpeg", RED), image("image/png", BLUE), image("image/png", "bm90IGFu")]
    lines = [
        {"type": "session", "version": 3, "id": "img", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": first}},
        {"type": "message", "id": "u2", "parentId": "u1", "timestamp": "2025-01-01T00:00:02Z",
         "message": {"role": "user", "content": second}},
    ]  # fmt: skip
    path = tmp_path / "img.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def export(*args: str):
    result = CliRunner().invoke(cli, ["export", *args])
    return result


LINK = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def test_files_are_written_once_each_and_linked_beside_the_document(
    session: Path, tmp_path: Path
) -> None:
    out = tmp_path / "my notes 日本.md"
    result = export(str(session), "-o", str(out), "--images", "files")
    assert result.exit_code == 0, result.output
    document = out.read_text(encoding="utf-8")
    links = LINK.findall(document)
    assert len(links) == 3  # red, red again (the same file), blue
    files = [out.parent / unquote(link) for link in links]
    assert [f.read_bytes() for f in files] == [RED, RED, BLUE]
    assert files[0] == files[1] and files[0].suffix == ".png"  # a PNG labelled JPEG is a .png
    assert sorted(p.name for p in (tmp_path / "my notes 日本.assets").iterdir()) == [
        "image-001.png",
        "image-002.png",
    ]
    # an SVG (it could carry script) and data that is no image stay notes, which say the
    # page shows none of them either
    assert "image/svg+xml, " in document and "onload" not in document
    assert document.count("not shown: unsupported or invalid data") == 2
    assert "not in the Markdown" not in document


def test_a_second_export_removes_only_its_own_stale_images(session: Path, tmp_path: Path) -> None:
    out = tmp_path / "notes.md"
    folder = tmp_path / "notes.assets"
    folder.mkdir()
    (folder / "image-009.png").write_bytes(b"old")
    (folder / "mine.txt").write_text("kept", encoding="utf-8")
    assert export(str(session), "-o", str(out), "--images", "files").exit_code == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["image-001.png", "image-002.png", "mine.txt"]


def test_inline_images_are_data_uris_of_the_same_bytes(session: Path, tmp_path: Path) -> None:
    result = export(str(session), "--format", "md", "-o", "-", "--images", "inline")
    assert result.exit_code == 0, result.output
    uris = LINK.findall(result.stdout)
    assert [base64.b64decode(u.split(",", 1)[1]) for u in uris] == [RED, RED, BLUE]
    assert all(u.startswith(("data:image/png;base64,", "data:image/jpeg;base64,")) for u in uris)
    assert not any(p.suffix == ".assets" for p in tmp_path.iterdir())


def test_the_default_is_a_note_and_the_option_is_for_markdown_only(
    session: Path, tmp_path: Path
) -> None:
    plain = export(str(session), "--format", "md", "-o", "-")
    assert LINK.findall(plain.stdout) == [] and plain.stdout.count("not in the Markdown") == 3
    assert plain.stdout.count("not shown: unsupported or invalid data") == 2
    page = export(str(session), "-o", str(tmp_path / "p.html"), "--images", "inline")
    assert page.exit_code == 1 and "--images inline: for --format md" in page.stderr
    piped = export(str(session), "--format", "md", "-o", "-", "--images", "files")
    assert piped.exit_code == 1 and "not with -o -" in piped.stderr
    assert not (tmp_path / "p.html").exists()


def test_a_file_where_the_folder_goes_is_a_clear_error(session: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.assets").write_text("a file, not a folder", encoding="utf-8")
    result = export(str(session), "-o", str(tmp_path / "notes.md"), "--images", "files")
    assert result.exit_code == 2
    assert "--images files: cannot write" in result.stderr and "Traceback" not in result.output
    assert (tmp_path / "notes.assets").read_text(encoding="utf-8") == "a file, not a folder"


def test_an_extension_message_s_image_is_shown_as_a_prompt_s(tmp_path: Path) -> None:
    """An extension message's (custom_message) blocks were read as its text alone: its
    image was left out without a note, and --images wrote no file (bug hunt 2026-12-05)."""
    content = [{"type": "text", "text": "The page now looks like this:"}, image("image/png", BLUE)]
    lines = [
        {"type": "session", "version": 3, "id": "ext", "timestamp": "2025-01-01T00:00:00Z",
         "cwd": "/p"},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": "2025-01-01T00:00:01Z",
         "message": {"role": "user", "content": "hi"}},
        {"type": "custom_message", "id": "c1", "parentId": "u1", "customType": "screenshot",
         "timestamp": "2025-01-01T00:00:02Z", "content": content, "display": True},
    ]  # fmt: skip
    path = tmp_path / "ext.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    plain = export(str(path), "--format", "md", "-o", "-")
    assert "The page now looks like this:" in plain.stdout
    assert plain.stdout.count("not in the Markdown") == 1
    inline = export(str(path), "--format", "md", "-o", "-", "--images", "inline")
    uris = LINK.findall(inline.stdout)
    assert [base64.b64decode(u.split(",", 1)[1]) for u in uris] == [BLUE]
