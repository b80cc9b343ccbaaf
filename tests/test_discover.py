"""Where sessions live, how SESSION resolves, and the fast listing summary (``scan_summary``)."""

from __future__ import annotations

import base64
import gzip
import json
import math
import os
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from exporter.discover import (
    SessionLookupError,
    agent_dir,
    demo_session_path,
    encode_cwd,
    no_sessions_said,
    resolve_session_arg,
    scan_summary,
    session_files,
    sessions_root,
)
from exporter.loader import SessionFormatError, load_session
from exporter.render import page_title
from exporter.session import Session
from exporter.usage import compute_stats

# --- locations --------------------------------------------------------------------------------


def test_agent_dir_honours_pi_coding_agent_dir(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert agent_dir({}) == tmp_path / "home" / ".pi" / "agent"
    assert agent_dir({"PI_CODING_AGENT_DIR": "/opt/pi"}) == Path("/opt/pi")
    assert agent_dir({"PI_CODING_AGENT_DIR": "~/custom"}) == tmp_path / "home" / "custom"
    assert agent_dir({"PI_CODING_AGENT_DIR": ""}) == tmp_path / "home" / ".pi" / "agent"
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    assert agent_dir() == tmp_path / "agent"
    assert sessions_root() == tmp_path / "agent" / "sessions"
    assert sessions_root(tmp_path / "elsewhere") == tmp_path / "elsewhere"
    assert sessions_root("~/s") == tmp_path / "home" / "s"
    monkeypatch.delenv("PI_CODING_AGENT_DIR")
    assert sessions_root() == tmp_path / "home" / ".pi" / "agent" / "sessions"


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/dev/projects/webapp", "--home-dev-projects-webapp--"),
        ("/", "----"),
        ("/a:b\\c/d", "--a-b-c-d--"),
        ("C:\\Users\\me\\proj", "--C--Users-me-proj--"),
        ("\\\\server\\share", "---server-share--"),  # only ONE leading separator is dropped
        ("//double", "---double--"),
        ("relative/dir", "--relative-dir--"),
        ("/with space/ünï 会话", "--with space-ünï 会话--"),
        ("/trailing/", "--trailing---"),
    ],
)
def test_encode_cwd(cwd: str, folder: str) -> None:
    assert encode_cwd(cwd) == folder


# --- a fake ~/.pi/agent/sessions --------------------------------------------------------------


