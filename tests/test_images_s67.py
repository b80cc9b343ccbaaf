"""Stop 67, images: a cut or corrupt image drew a broken picture on the page and passed for
shown in the Markdown; the Markdown's byte counts were the base64's; `share`'s "too large"
named options that left a page of screenshots as big; a photo's GPS location went out
without a word; an image the Files API holds was called invalid data."""

from __future__ import annotations

import base64
import json
import os
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from exporter.cli import cli
from exporter.loader import parse_session_bytes
from exporter.publish.errors import TooLargeError
from exporter.publish.gist_share import check_size
from exporter.render import RenderOptions, render_session
from exporter.render.markup import safe_image_src
from tests.browser_util import PageServer, Viewer
from tests.fakes.github import FakeGitHub
from tests.fakes.hub import TOKEN as HUB_TOKEN
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.share_env import isolated_share_env
from tests.test_publish import hub_env

pytest_plugins = ["tests.browser_util"]
__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return struct.pack(">I", len(data)) + kind + data + crc


def png(
    width: int = 8, height: int = 8, color: bytes = b"\xff\x00\x00", extra: bytes = b""
) -> bytes:
    """A real PNG of one colour (``extra``: chunks after IHDR)."""
    rows = (b"\x00" + color * width) * height
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + extra
        + _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b"")
    )  # fmt: skip


def noise_png(size: int) -> bytes:
    """A PNG of about ``size`` bytes that does not compress (a photo-like screenshot)."""
    side = int((size / 3) ** 0.5)
    rows = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 0)) + _chunk(b"IEND", b"")
    )  # fmt: skip


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


#: A 1x1 JPEG without its end marker, as often passed around (browsers show it).
MINI_JPEG = base64.b64decode(
    "/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////"
    "////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgB"
    "AQABPxA="
)
GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
WEBP_LOSSLESS = base64.b64decode("UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==")
WEBP_LOSSY = base64.b64decode("UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=")
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="9"/></svg>'

#: Real encoders' output: Chromium's canvas writes PNG, JPEG and WebP (lossy and lossless).
_CANVAS = """() => {
  const out = {};
  for (const [w, h] of [[1, 1], [64, 48], [300, 200]]) {
    const c = document.createElement('canvas'); c.width = w; c.height = h;
    const g = c.getContext('2d');
    for (let i = 0; i < w * h / 10 + 1; i++) {
      g.fillStyle = `rgba(${i * 37 % 255},${i * 91 % 255},${i * 13 % 255},${(i % 10) / 10})`;
      g.fillRect((i * 7) % w, (i * 13) % h, 3, 2);
    }
    out[`png ${w}`] = c.toDataURL('image/png');
    out[`jpeg ${w}`] = c.toDataURL('image/jpeg', 0.9);
    out[`webp ${w}`] = c.toDataURL('image/webp', 0.8);
    out[`lossless webp ${w}`] = c.toDataURL('image/webp', 1.0);
  }
  return out;
}"""


@pytest.fixture(scope="module")
def encoded(pw_browser: Any) -> dict[str, bytes]:
    """Pictures real encoders made, and hand-written minimal ones, by name."""
    page = pw_browser.new_page()
    try:
        page.set_content("<p>canvas</p>")
        urls = page.evaluate(_CANVAS)
    finally:
        page.close()
    made = {name: base64.b64decode(url.partition(",")[2]) for name, url in urls.items()}
    return {**made, "png 8": png(), "jpeg without its end": MINI_JPEG, "gif": GIF,
            "webp lossless 1": WEBP_LOSSLESS, "webp lossy 1": WEBP_LOSSY}  # fmt: skip


def _cut_ones(raw: bytes) -> dict[str, str]:
    """Broken versions of a picture's base64, as a cut or garbled upload leaves them."""
    data = b64(raw)
    return {
        "cut to 40 characters": data[:40],
        "one character more in the middle": data[:20] + "A" + data[20:],
        "its magic, then an SVG's text": b64(raw[:8] + SVG),
    }


# --- 1: a cut or corrupt image is a note, on the page and in the Markdown -------------------


