"""Stop 74, redaction's reach: a photo's location only in XMP or in a PNG's hex-encoded EXIF
went out unwarned; the user name in a session's file name went out in dataset paths, page
names, the manifest, the index and the commit title, and in `redact`'s default copy name;
a user named after a word (`max`) kept it in Pi's encoded home (`--home-max-webapp--`); the
dataset card said nothing of images."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from exporter.cli import cli
from exporter.policy import RedactionPolicy
from exporter.publish.dataset_card import render_card
from exporter.redact import _carries_gps, name_scrubber
from tests.fakes.hub import TOKEN as HUB_TOKEN
from tests.fakes.hub import FakeHub, fake_hub_fixture
from tests.test_images_s67 import LOCATED, MINI_JPEG, WEBP_LOSSLESS, _chunk, _tiff, png
from tests.test_publish import hub_env

__all__ = ["fake_hub_fixture", "hub_env"]  # fixtures, used by name

TIME = "2026-11-30T00:57:07.316Z"


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _session(header: dict[str, Any], content: Any) -> bytes:
    rows = [
        {"type": "session", "version": 3, "id": "01a229f4-9ff2-7641-920f-f99cb5e24cc0",
         "timestamp": TIME, "cwd": "/home/alice/p", **header},
        {"type": "message", "id": "u1", "parentId": None, "timestamp": TIME,
         "message": {"role": "user", "timestamp": 1, "content": content}},
    ]  # fmt: skip
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


# --- 1: a location in XMP, or in ImageMagick's hex-encoded EXIF, is counted ---------------

XMP = (
    b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-'
    b'syntax-ns#"><rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/"'
    b' exif:GPSLatitude="48,51.29N" exif:GPSLongitude="2,17.40E"/></rdf:RDF></x:xmpmeta>'
)
XMP_ELEMENT = b"<rdf:Description><exif:GPSLatitude>48,51.29N</exif:GPSLatitude></rdf:Description>"
XMP_NO_PLACE = b'<rdf:Description exif:GPSLatitudeRef="N" exif:GPSLatitude=""/>'
EXIF = b"Exif\0\0" + _tiff("<", gps=True)
#: ImageMagick's layout of a raw profile: name, size, then the hex in lines of 72
RAW_PROFILE = (
    b"\nexif\n" + b"%8d\n" % len(EXIF) + re.sub(rb"(.{72})", rb"\1\n", EXIF.hex().encode())
)


def _jpeg_xmp(packet: bytes) -> bytes:
    body = b"http://ns.adobe.com/xap/1.0/\0" + packet
    return MINI_JPEG[:2] + b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body + MINI_JPEG[2:]


def _itxt(keyword: bytes, text: bytes, compressed: bool = False) -> bytes:
    flag = b"\1\0" if compressed else b"\0\0"
    return _chunk(
        b"iTXt", keyword + b"\0" + flag + b"en\0\0" + (zlib.compress(text) if compressed else text)
    )


def _webp_xmp(packet: bytes) -> bytes:
    vp8x = b"VP8X" + struct.pack("<I", 10) + bytes([0x04, 0, 0, 0]) + b"\0\0\0" + b"\0\0\0"
    xmp = b"XMP " + struct.pack("<I", len(packet)) + packet + (b"\0" if len(packet) % 2 else b"")
    body = b"WEBP" + vp8x + WEBP_LOSSLESS[12:] + xmp
    return b"RIFF" + struct.pack("<I", len(body)) + body


XMP_LOCATED = {
    "jpeg_xmp": _jpeg_xmp(XMP),
    "jpeg_xmp_element": _jpeg_xmp(XMP_ELEMENT),
    "png_itxt_xmp": png(extra=_itxt(b"XML:com.adobe.xmp", XMP)),
    "png_itxt_xmp_compressed": png(extra=_itxt(b"XML:com.adobe.xmp", XMP, compressed=True)),
    "png_text_raw_exif": png(extra=_chunk(b"tEXt", b"Raw profile type exif\0" + RAW_PROFILE)),
    "png_ztxt_raw_exif": png(
        extra=_chunk(b"zTXt", b"Raw profile type exif\0\0" + zlib.compress(RAW_PROFILE))
    ),
    "png_ztxt_raw_app1": png(
        extra=_chunk(b"zTXt", b"Raw profile type APP1\0\0" + zlib.compress(RAW_PROFILE))
    ),
    "webp_xmp": _webp_xmp(XMP),
}
XMP_NOT_LOCATED = {
    "jpeg_xmp": _jpeg_xmp(XMP_NO_PLACE),
    "png_itxt_xmp": png(extra=_itxt(b"XML:com.adobe.xmp", XMP_NO_PLACE)),
    "png_comment": png(extra=_chunk(b"tEXt", b"Comment\0" + XMP)),  # not metadata: text
    "png_raw_exif_no_gps": png(
        extra=_chunk(
            b"tEXt", b"Raw profile type exif\0\nexif\n 20\n" + _tiff("<", False).hex().encode()
        )
    ),
    "webp_xmp": _webp_xmp(XMP_NO_PLACE),
}


@pytest.mark.parametrize("kind", sorted(XMP_LOCATED))
def test_a_location_in_xmp_or_a_raw_profile_is_found(kind: str) -> None:
    assert _carries_gps(_b64(XMP_LOCATED[kind]))


@pytest.mark.parametrize("kind", sorted(XMP_NOT_LOCATED))
def test_metadata_without_a_location_is_not_counted(kind: str) -> None:
    assert not _carries_gps(_b64(XMP_NOT_LOCATED[kind]))


def test_damaged_images_never_raise() -> None:
    """Every cut of each image, and a byte changed at each place of the metadata, is read
    without an error (a cut may still hold the place, or not)."""
    bomb = png(
        extra=_chunk(b"zTXt", b"Raw profile type exif\0\0" + zlib.compress(b"0" * (1 << 26)))
    )
    assert not _carries_gps(_b64(bomb))  # inflated no further than a bounded size
    for raw in [*XMP_LOCATED.values(), *XMP_NOT_LOCATED.values()]:
        for end in range(len(raw)):
            _carries_gps(_b64(raw[:end]))
        for at in range(0, min(len(raw), 400), 3):
            _carries_gps(_b64(raw[:at] + bytes([raw[at] ^ 0xFF]) + raw[at + 1 :]))


def test_redact_warns_of_each_image_located_in_xmp_or_a_raw_profile(tmp_path: Path) -> None:
    pictures = [*XMP_LOCATED.items(), ("control", LOCATED["jpeg"])]
    mime = {"j": "image/jpeg", "p": "image/png", "w": "image/webp", "c": "image/jpeg"}
    blocks = [{"type": "image", "data": _b64(raw), "mimeType": mime[k[0]]} for k, raw in pictures]
    source = tmp_path / "photos.jsonl"
    source.write_bytes(_session({}, [{"type": "text", "text": "see"}, *blocks]))
    result = CliRunner().invoke(cli, ["redact", str(source), "-o", str(tmp_path / "c.jsonl")])
    assert result.exit_code == 0, result.output
    assert f"warning: {len(pictures)} images carry a GPS location" in result.stderr


# --- 2: the user name in a file's name is the user name -----------------------------------

ALICE = {"HOME": "/home/alice", "USER": "alice"}
TOKEN = "ghp_" + "Zq8Xw2Lm4Np6Rt0Vb3Hj5Kf7Gd9Sa1Ce2Ty4"


def test_the_user_name_in_a_file_name_becomes_user() -> None:
    scrub = name_scrubber(RedactionPolicy(), ALICE)
    assert scrub(f"alice-acme-merger-{TOKEN}.jsonl") == (
        "user-acme-merger-REDACTED-github-token.jsonl"
    )
    assert scrub("Alice_notes.ALICE.jsonl") == "user_notes.user.jsonl"
    # names without it stay as they are, to the byte (a new name is a new file in a dataset)
    for name in (
        "2026-11-30T00-57-07-316Z_01a229f4-9ff2-7641-920f-f99cb5e24cb8.jsonl",
        "malice-aliceson-alice2.jsonl",
        "a <user> b.jsonl",
        "rollout-2026-11-30T00-57-07-01a229f4-9ff2-7641-920f-f99cb5e24cb8.jsonl",
    ):
        assert scrub(name) == name
    kept = name_scrubber(RedactionPolicy(keep_paths=True), ALICE)
    assert kept("alice-notes.jsonl") == "alice-notes.jsonl"  # --keep-paths keeps it


def test_publish_and_redact_name_no_user_in_paths_or_titles(
    tmp_path: Path, fake_hub: FakeHub, hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**ALICE, "LOGNAME": "alice"}.items():
        monkeypatch.setenv(name, value)
    named = tmp_path / f"alice-acme-merger-{TOKEN}.jsonl"
    named.write_bytes(_session({"cwd": "/home/alice/acme"}, "hello alice"))
    args = ["publish", "alice/sessions", str(named), "--endpoint", fake_hub.url, "-j", "1"]
    result = CliRunner().invoke(cli, [*args, "--html", "--token", HUB_TOKEN])
    assert result.exit_code == 0, result.output
    files = fake_hub.files("alice/sessions")
    held = {p for p in files if p.startswith(("sessions/", "html/sessions/"))}
    assert {p.rsplit("/", 1)[-1] for p in held} == {
        "user-acme-merger-REDACTED-github-token.jsonl",
        "user-acme-merger-REDACTED-github-token.html",
    }
    manifest = json.loads(files["manifest.json"])
    [row] = [json.loads(line) for line in files["index.jsonl"].splitlines()]
    shown = [*manifest["sessions"], row["path"], *(c.summary for c in fake_hub.commits)]
    shown += [files["html/index.html"].decode()]
    assert not [text for text in shown if re.search("alice(?!/sessions)", text, re.I)], shown
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["redact", str(named)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "user-acme-merger-REDACTED-github-token.redacted.jsonl").is_file()


# --- 3: Pi's and Claude Code's encoded home is the home, whatever the name ----------------


@pytest.mark.parametrize("user", ["max", "alice"])
def test_an_encoded_home_loses_its_user_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user: str
) -> None:
    monkeypatch.setenv("HOME", f"/home/{user}")
    monkeypatch.setenv("USER", user)
    parent = f"/home/{user}/.pi/agent/sessions/--home-{user}-webapp--/2026-11-29_x.jsonl"
    text = f"see --home-{user}-webapp--, C--Users-{user}-proj, -Users-{user}-proj, -home-{user}"
    source = tmp_path / "fork.jsonl"
    source.write_bytes(_session({"cwd": f"/home/{user}/webapp", "parentSession": parent}, text))
    out = tmp_path / "copy.jsonl"
    result = CliRunner().invoke(cli, ["redact", str(source), "-o", str(out)])
    assert result.exit_code == 0, result.output
    copy = out.read_text(encoding="utf-8")
    assert f"-{user}-" not in copy and not copy.endswith(f"-{user}")
    assert '"parentSession":"~/.pi/agent/sessions/--home-<user>-webapp--/' in copy
    assert (
        "see --home-<user>-webapp--, C--Users-<user>-proj, -Users-<user>-proj, -home-<user>" in copy
    )
    if user != "max":
        return
    # (the word stays elsewhere: "max-tokens" is no home, nor is `--homepage-max-x`)
    other = tmp_path / "other.jsonl"
    other.write_bytes(_session({}, f"--max-tokens --homepage-{user}-x"))
    result = CliRunner().invoke(cli, ["redact", str(other), "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 0, result.output
    assert f"--max-tokens --homepage-{user}-x" in (tmp_path / "o.jsonl").read_text(encoding="utf-8")


# --- 4: the card says images go out as they are -------------------------------------------

IMAGES_LINE = "- Images are published as they are, their metadata (EXIF, XMP, PNG text) included"


def test_the_card_says_images_go_out_with_their_metadata() -> None:
    card = render_card("alice/s", [], {}, RedactionPolicy()).decode("utf-8")
    redacted = card.split("## How the data was redacted", 1)[1]
    assert IMAGES_LINE in redacted
    cut = render_card("alice/s", [], {}, RedactionPolicy(no_images=True)).decode("utf-8")
    assert "Images are published" not in cut
    sessions = {"sessions/a.jsonl": {"cuts": ["no_images"]}, "sessions/b.jsonl": {"cuts": []}}
    mixed = render_card("alice/s", [], sessions, RedactionPolicy(no_images=True)).decode("utf-8")
    assert IMAGES_LINE in mixed  # one session of the two kept its images


# --- review: bombs in many chunks, names cut after the scrub, encoded homes in code -----------


def test_many_zlib_bombs_in_one_png_are_judged_quickly() -> None:
    """Each text chunk was allowed 4 MiB of inflating: a 0.4 MB image of 100 such bombs
    took 15 s, in every redact, share and publish that met it."""
    import time

    bomb = zlib.compress(b"\nexif\n 1\n" + b"0" * (1 << 22), 9)
    xmp_bomb = zlib.compress(b"GPSLatitude" * ((1 << 22) // 11), 9)
    raws = _chunk(b"zTXt", b"Raw profile type exif\0\0" + bomb) * 100
    xmps = _chunk(b"iTXt", b"XML:com.adobe.xmp\0\1\0\0\0" + xmp_bomb) * 100
    for extra in (raws, xmps):
        started = time.process_time()
        assert not _carries_gps(_b64(png(extra=extra)))
        assert time.process_time() - started < 2.0


def test_a_location_in_a_drones_or_an_attributed_xmp_element_is_found() -> None:
    for packet in (
        b'<rdf:Description drone-dji:GpsLatitude="22.54" drone-dji:GpsLongitude="113.9"/>',
        b'<exif:GPSLatitude rdf:parseType="Literal">48,51.29N</exif:GPSLatitude>',
    ):
        assert _carries_gps(_b64(_jpeg_xmp(packet))), packet


def test_a_name_cut_after_the_scrub_is_scrubbed_again() -> None:
    """A dataset path is cut to 150 bytes (a page name to 120 characters) after the user
    name is taken out: a cut that ended "…-alicebob" at "…-alice" published the name, and
    every publish after found the path "holding a secret" and committed again."""
    from exporter.publish.hub_plan import repo_stem
    from exporter.site import _stem_base

    scrub = name_scrubber(RedactionPolicy(), {"HOME": "/home/alice", "USER": "alice"})
    stem = repo_stem("x" * 144 + "-alicebob-notes.jsonl", scrub)
    assert not stem.endswith("alice") and scrub(f"{stem}.jsonl") == f"{stem}.jsonl", stem
    page = _stem_base(scrub("x" * 114 + "-alicebob.jsonl"), scrub)
    assert not page.endswith("alice") and scrub(f"{page}.jsonl") == f"{page}.jsonl", page
    same = "2026-12-08T00-54-00-117Z_01a25324-a4b4-76ad-944c-bdc04e163633"
    assert repo_stem(f"{same}.jsonl", scrub) == same  # (names without it: as they were)


def test_an_encoded_home_is_not_found_in_code_or_options() -> None:
    """CSS's "card--home-max-width" and an option "--home-page-url" were taken for Pi's
    encoded home of users max and page; two-letter names and Claude Code's dashes for "."
    and "_" were not taken at all."""
    from exporter.redact import RedactionReport, _PathPrivacy

    def applied(user: str, text: str) -> str:
        return _PathPrivacy([f"/home/{user}"], [user], RedactionReport()).apply(text)

    assert applied("max", '<div class="card--home-max-width">') == (
        '<div class="card--home-max-width">'
    )
    assert applied("page", "cli --home-page-url=x") == "cli --home-page-url=x"
    assert applied("max", "sessions/--home-max-webapp--/a.jsonl") == (
        "sessions/--home-<user>-webapp--/a.jsonl"
    )
    assert applied("li", "--home-li-webapp-- C--Users-li-proj") == (
        "--home-<user>-webapp-- C--Users-<user>-proj"
    )
    assert applied("john_doe", "projects/-home-john-doe-webapp/") == (
        "projects/-home-<user>-webapp/"
    )


def test_a_session_moved_off_a_path_with_the_user_name_has_one_page(
    tmp_path: Path, fake_hub: FakeHub, hub_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Published while its name was kept (as before 0.2.55; here: by another user, whose
    name it is not), then again by its user: the session went up at its new path, and
    html/ listed it twice (a page for the old copy too) until --prune."""
    for name, value in {"HOME": "/home/bob", "USER": "bob", "LOGNAME": "bob"}.items():
        monkeypatch.setenv(name, value)
    named = tmp_path / "alice-notes.jsonl"
    named.write_bytes(_session({"cwd": "/home/alice/acme"}, "hello"))
    args = ["publish", "alice/sessions", str(named), "--endpoint", fake_hub.url, "-j", "1"]
    args += ["--html", "--token", HUB_TOKEN]
    before = CliRunner().invoke(cli, args)
    assert before.exit_code == 0, before.output
    for name, value in {**ALICE, "LOGNAME": "alice"}.items():
        monkeypatch.setenv(name, value)
    after = CliRunner().invoke(cli, args)
    assert after.exit_code == 0, after.output
    files = fake_hub.files("alice/sessions")
    pages = sorted(p for p in files if p.startswith("html/sessions/"))
    assert [p.rsplit("/", 1)[-1] for p in pages] == ["user-notes.html"], pages
    assert "alice-notes" not in files["html/index.html"].decode()
    assert "sessions/" in after.stderr and "your user name" in after.stderr


def test_a_redacted_pages_footer_names_its_file_as_its_copies_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The footer's "from badlogic_fix-login.jsonl" kept the name ("_" is no word's end in
    text) beside a page named user_fix-login.html; "<user>-notes.jsonl" beside user-notes."""
    for name, value in {"HOME": "/home/badlogic", "USER": "badlogic"}.items():
        monkeypatch.setenv(name, value)
    for given, shown in (
        ("badlogic_fix-login", "user_fix-login"),
        ("badlogic-notes", "user-notes"),
    ):
        source = tmp_path / f"{given}.jsonl"
        source.write_bytes(_session({"cwd": "/home/badlogic/x"}, "hello"))
        page = tmp_path / f"{given}.html"
        done = CliRunner().invoke(cli, ["export", str(source), "--redact", "-o", str(page)])
        assert done.exit_code == 0, done.output
        assert f"from <code>{shown}.jsonl</code>" in page.read_text(encoding="utf-8")