def _session_file(folder: Path, session_id: str, mtime: int, build, dump, cwd: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"2025-01-01T00-00-{mtime % 60:02d}-000Z_{session_id}.jsonl"
    path.write_bytes(
        dump(
            [
                build.header(session_id=session_id, cwd=cwd),
                build.user("u1", None, f"prompt of {session_id}"),
                build.assistant("a1", "u1"),
            ]
        )
    )
    os.utime(path, (1_700_000_000 + mtime, 1_700_000_000 + mtime))
    return path


@pytest.fixture
def tree(tmp_path: Path, build, dump) -> dict:
    """Two projects plus a loose file, with known mtimes."""
    root = tmp_path / "sessions"
    proj = tmp_path / "work" / "proj"
    other = tmp_path / "work" / "other"
    proj.mkdir(parents=True)
    other.mkdir(parents=True)
    here, there = root / encode_cwd(str(proj)), root / encode_cwd(str(other))
    files = {
        "aaaa1111": _session_file(here, "aaaa1111-0000", 10, build, dump, str(proj)),
        "aaaa2222": _session_file(here, "aaaa2222-0000", 30, build, dump, str(proj)),
        "bbbb1111": _session_file(here, "bbbb1111-0000", 20, build, dump, str(proj)),
        "aaaa3333": _session_file(there, "aaaa3333-0000", 40, build, dump, str(other)),
        "cccc1111": _session_file(there, "cccc1111-0000", 5, build, dump, str(other)),
        "loose": _session_file(root, "dddd1111-0000", 1, build, dump, "/x"),
    }
    (here / "notes.txt").write_text("not a session", encoding="utf-8")
    (here / "sub").mkdir()
    return {"root": root, "proj": proj, "other": other, "files": files}


def test_session_files_per_project_and_all_newest_first(tree: dict) -> None:
    files = tree["files"]
    assert session_files(tree["root"], str(tree["proj"])) == [
        files["aaaa2222"],
        files["bbbb1111"],
        files["aaaa1111"],
    ]
    assert session_files(tree["root"]) == [
        files[k] for k in ("aaaa3333", "aaaa2222", "bbbb1111", "aaaa1111", "cccc1111", "loose")
    ]
    assert session_files(tree["root"], "/nowhere") == []
    assert session_files(tree["root"] / "missing") == []


def test_a_project_reached_through_a_symbolic_link_finds_its_sessions(
    tree: dict, tmp_path: Path
) -> None:
    """Pi files a session under its working folder's real path: a project named through a
    link to it (``--cwd ~/link``) found none, while running from the link found them."""
    link = tmp_path / "link-to-proj"
    link.symlink_to(tree["proj"], target_is_directory=True)
    here = session_files(tree["root"], str(tree["proj"]))
    assert len(here) == 3
    assert session_files(tree["root"], str(link)) == here
    assert session_files(tree["root"], f"{link}/") == here
    assert resolve_session_arg(None, sessions_dir=tree["root"], cwd=str(link)) == here[0]


def test_a_session_linked_into_another_folder_is_listed_once(tree: dict) -> None:
    """A symlink (or hard link) to a listed session would count its tokens and cost twice;
    the real path is the one kept, whichever folder is read first."""
    files = tree["files"]
    real = files["aaaa3333"]
    link = real.parent.parent / encode_cwd(str(tree["proj"])) / ("0000-" + real.name)
    link.symlink_to(real)
    hard = tree["root"] / ("zzzz-" + real.name)
    os.link(real, hard)
    listed = session_files(tree["root"])
    assert listed.count(real) == 1 and link not in listed and hard not in listed
    assert len(listed) == len(files)
    # within one project the link is the only path to it: it is listed there
    assert link in session_files(tree["root"], str(tree["proj"]))


def test_a_project_folder_linked_under_another_name_is_listed_once(tree: dict) -> None:
    """The real folder's path wins, even when the link's name sorts first."""
    real_folder = tree["files"]["aaaa3333"].parent
    link_folder = tree["root"] / "--aa-link--"
    link_folder.symlink_to(real_folder, target_is_directory=True)
    listed = session_files(tree["root"])
    assert tree["files"]["aaaa3333"] in listed and tree["files"]["cccc1111"] in listed
    assert not any(p.parent == link_folder for p in listed)


def test_session_files_default_to_the_agent_dir(tree: dict, monkeypatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tree["root"].parent))
    assert session_files(None, str(tree["proj"]))[0] == tree["files"]["aaaa2222"]


def test_resolve_a_path(tree: dict, monkeypatch) -> None:
    target = tree["files"]["cccc1111"]
    assert resolve_session_arg(str(target), sessions_dir=tree["root"]) == target
    monkeypatch.chdir(target.parent)
    assert resolve_session_arg(target.name, sessions_dir=tree["root"]) == Path(target.name)
    with pytest.raises(SessionLookupError, match="is not a file"):
        resolve_session_arg(str(tree["root"]), sessions_dir=tree["root"])


def test_resolve_an_id_or_unique_prefix(tree: dict) -> None:
    files, root, proj = tree["files"], tree["root"], str(tree["proj"])
    assert resolve_session_arg("bbbb1111-0000", sessions_dir=root, cwd=proj) == files["bbbb1111"]
    assert resolve_session_arg("bb", sessions_dir=root, cwd=proj) == files["bbbb1111"]
    # Another project's session is found too when nothing in this project matches.
    assert resolve_session_arg("cccc", sessions_dir=root, cwd=proj) == files["cccc1111"]
    assert resolve_session_arg("dddd", sessions_dir=root, cwd=proj) == files["loose"]
    # "aaaa3" is unique; "aaaa" is ambiguous here, "aaaa3333" lives in the other project.
    assert resolve_session_arg("aaaa3", sessions_dir=root, cwd=proj) == files["aaaa3333"]
    # Unique within this project wins over matches elsewhere.
    found = resolve_session_arg("aaaa3", sessions_dir=root, cwd=str(tree["other"]))
    assert found == files["aaaa3333"]