def test_real_pictures_are_shown_and_cut_ones_are_not(encoded: dict[str, bytes]) -> None:
    for name, raw in encoded.items():
        data = b64(raw)
        src = safe_image_src(data)
        assert src is not None and src.endswith(data), name
        wrapped = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
        assert safe_image_src(wrapped) == f"{src.partition(',')[0]},{wrapped}", name
        assert safe_image_src("\r\n".join(wrapped.split("\n"))) is not None, name
        assert safe_image_src(data.rstrip("=")) is not None, name  # padding left out
        for how, broken in _cut_ones(raw).items():
            assert safe_image_src(broken) is None, (name, how)
        assert safe_image_src(data[:24]) is None, name  # cut inside its headers
        if not name.startswith("jpeg"):  # (a JPEG cut in its picture data still shows)
            assert safe_image_src(b64(raw[: len(raw) * 2 // 3])) is None, name
    assert safe_image_src(b64(png()[:-12])) is None  # no IEND
    assert safe_image_src(b64(png() + b"more after the end")) is not None
    assert safe_image_src(b64(GIF[:-2])) is None  # cut inside its last sub-block
    assert safe_image_src(b64(WEBP_LOSSY[:-1])) is None  # the RIFF size says more
    assert safe_image_src(b64(png())[:10] + "\u00a0" + b64(png())[10:]) is None  # no blank of a URL


def _image(data: str, mime: str = "image/png") -> dict[str, str]:
    return {"type": "image", "data": data, "mimeType": mime}


def _session_lines(*contents: list[dict[str, Any]], attachments: Any = None) -> bytes:
    header = {"type": "session", "version": 3, "id": "img-67",
              "timestamp": "2026-03-03T10:00:00.000Z", "cwd": "/home/dev/x"}  # fmt: skip
    lines: list[dict[str, Any]] = [header]
    for number, content in enumerate(contents, 1):
        message: dict[str, Any] = {"role": "user", "content": content, "timestamp": number}
        if attachments is not None and number == 1:
            message["attachments"] = attachments
        parent = f"u{number - 1}" if number > 1 else None
        time = f"2026-03-03T10:00:{number:02d}.000Z"
        lines.append({"type": "message", "id": f"u{number}", "parentId": parent,
                      "timestamp": time, "message": message})  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines).encode("utf-8")


def _mixed_session(encoded: dict[str, bytes]) -> tuple[bytes, int, int]:
    """Every real picture (one wrapped in lines), the hunt's three broken ones and a cut
    WebP, and a cut data: image written in a message's Markdown. Returns the file's bytes,
    how many images the page shows and how many it says are not shown."""
    pictures = [*encoded.values(), *LOCATED.values(), *NOT_LOCATED.values()]
    shown = [_image(b64(raw)) for raw in pictures]  # (a browser sniffs the type)
    wrapped = b64(png(color=b"\x00\x00\xff"))
    shown.append(_image("\n".join(wrapped[i : i + 76] for i in range(0, len(wrapped), 76))))
    broken = [_image(data) for data in _cut_ones(png()).values()]
    broken.append(_image(b64(WEBP_LOSSY[:30]), "image/webp"))
    text = f"a cut one in words: ![shot](data:image/png;base64,{b64(png())[:40]})"
    session = _session_lines(
        [{"type": "text", "text": "shown"}, *shown],
        [{"type": "text", "text": text}, *broken],
    )
    return session, len(shown), len(broken)


def test_the_page_says_each_broken_image_and_draws_no_broken_picture(
    encoded: dict[str, bytes], viewer: Viewer, page_server: PageServer
) -> None:
    session, shown, broken = _mixed_session(encoded)
    html = render_session(parse_session_bytes(session), RenderOptions())
    assert html.count("not shown: unsupported or invalid data") == broken
    page = viewer.open(page_server.publish("s67-images.html", html))
    page.wait_for_function("[...document.images].every(i => i.complete)")
    widths = page.evaluate(
        "[...document.querySelectorAll('main img, [data-entry-id] img')].map(i => i.naturalWidth)"
    )
    assert len(widths) == shown and 0 not in widths  # a broken one is 0 wide
    notes = page.locator(".bad-image").all_inner_texts()
    assert len(notes) == broken and all("not shown" in note for note in notes)
    assert page.get_by_text("a cut one in words: ![shot](data:image/png;base64,").count() == 1
    viewer.assert_clean()  # (a broken data: image logs net::ERR_INVALID_URL)


def _export_md(session: Path, out: Path, mode: str) -> str:
    args = ["export", str(session), "--format", "md", "--images", mode, "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_the_markdown_agrees_with_the_page_in_every_images_mode(
    encoded: dict[str, bytes], tmp_path: Path
) -> None:
    source = tmp_path / "mixed.jsonl"
    session, shown, broken = _mixed_session(encoded)
    source.write_bytes(session)
    note = _export_md(source, tmp_path / "note.md", "note")
    assert note.count("not shown: unsupported or invalid data]*") == broken
    assert note.count("not in the Markdown; the page shows it]*") == shown
    inline = _export_md(source, tmp_path / "inline.md", "inline")
    assert inline.count("not shown: unsupported or invalid data]*") == broken
    uris = re.findall(r"!\[[^\]]*\]\(data:(image/[a-z]+);base64,([A-Za-z0-9+/=]*)\)", inline)
    assert len(uris) == shown
    assert all(safe_image_src(data) == f"data:{mime};base64,{data}" for mime, data in uris)
    files = _export_md(source, tmp_path / "files.md", "files")
    assert files.count("not shown: unsupported or invalid data]*") == broken
    written = {path.read_bytes() for path in (tmp_path / "files.assets").iterdir()}
    pictures = [*encoded.values(), *LOCATED.values(), *NOT_LOCATED.values()]
    assert written == {*pictures, png(color=b"\x00\x00\xff")}


# --- 2: the Markdown counts an image's bytes, not its base64's -------------------------------


def test_an_images_size_is_the_bytes_it_holds(tmp_path: Path) -> None:
    raw = png(3, 2)
    data = b64(raw)
    assert data.endswith("=") and len(data) * 3 // 4 != len(raw)  # what was said before
    wrapped = "\n".join(data[i : i + 20] for i in range(0, len(data), 20))
    attached = [{"id": "a1", "type": "image", "fileName": "shot.png", "mimeType": "image/png",
                 "size": len(raw), "content": data}]  # fmt: skip
    source = tmp_path / "sizes.jsonl"
    source.write_bytes(_session_lines([{"type": "text", "text": "look"}, _image(wrapped)],
                                      attachments=attached))  # fmt: skip
    said = f"image/png, {len(raw)} bytes"
    note = _export_md(source, tmp_path / "note.md", "note")
    assert note.count(f"*[{said}: not in the Markdown; the page shows it]*") == 2
    assert f"(image/png, {len(raw)} bytes)" in note  # the attachment's line
    inline = _export_md(source, tmp_path / "inline.md", "inline")
    assert inline.count(f"![{said}](data:image/png;base64,{data})") == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(_session_lines([_image(data[:40] + "\n" + data[40:44])]))
    assert "*[image/png, 33 bytes: not shown" in _export_md(broken, tmp_path / "b.md", "note")


# --- 3: share's size advice names --no-images where images make the size --------------------


@pytest.fixture
def sharing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`share ARGS --dry-run` in an isolated environment (the page written to ``tmp_path``)."""
    with FakeGitHub() as fake:
        isolated_share_env(tmp_path, fake.token, monkeypatch)

        def dry_run(*args: str) -> Result:
            return CliRunner().invoke(
                cli, ["share", *args, "--dry-run", "--api-url", fake.base_url]
            )

        yield dry_run


def test_too_large_for_a_gist_names_no_images_when_images_are_the_size(
    tmp_path: Path, sharing: Any
) -> None:
    source = tmp_path / "shots.jsonl"
    source.write_bytes(
        _session_lines([{"type": "text", "text": "shot"}, _image(b64(noise_png(6_000_000)))])
    )
    result = sharing(str(source))
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "above the 10.0 MiB gist limit; make it smaller with --no-images, publish" in said
    assert "--no-tool-output" not in said and "--active-branch-only" not in said
    smaller = sharing(str(source), "--no-images")
    assert smaller.exit_code == 0 and "gist limit" not in smaller.stderr, smaller.output


def test_the_one_mib_warning_names_no_images_too(tmp_path: Path, sharing: Any) -> None:
    source = tmp_path / "shot.jsonl"
    source.write_bytes(
        _session_lines([{"type": "text", "text": "shot"}, _image(b64(noise_png(500_000)))])
    )
    result = sharing(str(source))
    assert result.exit_code == 0, result.output
    said = " ".join(result.stderr.split())
    assert "GitHub truncates gist files over 1 MiB" in said
    assert "(--no-images makes it smaller)" in said
    # text alone: the other options, as before; half and half: all three
    assert "(--no-tool-output or --active-branch-only make it smaller)" in str(
        check_size(2 * 1024 * 1024, image_share=0.0)
    )
    both = "--no-images, --no-tool-output or --active-branch-only"
    assert f"({both} make it smaller)" in str(check_size(2 * 1024 * 1024, image_share=0.5))
    with pytest.raises(TooLargeError, match=f"make it smaller with {both}, publish"):
        check_size(11 * 1024 * 1024, image_share=0.5)


# --- 4: images that say where they were taken are counted and warned of -------------------


def _tiff(order: str, gps: bool, position: bool = True) -> bytes:
    """EXIF (TIFF) with an ImageWidth and, with ``gps``, a GPS IFD holding a position (or,
    without ``position``, only its version, as a camera with its location off writes)."""
    mark = b"II" if order == "<" else b"MM"
    first = [(0x0100, 4, 1, 1)] + ([(0x8825, 4, 1, 8 + 2 + 12 * 2 + 4)] if gps else [])
    ifd0 = struct.pack(f"{order}H", len(first))
    ifd0 += b"".join(struct.pack(f"{order}HHII", *entry) for entry in first)
    ifd0 += struct.pack(f"{order}I", 0)
    if not gps:
        return mark + struct.pack(f"{order}HI", 42, 8) + ifd0
    at = 8 + len(ifd0) + 2 + 12 * 4 + 4  # where the rationals go
    north = struct.unpack(f"{order}I", b"N\0\0\0")[0]
    east = struct.unpack(f"{order}I", b"E\0\0\0")[0]
    entries = [(1, 2, 2, north), (2, 5, 3, at), (3, 2, 2, east), (4, 5, 3, at + 24)]
    if not position:
        entries = [(0, 1, 4, struct.unpack(f"{order}I", b"\2\3\0\0")[0])] * 4
    gps_ifd = struct.pack(f"{order}H", 4)
    gps_ifd += b"".join(struct.pack(f"{order}HHII", *entry) for entry in entries)
    gps_ifd += struct.pack(f"{order}I", 0)
    rationals = b"".join(struct.pack(f"{order}II", v, 1) for v in (48, 51, 29, 2, 17, 40))
    return mark + struct.pack(f"{order}HI", 42, 8) + ifd0 + gps_ifd + rationals


def _jpeg_with(tiff: bytes) -> bytes:
    body = b"Exif\0\0" + tiff
    return MINI_JPEG[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + MINI_JPEG[2:]


def _webp_with(tiff: bytes) -> bytes:
    """The 1x1 lossless WebP, extended (VP8X, its EXIF flag set) with an EXIF chunk."""
    vp8x = b"VP8X" + struct.pack("<I", 10) + bytes([0x08, 0, 0, 0]) + b"\0\0\0" + b"\0\0\0"
    picture = WEBP_LOSSLESS[12:]
    exif = b"EXIF" + struct.pack("<I", len(tiff)) + tiff + (b"\0" if len(tiff) % 2 else b"")
    body = b"WEBP" + vp8x + picture + exif
    return b"RIFF" + struct.pack("<I", len(body)) + body


LOCATED = {
    "jpeg": _jpeg_with(_tiff("<", gps=True)),
    "png": png(extra=_chunk(b"eXIf", _tiff(">", gps=True))),
    "webp": _webp_with(_tiff("<", gps=True)),
}
NOT_LOCATED = {
    "jpeg": _jpeg_with(_tiff("<", gps=True, position=False)),
    "png": png(extra=_chunk(b"eXIf", _tiff("<", gps=False))),
    "webp": _webp_with(_tiff(">", gps=False)),
}


def _photo_session(tmp_path: Path) -> Path:
    """Three located images (JPEG, PNG, WebP) and a v1 attachment of a located JPEG (its
    content and preview: one image), beside three whose EXIF says no place."""
    located = [_image(b64(raw), f"image/{kind}") for kind, raw in LOCATED.items()]
    others = [_image(b64(raw), f"image/{kind}") for kind, raw in NOT_LOCATED.items()]
    photo = b64(LOCATED["jpeg"])
    attached = [{"id": "a1", "type": "image", "fileName": "photo.jpg", "mimeType": "image/jpeg",
                 "size": len(LOCATED["jpeg"]), "content": photo, "preview": photo}]  # fmt: skip
    path = tmp_path / "photos.jsonl"
    path.write_bytes(_session_lines([{"type": "text", "text": "photos"}, *located, *others],
                                    attachments=attached))  # fmt: skip
    return path


WARNED = (
    "warning: 4 images carry a GPS location (EXIF or XMP) and go out as they are; --no-images "
    "leaves them out"
)


def test_the_located_pictures_are_real_pictures() -> None:
    for kind, raw in [*LOCATED.items(), *NOT_LOCATED.items()]:
        assert safe_image_src(b64(raw)) == f"data:image/{kind};base64,{b64(raw)}"


def test_redact_counts_and_warns_of_located_images(tmp_path: Path) -> None:
    source = _photo_session(tmp_path)
    out, report = tmp_path / "copy.jsonl", tmp_path / "report.jsonl"
    args = ["redact", str(source), "-o", str(out), "--report", str(report)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert (
        "pi-session: warning: 4 images carry a GPS location (EXIF or XMP) and are copied as they "
        "are; --no-images leaves them out" in result.stderr
    )
    summary = json.loads(report.read_text(encoding="utf-8").splitlines()[0])
    assert summary["actions"]["images_with_gps"] == 4
    assert "GPS" not in result.stderr.split("warning:")[0]  # the summary line is as it was
    assert b64(LOCATED["jpeg"]) in out.read_text(encoding="utf-8")  # (what is redacted stays)
    dropped = CliRunner().invoke(
        cli, ["redact", str(source), "-o", str(tmp_path / "none.jsonl"), "--no-images"]
    )
    assert dropped.exit_code == 0 and "GPS" not in dropped.stderr, dropped.output


def test_share_warns_of_located_images_redacted_or_not(tmp_path: Path, sharing: Any) -> None:
    source = _photo_session(tmp_path)
    for extra in ([], ["--no-redact"]):
        result = sharing(str(source), *extra)
        assert result.exit_code == 0, result.output
        assert f"pi-session: {WARNED}" in result.stderr, extra
        page = next(tmp_path.glob("pi-session-share-*.html")).read_text(encoding="utf-8")
        assert "GPS location" not in page and "images_with_gps" not in page  # its note as was
    one = tmp_path / "one.jsonl"
    one.write_bytes(_session_lines([_image(b64(LOCATED["png"]))]))
    result = sharing(str(one))
    assert (
        "1 image carries a GPS location (EXIF or XMP) and goes out as it is; --no-images "
        "leaves it out" in result.stderr
    )
    result = sharing(str(source), "--no-images")
    assert result.exit_code == 0 and "GPS" not in result.stderr, result.output


def test_publish_warns_of_located_images(tmp_path: Path, fake_hub: FakeHub, hub_env: None) -> None:
    source = _photo_session(tmp_path)
    args = ["publish", "alice/photos", str(source), "--endpoint", fake_hub.url, "-j", "1"]
    result = CliRunner().invoke(cli, [*args, "--token", HUB_TOKEN])
    assert result.exit_code == 0, result.output
    assert f"/photos.jsonl: {WARNED.removeprefix('warning: ')}" in result.stderr
    [sent] = [d for p, d in fake_hub.files("alice/photos").items() if p.startswith("sessions/")]
    assert b64(LOCATED["webp"]).encode() in sent  # sent as it is, and said so
    manifest = fake_hub.files("alice/photos")["manifest.json"].decode()
    assert "gps" not in manifest  # (a public manifest would point readers to the photos)


# --- 5: an image the Files API holds is no invalid data ---------------------------------------


def test_a_files_api_image_is_said_as_held_elsewhere(tmp_path: Path) -> None:
    base = {"isSidechain": False, "userType": "external", "cwd": "/home/dev/proj",
            "sessionId": "77777777-2222-4333-8444-555555555555", "version": "2.0.46"}  # fmt: skip
    held = {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}
    content = [{"type": "text", "text": "what is in it?"}, {"type": "image", "source": held}]
    lines = [
        {**base, "parentUuid": None, "type": "user", "uuid": "00000000-0000-4000-8000-000000000001",
         "timestamp": "2026-11-20T10:00:01.000Z", "message": {"role": "user", "content": content}},
    ]  # fmt: skip
    source = tmp_path / "77777777-2222-4333-8444-555555555555.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    markdown = _export_md(source, tmp_path / "cc.md", "note")
    assert (
        "*[an image held by the Files API (file\\_011CNha8iCJcU1wXNR6q4V8w), not in the "
        "transcript]*" in markdown
    )
    assert "unsupported or invalid data" not in markdown
    page = render_session(parse_session_bytes(source.read_bytes(), path=str(source)))
    held = "an image held by the Files API (file_011CNha8iCJcU1wXNR6q4V8w), not in the transcript"
    assert f'<span class="bad-image">[{held}]</span>' in page
    assert "unsupported or invalid data" not in page