def test_a_file_not_named_by_its_id_is_found_by_its_header_id(tree: dict) -> None:
    """`list` and `stats` print the header's id; a copy or renamed file (not
    ``<time>_<id>.jsonl``) could not be named by it: "no session file or session id
    matches". Its header is read when no file name matches."""
    files, root, proj = tree["files"], tree["root"], str(tree["proj"])
    copy = root / encode_cwd(proj) / "backup of today.jsonl"
    copy.write_bytes(files["bbbb1111"].read_bytes().replace(b"bbbb1111-0000", b"eeee5555-0000"))
    assert resolve_session_arg("eeee5555-0000", sessions_dir=root, cwd=proj) == copy
    assert resolve_session_arg("eeee", sessions_dir=root, cwd=proj) == copy
    twin = copy.with_name("second backup.jsonl")
    twin.write_bytes(copy.read_bytes().replace(b"eeee5555-0000", b"eeee5555-0001"))
    assert resolve_session_arg("eeee5555-0001", sessions_dir=root, cwd=proj) == twin
    with pytest.raises(SessionLookupError, match="ambiguous"):
        resolve_session_arg("eeee5555", sessions_dir=root, cwd=proj)
    with pytest.raises(SessionLookupError, match="no session file or session id matches"):
        resolve_session_arg("ffff", sessions_dir=root, cwd=proj)


def test_ambiguous_prefix_lists_the_candidates(tree: dict) -> None:
    with pytest.raises(SessionLookupError) as error:
        resolve_session_arg("aaaa", sessions_dir=tree["root"], cwd=str(tree["proj"]))
    message = str(error.value)
    assert "ambiguous" in message and "'aaaa'" in message
    assert "aaaa1111-0000" in message and "aaaa2222-0000" in message
    assert encode_cwd(str(tree["proj"])) in message
    assert "aaaa3333" not in message  # this project's matches are listed first


def test_ambiguous_prefix_lists_at_most_eight(tmp_path: Path, build, dump) -> None:
    folder = tmp_path / "sessions" / "--p--"
    for n in range(11):
        _session_file(folder, f"feed{n:04d}", n, build, dump, "/p")
    with pytest.raises(SessionLookupError, match="and 3 more") as error:
        resolve_session_arg("feed", sessions_dir=tmp_path / "sessions", cwd="/p")
    assert str(error.value).count("feed0") == 8


def test_omitted_session_is_the_latest_of_this_project(tree: dict) -> None:
    root = tree["root"]
    here = resolve_session_arg(None, sessions_dir=root, cwd=str(tree["proj"]))
    assert here == tree["files"]["aaaa2222"]
    there = resolve_session_arg(None, sessions_dir=root, cwd=str(tree["other"]))
    assert there == tree["files"]["aaaa3333"]


def test_no_session_is_a_clear_error(tree: dict, tmp_path: Path) -> None:
    empty = tmp_path / "empty-project"
    empty.mkdir()
    with pytest.raises(SessionLookupError) as error:
        resolve_session_arg(None, sessions_dir=tree["root"], cwd=str(empty))
    message = str(error.value)
    assert str(empty) in message and str(tree["root"]) in message and "--demo" in message
    # in the one helper's words, as every command says it, then what to pass instead
    said = no_sessions_said(tree["root"], str(empty), "`pi-session list --all` shows {them}")
    assert message == f"{said}; pass a SESSION file or id, or --demo"
    others = "6 sessions of other projects are there: `pi-session list --all` shows them"
    assert said.endswith(f"; {others}")
    with pytest.raises(SessionLookupError, match="no session file or session id matches 'zz'"):
        resolve_session_arg("zz", sessions_dir=tree["root"], cwd=str(empty))


def test_demo_session_is_bundled_and_loads() -> None:
    path = demo_session_path()
    assert resolve_session_arg("ignored", demo=True) == path
    session = load_session(path)
    assert session.version == 3 and len(session.entries) > 100 and len(session.branches()) > 1
    assert session.damaged == [] and session.diagnostics == []


def _png_pixels_complete(data: bytes) -> bool:
    """Whether a PNG's chunks check out and its image data inflates to every row a
    non-interlaced 8-bit image of its size needs (what a browser paints)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    at, chunks = 8, {}
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + size]
        (crc,) = struct.unpack(">I", data[at + 8 + size : at + 12 + size])
        if zlib.crc32(kind + body) != crc:
            return False
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + size
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    try:
        pixels = zlib.decompress(chunks[b"IDAT"])
    except zlib.error:
        return False
    return depth == 8 and interlace == 0 and len(pixels) == height * (1 + width * channels)


def test_the_demo_sessions_images_are_whole() -> None:
    """The demo's images were a PNG whose data held 14 of the 200 bytes its 8x8 pixels
    need: Chromium painted nothing, and the README's first page looked as if the exporter
    lost images (visual review 2026-12-04)."""
    images = []
    for line in demo_session_path().read_text(encoding="utf-8").splitlines():
        images += re.findall(r'"data":\s*"([A-Za-z0-9+/=]{40,})"', line)
    assert len(images) >= 3
    assert all(_png_pixels_complete(base64.b64decode(image)) for image in images)
    fixture = Path(os.environ.get("PI_SHARED_DIR", "../shared")) / "fixtures/every-entry-type.jsonl"
    if fixture.exists():  # the check itself: the fixture's 8x8 image is whole
        (good,) = set(
            re.findall(r'"data":\s*"(iVBORw0KGgo[A-Za-z0-9+/=]+)"', fixture.read_text("utf-8"))
        )
        assert _png_pixels_complete(base64.b64decode(good))


# --- scan_summary vs the full loader ----------------------------------------------------------


def full_facts(session: Session) -> dict:
    stats = compute_stats(session)
    usage = stats.all
    return {
        "id": session.id,
        "cwd": session.header.cwd,
        "name": session.name,
        "first_prompt": session.first_prompt(),
        "entries": len(session.entries),
        "messages": sum(1 for _ in session.iter_messages()),
        "branches": len(session.branches()),
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
        "tokens": usage.total_tokens,
        "cost": usage.cost,
        "version": session.version,
    }


def scan_facts(path: Path) -> dict:
    summary = scan_summary(path)
    assert summary.error is None
    return {
        "id": summary.id,
        "cwd": summary.cwd,
        "name": summary.name,
        "first_prompt": summary.first_prompt,
        "entries": summary.entries,
        "messages": summary.messages,
        "branches": summary.branches,
        "input": summary.input,
        "output": summary.output,
        "cache_read": summary.cache_read,
        "cache_write": summary.cache_write,
        "tokens": summary.tokens,
        "cost": summary.cost,
        "version": summary.version,
    }


def assert_agree(path: Path, context: str = "") -> None:
    scanned, full = scan_facts(path), full_facts(load_session(path))
    assert math.isclose(scanned.pop("cost"), full.pop("cost"), rel_tol=1e-9, abs_tol=1e-12), context
    assert scanned == full, context


def test_list_stats_and_the_page_give_a_session_one_title(fixtures_dir: Path) -> None:
    """pi-branched-3's first prompt is a pasted screenshot path: the page's heading skips it
    for the words after it, and ``list`` and ``stats`` showed the path instead."""
    path = fixtures_dir / "pi-branched-3.jsonl"
    session = load_session(path)
    assert session.first_prompt().startswith("'/var/folders/")
    assert scan_summary(path).title == session.title == page_title(session) == "w.t.f."


def test_a_prompt_s_markup_is_left_out_of_the_title_everywhere(
    fixtures_dir: Path, tmp_path: Path
) -> None:
    """Without its session name, every-entry-type's title is its first prompt: `list` and
    `stats` showed "Look at this **image** and `code`: ```python pr…", the page its words
    (review 2026-12-02). A skill's wrapper is said by its name."""
    lines = (fixtures_dir / "every-entry-type.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "2025-06-01T10-00-00-000Z_nameless.jsonl"
    path.write_bytes(b"".join(line for line in lines if b'"session_info"' not in line))
    session = load_session(path)
    assert session.name is None
    title = session.title
    assert title.startswith("Look at this image and code: print('hi')"), title
    assert scan_summary(path).title == title
    assert page_title(session) == title  # no longer than the page's 120 characters
    skill = tmp_path / "2025-06-01T10-00-00-000Z_skill.jsonl"
    prompt = '<skill name="pdf" location="/s/SKILL.md">\nUse it.\n</skill>\n\n**convert** it'
    skill.write_text(
        json.dumps({"type": "session", "version": 3, "id": "k", "timestamp": "2025-06-01"})
        + "\n"
        + json.dumps(
            {
                "type": "message",
                "id": "u",
                "parentId": None,
                "timestamp": "2025-06-01",
                "message": {"role": "user", "content": prompt},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assert load_session(skill).title == scan_summary(skill).title == "skill: pdf · convert it"
    # a skill and nothing else: its name (not "· (image)"); a name on one line
    alone = '<skill name="pdf\nx" location="/s/SKILL.md">\nUse it.\n</skill>'
    written = skill.read_text(encoding="utf-8")
    skill.write_text(written.replace(json.dumps(prompt), json.dumps(alone)), encoding="utf-8")
    assert load_session(skill).title == scan_summary(skill).title == "skill: pdf x"


def test_scan_summary_agrees_with_the_loader_on_every_fixture(pi_fixture: Path) -> None:
    assert_agree(pi_fixture)
    summary = scan_summary(pi_fixture)
    session = load_session(pi_fixture)
    assert summary.started == compute_stats(session).started is not None  # as `stats` says
    assert summary.modified is not None
    assert summary.title == session.title
    record = summary.as_dict()
    assert set(record) == {
        "id",
        "path",
        "cwd",
        "name",
        "first_prompt",
        "started",
        "modified",
        "entries",
        "messages",
        "branches",
        "tokens",
        "cost",
        "error",
    }
    assert record["path"] == str(pi_fixture) and record["error"] is None


@pytest.mark.pi
def test_scan_summary_agrees_with_the_loader_on_generated_sessions(generated_sessions) -> None:
    for index, path in enumerate(generated_sessions.files):
        assert_agree(path, generated_sessions.describe(index))


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.encode("utf-16"),
        # gzipped, as `stats`, `export` and `search` read them (CLI review: `list` did not)
        lambda text: gzip.compress(text.encode("utf-8")),
        lambda text: gzip.compress(text.encode("utf-16")),
    ],
    ids=["utf16", "gzip", "gzip-utf16"],
)
def test_a_session_saved_as_utf16_or_gzip_lists_as_the_session(
    fixtures_dir: Path, tmp_path: Path, encode: Callable[[str], bytes]
) -> None:
    """The loader reads a UTF-16 copy of a session (PowerShell's `>`), and a gzipped one;
    `list` said "(unreadable: not a Pi session file)" of them, with no messages, cost or
    title."""
    source = fixtures_dir / "pi-branched-1.jsonl"
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(encode(source.read_text(encoding="utf-8")))
    plain, summary = scan_summary(source).as_dict(), scan_summary(wide).as_dict()
    assert summary["error"] is None and summary["messages"] > 0
    assert {k: v for k, v in summary.items() if k != "path"} == {
        k: v for k, v in plain.items() if k != "path"
    }
    notes = tmp_path / "notes.jsonl"  # UTF-16, but no session
    notes.write_bytes("# Notes\n".encode("utf-16"))
    assert scan_summary(notes).error == "not a Pi session file"


def test_scan_summary_modified_is_the_latest_message(build, write_session) -> None:
    lines = [
        build.header(),
        build.user("u1", None, "q", 5),
        build.assistant("a1", "u1", second=50),
        build.entry("custom", "c", "a1", 3000),  # not a message: does not count
    ]
    summary = scan_summary(write_session(lines))
    assert summary.modified.isoformat() == "2025-01-01T00:00:50+00:00"
    assert summary.started.isoformat() == "2025-01-01T00:00:00+00:00"


def test_scan_summary_of_an_unreadable_path(tmp_path: Path) -> None:
    summary = scan_summary(tmp_path / "gone_abc.jsonl")
    assert summary.error and summary.entries == 0
    assert summary.title.startswith("(unreadable: ")  # not an empty session in `list`


@pytest.mark.parametrize(
    "variant",
    ["bom", "crlf", "blank-lines", "leading-blank-line", "garbage-first-line", "truncated-tail",
     "truncated-mid-file", "version-as-text", "vertical-tab-line", "no-header"],
)  # fmt: skip
def test_scan_summary_agrees_on_damaged_copies(fixtures_dir: Path, tmp_path: Path, variant) -> None:
    """The listing and ``stats`` must not disagree about the same file.

    Product bugs: ``scan_summary`` only looks for the header on physical line 1, so a blank or
    garbage first line makes a v3 file look like v1 (one branch, id taken from the file name);
    and its fast path counts a cut-off last line whose prefix is intact as one more message.
    """
    source = (fixtures_dir / "pi-branched-2.jsonl").read_bytes()
    assistant = next(line for line in source.splitlines() if b'"role":"assistant"' in line)
    data = {
        "bom": b"\xef\xbb\xbf" + source,
        "crlf": source.replace(b"\n", b"\r\n"),
        "blank-lines": source.replace(b"\n", b"\n\n"),
        "leading-blank-line": b"\n" + source,
        "garbage-first-line": b"#!garbage\n" + source,
        "truncated-tail": source + assistant[: assistant.index(b"assistant") + 40],
        # A crash cut a line, then the session went on (an adversarial review's case):
        "truncated-mid-file": source.replace(
            assistant, assistant[: assistant.index(b"assistant") + 40] + b"\n" + assistant, 1
        ),
        "version-as-text": source.replace(b'"version":3', b'"version":"3"', 1),
        "vertical-tab-line": source.replace(b"\n", b"\n\x0b\n", 3),
        # the loader finds the tree of a v3 file that lost its header; `list` said 1 branch
        "no-header": source.split(b"\n", 1)[1],
    }[variant]
    path = tmp_path / "2025-01-01T00-00-00-000Z_copy.jsonl"
    path.write_bytes(data)
    assert_agree(path, variant)


def test_scan_summary_with_invalid_utf8_in_a_timestamp(tmp_path: Path) -> None:
    """Found by the property test: bytes that are not UTF-8 inside the fast-path prefix."""
    header = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01","cwd":"/p"}'
    entry = b'{"type":"custom","id":"n0","parentId":null,"timestamp":"\x80025-01-01","x":""}'
    path = tmp_path / "2025-01-01T00-00-00-000Z_s.jsonl"
    path.write_bytes(header + b"\n" + entry + b"\n")
    summary = scan_summary(path)
    assert summary.entries == 1 and summary.error is None


_HEADER = b'{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}'
_USER = b'{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
_USER += b'"message":{"role":"user","content":"hi"}}'
_REPLY = b'{"type":"message","id":"b","parentId":"a","timestamp":"2025-01-01T00:00:02Z",'
_REPLY += b'"message":{"role":"assistant","content":[],"usage":{"input":10,"output":5,'
_REPLY += b'"cost":{"total":0.3}}}}'


@pytest.mark.parametrize(
    ("variant", "old", "new"),
    [
        ("escaped-parent", b'"parentId":"a"', b'"parentId":"\\u0061"'),
        ("escaped-id", b'"id":"a"', b'"id":"\\u0061"'),
        ("escaped-role", b'"role":"assistant"', b'"role":"\\u0061ssistant"'),
        ("role-not-first", b'{"role":"assistant"', b'{"x":1,"role":"assistant"'),
    ],
)
def test_scan_summary_reads_escaped_prefixes_as_the_loader_does(
    tmp_path: Path, variant: str, old: bytes, new: bytes
) -> None:
    """A review: the fast path took ``"parentId":"\\u0061"`` (which is "a") as the parent
    ``\\u0061``, so ``list`` showed 2 branches where ``stats`` shows 1, and a role written
    with an escape missed the prefix, so the reply's tokens and cost were not counted."""
    data = b"\n".join([_HEADER, _USER, _REPLY]) + b"\n"
    assert data.count(old) == 1
    path = tmp_path / "2025-01-01T00-00-00-000Z_s.jsonl"
    path.write_bytes(data.replace(old, new))
    assert_agree(path, variant)
    summary = scan_summary(path)
    assert (summary.branches, summary.tokens) == (1, 15), variant


def test_a_file_without_a_header_has_the_id_of_its_name(tmp_path: Path) -> None:
    """``list --json`` gave ``"id": ""`` for an empty or unreadable file while the table
    showed the id from its name."""
    empty = tmp_path / "2025-01-01T00-00-00-000Z_empty.jsonl"
    empty.write_bytes(b"")
    binary = tmp_path / "2025-01-01T00-00-00-000Z_bin.jsonl"
    binary.write_bytes(bytes(range(256)))
    assert scan_summary(empty).as_dict()["id"] == "empty"
    assert scan_summary(binary).as_dict()["id"] == "bin"
    assert scan_summary(tmp_path / "2025_gone.jsonl").as_dict()["id"] == "gone"


def test_files_that_are_no_session_are_listed_as_unreadable(tmp_path: Path) -> None:
    """An empty file, binary bytes or some other JSON were listed as sessions with no
    messages, while export and stats refuse them (exit 2): the listing says why instead."""
    cases = {"empty": b"", "binary": bytes(range(256)) * 3, "other": b'{"hello": 1}\n'}
    for name, data in cases.items():
        path = tmp_path / f"2025-01-01T00-00-00-000Z_{name}.jsonl"
        path.write_bytes(data)
        expected = "empty file" if not data else "not a Pi session file"
        assert scan_summary(path).error == expected, name
    header_only = tmp_path / "2025-01-01T00-00-00-000Z_new.jsonl"
    header_only.write_text('{"type":"session","version":3,"id":"n","cwd":"/p"}\n', "utf-8")
    assert scan_summary(header_only).error is None  # a new session, nothing said yet


def test_a_second_usage_on_a_line_is_not_taken_for_the_turns(build, write_session) -> None:
    """The scan took the last ``"usage":`` on a line: a tool's own usage object after the
    turn's made `list` say 1,000,000 tokens and $99 where `stats` said $0.50."""
    turn = build.assistant("a1", "u1", usage=build.usage(5, 3, 0.5), second=2)
    turn["message"]["details"] = {"usage": build.usage(1_000_000, 0, 99.0)}  # written after
    with_word = build.assistant("a2", "a1", usage=build.usage(1, 1, 0.25), second=3)
    with_word["message"]["content"] = [{"type": "text", "text": 'the "usage": key'}]
    path = write_session([build.header(), build.user("u1", None, "q", 1), turn, with_word])
    assert_agree(path)
    assert math.isclose(scan_summary(path).cost, 0.75)


def test_a_usage_inside_a_tool_call_is_not_the_turns(build, write_session) -> None:
    """A turn without its own usage but with a ``"usage"`` in a tool call's arguments made
    `list` say $99 where `stats` said $0."""
    turn = build.assistant("a1", "u1", usage=None, second=2)
    turn["message"].pop("usage", None)
    turn["message"]["content"] = [
        {
            "type": "toolCall",
            "id": "c1",
            "name": "report",
            "arguments": {"usage": build.usage(1_000_000, 0, 99.0)},
        }
    ]
    path = write_session([build.header(), build.user("u1", None, "q", 1), turn])
    assert_agree(path)
    assert scan_summary(path).cost == 0


@pytest.mark.parametrize(
    ("before", "after"), [("\ufeff\ufeff", ""), ("\u00a0", ""), ("", "\u00a0")]
)
def test_list_reads_what_pi_trims_from_the_file_s_ends_as_stats_does(
    tmp_path: Path, build, dump, before: str, after: str
) -> None:
    """A second BOM or an NBSP before the header listed the session without its project; one
    after the last entry left its prompt out."""
    lines = [build.header(cwd="/home/alice/proj"), build.user("u1", None, "first prompt")]
    path = tmp_path / "s.jsonl"
    path.write_bytes(before.encode() + dump(lines).rstrip(b"\n") + after.encode())
    summary, session = scan_summary(path), load_session(path)
    assert summary.error is None and summary.cwd == "/home/alice/proj" == session.header.cwd
    assert summary.id == session.id and summary.messages == 1
    assert summary.first_prompt == "first prompt" == session.first_prompt()
    from exporter.redact_cli import is_session_file  # never replaced by an output

    assert is_session_file(path)


def test_a_broken_or_looping_link_is_named_as_such(tmp_path: Path) -> None:
    """Both read "no session file or session id matches", as if the path were an id."""
    (tmp_path / "moved.jsonl").symlink_to(tmp_path / "gone" / "s.jsonl")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(SessionLookupError, match=r"moved\.jsonl: a broken symbolic link$"):
        resolve_session_arg(str(tmp_path / "moved.jsonl"))
    with pytest.raises(SessionLookupError, match=r"a: Too many levels of symbolic links$"):
        resolve_session_arg(str(tmp_path / "a"))


def test_only_the_file_s_first_line_loses_its_leading_spaces(tmp_path: Path) -> None:
    """`list` stripped NBSPs from every line until a header, the loader only from the first:
    after a damaged first line they named different sessions (delta review 2026-12-01)."""
    path = tmp_path / "late.jsonl"
    header = (
        '{"type":"session","version":3,"id":"x1","timestamp":"2025-01-01T00:00:00Z","cwd":"/p"}'
    )
    entry = (
        '{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01Z",'
        '"message":{"role":"user","content":"hi"}}'
    )
    path.write_bytes(b"garbage\n" + "\u00a0".encode() + header.encode() + b"\n" + entry.encode())
    assert scan_summary(path).id == load_session(path).id == "late"
    # a line of only an NBSP is blank to JavaScript, so the header after it is the first line
    path.write_bytes("\u00a0\n\u00a0".encode() + header.encode() + b"\n" + entry.encode())
    assert scan_summary(path).id == load_session(path).id == "x1"


def test_another_tools_jsonl_is_no_session_in_a_listing_either(tmp_path: Path) -> None:
    """`list` showed a Claude Code transcript as a session "(no messages)" while `export`
    of the same file says "not a Pi session file": both say the latter now."""
    other = tmp_path / "claude.jsonl"
    other.write_bytes(
        b'{"type":"user","uuid":"1","message":{"role":"user","content":"hi"}}\n'
        b'{"type":"assistant","uuid":"2","parentUuid":"1"}\n'
    )
    assert scan_summary(other).error == "not a Pi session file"
    with pytest.raises(SessionFormatError, match="not a Pi session file"):
        load_session(other)
    headerless = tmp_path / "headerless.jsonl"  # Pi entries without their header: a session
    headerless.write_bytes(
        b'{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00Z",'
        b'"message":{"role":"user","content":"hi"}}\n'
    )
    assert scan_summary(headerless).error is None and load_session(headerless).entries


def test_gzip_files_are_not_listed_and_are_found_to_be_said(tmp_path: Path) -> None:
    """`*.jsonl.gz` files are not sessions `list`/`--all` find (they are read when named);
    those that are not a copy beside their `.jsonl` are found so `publish` can say so."""
    from exporter.discover import gzip_files_left_out

    root = tmp_path / "sessions"
    here, there = root / encode_cwd("/p/here"), root / encode_cwd("/p/there")
    for folder in (here, there):
        folder.mkdir(parents=True)
    kept = here / "a.jsonl"
    kept.write_text('{"type":"session","id":"a","cwd":"/p/here"}\n', encoding="utf-8")
    (here / "a.jsonl.gz").write_bytes(gzip.compress(kept.read_bytes()))  # a copy: not said
    lone = here / "b.jsonl.gz"
    lone.write_bytes(gzip.compress(b'{"type":"session","id":"b","cwd":"/p/here"}\n'))
    far = there / "c.jsonl.gz"
    far.write_bytes(gzip.compress(b'{"type":"session","id":"c","cwd":"/p/there"}\n'))
    (there / "d.jsonl.gz").mkdir()  # not a file
    assert session_files(root) == [kept]
    assert gzip_files_left_out(root) == sorted([lone, far])
    assert gzip_files_left_out(root, "/p/here") == [lone]
    assert gzip_files_left_out(root, "/p/none") == []
    assert gzip_files_left_out(tmp_path / "missing") == []
